// `npm run plan` as a function of its arguments: the CLI (scripts/plan.ts) and the tests run the
// same code, the tests in-process with the output captured.
import * as path from "node:path";
import { placementSummary } from "../placement/summary";
import { renderPlan } from "../render/rendered";
import { args, EXIT_CHECKS_FAILED, planStacks, UserError, type Io } from "../cli/cli";
import { planWarnings, warningLines } from "../cli/warnings";
import { upgradeErrors, upgradeLine } from "../review/upgrade-check";
import { renderedUpgrades } from "./render-command";
import { formatProblem } from "../config/problems";
import { workTreeOf } from "../review/committed-pins";
import { classReplacements } from "../review/class-replacements";

const PLAN_OPTIONS = {
  stack: { type: "string", multiple: true },
  "stacks-dir": { type: "string", default: "stacks" },
  /** The committed state the upgrade check compares the pins and the priority classes with (default: deployed/<stack>, else HEAD). */
  base: { type: "string" },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const PLAN_SCRIPT = path.resolve(__dirname, "../scripts/plan.ts");

export function planCommand(argv: string[], io: Io): void {
  const opts = args(PLAN_OPTIONS, argv, PLAN_SCRIPT);
  const stacks = planStacks(opts.stack, opts["stacks-dir"], io.progress);
  const upgrades = renderedUpgrades(
    opts["stacks-dir"]!,
    stacks.map((s) => ({ plan: s.plan, files: renderPlan(s.plan, s.result.placement) })),
    opts.base,
  );
  const refused = upgradeErrors(upgrades);
  if (refused.length > 0) throw new UserError(refused.join("\n"), EXIT_CHECKS_FAILED);
  const classes = classReplacements(
    workTreeOf(opts["stacks-dir"]!),
    stacks.map((s) => s.plan),
    opts.base,
  );
  for (const [i, s] of stacks.entries()) {
    const p = s.plan;
    io.out(`${p.stack}: ${p.environment}/${p.topology}, ${p.nodes.length} nodes, ${p.labelProfile} labels, tainted: ${p.taintedRoles.join(", ") || "none"}\n`);
    io.out(`  plan checks: passed, ${p.warnings.length} warning(s)${p.warnings.length ? " (below)" : ""}\n`);
    for (const line of placementSummary(s.result.placement!)) io.out(`  ${line}\n`);
    const u = upgrades[i];
    io.out(`  upgrades: ${u.where ? `${u.upgrades.map(upgradeLine).join("; ") || "none"} (against ${u.where})` : `not checked: ${u.note}`}\n`);
    for (const c of classes[i].checks) io.out(`    against ${classes[i].where}: ${formatProblem(c)}\n`);
  }
  // each warning once for the run, however many stacks have it (cli/warnings.ts)
  for (const line of warningLines(planWarnings(stacks))) io.out(`${line}\n`);
}
