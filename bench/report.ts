// What the bench reports: the shape of bench/results.json (the machine, every row, the pipeline,
// npm test, the engine, the operator's figures), the targets with their goals, and the lines it prints.
import * as os from "node:os";
import type { ChildResult } from "./bench-child";
import { engineLine, engineTargets, goal, holds, shown, verdict, type Target } from "./bench-targets";
import { firstUpSummary, type EnginePreview, type FirstUpResult } from "./engine";
import { firstUpTargets } from "./first-up";
import { loads, type Measured } from "./measure";
import type { EditLoopFigure, PrCheckFigure, PreviewFigure } from "./operator";
import type { BenchOptions } from "./options";

export interface Row {
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

export const mib = (kib: number | undefined) => (kib === undefined ? null : Math.round((kib / 1024) * 10) / 10);

export const round = (ms: number) => Math.round(ms);

export const msOf = (ms: Record<string, number>) => Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, round(v)]));

/** The whole offline pipeline over the shipped stacks: in one process, and as the CLI commands; kubeconform alone on the very files it wrote. */
export interface PipelineTimes {
  stacks: string[];
  pipeline: ChildResult & { wallMs: number };
  alone: Measured;
  /** `npm run policy` on its own, as a developer runs it (tsx start-up included; npm's own start is not). */
  policyCli: Measured;
}

export type NpmTest = { wallMs: number; cpuMs?: number | undefined; code: number | null; load: number; summary: string; fastWallMs: number; fastLoad: number };

/** Issue 25's anchored inventory: the same stack with its compute labels through one YAML alias, and written out. */
export interface AnchoredFigure {
  nodes: number;
  aliasedMs: number;
  writtenOutMs: number;
  load: number;
  /** Where the renders wrote their files: in memory (/dev/shm) or, where there is none, on disk. */
  outputs: "memory" | "disk";
}

/** The measurements of what an operator waits for (bench/operator.ts). */
export interface OperatorFigures {
  anchored: AnchoredFigure;
  preview: PreviewFigure;
  editLoop: EditLoopFigure;
  prCheck: PrCheckFigure;
}

export function benchTargets(
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
export function benchResult(
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
export function summaryLines(
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
