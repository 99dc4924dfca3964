// npm run bench [-- --sizes 10,100,500,1000,5000] [--repeat 2] [--out bench/results.json]:
// what the offline pipeline costs, per shipped stack and per generated inventory (scripts/lib/generate.ts):
// render, placement, validate and policy times and peak memory, the whole pipeline over the four
// stacks, kubeconform alone on the same files (the floor for validation), and two ratios measured
// in this run. Prints a table and writes the JSON.
//
// Method. Each phase runs in its own child process (scripts/lib/bench-child.ts), which reports the
// phase's own time (module loading excluded) and its peak resident set, process.resourceUsage()
// .maxRSS: the high-water mark of that process, so it covers the phase and what the phase needs
// (placement and policy build their plan first), never another phase. kubeconform's peak is its
// VmHWM from /proc/<pid>/status, read every few milliseconds while it runs (Linux; "-" elsewhere).
// Each measurement is repeated (--repeat) and the fastest run kept: the machine is shared, and the
// minimum is the least disturbed figure (the policy phase of 5000 nodes runs once). Speed goals are
// read here, never asserted by tests.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { listStacks } from "../config/stack-file";
import { args, EXIT_BAD_CONFIG, run, UserError } from "./lib/cli";
import type { ChildRequest, ChildResult } from "./lib/bench-child";
import { kubeconformArgs, SCHEMAS_ENV } from "./lib/kubeconform";
import { REPO_ROOT, requireTool } from "./lib/tools";

const TSX = path.join(REPO_ROOT, "node_modules", ".bin", "tsx");
const CHILD = path.join(REPO_ROOT, "scripts", "lib", "bench-child.ts");

interface Measured {
  wallMs: number;
  peakKiB?: number;
  stdout: string;
  stderr: string;
  code: number | null;
}

/** Run a process; wall time, and its VmHWM polled from /proc while it runs. */
function measure(cmd: string, argv: string[], pollHwm: boolean): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
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
      resolve({ wallMs: performance.now() - start, peakKiB: peak, stdout, stderr, code });
    });
  });
}

async function phase(req: ChildRequest): Promise<ChildResult & { wallMs: number }> {
  const m = await measure(TSX, [CHILD, JSON.stringify(req)], false);
  if (m.code !== 0) throw new Error(`bench child ${JSON.stringify(req)} failed:\n${m.stderr}`);
  return { ...(JSON.parse(m.stdout.trim().split("\n").pop()!) as ChildResult), wallMs: m.wallMs };
}

/** The fastest of `n` runs (times), with the highest peak memory seen. */
async function best<T extends { ms?: Record<string, number>; wallMs: number; maxRssKiB?: number; peakKiB?: number }>(n: number, f: () => Promise<T>, key: (t: T) => number): Promise<T> {
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
  policyMs: number | null;
  policyPeakMiB: number | null;
  renderBreakdownMs: Record<string, number>;
  policyBreakdownMs: Record<string, number>;
  /** Resources the Pulumi program registers (what the policy pack judges). */
  resources: number | null;
}

const mib = (kib: number | undefined) => (kib === undefined ? null : Math.round((kib / 1024) * 10) / 10);
const round = (ms: number) => Math.round(ms);

run(async () => {
  const opts = args({
    sizes: { type: "string", default: "10,100,500,1000,5000" },
    repeat: { type: "string", default: "2" },
    out: { type: "string", default: "bench/results.json" },
    schemas: { type: "string" },
  });
  const sizes = opts.sizes!.split(",").map(Number);
  const repeat = Number(opts.repeat);
  if (sizes.some((s) => !Number.isInteger(s) || s < 9) || !Number.isInteger(repeat) || repeat < 1) {
    throw new UserError("--sizes takes whole numbers of at least 9, comma-separated; --repeat a whole number ≥ 1", EXIT_BAD_CONFIG);
  }
  for (const needed of [500, 5000]) if (!sizes.includes(needed)) sizes.push(needed);
  sizes.sort((a, b) => a - b);
  const schemas = opts.schemas ?? process.env[SCHEMAS_ENV] ?? (fs.existsSync(path.join(REPO_ROOT, "..", "shared", "schemas")) ? path.join(REPO_ROOT, "..", "shared", "schemas") : undefined);
  if (!schemas) throw new UserError(`no offline schema folder: pass --schemas <dir> or set ${SCHEMAS_ENV} (the bench never downloads schemas)`, EXIT_BAD_CONFIG);
  const kubeconform = requireTool("kubeconform");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-bench-"));

  const kubeconformRun = async (targets: string[]) => {
    const m = await measure(kubeconform, kubeconformArgs(targets, schemas), true);
    const report = JSON.parse(m.stdout) as { summary?: Record<string, number> };
    const bad = (report.summary?.invalid ?? 0) + (report.summary?.errors ?? 0) + (report.summary?.skipped ?? 0);
    if (bad > 0) throw new Error(`kubeconform: ${bad} object(s) failed in ${targets.join(", ")}`);
    return m;
  };

  const inputs: { label: string; req: Omit<ChildRequest, "mode" | "out"> }[] = [
    ...listStacks(path.join(REPO_ROOT, "stacks")).map((s) => ({ label: s, req: { stack: s, stacksDir: path.join(REPO_ROOT, "stacks") } })),
    ...sizes.map((n) => ({ label: `generated-${n}`, req: { size: n } })),
  ];
  const rows: Row[] = [];
  for (const input of inputs) {
    process.stderr.write(`bench: ${input.label}…\n`);
    const out = path.join(work, "phases");
    const render = await best(repeat, () => phase({ ...input.req, mode: "render", out }), (r) => r.ms.total);
    const placement = await best(repeat, () => phase({ ...input.req, mode: "placement", out }), (r) => r.ms.placement);
    // the policy phase of the largest inventories takes about a minute: measured once
    const policy = await best((input.req.size ?? 0) >= 5000 ? 1 : repeat, () => phase({ ...input.req, mode: "policy", out }), (r) => r.ms.policy);
    const stackName = input.req.stack ?? `generated-${input.req.size}`;
    const validate = await best(repeat, () => kubeconformRun([path.join(out, stackName, "objects")]), (m) => m.wallMs);
    rows.push({
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
      policyBreakdownMs: Object.fromEntries(Object.entries(policy.ms).map(([k, v]) => [k, round(v)])),
      resources: policy.resources ?? null,
      policyPeakMiB: mib(policy.maxRssKiB),
      renderBreakdownMs: Object.fromEntries(Object.entries(render.ms).map(([k, v]) => [k, round(v)])),
    });
    fs.rmSync(path.join(out, stackName), { recursive: true, force: true });
  }

  // The whole offline pipeline over the four stacks, in one process and as the CLI commands, and
  // kubeconform alone on the very files the pipeline wrote.
  process.stderr.write("bench: pipeline…\n");
  const pipeOut = path.join(work, "pipeline");
  const pipeline = await best(
    repeat,
    async () => {
      fs.rmSync(pipeOut, { recursive: true, force: true });
      return phase({ mode: "pipeline", out: pipeOut, kubeconform, schemas, stacksDir: path.join(REPO_ROOT, "stacks") });
    },
    (r) => r.ms.total,
  );
  const stacks = listStacks(path.join(REPO_ROOT, "stacks"));
  const alone = await best(repeat, () => kubeconformRun(stacks.map((s) => path.join(pipeOut, s, "objects"))), (m) => m.wallMs);
  const cliOut = path.join(work, "cli");
  const cli = await best(
    repeat,
    async () => {
      fs.rmSync(cliOut, { recursive: true, force: true });
      const r = await measure(TSX, [path.join(REPO_ROOT, "scripts", "render.ts"), "--out", cliOut], false);
      const v = await measure(TSX, [path.join(REPO_ROOT, "scripts", "validate.ts"), "--rendered", cliOut, "--schemas", schemas], false);
      if (r.code !== 0 || v.code !== 0) throw new Error(`CLI pipeline failed:\n${r.stderr}${v.stderr}`);
      const p = await measure(TSX, [path.join(REPO_ROOT, "scripts", "policy.ts")], false);
      if (p.code !== 0) throw new Error(`CLI pipeline: npm run policy failed:\n${p.stdout}${p.stderr}`);
      const c = await measure(TSX, [path.join(REPO_ROOT, "scripts", "plan.ts")], false);
      if (c.code !== 0) throw new Error(`CLI pipeline: npm run plan failed:\n${c.stdout}${c.stderr}`);
      return { wallMs: r.wallMs + v.wallMs + p.wallMs + c.wallMs, ms: { render: r.wallMs, plan: c.wallMs, validate: v.wallMs, policy: p.wallMs } };
    },
    (r) => r.wallMs,
  );

  const row = (label: string) => rows.find((r) => r.input === label)!;
  const policyBreakdown = { note: "policy = max(program under the mocks, pack start, run side by side) + analyze; see rows[].policyBreakdownMs" };
  const renderPlacement = (r: Row) => r.renderMs + (r.placementMs ?? 0);
  const ratios = {
    /** render (placement included) + validate: what the validation floor bounds */
    pipelineOverKubeconform: Math.round(((pipeline.ms.render + pipeline.ms.validate) / alone.wallMs) * 100) / 100,
    /** the same with the policy pack: a spawned pack and the Pulumi runtime under mocks per stack */
    pipelineWithPolicyOverKubeconform: Math.round((pipeline.ms.total / alone.wallMs) * 100) / 100,
    pipelineOverKubeconformTarget: 3,
    render5000Over500: Math.round((renderPlacement(row("generated-5000")) / renderPlacement(row("generated-500"))) * 100) / 100,
    render5000Over500Target: 11,
  };
  const result = {
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? "unknown",
      memoryGiB: Math.round(os.totalmem() / 1024 ** 3),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      loadAverageAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
    },
    method: "fastest of --repeat runs; each phase in its own process; peak = that process' maxRSS (kubeconform: VmHWM polled from /proc)",
    repeat,
    rows,
    pipeline: {
      stacks,
      inProcessMs: Object.fromEntries(Object.entries(pipeline.ms).map(([k, v]) => [k, round(v)])),
      inProcessPeakMiB: mib(pipeline.maxRssKiB),
      processWallMs: round(pipeline.wallMs),
      cliWallMs: Object.fromEntries(Object.entries(cli.ms).map(([k, v]) => [k, round(v)])),
      cliTotalWallMs: round(cli.wallMs),
      kubeconformAloneMs: round(alone.wallMs),
      kubeconformAlonePeakMiB: mib(alone.peakKiB),
      placement: "part of render: planStack runs the placement checks and the render writes placement.md/.svg",
      policyBreakdownMs: Object.fromEntries(Object.entries(policyBreakdown).map(([k, v]) => [k, v])),
    },
    ratios,
  };
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(path.resolve(REPO_ROOT, opts.out!)), { recursive: true });
  fs.writeFileSync(path.resolve(REPO_ROOT, opts.out!), `${JSON.stringify(result, null, 2)}\n`);

  const cell = (v: number | null, unit = "") => (v === null ? "n/a" : `${v}${unit}`);
  const lines = [
    `machine: ${result.machine.cpus} CPUs (${result.machine.cpuModel}), ${result.machine.memoryGiB} GiB, Node ${result.machine.node}, load ${result.machine.loadAverageAtStart.join(" ")}`,
    "",
    "| input | nodes | objects | render ms | render MiB | placement ms | placement MiB | validate ms | validate MiB | policy ms | policy MiB |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.input} | ${r.nodes} | ${r.objects} | ${r.renderMs} | ${r.renderPeakMiB} | ${cell(r.placementMs)} | ${cell(r.placementPeakMiB)} | ${r.validateMs} | ${cell(r.validatePeakMiB)} | ${cell(r.policyMs)} | ${cell(r.policyPeakMiB)} |`,
    ),
    "",
    `pipeline, ${stacks.length} stacks, one process: ${Object.entries(result.pipeline.inProcessMs).map(([k, v]) => `${k} ${v} ms`).join(", ")}; peak ${result.pipeline.inProcessPeakMiB} MiB; process wall ${result.pipeline.processWallMs} ms`,
    `pipeline as CLI commands: ${Object.entries(result.pipeline.cliWallMs).map(([k, v]) => `${k} ${v} ms`).join(", ")}; total ${result.pipeline.cliTotalWallMs} ms (target: about 20 s)`,
    `kubeconform alone on the same files: ${result.pipeline.kubeconformAloneMs} ms, peak ${cell(result.pipeline.kubeconformAlonePeakMiB, " MiB")}`,
    `ratio pipeline (render, placement, validate) ÷ kubeconform alone: ${ratios.pipelineOverKubeconform} (target ≤ ${ratios.pipelineOverKubeconformTarget}); with the policy pack: ${ratios.pipelineWithPolicyOverKubeconform}`,
    `ratio 5000-node ÷ 500-node render+placement: ${ratios.render5000Over500} (target ≤ ${ratios.render5000Over500Target})`,
    `written to ${opts.out}`,
  ];
  console.log(lines.join("\n"));
});
