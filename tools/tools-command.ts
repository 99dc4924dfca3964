// The body of `scripts/tools.ts` (its header comment is the command's --help).
import * as path from "node:path";
import { TOOLS, type ToolName } from "../platform/versions";
import { args, UserError } from "../cli/cli";
import { checkTool, ToolError, toolBinary } from "./tools";
import { kubeOvnCrdsDir } from "./kube-ovn-crds";
import { installValidators } from "./install";

export async function toolsCommand(): Promise<number | void> {
  const opts = args({ check: { type: "boolean", default: false } });
  if (opts.check) {
    let bad = 0;
    for (const name of Object.keys(TOOLS) as ToolName[]) {
      const s = checkTool(TOOLS[name], toolBinary(name));
      if (s.state !== "ok") bad++;
      console.log(`${name} ${TOOLS[name].version}: ${s.state === "ok" ? "ok" : s.state === "missing" ? "not installed" : `found ${s.found}`}`);
    }
    return bad ? 1 : 0;
  }
  try {
    const started = Date.now();
    const { installed, crdsBuilt } = await installValidators({ log: (l) => console.log(l) });
    for (const t of installed) {
      if (t.how !== "present") console.log(`${t.name} ${t.version}: installed by ${t.how} → .tools/${t.name}`);
    }
    if (crdsBuilt) console.log(`Kube-OVN CRDs: fetched by go mod download → ${path.relative(process.cwd(), kubeOvnCrdsDir())}/`);
    console.log(`tools: ${installed.map((t) => `${t.name} ${t.version}`).join(", ")}, Kube-OVN CRDs in .tools/ (${Date.now() - started} ms)`);
    return 0;
  } catch (e) {
    if (e instanceof ToolError) throw new UserError(e.message, 1);
    throw e;
  }
}
