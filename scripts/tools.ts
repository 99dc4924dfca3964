// npm run tools [-- --check]: kubeconform and actionlint at their pinned versions in .tools/
// (platform/versions.ts, TOOLS). Idempotent: a tool already at its pin is left alone. `npm test`
// runs this first. --check only reports, and exits 1 when a tool is missing or outdated.
import { run } from "../cli/cli";
import { toolsCommand } from "../tools/tools-command";

run(toolsCommand);
