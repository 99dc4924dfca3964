// `npm run plan` as a function of its arguments: the CLI (scripts/plan.ts) and the tests run the
// same code, the tests in-process with the output captured.
import * as path from "node:path";
import { placementSummary } from "../placement/summary";
import { args, formatCheck, planStacks, type Io } from "../cli/cli";

const PLAN_OPTIONS = {
  stack: { type: "string", multiple: true },
  "stacks-dir": { type: "string", default: "stacks" },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const PLAN_SCRIPT = path.resolve(__dirname, "../scripts/plan.ts");

export function planCommand(argv: string[], io: Io): void {
  const opts = args(PLAN_OPTIONS, argv, PLAN_SCRIPT);
  const stacks = planStacks(opts.stack, opts["stacks-dir"], io.progress);
  for (const s of stacks) {
    const p = s.plan;
    io.out(`${p.stack}: ${p.environment}/${p.topology}, ${p.nodes.length} nodes, ${p.labelProfile} labels, tainted: ${p.taintedRoles.join(", ") || "none"}\n`);
    io.out(`  plan checks: passed, ${p.warnings.length} warning(s)\n`);
    for (const w of p.warnings) io.out(`    ${formatCheck(s.config.file, w)}\n`);
    for (const line of placementSummary(s.result.placement!)) io.out(`  ${line}\n`);
  }
}
