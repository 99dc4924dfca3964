// One measured phase of `npm run bench`, in its own process so that its peak memory
// (process.resourceUsage().maxRSS, the high-water mark of this process' resident set) belongs to
// that phase alone plus what it needs (a placement or policy run builds its plan first). Prints one
// JSON line: the phase's own times in ms (module loading excluded: every module a phase uses is
// imported before its clock starts) and maxRSS in KiB; a policy phase adds its packs' CPU time and
// peak (VmHWM). The Pulumi SDK and the policy runner are imported by the phases that use them only,
// so that a render's peak is not the SDK's.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { stringify } from "yaml";
import { isError } from "../config/problems";
import { loadConfig } from "../config/load";
import { PROJECT, type LoadedConfig } from "../config/schema";
import { allUnits } from "../plan/plan";
import { renderPlan } from "../render/rendered";
import { listStacks, readStack } from "../config/stack-file";
import { placementReport } from "../placement/report";
import { placementData } from "../placement/data";
import { placementMarkdown, placementSvg } from "../placement/picture";
import { planComponents } from "../placement/workloads";
import { resolveEnvironment, planStack } from "../environments";
import { capture } from "../cli/cli";
import { generatedProductionStack } from "./generate";
import { runKubeconformPerTarget } from "../tools/kubeconform";
import { renderCommand } from "../pipeline/render-command";
import { writeStackDir } from "../cli/write";
import { STACK_DECLARATIONS } from "../environments/registry";

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
  /** The policy packs' CPU time and peak resident set, one entry per pack process (Linux). */
  packs?: { cpuMs: number; peakKiB: number }[];
}

function config(req: ChildRequest): LoadedConfig {
  if (req.size !== undefined) {
    const g = generatedProductionStack(req.size);
    return loadConfig(g.raw, { stack: g.stack, file: `generated:${g.stack}` }, STACK_DECLARATIONS);
  }
  return readStack(req.stack!, req.stacksDir ?? "stacks", STACK_DECLARATIONS);
}

/** The stacks folder `npm run policy` reads the input from: a generated inventory is written as a stack file. */
function stacksDirOf(req: ChildRequest): { dir: string; stack: string } {
  if (req.size === undefined) return { dir: req.stacksDir ?? "stacks", stack: req.stack! };
  const g = generatedProductionStack(req.size);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-bench-stacks-"));
  fs.writeFileSync(
    path.join(dir, `Pulumi.${g.stack}.yaml`),
    stringify({ config: Object.fromEntries(Object.entries(g.raw).map(([k, v]) => [`${PROJECT}:${k}`, v])) }, { aliasDuplicateObjects: false }),
  );
  return { dir, stack: g.stack };
}

const now = () => performance.now();
/** This process' CPU time so far (ms, every thread). */
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** `npm run policy`'s code and every module its programs load, loaded before a clock starts. */
async function policyModules() {
  const command = await import("../offline-engine/policy-command");
  await Promise.all([import("../offline-engine/mock-run"), import("../components/deploy")]);
  return command;
}

/**
 * The offline pipeline in one process, each command after the other as CI runs them: what
 * `npm run render`, `npm run validate` and `npm run policy` do.
 */
async function pipelinePhase(req: ChildRequest): Promise<ChildResult> {
  const ms: Record<string, number> = {};
  const { plannedStacks, judgeStacks } = await policyModules();
  let t = now();
  const r = await capture(renderCommand, ["--out", req.out, "--stacks-dir", req.stacksDir ?? "stacks"]);
  if (r.code !== 0) throw new Error(`render failed (${r.code}): ${r.stderr}`);
  ms.render = now() - t;
  // (the placement checks and report of every stack are part of the render: planStack runs them)
  t = now();
  const stacks = listStacks(req.stacksDir ?? "stacks");
  const results = runKubeconformPerTarget(req.kubeconform!, Object.fromEntries(stacks.map((s) => [s, path.join(req.out, s, "objects")])), req.schemas);
  const bad = Object.values(results).reduce((n, x) => n + x.invalid + x.errors + x.skipped, 0);
  if (bad > 0) throw new Error(`${bad} object(s) failed validation`);
  ms.validate = now() - t;
  t = now();
  let violations = 0;
  await judgeStacks(plannedStacks(stacks, req.stacksDir ?? "stacks"), undefined, (_s, result) => (violations += result.mandatory.length));
  if (violations > 0) throw new Error(`${violations} mandatory policy violation(s)`);
  ms.policy = now() - t;
  ms.total = ms.render + ms.validate + ms.policy;
  return { ms, maxRssKiB: process.resourceUsage().maxRSS };
}

/**
 * What `npm run policy -- --stack <stack>` does: load and plan the stack (its checks), then the
 * real pack (spawned, transpile-only) judges every resource the program registers, as it does.
 */
async function policyPhase(req: ChildRequest): Promise<ChildResult> {
  const ms: Record<string, number> = {};
  const { plannedStacks, judgeStacks } = await policyModules();
  const input = stacksDirOf(req);
  let t = now();
  const stacks = plannedStacks([input.stack], input.dir);
  ms.plan = now() - t;
  t = now();
  const c = cpu();
  let resources = 0;
  const packs = await judgeStacks(stacks, undefined, (_s, result) => {
    resources = result.resources;
    if (result.mandatory.length > 0) throw new Error(`${result.mandatory.length} mandatory policy violation(s)`);
  });
  ms.policy = now() - t;
  ms.policyCpu = cpu() - c;
  if (req.size !== undefined) fs.rmSync(input.dir, { recursive: true, force: true });
  return { ms, maxRssKiB: process.resourceUsage().maxRSS, resources, packs };
}

/** The stack's config loaded and planned (timed in `ms`): what the placement and render phases start from. */
function planned(req: ChildRequest, ms: Record<string, number>) {
  let t = now();
  const cfg = config(req);
  ms.config = now() - t;
  t = now();
  const result = planStack(cfg);
  if (!result.plan)
    throw new Error(
      `plan checks failed: ${result.problems
        .filter(isError)
        .map((c) => c.code ?? c.message)
        .join(", ")}`,
    );
  ms.plan = now() - t;
  return { cfg, result, plan: result.plan };
}

/** The placement report and its checks (planStack ran them once already; timed again alone), then its two files. */
function placementPhase(req: ChildRequest): ChildResult {
  const ms: Record<string, number> = {};
  const { cfg, result, plan } = planned(req, ms);
  let t = now();
  const report = placementReport(
    plan,
    result.topology,
    planComponents(plan, resolveEnvironment(cfg.environment).readers),
    resolveEnvironment(cfg.environment).placementChecks,
  );
  ms.report = now() - t;
  if (report.checks.length > 0) throw new Error(`placement checks failed: ${report.checks.map((c) => c.code).join(", ")}`);
  t = now();
  const data = placementData(report);
  placementMarkdown(data);
  placementSvg(data);
  ms.files = now() - t;
  ms.placement = ms.report + ms.files;
  return { ms, maxRssKiB: process.resourceUsage().maxRSS };
}

/** The stack rendered and written, as `npm run render` does for one stack. */
async function renderPhase(req: ChildRequest): Promise<ChildResult> {
  const ms: Record<string, number> = {};
  const { result, plan } = planned(req, ms);
  let t = now();
  const files = renderPlan(plan, result.placement);
  ms.renderFiles = now() - t;
  t = now();
  await writeStackDir(req.out, plan.stack, files);
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

async function main(req: ChildRequest): Promise<ChildResult> {
  switch (req.mode) {
    case "pipeline":
      return pipelinePhase(req);
    case "policy":
      return policyPhase(req);
    case "placement":
      return placementPhase(req);
    case "render":
      return renderPhase(req);
  }
}

main(JSON.parse(process.argv[2]) as ChildRequest).then(
  (r) => process.stdout.write(`${JSON.stringify(r)}\n`),
  (e: unknown) => {
    process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
    process.exitCode = 1;
  },
);
