// The body of `scripts/bench.ts` (its header comment is the command's --help).
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { listStacks } from "../config/stack-file";
import { args, EXIT_BAD_CONFIG, UserError } from "../cli/cli";
import type { ChildRequest, ChildResult } from "./bench-child";
import { kubeconformArgs, SCHEMAS_ENV, schemasDir } from "../tools/kubeconform";
import { REPO_ROOT, requireTool } from "../tools/tools";
import { writeWhole } from "../cli/write";
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
import { ciFigures, ciLines, ciTarget, engineBuildFromFileTimes, engineBuildFromLog, stackE2E, CI_STACKS, type CiFigures, type StackE2E } from "./ci-figures";
import { defaultClusterScript, defaultMirrorDir, timeEnginePreviews } from "../test/e2e/harness/driver";
import { which } from "../test/e2e/harness/proc";

const TSX = path.join(REPO_ROOT, "node_modules", ".bin", "tsx");
const CHILD = path.join(REPO_ROOT, "bench", "bench-child.ts");

interface Measured {
  wallMs: number;
  /** CPU time of the process and every process under it (Linux: the children times of this one). */
  cpuMs?: number;
  peakKiB?: number;
  stdout: string;
  stderr: string;
  code: number | null;
}

/** CPU time (ms) of this process' children that have ended: cutime + cstime of /proc/self/stat (Linux). */
function childrenCpuMs(): number | undefined {
  try {
    const fields = fs.readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
    return (Number(fields[13]) + Number(fields[14])) * 10; // clock ticks (USER_HZ 100)
  } catch {
    return undefined;
  }
}

/** Run a process; wall time, CPU time, and its VmHWM polled from /proc while it runs. One at a time. */
function measure(cmd: string, argv: string[], pollHwm: boolean): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const cpuBefore = childrenCpuMs();
    const child = spawn(cmd, argv, { cwd: REPO_ROOT });
    let stdout = "";
    let stderr = "";
    let peak: number | undefined;
    const status = `/proc/${child.pid}/status`;
    const poll = pollHwm
      ? setInterval(() => {
          try {
            const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(status, "utf8"));
            if (m) peak = Math.max(peak ?? 0, Number(m[1]));
          } catch {
            // gone already
          }
        }, 3)
      : undefined;
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      if (poll) clearInterval(poll);
      const cpuAfter = childrenCpuMs();
      const cpuMs = cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined;
      resolve({ wallMs: performance.now() - start, cpuMs, peakKiB: peak, stdout, stderr, code });
    });
  });
}

async function phase(req: ChildRequest): Promise<ChildResult & { wallMs: number }> {
  const m = await measure(TSX, [CHILD, JSON.stringify(req)], false);
  if (m.code !== 0) throw new Error(`bench child ${JSON.stringify(req)} failed:\n${m.stderr}`);
  return { ...(JSON.parse(m.stdout.trim().split("\n").pop()!) as ChildResult), wallMs: m.wallMs };
}

/** The fastest of `n` runs (times), with the highest peak memory seen. */
async function best<T extends { ms?: Record<string, number>; wallMs: number; maxRssKiB?: number; peakKiB?: number }>(
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
  policyBreakdownMs: Record<string, number>;
  /** Resources the Pulumi program registers (what the policy pack judges). */
  resources: number | null;
}

const mib = (kib: number | undefined) => (kib === undefined ? null : Math.round((kib / 1024) * 10) / 10);
const round = (ms: number) => Math.round(ms);
const load = () => os.loadavg().map((l) => Math.round(l * 100) / 100);

type EnginePreview = { measured: true; tries: number; stacks: EngineStackResult[] } | { measured: false; why: string };

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
  const turn = async (stack: string) => {
    for (let i = 0; i < offlinePerTurn; i++) {
      const p = await measure(TSX, [path.join(REPO_ROOT, "scripts", "policy.ts"), "--stack", stack], false);
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
    previewTiming: { tries, turn },
    log: (line) => process.stderr.write(`bench: engine: ${line}\n`),
  });
  if ("cannotRun" in timed) return { measured: false, why: timed.cannotRun };
  const stacks: EngineStackResult[] = [];
  for (const t of timed) {
    const report = path.relative(REPO_ROOT, t.report);
    if (!t.ok) stacks.push({ stack: t.stack, measured: false, why: `the engine run failed: ${t.failure}`, report });
    else stacks.push(compareEngine(t.stack, t.seconds, offline.get(t.stack)!, report));
  }
  return { measured: true, tries, stacks };
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
  /** Only the CI figures (issue 23): from these logs, into results.json's `ci`. */
  ciFigures?: { engineBuildLog: string; e2eDir: string; engineOut?: string };
}

function benchOptions(): BenchOptions {
  const opts = args({
    sizes: { type: "string", default: "10,100,500,1000,5000" },
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
  });
  const sizes = opts.sizes!.split(",").map(Number);
  const repeat = Number(opts.repeat);
  if (sizes.some((s) => !Number.isInteger(s) || s < 9) || !Number.isInteger(repeat) || repeat < 1) {
    throw new UserError("--sizes takes whole numbers of at least 9, comma-separated; --repeat a whole number ≥ 1", EXIT_BAD_CONFIG);
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
    ciFigures: ci,
  };
}

/** kubeconform over `targets` (measured, its peak polled); any object not valid fails the bench. */
type KubeconformRun = (targets: string[]) => Promise<Measured>;

function kubeconformRunner(kubeconform: string, schemas: string): KubeconformRun {
  return async (targets) => {
    const m = await measure(kubeconform, kubeconformArgs(targets, schemas), true);
    const report = JSON.parse(m.stdout) as { summary?: Record<string, number> };
    const bad = (report.summary?.invalid ?? 0) + (report.summary?.errors ?? 0) + (report.summary?.skipped ?? 0);
    if (bad > 0) throw new Error(`kubeconform: ${bad} object(s) failed in ${targets.join(", ")}`);
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
  cli: { wallMs: number; ms: Record<string, number> };
  /** `npm run policy` on its own, as a developer runs it (tsx start-up included; npm's own start is not). */
  policyCli: Measured;
}

/** One run of the offline commands as CI runs them: render, validate, policy, plan. */
async function cliPipeline(cliOut: string, schemas: string): Promise<{ wallMs: number; ms: Record<string, number> }> {
  fs.rmSync(cliOut, { recursive: true, force: true });
  const r = await measure(TSX, [path.join(REPO_ROOT, "scripts", "render.ts"), "--out", cliOut], false);
  const v = await measure(TSX, [path.join(REPO_ROOT, "scripts", "validate.ts"), "--rendered", cliOut, "--schemas", schemas], false);
  if (r.code !== 0 || v.code !== 0) throw new Error(`CLI pipeline failed:\n${r.stderr}${v.stderr}`);
  const p = await measure(TSX, [path.join(REPO_ROOT, "scripts", "policy.ts")], false);
  if (p.code !== 0) throw new Error(`CLI pipeline: npm run policy failed:\n${p.stdout}${p.stderr}`);
  const c = await measure(TSX, [path.join(REPO_ROOT, "scripts", "plan.ts")], false);
  if (c.code !== 0) throw new Error(`CLI pipeline: npm run plan failed:\n${c.stdout}${c.stderr}`);
  return { wallMs: r.wallMs + v.wallMs + p.wallMs + c.wallMs, ms: { render: r.wallMs, plan: c.wallMs, validate: v.wallMs, policy: p.wallMs } };
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
  const cliOut = path.join(work, "cli");
  const cli = await best(
    o.quick,
    () => cliPipeline(cliOut, o.schemas),
    (r) => r.wallMs,
  );
  const policyCli = await best(
    o.quick,
    async () => {
      const p = await measure(TSX, [path.join(REPO_ROOT, "scripts", "policy.ts")], false);
      if (p.code !== 0) throw new Error(`npm run policy failed:\n${p.stdout}${p.stderr}`);
      return p;
    },
    (m) => m.wallMs,
  );
  return { stacks, pipeline, alone, cli, policyCli };
}

type NpmTest = { wallMs: number; cpuMs?: number; code: number | null; loadAtStart: number[]; summary: string };

/** `npm test`, whole (its pretest included), once: nothing else of the bench runs beside it. */
async function timeNpmTest(): Promise<NpmTest> {
  process.stderr.write("bench: npm test…\n");
  const loadBefore = load();
  const t = await measure("npm", ["test", "--silent"], false);
  const summary = `${t.stdout}\n${t.stderr}`
    .split("\n")
    .map((l) => stripVTControlCharacters(l))
    .filter((l) => /^\s*(Test Files|Tests)\s/.test(l))
    .map((l) => l.trim())
    .join("; ");
  if (t.code !== 0) throw new Error(`npm test failed (exit ${t.code}): ${summary}\n${t.stderr.slice(-4000)}`);
  return { wallMs: round(t.wallMs), cpuMs: t.cpuMs, code: t.code, loadAtStart: loadBefore, summary };
}

function benchTargets(rows: Row[], pipe: PipelineTimes, npmTest: NpmTest | undefined, enginePreview: EnginePreview): Target[] {
  const row = (label: string) => rows.find((r) => r.input === label)!;
  const renderPlacement = (r: Row) => r.renderMs + (r.placementMs ?? 0);
  const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
  const big = row("generated-5000");
  return [
    {
      what: "render + placement + validate, 4 stacks ÷ kubeconform alone on the same files",
      value: ratio(pipe.pipeline.ms.render + pipe.pipeline.ms.validate, pipe.alone.wallMs),
      unit: "×",
      max: 2,
    },
    { what: "the same with the policy pack", value: ratio(pipe.pipeline.ms.total, pipe.alone.wallMs), unit: "×", max: 5 },
    { what: "npm run policy, 4 stacks (wall)", value: round(pipe.policyCli.wallMs), unit: "ms", max: 4000 },
    { what: "policy, generated 5000-node stack (wall)", value: big.policyMs, unit: "ms", max: 6000 },
    { what: "policy, generated 5000-node stack: peak of the program's process", value: big.policyPeakMiB, unit: "MiB", below: 1024 },
    { what: "policy, generated 5000-node stack: peak of the pack's process", value: big.packPeakMiB, unit: "MiB", below: 1024 },
    { what: "render + placement, 5000 ÷ 500 nodes", value: ratio(renderPlacement(big), renderPlacement(row("generated-500"))), unit: "×", max: 11 },
    { what: "npm test (wall)", value: npmTest?.wallMs ?? null, unit: "ms", max: 60_000 },
    ...engineTargets(enginePreview.measured ? enginePreview.stacks : []),
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
      loadAverageAtEnd: load(),
    },
    method: "fastest of --repeat runs; each phase in its own process; peak = that process' maxRSS (kubeconform, packs: VmHWM from /proc)",
    repeat: o.repeat,
    rows,
    pipeline: {
      stacks: pipe.stacks,
      inProcessMs: msOf(pipe.pipeline.ms),
      inProcessPeakMiB: mib(pipe.pipeline.maxRssKiB),
      processWallMs: round(pipe.pipeline.wallMs),
      cliWallMs: msOf(pipe.cli.ms),
      cliTotalWallMs: round(pipe.cli.wallMs),
      kubeconformAloneMs: round(pipe.alone.wallMs),
      kubeconformAlonePeakMiB: mib(pipe.alone.peakKiB),
      placement: "part of render: planStack runs the placement checks and the render writes placement.md/.svg",
    },
    policyCliMs: round(pipe.policyCli.wallMs),
    policyCliCpuMs: pipe.policyCli.cpuMs,
    npmTest: npmTest ?? { measured: false, why: "--skip-tests" },
    enginePreview,
    targets: targets.map((t) => ({ ...t, holds: holds(t) })),
  };
}

/** What the bench prints: the machine, the rows, the pipeline, npm test, the engine, the targets. */
function summaryLines(
  o: BenchOptions,
  result: ReturnType<typeof benchResult>,
  npmTest: NpmTest | undefined,
  enginePreview: EnginePreview,
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
    `pipeline as CLI commands: ${Object.entries(result.pipeline.cliWallMs)
      .map(([k, v]) => `${k} ${v} ms`)
      .join(", ")}; total ${result.pipeline.cliTotalWallMs} ms`,
    `kubeconform alone on the same files: ${result.pipeline.kubeconformAloneMs} ms, peak ${cell(result.pipeline.kubeconformAlonePeakMiB, " MiB")}`,
    npmTest
      ? `npm test: ${npmTest.wallMs} ms, ${npmTest.cpuMs ?? "?"} ms of CPU (load ${npmTest.loadAtStart.join(" ")} at its start): ${npmTest.summary}`
      : "npm test: not timed (--skip-tests)",
    ...(enginePreview.measured ? enginePreview.stacks.map(engineLine) : [`*** pulumi preview --policy-pack policy: NOT MEASURED (${enginePreview.why}) ***`]),
    "",
    "| target | measured | goal | holds |",
    "|---|---:|---:|---|",
    ...targets.map((t) => `| ${t.what} | ${shown(t)} | ${goal(t)} | ${verdict(t)} |`),
    "",
    `written to ${o.out}`,
  ];
}

/** The figures of a CI run (issue 23), from the engine build's log and each stack's steps.json. */
/** The first build in `out` (build.sh's $OUT), from the birth times of bin/ and of bin/.stamps/*. */
function engineBuildFromOut(out: string): CiFigures["engineBuild"] {
  const stamps = path.join(out, "bin", ".stamps");
  if (!fs.existsSync(stamps)) return { measured: false, why: `no ${stamps}` };
  const born = fs.readdirSync(stamps).map((target) => ({ target, bornMs: fs.statSync(path.join(stamps, target)).birthtimeMs }));
  const start = fs.statSync(path.join(out, "bin")).birthtimeMs;
  const build = engineBuildFromFileTimes(start, born);
  if (!build) return { measured: false, why: `no usable birth times in ${stamps} (none kept, or a stamp older than bin/)` };
  const at = (ms: number) => new Date(ms).toISOString().slice(0, 19);
  return { ...build, source: `file times of ${out}: bin/ created ${at(start)}Z, last stamp ${at(start + build.totalSeconds * 1000)}Z` };
}

function collectCiFigures(c: NonNullable<BenchOptions["ciFigures"]>, npmTestSeconds: number | null): CiFigures {
  if (c.engineOut !== undefined) return ciFigures(engineBuildFromOut(c.engineOut), npmTestSeconds, stacksE2E(c.e2eDir));
  const text = fs.existsSync(c.engineBuildLog) ? fs.readFileSync(c.engineBuildLog, "utf8") : undefined;
  const build = text === undefined ? undefined : engineBuildFromLog(text);
  const e2e = stacksE2E(c.e2eDir);
  const why = text === undefined ? `no ${c.engineBuildLog}` : `no build.sh summary in ${c.engineBuildLog}`;
  return ciFigures(build ? { ...build, source: c.engineBuildLog } : { measured: false, why }, npmTestSeconds, e2e);
}

/** Each stack's e2e of CI_STACKS that has a steps.json in `dir`. */
function stacksE2E(dir: string): StackE2E[] {
  return CI_STACKS.map((s) => path.join(dir, s, "steps.json"))
    .filter((f) => fs.existsSync(f))
    .map((f) => stackE2E(JSON.parse(fs.readFileSync(f, "utf8"))));
}

/** `--ci-figures`: results.json's `ci` (and its target) replaced, everything else kept. */
function recordCiFigures(o: BenchOptions & { ciFigures: NonNullable<BenchOptions["ciFigures"]> }): void {
  const file = path.resolve(REPO_ROOT, o.out);
  const previous = JSON.parse(fs.readFileSync(file, "utf8")) as { npmTest?: { wallMs?: number }; targets?: Target[] };
  const npmTestMs = previous.npmTest?.wallMs;
  const ci = {
    recordedAt: new Date().toISOString(),
    loadAverage: load(),
    ...collectCiFigures(o.ciFigures, npmTestMs === undefined ? null : Math.round(npmTestMs / 1000)),
  };
  const target = ciTarget(ci);
  const targets = [...(previous.targets ?? []).filter((t) => t.what !== target.what), { ...target, holds: holds(target) }];
  writeWhole(file, `${JSON.stringify({ ...previous, ci, targets }, null, 2)}\n`);
  console.log([...ciLines(ci), `| ${target.what} | ${shown(target)} | ${goal(target)} | ${verdict(target)} |`, `written to ${o.out}`].join("\n"));
}

export async function benchMain(): Promise<number | void> {
  const o = benchOptions();
  if (o.ciFigures) return recordCiFigures({ ...o, ciFigures: o.ciFigures });
  const kubeconform = requireTool("kubeconform");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-bench-"));
  const loadAtStart = load();
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

  // the real engine against the offline policy path, before `npm test` (which must run alone)
  process.stderr.write("bench: pulumi preview --policy-pack policy (the real engine)…\n");
  const enginePreview = await enginePreviewTimes(o.skipEngine, o.schemas, o.engineTries, 2);
  if (!enginePreview.measured) process.stderr.write(`bench: *** ENGINE PREVIEW NOT MEASURED: ${enginePreview.why} ***\n`);
  // `npm test` last
  const npmTest = o.skipTests ? undefined : await timeNpmTest();

  const targets = benchTargets(rows, pipe, npmTest, enginePreview);
  const result = benchResult(o, loadAtStart, rows, pipe, npmTest, enginePreview, targets);
  fs.rmSync(work, { recursive: true, force: true });
  // the CI figures come from a CI run (--ci-figures), not from this one: kept as they were
  const outFile = path.resolve(REPO_ROOT, o.out);
  const kept = fs.existsSync(outFile) ? (JSON.parse(fs.readFileSync(outFile, "utf8")) as { ci?: CiFigures & { recordedAt: string } }) : {};
  const ciKept = kept.ci ? { ci: kept.ci, targets: [...result.targets, { ...ciTarget(kept.ci), holds: holds(ciTarget(kept.ci)) }] } : {};
  writeWhole(outFile, `${JSON.stringify({ ...result, ...ciKept }, null, 2)}\n`);
  console.log(summaryLines(o, result, npmTest, enginePreview, targets).join("\n"));
}
