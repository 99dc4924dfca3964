// One measured phase of `npm run bench`, in its own process so that its peak memory
// (process.resourceUsage().maxRSS, the high-water mark of this process' resident set) belongs to
// that phase alone plus what it needs (a placement or policy run builds its plan first). Prints one
// JSON line: the phase's own times in ms (module loading excluded) and maxRSS in KiB. The Pulumi
// SDK and the policy runner are imported by the phases that use them only, so that a render's peak
// is not the SDK's.
import { isError } from "../../config/problems";
import * as path from "node:path";
import { loadConfig } from "../../config/load";
import type { LoadedConfig } from "../../config/schema";
import { allUnits } from "../../plan/plan";
import { renderPlan } from "../../render/render";
import * as fs from "node:fs";
import { rawFromStackYaml, readStack, stackFilePath } from "../../config/stack-file";
import { placementReport } from "../../placement/report";
import { placementMarkdown, placementSvg } from "../../placement/picture";
import { planComponents } from "../../placement/workloads";
import { placementReaders, planStack } from "../../environments";
import { capture } from "./cli";
import { generatedProductionStack } from "./generate";
import { runKubeconformPerTarget } from "./kubeconform";
import { renderCommand } from "./render-command";
import { writeStackDir } from "./write";

export interface ChildRequest {
  mode: "render" | "placement" | "policy" | "pipeline";
  /** A shipped stack's name, or a generated inventory's size. */
  stack?: string;
  size?: number;
  /** Where render writes (render, pipeline). */
  out: string;
  /** pipeline: the kubeconform binary and schema folder. */
  kubeconform?: string;
  schemas?: string;
  stacksDir?: string;
}

export interface ChildResult {
  ms: Record<string, number>;
  maxRssKiB: number;
  nodes?: number;
  units?: number;
  files?: number;
  objects?: number;
  /** Resources the program registered (policy). */
  resources?: number;
}

function config(req: ChildRequest): LoadedConfig {
  if (req.size !== undefined) {
    const g = generatedProductionStack(req.size);
    return loadConfig(g.raw, { stack: g.stack, file: `generated:${g.stack}` });
  }
  return readStack(req.stack!, req.stacksDir ?? "stacks");
}

function rawOf(req: ChildRequest): Record<string, unknown> {
  if (req.size !== undefined) return generatedProductionStack(req.size).raw;
  const file = stackFilePath(req.stack!, req.stacksDir ?? "stacks");
  return rawFromStackYaml(fs.readFileSync(file, "utf8"), file);
}

const now = () => performance.now();

async function main(req: ChildRequest): Promise<ChildResult> {
  const ms: Record<string, number> = {};
  if (req.mode === "pipeline") {
    // the offline pipeline in one process: what `npm run render` and `npm run validate` do
    let t = now();
    const r = await capture(renderCommand, ["--out", req.out, "--stacks-dir", req.stacksDir ?? "stacks"]);
    if (r.code !== 0) throw new Error(`render failed (${r.code}): ${r.stderr}`);
    ms.render = now() - t;
    // (the placement checks and report of every stack are part of the render: planStack runs them)
    t = now();
    const stacks = r.stdout.split("\n").map((l) => /^([\w.-]+): /.exec(l)?.[1]).filter((s): s is string => s !== undefined);
    const results = runKubeconformPerTarget(req.kubeconform!, Object.fromEntries(stacks.map((s) => [s, path.join(req.out, s, "objects")])), req.schemas);
    const bad = Object.values(results).reduce((n, x) => n + x.invalid + x.errors + x.skipped, 0);
    if (bad > 0) throw new Error(`${bad} object(s) failed validation`);
    ms.validate = now() - t;
    // the policy pack over every stack, as npm run policy: every pack starts at once, programs one by one
    t = now();
    const { runProgram } = await import("./mock-run");
    const { judge, openPack, pulumiConfigMap } = await import("./policy-run");
    const program = (await import("../../index")).default;
    const stacksDir = req.stacksDir ?? "stacks";
    const configs = stacks.map((s) => pulumiConfigMap(rawFromStackYaml(fs.readFileSync(stackFilePath(s, stacksDir), "utf8"), s)));
    const packs = stacks.map((s, i) => openPack(s, configs[i]));
    packs.forEach((p) => p.catch(() => undefined));
    for (const [i, s] of stacks.entries()) {
      const run = await runProgram(s, configs[i], program);
      const session = await packs[i];
      const result = await judge(s, run, session);
      session.close();
      if (result.mandatory.length > 0) throw new Error(`${s}: ${result.mandatory.length} mandatory policy violation(s)`);
    }
    ms.policy = now() - t;
    ms.total = Object.values(ms).reduce((a, b) => a + b, 0);
    return { ms, maxRssKiB: process.resourceUsage().maxRSS };
  }
  let t = now();
  const cfg = config(req);
  ms.config = now() - t;
  t = now();
  const result = planStack(cfg);
  if (!result.plan) throw new Error(`plan checks failed: ${result.checks.filter(isError).map((c) => c.code).join(", ")}`);
  const plan = result.plan;
  ms.plan = now() - t;
  if (req.mode === "placement") {
    // the placement report and its checks (planStack ran them once already; timed again alone),
    // then its two files
    t = now();
    const report = placementReport(plan, result.topology, planComponents(plan, placementReaders(cfg.environment)));
    ms.report = now() - t;
    if (report.checks.length > 0) throw new Error(`placement checks failed: ${report.checks.map((c) => c.code).join(", ")}`);
    t = now();
    placementMarkdown(report);
    placementSvg(report);
    ms.files = now() - t;
    ms.placement = ms.report + ms.files;
    return { ms, maxRssKiB: process.resourceUsage().maxRSS };
  }
  if (req.mode === "policy") {
    const { deployPlan } = await import("../../components/deploy");
    const { runProgram } = await import("./mock-run");
    const { judge, openPack, pulumiConfigMap } = await import("./policy-run");
    // what `npm run policy` does for a stack: the Pulumi layer under the runtime mocks, then the
    // real pack (spawned, transpile-only) judging every registered resource over the Analyzer protocol
    const config = pulumiConfigMap(rawOf(req));
    t = now();
    const pack = openPack(plan.stack, config);
    pack.catch(() => undefined);
    const run = await runProgram(plan.stack, config, async () => {
      deployPlan(plan);
    });
    ms.program = now() - t;
    const session = await pack;
    ms.packStart = now() - t; // started beside the program, as npm run policy does
    t = now();
    const result = await judge(plan.stack, run, session);
    session.close();
    ms.analyze = now() - t;
    if (result.mandatory.length > 0) throw new Error(`${result.mandatory.length} mandatory policy violation(s)`);
    ms.policy = Math.max(ms.program, ms.packStart) + ms.analyze;
    return { ms, maxRssKiB: process.resourceUsage().maxRSS, resources: run.resources.length };
  }
  t = now();
  const files = renderPlan(plan, result.placement);
  ms.renderFiles = now() - t;
  t = now();
  writeStackDir(req.out, plan.stack, files);
  ms.write = now() - t;
  ms.total = ms.config + ms.plan + ms.renderFiles + ms.write;
  return {
    ms,
    maxRssKiB: process.resourceUsage().maxRSS,
    nodes: plan.nodes.length,
    units: allUnits(plan).length,
    files: files.length,
    objects: files.filter((f) => f.path.startsWith("objects/")).length,
  };
}

main(JSON.parse(process.argv[2]) as ChildRequest).then(
  (r) => process.stdout.write(`${JSON.stringify(r)}\n`),
  (e: unknown) => {
    process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
    process.exitCode = 1;
  },
);
