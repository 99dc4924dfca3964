// npm run tools [-- --check]: kubeconform and actionlint at their pinned versions in .tools/
// (platform/versions.ts, TOOLS). Idempotent: a tool already at its pin is left alone. `npm test`
// runs this first (pretest). --check only reports, and exits 1 when a tool is missing or outdated.
import { TOOLS, type ToolName } from "../platform/versions";
import { args, run, UserError } from "./lib/cli";
import { checkTool, ensureTools, ToolError, toolBinary } from "./lib/tools";

run(async () => {
  const opts = args({ check: { type: "boolean", default: false } });
  if (opts.check) {
    let bad = 0;
    for (const name of Object.keys(TOOLS) as ToolName[]) {
      const s = checkTool(TOOLS[name], toolBinary(name));
      if (s.state !== "ok") bad++;
      console.log(
        `${name} ${TOOLS[name].version}: ${s.state === "ok" ? "ok" : s.state === "missing" ? "not installed" : `found ${s.found}`}`,
      );
    }
    return bad ? 1 : 0;
  }
  try {
    const started = Date.now();
    const installed = await ensureTools({ log: (l) => console.log(l) });
    for (const t of installed) {
      if (t.how !== "present") console.log(`${t.name} ${t.version}: installed by ${t.how} → .tools/${t.name}`);
    }
    console.log(`tools: ${installed.map((t) => `${t.name} ${t.version}`).join(", ")} in .tools/ (${Date.now() - started} ms)`);
    return 0;
  } catch (e) {
    if (e instanceof ToolError) throw new UserError(e.message, 1);
    throw e;
  }
});
