// Everything validation needs in .tools/, installed when missing: the pinned tools (kubeconform,
// actionlint), the schemas of KUBERNETES_VERSION's kinds (from its OpenAPI), Kube-OVN's CRDs,
// Talos' own validator of the node configs (talos-validate), the CNI plugins the attachment check
// runs and Helm, which renders the platform charts for the chart placement test. One function for
// `npm run tools` (npm test's first step), the suites' globalSetup and `npm run bench`, so that none
// of them validates with less than the others.
import { ensureCniPlugins, type CniInstall } from "./cni-plugins";
import { ensureHelm, type HelmInstall } from "./helm";
import { ensureKubeOvnCrds } from "./kube-ovn-crds";
import { ensureKubernetesSchemas } from "./kubernetes-schemas";
import { ensureTalosValidate, type TalosValidateInstall } from "./talos-validate";
import { ensureTools, type Installed, type InstallOptions } from "./tools";

export interface Validators {
  installed: Installed[];
  kubernetesSchemasBuilt: boolean;
  crdsBuilt: boolean;
  talosValidate: TalosValidateInstall;
  cni: CniInstall;
  helm: HelmInstall;
}

export async function installValidators(opts: InstallOptions = {}): Promise<Validators> {
  const installed = await ensureTools(opts);
  const kubernetesSchemasBuilt = ensureKubernetesSchemas(opts.toolsDir).built;
  const crdsBuilt = ensureKubeOvnCrds(opts.toolsDir).built;
  const talosValidate = ensureTalosValidate({ toolsDir: opts.toolsDir, go: opts.go, log: opts.log });
  const cni = ensureCniPlugins({ toolsDir: opts.toolsDir, go: opts.go, log: opts.log });
  const helm = ensureHelm({ toolsDir: opts.toolsDir, go: opts.go, log: opts.log });
  return { installed, kubernetesSchemasBuilt, crdsBuilt, talosValidate, cni, helm };
}
