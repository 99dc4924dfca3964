// The body of `scripts/bench.ts` (its header comment is the command's --help).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { listStacks } from "../config/stack-file";
import { args, EXIT_BAD_CONFIG, UserError } from "../cli/cli";
import type { ChildRequest, ChildResult } from "./bench-child";
import { failedResources, kubeconformArgs, SCHEMAS_ENV, schemasDir } from "../tools/kubeconform";
import { REPO_ROOT, requireTool } from "../tools/tools";
import { installValidators } from "../tools/install";
import { writeWhole } from "../cli/write";
import { tsCommand } from "../cli/ts-command";
import {
  compareEngine,
  ENGINE_BINARIES,
  ENGINE_STACKS,
  engineLine,
  engineTargets,
  engineUnavailable,
  goal,
  holds,
  shown,
  verdict,
  type EngineStackResult,
  type Target,
} from "./bench-targets";
import { defaultClusterScript, defaultMirrorDir, timeEnginePreviews, timeFirstUps } from "../e2e/harness/driver";
import { READINESS_DELAYS } from "../e2e/harness/readiness";
import { compareFirstUps, FIRST_UP_STACK, firstUpLines, firstUpRun, firstUpTargets, type FirstUpComparison, type FirstUpRun } from "./first-up";
import { load1, measure, memoryFolder, type Measured } from "./measure";
import {
  editLoop,
  generatedStackFile,
  operatorWork,
  prCheck,
  previewOfGenerated,
  type EditLoopFigure,
  type PrCheckFigure,
  type PreviewFigure,
} from "./operator";
import {
  ciFigures,
  ciLines,
  ciTarget,
  engineBuildFromFileTimes,
  engineBuildFromLog,
  repoPath,
  stackE2E,
  upWaits,
  waitLine,
  CI_STACKS,
  type CiFigures,
  type StackE2E,
  type UpWaits,
} from "./ci-figures";
import { which } from "../e2e/harness/proc";
import { MIN_GENERATED_NODES } from "./generate";

const CHILD = path.join(REPO_ROOT, "bench", "bench-child.ts");

async function phase(req: ChildRequest): Promise<ChildResult & { wallMs: number; load: number }> {
  const m = await measure(...tsCommand(CHILD, [JSON.stringify(req)]), false);
  if (m.code !== 0) throw new Error(`bench child ${JSON.stringify(req)} failed:\n${m.stderr}`);
  return { ...(JSON.parse(m.stdout.trim().split("\n").pop()!) as ChildResult), wallMs: m.wallMs, load: m.load };
}

/** The fastest of `n` runs (times), with the highest peak memory seen. */
async function best<T extends { ms?: Record<string, number> | undefined; wallMs: number; maxRssKiB?: number | undefined; peakKiB?: number | undefined }>(
  n: number,
  f: () => Promise<T>,
  key: (t: T) => number,
): Promise<T> {
  let out: T | undefined;
  let peak = 0;
  for (let i = 0; i < n; i++) {
    const r = await f();
    peak = Math.max(peak, r.maxRssKiB ?? r.peakKiB ?? 0);
    if (!out || key(r) < key(out)) out = r;
  }
  return { ...out!, ...(out!.maxRssKiB !== undefined ? { maxRssKiB: peak } : { peakKiB: peak || undefined }) };
}

interface Row {
  input: string;
  nodes: number;
  objects: number;
  files: number;
  renderMs: number;
  renderPeakMiB: number;
  placementMs: number | null;
  placementPeakMiB: number | null;
  validateMs: number;
  validatePeakMiB: number | null;
  /** `npm run policy` for this stack after its plan checks: the pack starting, the program under the mocks, the verdict. */
  policyMs: number | null;
  /** Peak of the process running the program (the plan included), and of its pack. */
  policyPeakMiB: number | null;
  packPeakMiB: number | null;
  /** CPU time of the policy phase: the process running the program, and the pack. */
  policyCpuMs: number | null;
  packCpuMs: number | null;
  renderBreakdownMs: Record<string, number>;
  /** The 1-minute load average when the fastest policy phase ran. */
  load: number;
  policyBreakdownMs: Record<string, number>;
  /** Resources the Pulumi program registers (what the policy pack judges). */
  resources: number | null;
}

const mib = (kib: number | undefined) => (kib === undefined ? null : Math.round((kib / 1024) * 10) / 10);
const round = (ms: number) => Math.round(ms);
const loads = () => os.loadavg().map((l) => Math.round(l * 100) / 100);

type EnginePreview = { measured: true; tries: number; stacks: EngineStackResult[] } | { measured: false; why: string };
type FirstUpResult = FirstUpComparison | { measured: false; why: string };

/**
 * `pulumi preview --policy-pack policy` of each deployed stack of ENGINE_STACKS (what an operator
 * runs before every change) through the e2e driver's preview-timing mode (a cluster of its own per
 * stack, one pulumi up, `tries` previews), against `npm run policy -- --stack <s>` as a developer
 * runs it (tsx start included), `offlinePerTurn` times after each preview: taken in turns, both
 * sides see the same machine. The fastest of each side is compared.
 */
async function enginePreviewTimes(skip: boolean, schemas: string, tries: number, offlinePerTurn: number): Promise<EnginePreview> {
  const clusterScript = defaultClusterScript(REPO_ROOT);
  const why = engineUnavailable({ skip, missing: ENGINE_BINARIES.filter((b) => !which(b)), clusterScript, clusterScriptExists: fs.existsSync(clusterScript) });
  if (why) return { measured: false, why };
  const offline = new Map<string, number[]>();
  /** The highest load seen while a stack's sides were taken. */
  const loadAt = new Map<string, number>();
  const turn = async (stack: string) => {
    for (let i = 0; i < offlinePerTurn; i++) {
      loadAt.set(stack, Math.max(loadAt.get(stack) ?? 0, load1()));
      const p = await measure(...tsCommand(path.join(REPO_ROOT, "scripts", "policy.ts"), ["--stack", stack]), false);
      if (p.code !== 0) throw new Error(`npm run policy -- --stack ${stack} failed:\n${p.stdout}${p.stderr}`);
      offline.set(stack, [...(offline.get(stack) ?? []), p.wallMs / 1000]);
    }
  };
  const timed = await timeEnginePreviews({
    repoRoot: REPO_ROOT,
    stacks: ENGINE_STACKS,
    keep: false,
    clusterScript,
    schemasDir: schemas,
    mirrorDir: defaultMirrorDir(REPO_ROOT),
    outRoot: path.join(REPO_ROOT, ".e2e"),
    interrupt: false,
    policyMutations: false,
    transitions: false,
    previewTiming: { tries, turn },
    log: (line) => process.stderr.write(`bench: engine: ${line}\n`),
  });
  if ("cannotRun" in timed) return { measured: false, why: timed.cannotRun };
  // what the deploy before the previews waited on: its share on the longest chain of dependencies
  for (const t of timed)
    for (const w of stackWaits(path.join(REPO_ROOT, ".e2e", "preview-timing"), t.stack)) process.stderr.write(`bench: engine: ${waitLine(t.stack, w)}\n`);
  const stacks: EngineStackResult[] = [];
  for (const t of timed) {
    const report = path.relative(REPO_ROOT, t.report);
    if (!t.ok) stacks.push({ stack: t.stack, measured: false, why: `the engine run failed: ${t.failure}`, report });
    else stacks.push(compareEngine(t.stack, t.seconds, offline.get(t.stack)!, report, loadAt.get(t.stack)));
  }
  return { measured: true, tries, stacks };
}

/**
 * Issue 46: prod-large's first `pulumi up` with the phases as barriers, then with the derived
 * dependencies, each on a fresh cluster with the e2e's readiness delays (the e2e driver's
 * first-up-timing mode), one after the other; each run's update time and longest chain, their ratio.
 */
async function firstUpComparison(
  skip: boolean,
  schemas: string,
  portOffset: number | undefined,
): Promise<FirstUpComparison | { measured: false; why: string }> {
  const clusterScript = defaultClusterScript(REPO_ROOT);
  const why = engineUnavailable({ skip, missing: ENGINE_BINARIES.filter((b) => !which(b)), clusterScript, clusterScriptExists: fs.existsSync(clusterScript) });
  if (why) return { measured: false, why };
  const runs: FirstUpRun[] = [];
  for (const graph of ["phase-barriers", "dependencies"] as const) {
    process.stderr.write(`bench: first pulumi up of ${FIRST_UP_STACK}, ${graph}…\n`);
    const timed = await timeFirstUps({
      repoRoot: REPO_ROOT,
      stacks: [FIRST_UP_STACK],
      keep: false,
      clusterScript,
      schemasDir: schemas,
      mirrorDir: defaultMirrorDir(REPO_ROOT),
      outRoot: path.join(REPO_ROOT, ".e2e"),
      interrupt: false,
      policyMutations: false,
      transitions: false,
      firstUpTiming: true,
      deployGraph: graph,
      readinessDelays: READINESS_DELAYS,
      portOffset,
      log: (line) => process.stderr.write(`bench: first up: ${line}\n`),
    });
    if ("cannotRun" in timed) return { measured: false, why: timed.cannotRun };
    const t = timed[0];
    const run = t.ok ? firstUpRun(graph, t.timings!, path.relative(REPO_ROOT, t.report), load1()) : undefined;
    if (!run)
      return {
        measured: false,
        stack: FIRST_UP_STACK,
        why: `the ${graph} run failed: ${t.failure ?? "no timings"} (${path.relative(REPO_ROOT, t.report)})`,
        runs,
      };
    runs.push(run);
  }
  return compareFirstUps(FIRST_UP_STACK, READINESS_DELAYS, runs[0], runs[1]);
}

/** The bench's options, checked: bad values are the caller's mistake. */
interface BenchOptions {
  sizes: number[];
  repeat: number;
  /** The whole-pipeline measures take a few seconds each: more tries, for one the machine leaves alone. */
  quick: number;
  engineTries: number;
  schemas: string;
  out: string;
  skipTests: boolean;
  skipEngine: boolean;
  /** Only the first-up comparison (issue 46), into results.json's `firstUp` and its targets. */
  firstUpOnly: boolean;
  /** cluster.sh's ports moved by this much for the engine's clusters (the e2e's --port-offset). */
  portOffset?: number | undefined;
  /** Only the CI figures (issue 23): from these logs, into results.json's `ci`. */
  ciFigures?: { engineBuildLog: string; e2eDir: string; engineOut?: string | undefined } | undefined;
}

function benchOptions(): BenchOptions {
  const opts = args({
    sizes: { type: "string", default: `${MIN_GENERATED_NODES},100,500,1000,5000` },
    repeat: { type: "string", default: "2" },
    out: { type: "string", default: "bench/results.json" },
    schemas: { type: "string" },
    /** Do not time `npm test` (its target is then reported as not measured). */
    "skip-tests": { type: "boolean", default: false },
    /** Do not time `pulumi preview --policy-pack policy` (its targets are then reported as not measured). */
    "skip-engine": { type: "boolean", default: false },
    /** Timed `pulumi preview --policy-pack policy` runs per stack (each minutes of setup first). */
    "engine-tries": { type: "string", default: "3" },
    /** Only record the CI figures (results.json's `ci`) from an engine build log and the e2e reports. */
    "ci-figures": { type: "boolean", default: false },
    "engine-build-log": { type: "string", default: ".e2e/engine-build.log" },
    "e2e-dir": { type: "string", default: ".e2e" },
    /** Without the build's log: the engine build from the file times of its $OUT (engineBuildFromFileTimes). */
    "engine-out": { type: "string" },
    /** Only prod-large's first pulumi up, phase barriers vs derived dependencies (issue 46). */
    "first-up-only": { type: "boolean", default: false },
    "port-offset": { type: "string" },
  });
  const sizes = opts.sizes!.split(",").map(Number);
  const repeat = Number(opts.repeat);
  if (sizes.some((s) => !Number.isInteger(s) || s < MIN_GENERATED_NODES) || !Number.isInteger(repeat) || repeat < 1) {
    throw new UserError(`--sizes takes whole numbers of at least ${MIN_GENERATED_NODES}, comma-separated; --repeat a whole number ≥ 1`, EXIT_BAD_CONFIG);
  }
  const engineTries = Number(opts["engine-tries"]);
  if (!Number.isInteger(engineTries) || engineTries < 1)
    throw new UserError(`--engine-tries takes a whole number ≥ 1, not ${opts["engine-tries"]}`, EXIT_BAD_CONFIG);
  for (const needed of [500, 5000]) if (!sizes.includes(needed)) sizes.push(needed);
  sizes.sort((a, b) => a - b);
  const schemas = opts.schemas ?? schemasDir();
  if (!fs.existsSync(schemas))
    throw new UserError(
      `no offline schema folder at ${schemas}: pass --schemas <dir> or set ${SCHEMAS_ENV} (the bench never downloads schemas)`,
      EXIT_BAD_CONFIG,
    );
  const engineOut = opts["engine-out"] === undefined ? undefined : path.resolve(opts["engine-out"]);
  const portOffset = opts["port-offset"] === undefined ? undefined : Number(opts["port-offset"]);
  if (portOffset !== undefined && (!Number.isInteger(portOffset) || portOffset < 1 || portOffset > 40000))
    throw new UserError(`--port-offset takes a whole number from 1 to 40000, not ${opts["port-offset"]}`, EXIT_BAD_CONFIG);
  const ci = opts["ci-figures"] ? { engineBuildLog: path.resolve(opts["engine-build-log"]!), e2eDir: path.resolve(opts["e2e-dir"]!), engineOut } : undefined;
  return {
    sizes,
    repeat,
    quick: repeat + 3,
    engineTries,
    schemas,
    out: opts.out!,
    skipTests: opts["skip-tests"]!,
    skipEngine: opts["skip-engine"]!,
    firstUpOnly: opts["first-up-only"]!,
    portOffset,
    ciFigures: ci,
  };
}

/** kubeconform over `targets` (measured, its peak polled); any object not valid fails the bench. */
type KubeconformRun = (targets: string[]) => Promise<Measured>;

function kubeconformRunner(kubeconform: string, schemas: string): KubeconformRun {
  return async (targets) => {
    const m = await measure(kubeconform, kubeconformArgs(targets, schemas), true);
    // judged as npm run validate judges (a patch of an object another writes may lack required fields)
    const bad = failedResources(m.stdout);
    if (bad.length > 0) throw new Error(`kubeconform: ${bad.length} object(s) failed in ${targets.join(", ")}: ${bad.map((r) => r.filename).join(", ")}`);
    return m;
  };
}

const msOf = (ms: Record<string, number>) => Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, round(v)]));

/** One input (a shipped stack or a generated inventory): each phase the fastest of --repeat runs, in its own process. */
async function measureInput(o: BenchOptions, kubeconformRun: KubeconformRun, out: string, input: BenchInput): Promise<Row> {
  const render = await best(
    o.repeat,
    () => phase({ ...input.req, mode: "render", out }),
    (r) => r.ms.total,
  );
  const placement = await best(
    o.repeat,
    () => phase({ ...input.req, mode: "placement", out }),
    (r) => r.ms.placement,
  );
  const policy = await best(
    o.repeat,
    () => phase({ ...input.req, mode: "policy", out }),
    (r) => r.ms.policy,
  );
  const stackName = input.req.stack ?? `generated-${input.req.size}`;
  const validate = await best(
    o.repeat,
    () => kubeconformRun([path.join(out, stackName, "objects")]),
    (m) => m.wallMs,
  );
  const packs = policy.packs ?? [];
  fs.rmSync(path.join(out, stackName), { recursive: true, force: true });
  return {
    input: input.label,
    nodes: render.nodes!,
    objects: render.objects!,
    files: render.files!,
    renderMs: round(render.ms.total),
    renderPeakMiB: mib(render.maxRssKiB)!,
    placementMs: round(placement.ms.placement),
    placementPeakMiB: mib(placement.maxRssKiB),
    validateMs: round(validate.wallMs),
    validatePeakMiB: mib(validate.peakKiB),
    policyMs: round(policy.ms.policy),
    policyPeakMiB: mib(policy.maxRssKiB),
    packPeakMiB: packs.length ? mib(Math.max(...packs.map((p) => p.peakKiB))) : null,
    policyCpuMs: round(policy.ms.policyCpu),
    packCpuMs: packs.length ? packs.reduce((n, p) => n + p.cpuMs, 0) : null,
    policyBreakdownMs: msOf(policy.ms),
    resources: policy.resources ?? null,
    renderBreakdownMs: msOf(render.ms),
    load: policy.load,
  };
}

interface BenchInput {
  label: string;
  req: Omit<ChildRequest, "mode" | "out">;
}

/** The whole offline pipeline over the shipped stacks: in one process, and as the CLI commands; kubeconform alone on the very files it wrote. */
interface PipelineTimes {
  stacks: string[];
  pipeline: ChildResult & { wallMs: number };
  alone: Measured;
  /** `npm run policy` on its own, as a developer runs it (tsx start-up included; npm's own start is not). */
  policyCli: Measured;
}

async function measurePipeline(o: BenchOptions, kubeconform: string, kubeconformRun: KubeconformRun, work: string, stacksDir: string): Promise<PipelineTimes> {
  process.stderr.write("bench: pipeline…\n");
  // the pipeline and kubeconform alone on its files, taken in turns so that both see the same
  // machine, the fastest of each kept
  const pipeOut = path.join(work, "pipeline");
  const stacks = listStacks(stacksDir);
  let pipeline: (ChildResult & { wallMs: number }) | undefined;
  let alone: Measured | undefined;
  for (let i = 0; i < o.quick; i++) {
    fs.rmSync(pipeOut, { recursive: true, force: true });
    const p = await phase({ mode: "pipeline", out: pipeOut, kubeconform, schemas: o.schemas, stacksDir });
    if (!pipeline || p.ms.total < pipeline.ms.total) pipeline = { ...p, maxRssKiB: Math.max(p.maxRssKiB, pipeline?.maxRssKiB ?? 0) };
    const a = await kubeconformRun(stacks.map((s) => path.join(pipeOut, s, "objects")));
    if (!alone || a.wallMs < alone.wallMs) alone = { ...a, peakKiB: Math.max(a.peakKiB ?? 0, alone?.peakKiB ?? 0) || undefined };
  }
  if (!pipeline || !alone) throw new Error("the pipeline did not run");
  const policyCli = await best(
    o.quick,
    async () => {
      const p = await measure(...tsCommand(path.join(REPO_ROOT, "scripts", "policy.ts")), false);
      if (p.code !== 0) throw new Error(`npm run policy failed:\n${p.stdout}${p.stderr}`);
      return p;
    },
    (m) => m.wallMs,
  );
  return { stacks, pipeline, alone, policyCli };
}

type NpmTest = { wallMs: number; cpuMs?: number | undefined; code: number | null; load: number; summary: string; fastWallMs: number; fastLoad: number };

/** What a test run prints as its totals (vitest's Test Files and Tests lines). */
function testSummary(t: Measured): string {
  return `${t.stdout}\n${t.stderr}`
    .split("\n")
    .map((l) => stripVTControlCharacters(l))
    .filter((l) => /^\s*(Test Files|Tests)\s/.test(l))
    .map((l) => l.trim())
    .join("; ");
}

/**
 * `npm test`, whole (its tools, type check and lint included), once, from the caches a fresh clone has: none (the
 * type check's state, the transpiled TypeScript, vitest's module cache and V8's code under
 * node_modules/.cache are removed first); then `npm run test:fast` as a developer reruns it.
 * Nothing else of the bench runs beside them.
 */
async function timeNpmTest(): Promise<NpmTest> {
  process.stderr.write("bench: npm test (fresh caches)…\n");
  fs.rmSync(path.join(REPO_ROOT, "node_modules", ".cache"), { recursive: true, force: true });
  const t = await measure("npm", ["test", "--silent"]);
  const summary = testSummary(t);
  if (t.code !== 0) throw new Error(`npm test failed (exit ${t.code}): ${summary}\n${t.stderr.slice(-4000)}`);
  process.stderr.write("bench: npm run test:fast…\n");
  const fast = await measure("npm", ["run", "--silent", "test:fast"]);
  if (fast.code !== 0) throw new Error(`npm run test:fast failed (exit ${fast.code}): ${testSummary(fast)}\n${fast.stderr.slice(-4000)}`);
  return { wallMs: round(t.wallMs), cpuMs: t.cpuMs, code: t.code, load: t.load, summary, fastWallMs: round(fast.wallMs), fastLoad: fast.load };
}

/** Issue 25's anchored inventory: the same stack with its compute labels through one YAML alias, and written out. */
interface AnchoredFigure {
  nodes: number;
  aliasedMs: number;
  writtenOutMs: number;
  load: number;
  /** Where the renders wrote their files: in memory (/dev/shm) or, where there is none, on disk. */
  outputs: "memory" | "disk";
}

/** Plan and render (the bench's render phase, from the stack file) of both forms, in turns, the fastest of each. */
async function anchoredInventory(o: BenchOptions, work: string, size: number): Promise<AnchoredFigure> {
  process.stderr.write(`bench: anchored inventory, ${size} nodes…\n`);
  const dirs = [true, false].map((aliased) => {
    const dir = path.join(work, aliased ? "aliased" : "written-out");
    fs.mkdirSync(dir, { recursive: true });
    const f = generatedStackFile(size, aliased);
    fs.writeFileSync(path.join(dir, `Pulumi.${f.stack}.yaml`), f.text);
    return { dir, stack: f.stack };
  });
  const load = load1();
  const times = [Infinity, Infinity];
  // Both write the same 4099 files; written to disk, those writes took 0.17–1.9 s from one run to
  // the next here (ext4 on a shared virtual disk), in runs of 2–4 s, so the ratio fell either side
  // of its goal with the disk (0.82× and 1.33× by hand in one stretch, same code). In memory
  // (/dev/shm, where there is one) each run still writes every file, without the disk's latency.
  const outRoot = memoryFolder(path.basename(work)) ?? work;
  // the fastest of o.quick each, interleaved, so that a busy moment does not land on one side only
  try {
    for (let i = 0; i < o.quick; i++)
      for (const [k, d] of dirs.entries()) {
        const r = await phase({ mode: "render", stack: d.stack, stacksDir: d.dir, out: path.join(outRoot, `out-${k}`) });
        times[k] = Math.min(times[k], r.ms.total);
      }
  } finally {
    if (outRoot !== work) fs.rmSync(outRoot, { recursive: true, force: true });
  }
  return { nodes: size, aliasedMs: round(times[0]), writtenOutMs: round(times[1]), load, outputs: outRoot === work ? "disk" : "memory" };
}

/** The measurements of what an operator waits for (bench/operator.ts). */
interface OperatorFigures {
  anchored: AnchoredFigure;
  preview: PreviewFigure;
  editLoop: EditLoopFigure;
  prCheck: PrCheckFigure;
}

async function operatorFigures(o: BenchOptions): Promise<OperatorFigures> {
  const work = operatorWork();
  try {
    const anchored = await anchoredInventory(o, path.join(work, "anchored"), ANCHORED_NODES);
    process.stderr.write(`bench: preview of a ${PREVIEW_NODES}-node stack…\n`);
    const preview = await previewOfGenerated(work, PREVIEW_NODES, o.repeat);
    process.stderr.write("bench: the edit loop…\n");
    const loop = await editLoop(work, o.repeat);
    process.stderr.write("bench: the pull-request workflow, offline…\n");
    const pr = await fastestOfPr(o, work);
    return { anchored, preview, editLoop: loop, prCheck: pr };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function fastestOfPr(o: BenchOptions, work: string): Promise<PrCheckFigure> {
  let best: PrCheckFigure | undefined;
  for (let i = 0; i < o.repeat; i++) {
    const r = await prCheck(work, o.schemas);
    if (!best || r.totalMs < best.totalMs) best = r;
  }
  return best!;
}

/** The inventory sizes issue 25 names. */
const ANCHORED_NODES = 2000;
const PREVIEW_NODES = 2000;

function benchTargets(
  rows: Row[],
  pipe: PipelineTimes,
  npmTest: NpmTest | undefined,
  enginePreview: EnginePreview,
  op: OperatorFigures,
  firstUp: FirstUpResult,
): Target[] {
  const row = (label: string) => rows.find((r) => r.input === label)!;
  const renderPlacement = (r: Row) => r.renderMs + (r.placementMs ?? 0);
  const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
  const big = row("generated-5000");
  const { anchored, preview, editLoop: loop, prCheck: pr } = op;
  return [
    {
      what: `anchored inventory: plan + render of a ${anchored.nodes}-node stack, compute labels through one YAML alias ÷ written out`,
      value: ratio(anchored.aliasedMs, anchored.writtenOutMs),
      unit: "×",
      max: 1.2,
      load: anchored.load,
    },
    { what: `npm run preview of a ${preview.nodes}-node stack against its base (wall)`, value: preview.wallMs, unit: "ms", max: 10_000, load: preview.load },
    {
      what: `npm run preview of a ${preview.nodes}-node stack: peak of its largest process`,
      value: preview.peakMiB,
      unit: "MiB",
      max: 500,
      load: preview.load,
    },
    ...engineTargets(enginePreview.measured ? enginePreview.stacks : []),
    ...firstUpTargets(firstUp.measured ? firstUp : undefined),
    { what: "npm run plan -- --stack prod-medium after an edit: first line of output", value: loop.planFirstLineMs, unit: "ms", max: 1000, load: loop.load },
    { what: "npm run render, 4 stacks (wall)", value: loop.renderMs, unit: "ms", max: 2000, load: loop.load },
    { what: "npm run policy, 4 stacks (wall)", value: round(pipe.policyCli.wallMs), unit: "ms", max: 4000, load: pipe.policyCli.load },
    { what: "policy, generated 5000-node stack (wall)", value: big.policyMs, unit: "ms", max: 6000, load: big.load },
    { what: "policy, generated 5000-node stack: peak of the program's process", value: big.policyPeakMiB, unit: "MiB", max: 512, load: big.load },
    { what: "policy, generated 5000-node stack: peak of the pack's process", value: big.packPeakMiB, unit: "MiB", max: 512, load: big.load },
    {
      what: "render + placement, 5000 ÷ 500 nodes",
      value: ratio(renderPlacement(big), renderPlacement(row("generated-500"))),
      unit: "×",
      max: 11,
      load: big.load,
    },
    { what: "npm test: CPU time (user + system), fresh caches", value: npmTest?.cpuMs ?? null, unit: "ms", max: 90_000, load: npmTest?.load },
    { what: "npm test (wall), fresh caches", value: npmTest?.wallMs ?? null, unit: "ms", max: 60_000, load: npmTest?.load },
    { what: "npm run test:fast (wall)", value: npmTest?.fastWallMs ?? null, unit: "ms", max: 20_000, load: npmTest?.fastLoad },
    {
      what: "the pull-request workflow offline: render, drift, validate, policy, preview of the 4 stacks",
      value: pr.totalMs,
      unit: "ms",
      max: 15_000,
      load: pr.load,
    },
  ];
}

/** bench/results.json: the machine, every row, the pipeline, npm test, the engine, the targets. */
function benchResult(
  o: BenchOptions,
  loadAtStart: number[],
  rows: Row[],
  pipe: PipelineTimes,
  npmTest: NpmTest | undefined,
  enginePreview: EnginePreview,
  firstUp: FirstUpResult,
  op: OperatorFigures,
  targets: Target[],
) {
  return {
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? "unknown",
      memoryGiB: Math.round(os.totalmem() / 1024 ** 3),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loads(),
    },
    method: "fastest of --repeat runs; each phase in its own process; peak = that process' maxRSS (kubeconform, packs: VmHWM from /proc)",
    repeat: o.repeat,
    rows,
    pipeline: {
      stacks: pipe.stacks,
      inProcessMs: msOf(pipe.pipeline.ms),
      inProcessPeakMiB: mib(pipe.pipeline.maxRssKiB),
      processWallMs: round(pipe.pipeline.wallMs),
      kubeconformAloneMs: round(pipe.alone.wallMs),
      kubeconformAlonePeakMiB: mib(pipe.alone.peakKiB),
      placement: "part of render: planStack runs the placement checks and the render writes placement.md/.svg",
    },
    policyCliMs: round(pipe.policyCli.wallMs),
    policyCliCpuMs: pipe.policyCli.cpuMs,
    npmTest: npmTest ?? { measured: false, why: "--skip-tests" },
    enginePreview,
    firstUp,
    operator: op,
    targets: targets.map((t) => ({ ...t, holds: holds(t) })),
  };
}

/** The operator's figures as printed, each with the load it ran at. */
function operatorLines(op: OperatorFigures): string[] {
  const { anchored: a, preview: p, editLoop: e, prCheck: pr } = op;
  return [
    `anchored inventory, ${a.nodes} nodes (plan + render from the stack file, written ${a.outputs === "memory" ? "to /dev/shm" : "to disk"}): aliased ${a.aliasedMs} ms, written out ${a.writtenOutMs} ms (load ${a.load})`,
    `npm run preview, ${p.nodes}-node stack + 1 node against its base: ${p.wallMs} ms, ${p.cpuMs ?? "?"} ms of CPU, peak ${p.peakMiB ?? "?"} MiB (load ${p.load})`,
    `edit loop: npm run plan -- --stack prod-medium after an edit: first line ${e.planFirstLineMs} ms (exit ${e.planWallMs} ms); npm run render ${e.renderMs} ms (load ${e.load})`,
    `pull-request workflow offline: ${Object.entries(pr.stepsMs)
      .map(([k, v]) => `${k} ${v} ms`)
      .join(", ")}; total ${pr.totalMs} ms (load ${pr.load})`,
  ];
}

/** What the bench prints: the machine, the rows, the pipeline, npm test, the engine, the targets. */
function summaryLines(
  o: BenchOptions,
  result: ReturnType<typeof benchResult>,
  npmTest: NpmTest | undefined,
  enginePreview: EnginePreview,
  firstUp: FirstUpResult,
  targets: Target[],
): string[] {
  const cell = (v: number | null, unit = "") => (v === null ? "n/a" : `${v}${unit}`);
  const m = result.machine;
  return [
    `machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, load ${m.loadAverageAtStart.join(" ")} at the start, ${m.loadAverageAtEnd.join(" ")} at the end`,
    "",
    "| input | nodes | objects | render ms | render MiB | placement ms | placement MiB | validate ms | validate MiB | policy ms | policy MiB | pack MiB |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...result.rows.map(
      (r) =>
        `| ${r.input} | ${r.nodes} | ${r.objects} | ${r.renderMs} | ${r.renderPeakMiB} | ${cell(r.placementMs)} | ${cell(r.placementPeakMiB)} | ${r.validateMs} | ${cell(r.validatePeakMiB)} | ${cell(r.policyMs)} | ${cell(r.policyPeakMiB)} | ${cell(r.packPeakMiB)} |`,
    ),
    "",
    `pipeline, ${result.pipeline.stacks.length} stacks, one process: ${Object.entries(result.pipeline.inProcessMs)
      .map(([k, v]) => `${k} ${v} ms`)
      .join(", ")}; peak ${result.pipeline.inProcessPeakMiB} MiB; process wall ${result.pipeline.processWallMs} ms`,
    `kubeconform alone on the same files: ${result.pipeline.kubeconformAloneMs} ms, peak ${cell(result.pipeline.kubeconformAlonePeakMiB, " MiB")}`,
    ...operatorLines(result.operator),
    npmTest
      ? `npm test (fresh caches): ${npmTest.wallMs} ms, ${npmTest.cpuMs ?? "?"} ms of CPU (load ${npmTest.load}): ${npmTest.summary}; npm run test:fast ${npmTest.fastWallMs} ms (load ${npmTest.fastLoad})`
      : "npm test: not timed (--skip-tests)",
    ...(enginePreview.measured ? enginePreview.stacks.map(engineLine) : [`*** pulumi preview --policy-pack policy: NOT MEASURED (${enginePreview.why}) ***`]),
    ...firstUpSummary(firstUp),
    "",
    "| target | measured | goal | holds | load |",
    "|---|---:|---:|---|---:|",
    ...targets.map((t) => `| ${t.what} | ${shown(t)} | ${goal(t)} | ${verdict(t)} | ${t.load ?? "n/a"} |`),
    "",
    `written to ${o.out}`,
  ];
}

/** The first build in `out` (build.sh's $OUT), from the birth times of bin/ and of bin/.stamps/*. */
function engineBuildFromOut(out: string): CiFigures["engineBuild"] {
  const stamps = path.join(out, "bin", ".stamps");
  if (!fs.existsSync(stamps)) return { measured: false, why: `no ${repoPath(REPO_ROOT, stamps)}` };
  const born = fs.readdirSync(stamps).map((target) => ({ target, bornMs: fs.statSync(path.join(stamps, target)).birthtimeMs }));
  const start = fs.statSync(path.join(out, "bin")).birthtimeMs;
  const build = engineBuildFromFileTimes(start, born);
  if (!build) return { measured: false, why: `no usable birth times in ${repoPath(REPO_ROOT, stamps)} (none kept, or a stamp older than bin/)` };
  const at = (ms: number) => new Date(ms).toISOString().slice(0, 19);
  return { ...build, source: `file times of ${repoPath(REPO_ROOT, out)}: bin/ created ${at(start)}Z, last stamp ${at(start + build.totalSeconds * 1000)}Z` };
}

function collectCiFigures(c: NonNullable<BenchOptions["ciFigures"]>, npmTestSeconds: number | null): CiFigures {
  if (c.engineOut !== undefined) return ciFigures(engineBuildFromOut(c.engineOut), npmTestSeconds, stacksE2E(c.e2eDir));
  const text = fs.existsSync(c.engineBuildLog) ? fs.readFileSync(c.engineBuildLog, "utf8") : undefined;
  const build = text === undefined ? undefined : engineBuildFromLog(text);
  const e2e = stacksE2E(c.e2eDir);
  const log = repoPath(REPO_ROOT, c.engineBuildLog);
  const why = text === undefined ? `no ${log}` : `no build.sh summary in ${log}`;
  return ciFigures(build ? { ...build, source: log } : { measured: false, why }, npmTestSeconds, e2e);
}

/** Each stack's e2e of CI_STACKS that has a steps.json in `dir`, with its timed ups (timings.json) where it has them. */
function stacksE2E(dir: string): StackE2E[] {
  return CI_STACKS.filter((s) => fs.existsSync(path.join(dir, s, "steps.json"))).map((s) => ({
    ...stackE2E(JSON.parse(fs.readFileSync(path.join(dir, s, "steps.json"), "utf8"))),
    waits: stackWaits(dir, s),
  }));
}

/** A stack's timed ups from its timings.json in `dir` (none without one). */
function stackWaits(dir: string, stack: string): UpWaits[] {
  const f = path.join(dir, stack, "timings.json");
  return fs.existsSync(f) ? upWaits(JSON.parse(fs.readFileSync(f, "utf8"))) : [];
}

/** `--ci-figures`: results.json's `ci` (and its target) replaced, everything else kept. */
function recordCiFigures(o: BenchOptions & { ciFigures: NonNullable<BenchOptions["ciFigures"]> }): void {
  const file = path.resolve(REPO_ROOT, o.out);
  const previous = JSON.parse(fs.readFileSync(file, "utf8")) as { npmTest?: { wallMs?: number }; targets?: Target[] };
  const npmTestMs = previous.npmTest?.wallMs;
  const ci = {
    recordedAt: new Date().toISOString(),
    loadAverage: loads(),
    ...collectCiFigures(o.ciFigures, npmTestMs === undefined ? null : Math.round(npmTestMs / 1000)),
  };
  const target = ciTarget(ci);
  const targets = [...(previous.targets ?? []).filter((t) => t.what !== target.what), { ...target, holds: holds(target) }];
  writeWhole(file, `${JSON.stringify({ ...previous, ci, targets }, null, 2)}\n`);
  console.log([...ciLines(ci), `| ${target.what} | ${shown(target)} | ${goal(target)} | ${verdict(target)} |`, `written to ${o.out}`].join("\n"));
}

/** `--first-up-only`: results.json's `firstUp` and its targets replaced, everything else kept. */
async function recordFirstUp(o: BenchOptions): Promise<void> {
  const file = path.resolve(REPO_ROOT, o.out);
  const firstUp = await firstUpComparison(false, o.schemas, o.portOffset);
  const previous = JSON.parse(fs.readFileSync(file, "utf8")) as { targets?: Target[] };
  const mine = firstUpTargets(firstUp.measured ? firstUp : undefined);
  const targets = [...(previous.targets ?? []).filter((t) => !mine.some((m) => m.what === t.what)), ...mine.map((t) => ({ ...t, holds: holds(t) }))];
  writeWhole(file, `${JSON.stringify({ ...previous, firstUp: { recordedAt: new Date().toISOString(), ...firstUp }, targets }, null, 2)}\n`);
  console.log(
    [
      ...firstUpSummary(firstUp),
      ...mine.map((t) => `| ${t.what} | ${shown(t)} | ${goal(t)} | ${verdict(t)} | ${t.load ?? "n/a"} |`),
      `written to ${o.out}`,
    ].join("\n"),
  );
}

function firstUpSummary(firstUp: FirstUpResult): string[] {
  return "stack" in firstUp ? firstUpLines(firstUp) : [`*** first pulumi up, phase barriers vs derived dependencies: NOT MEASURED (${firstUp.why}) ***`];
}

export async function benchMain(): Promise<number | void> {
  const o = benchOptions();
  if (o.ciFigures) return recordCiFigures({ ...o, ciFigures: o.ciFigures });
  if (o.firstUpOnly) return recordFirstUp(o);
  // what validation needs, installed when missing, as npm test does first (a fresh clone has none)
  await installValidators({ log: (line) => process.stderr.write(`bench: tools: ${line}\n`) });
  const kubeconform = requireTool("kubeconform");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-bench-"));
  const loadAtStart = loads();
  const kubeconformRun = kubeconformRunner(kubeconform, o.schemas);

  const stacksDir = path.join(REPO_ROOT, "stacks");
  const inputs: BenchInput[] = [
    ...listStacks(stacksDir).map((s) => ({ label: s, req: { stack: s, stacksDir } })),
    ...o.sizes.map((n) => ({ label: `generated-${n}`, req: { size: n } })),
  ];
  const rows: Row[] = [];
  for (const input of inputs) {
    process.stderr.write(`bench: ${input.label}…\n`);
    rows.push(await measureInput(o, kubeconformRun, path.join(work, "phases"), input));
  }
  const pipe = await measurePipeline(o, kubeconform, kubeconformRun, work, stacksDir);
  const op = await operatorFigures(o);

  // the real engine against the offline policy path, before `npm test` (which must run alone)
  process.stderr.write("bench: pulumi preview --policy-pack policy (the real engine)…\n");
  const enginePreview = await enginePreviewTimes(o.skipEngine, o.schemas, o.engineTries, 2);
  if (!enginePreview.measured) process.stderr.write(`bench: *** ENGINE PREVIEW NOT MEASURED: ${enginePreview.why} ***\n`);
  const firstUp = await firstUpComparison(o.skipEngine, o.schemas, o.portOffset);
  if (!firstUp.measured) process.stderr.write(`bench: *** FIRST UP NOT MEASURED: ${firstUp.why} ***\n`);
  // `npm test` last
  const npmTest = o.skipTests ? undefined : await timeNpmTest();

  const targets = benchTargets(rows, pipe, npmTest, enginePreview, op, firstUp);
  const result = benchResult(o, loadAtStart, rows, pipe, npmTest, enginePreview, firstUp, op, targets);
  fs.rmSync(work, { recursive: true, force: true });
  // the CI figures come from a CI run (--ci-figures), not from this one: kept as they were
  const outFile = path.resolve(REPO_ROOT, o.out);
  const kept = fs.existsSync(outFile) ? (JSON.parse(fs.readFileSync(outFile, "utf8")) as { ci?: CiFigures & { recordedAt: string } }) : {};
  const ciKept = kept.ci ? { ci: kept.ci, targets: [...result.targets, { ...ciTarget(kept.ci), holds: holds(ciTarget(kept.ci)) }] } : {};
  writeWhole(outFile, `${JSON.stringify({ ...result, ...ciKept }, null, 2)}\n`);
  console.log(summaryLines(o, result, npmTest, enginePreview, firstUp, targets).join("\n"));
}
