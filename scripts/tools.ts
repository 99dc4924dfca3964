// npm run tools [-- --check]: kubeconform and actionlint at their pinned versions in .tools/
// (platform/versions.ts, TOOLS), Kube-OVN's CRDs, talos-validate (Talos' own validation of the
// rendered node configs, built from tools/talos-validate/), the CNI plugins (CNI_PLUGINS, in
// .tools/cni/) and Helm (HELM, which renders the platform charts for their placement test).
// Idempotent: what is already at its pin is left alone. `npm test` runs this first. --check only
// reports, and exits 1 when one is missing or outdated.
import { run } from "../cli/cli";
import { toolsCommand } from "../tools/tools-command";

run(toolsCommand);
