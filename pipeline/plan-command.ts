// `npm run plan` as a function of its arguments: the CLI (scripts/plan.ts) and the tests run the
// same code, the tests in-process with the output captured. It judges each stack as `npm run render`
// does — plan checks, placement checks, then its transition against what is deployed
// (review/verdict.ts) — and writes nothing; the deploy workflow runs it as the last gate before
// `pulumi up`, so the gate is never weaker than the render.
import * as path from "node:path";
import { placementSummary } from "../placement/summary";
import { renderPlan } from "../render/rendered";
import { args, EXIT_CHECKS_FAILED, planStacks, UserError, type Io } from "../cli/cli";
import { planWarnings, warningLines } from "../cli/warnings";
import { upgradeErrors, upgradeLine } from "../review/upgrade-check";
import { judged, verdictErrors, verdictWarnings, type StackVerdict } from "../review/verdict";

const PLAN_OPTIONS = {
  stack: { type: "string", multiple: true },
  "stacks-dir": { type: "string", default: "stacks" },
  /** The committed state the stacks are judged against (default: deployed/<stack>, else HEAD). */
  base: { type: "string" },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const PLAN_SCRIPT = path.resolve(__dirname, "../scripts/plan.ts");

/** `  transition: …`: what the stack's change was judged against, and how it came out. */
function transitionLine(v: StackVerdict): string {
  const r = v.reference;
  if (!r.render) return `  transition not judged: ${r.note ?? `nothing at ${r.where}`}`;
  const warnings = v.findings.length;
  return `  transition against ${r.where}: passed, ${warnings} warning(s)${warnings ? " (below)" : ""}`;
}

export function planCommand(argv: string[], io: Io): void {
  const opts = args(PLAN_OPTIONS, argv, PLAN_SCRIPT);
  const stacks = planStacks(opts.stack, opts["stacks-dir"], io.progress);
  const files = new Map(stacks.map((s) => [s.plan.stack, s.config.file]));
  const vs = judged(
    opts["stacks-dir"]!,
    stacks.map((s) => ({ plan: s.plan, files: renderPlan(s.plan, s.result.placement) })),
    { base: opts.base },
  );
  const refused = [...verdictErrors(vs, files), ...upgradeErrors(vs.map((v) => v.upgrades))];
  if (refused.length > 0) throw new UserError(refused.join("\n"), EXIT_CHECKS_FAILED);
  for (const [i, s] of stacks.entries()) {
    const p = s.plan;
    io.out(`${p.stack}: ${p.environment}/${p.topology}, ${p.nodes.length} nodes, ${p.labelProfile} labels, tainted: ${p.taintedRoles.join(", ") || "none"}\n`);
    io.out(`  plan checks: passed, ${p.warnings.length} warning(s)${p.warnings.length ? " (below)" : ""}\n`);
    for (const line of placementSummary(s.result.placement!)) io.out(`  ${line}\n`);
    io.out(`${transitionLine(vs[i])}\n`);
    const u = vs[i].upgrades;
    io.out(`  upgrades: ${u.where ? `${u.upgrades.map(upgradeLine).join("; ") || "none"} (against ${u.where})` : `not checked: ${u.note}`}\n`);
  }
  // each warning once for the run, however many stacks have it (cli/warnings.ts)
  for (const line of warningLines([...planWarnings(stacks), ...verdictWarnings(vs, files)])) io.out(`${line}\n`);
}
