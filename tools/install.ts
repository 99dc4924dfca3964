// Everything validation needs in .tools/, installed when missing: the pinned tools (kubeconform,
// actionlint) and Kube-OVN's CRDs. One function for `npm run tools` (npm test's first step), the
// suites' globalSetup and `npm run bench`, so that none of them validates with less than the others.
import { ensureKubeOvnCrds } from "./kube-ovn-crds";
import { ensureTools, type Installed, type InstallOptions } from "./tools";

export async function installValidators(opts: InstallOptions = {}): Promise<{ installed: Installed[]; crdsBuilt: boolean }> {
  const installed = await ensureTools(opts);
  return { installed, crdsBuilt: ensureKubeOvnCrds(opts.toolsDir).built };
}
