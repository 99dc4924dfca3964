// The body of `scripts/tools.ts` (its header comment is the command's --help).
import * as path from "node:path";
import { CNI_PLUGINS, HELM, KUBERNETES_VERSION, TALOS_VERSION, TOOLS, type ToolName } from "../platform/versions";
import { args, UserError } from "../cli/cli";
import { checkTool, ToolError, toolBinary } from "./tools";
import { kubeOvnCrdsDir } from "./kube-ovn-crds";
import { kubernetesSchemasRoot, requireKubernetesSchemas } from "./kubernetes-schemas";
import { installValidators } from "./install";
import { CNI_PLUGIN_NAMES, staleCniPlugins } from "./cni-plugins";
import { expectedVersionLine, requireTalosValidate, TALOS_VALIDATE } from "./talos-validate";
import { requireHelm } from "./helm";

export async function toolsCommand(): Promise<number | void> {
  const opts = args({ check: { type: "boolean", default: false } });
  if (opts.check) {
    let bad = 0;
    for (const name of Object.keys(TOOLS) as ToolName[]) {
      const s = checkTool(TOOLS[name], toolBinary(name));
      if (s.state !== "ok") bad++;
      console.log(`${name} ${TOOLS[name].version}: ${s.state === "ok" ? "ok" : s.state === "missing" ? "not installed" : `found ${s.found}`}`);
    }
    try {
      requireKubernetesSchemas();
      console.log(`Kubernetes ${KUBERNETES_VERSION} schemas: ok`);
    } catch {
      bad++;
      console.log(`Kubernetes ${KUBERNETES_VERSION} schemas: not built`);
    }
    try {
      requireTalosValidate();
      console.log(`${TALOS_VALIDATE} (machinery ${TALOS_VERSION}): ok`);
    } catch {
      bad++;
      console.log(`${TALOS_VALIDATE} (machinery ${TALOS_VERSION}): not built from these sources (${expectedVersionLine()})`);
    }
    const stale = staleCniPlugins();
    if (stale.length) bad++;
    console.log(`CNI plugins ${CNI_PLUGINS.version}: ${stale.length ? `not installed: ${stale.join(", ")}` : "ok"}`);
    try {
      requireHelm();
      console.log(`helm ${HELM.version}: ok`);
    } catch {
      bad++;
      console.log(`helm ${HELM.version}: not installed at the pin`);
    }
    return bad ? 1 : 0;
  }
  try {
    const started = Date.now();
    const { installed, kubernetesSchemasBuilt, crdsBuilt, talosValidate, cni, helm } = await installValidators({ log: (l) => console.log(l) });
    for (const t of installed) {
      if (t.how !== "present") console.log(`${t.name} ${t.version}: installed by ${t.how} → .tools/${t.name}`);
    }
    if (kubernetesSchemasBuilt)
      console.log(
        `Kubernetes ${KUBERNETES_VERSION} schemas: made from its OpenAPI (go mod download) → ${path.relative(process.cwd(), kubernetesSchemasRoot())}/`,
      );
    if (crdsBuilt) console.log(`Kube-OVN CRDs: fetched by go mod download → ${path.relative(process.cwd(), kubeOvnCrdsDir())}/`);
    if (talosValidate.built) console.log(`${TALOS_VALIDATE}: built by go build in ${talosValidate.ms} ms → .tools/${TALOS_VALIDATE}`);
    if (cni.built.length) console.log(`CNI plugins: ${cni.built.join(", ")} installed by go install in ${cni.ms} ms → .tools/cni/`);
    if (helm.built) console.log(`helm ${HELM.version}: installed by go install in ${helm.ms} ms → .tools/helm`);
    console.log(
      `tools: ${installed.map((t) => `${t.name} ${t.version}`).join(", ")}, Kubernetes ${KUBERNETES_VERSION} schemas and Kube-OVN CRDs in .tools/, ` +
        `${TALOS_VALIDATE} (machinery ${TALOS_VERSION}), CNI plugins ${CNI_PLUGINS.version} (${CNI_PLUGIN_NAMES.join(", ")}), helm ${HELM.version} (${Date.now() - started} ms)`,
    );
    return 0;
  } catch (e) {
    if (e instanceof ToolError) throw new UserError(e.message, 1);
    throw e;
  }
}
