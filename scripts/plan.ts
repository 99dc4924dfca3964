// npm run plan [-- --stack <name>]…: the plan checks (okadm plan rules and the placement checks) and
// a short placement summary per stack. Exit 1 when a check fails, 2 on bad config; writes nothing.
import { placementSummary } from "../placement/summary";
import { args, formatCheck, planStacks, progress, run } from "./lib/cli";

run(() => {
  const opts = args({
    stack: { type: "string", multiple: true },
    "stacks-dir": { type: "string", default: "stacks" },
  });
  const stacks = planStacks(opts.stack, opts["stacks-dir"], progress);
  for (const s of stacks) {
    const p = s.plan;
    console.log(
      `${p.stack}: ${p.environment}/${p.topology}, ${p.nodes.length} nodes, ${p.labelProfile} labels, tainted: ${p.taintedRoles.join(", ") || "none"}`,
    );
    console.log(`  plan checks: passed, ${p.warnings.length} warning(s)`);
    for (const w of p.warnings) console.log(`    ${formatCheck(s.config.file, w)}`);
    for (const line of placementSummary(s.result.placement!)) console.log(`  ${line}`);
  }
});
