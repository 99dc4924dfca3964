// One measured phase of `npm run bench`, in its own process so that its peak memory
// (process.resourceUsage().maxRSS, the high-water mark of this process' resident set) belongs to
// that phase alone plus what it needs (a placement or policy run builds its plan first). Prints one
// JSON line: the phase's own times in ms (module loading excluded) and maxRSS in KiB.
import * as path from "node:path";
import { loadConfig, type LoadedConfig } from "../../components/config";
import { allUnits } from "../../components/plan";
import { renderPlan } from "../../components/render";
import { readStack } from "../../components/stack-file";
import { planStack } from "../../environments";
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
  /** A phase that does not exist yet (issue 5 / issue 7 not merged). */
  unavailable?: string;
}

function config(req: ChildRequest): LoadedConfig {
  if (req.size !== undefined) {
    const g = generatedProductionStack(req.size);
    return loadConfig(g.raw, { stack: g.stack, file: `generated:${g.stack}` });
  }
  return readStack(req.stack!, req.stacksDir ?? "stacks");
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
    // INTEGRATION(issue 7): placement checks and report of every stack, timed as ms.placement.
    t = now();
    const stacks = r.stdout.split("\n").map((l) => /^([\w.-]+): /.exec(l)?.[1]).filter((s): s is string => s !== undefined);
    const results = runKubeconformPerTarget(req.kubeconform!, Object.fromEntries(stacks.map((s) => [s, path.join(req.out, s, "objects")])), req.schemas);
    const bad = Object.values(results).reduce((n, x) => n + x.invalid + x.errors + x.skipped, 0);
    if (bad > 0) throw new Error(`${bad} object(s) failed validation`);
    ms.validate = now() - t;
    // INTEGRATION(issue 5): the policy pack over every stack, timed as ms.policy.
    ms.total = Object.values(ms).reduce((a, b) => a + b, 0);
    return { ms, maxRssKiB: process.resourceUsage().maxRSS };
  }
  let t = now();
  const cfg = config(req);
  ms.config = now() - t;
  t = now();
  const result = planStack(cfg);
  if (!result.plan) throw new Error(`plan checks failed: ${result.checks.filter((c) => c.level === "error").map((c) => c.code).join(", ")}`);
  const plan = result.plan;
  ms.plan = now() - t;
  if (req.mode === "placement") {
    // INTEGRATION(issue 7): run the placement checks and the report over `plan` here.
    return { ms, maxRssKiB: process.resourceUsage().maxRSS, unavailable: "placement checks (issue 7) not merged" };
  }
  if (req.mode === "policy") {
    // INTEGRATION(issue 5): run the policy pack's rules over `plan` here.
    return { ms, maxRssKiB: process.resourceUsage().maxRSS, unavailable: "policy pack (issue 5) not merged" };
  }
  t = now();
  const files = renderPlan(plan);
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
