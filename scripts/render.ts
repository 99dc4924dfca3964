// npm run render [-- --stack <name>]…: every stack (or the named ones) → rendered/<stack>/.
// Nothing is written unless every named stack loads and passes its plan checks.
import { renderPlan } from "../components/render";
import { allUnits } from "../components/plan";
import { args, formatCheck, planStacks, run } from "./lib/cli";
import { removeStaleStacks, writeStackDir } from "./lib/write";

run(() => {
  const opts = args({
    stack: { type: "string", multiple: true },
    out: { type: "string", default: "rendered" },
    "stacks-dir": { type: "string", default: "stacks" },
  });
  const stacks = planStacks(opts.stack, opts["stacks-dir"]);
  const rendered = stacks.map((s) => ({ s, files: renderPlan(s.plan, s.result.placement) }));
  for (const { s, files } of rendered) {
    writeStackDir(opts.out!, s.plan.stack, files);
    const units = allUnits(s.plan);
    console.log(
      `${s.plan.stack}: ${s.plan.environment}/${s.plan.topology}, ${s.plan.nodes.length} nodes, ` +
        `${units.length} units, ${files.length} files → ${opts.out}/${s.plan.stack}/`,
    );
    for (const w of s.plan.warnings) console.log(`  ${formatCheck(s.config.file, w)}`);
  }
  if (!opts.stack?.length) {
    for (const gone of removeStaleStacks(opts.out!, rendered.map((r) => r.s.plan.stack))) {
      console.log(`${gone}: no stack file any more, removed ${opts.out}/${gone}/`);
    }
  }
  const warnings = rendered.reduce((n, r) => n + r.s.plan.warnings.length, 0);
  console.log(`rendered ${rendered.length} stack(s), ${warnings} warning(s)`);
});
