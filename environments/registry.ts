// Which environments exist, and what each one installs: the only place that knows them.
import type { Environment as EnvironmentName } from "../config/schema";
import { OPENKEEL_READERS } from "../openkeel/workloads";
import { mergeReaders, type Readers } from "../placement/workloads";
import type { Environment } from "./environment";
import { kindLab } from "./kind-lab";
import { talosProduction } from "./talos-production";

export const ENVIRONMENTS: Record<EnvironmentName, Environment> = {
  "kind-lab": kindLab,
  "talos-production": talosProduction,
};

/** How the placement report reads every unit the Plans of some environments can hold (all of them by default). */
export function placementReaders(...environments: EnvironmentName[]): Readers {
  const names = environments.length > 0 ? environments : (Object.keys(ENVIRONMENTS) as EnvironmentName[]);
  const components = [...new Set(names.flatMap((e) => ENVIRONMENTS[e].platform))];
  return mergeReaders(OPENKEEL_READERS, ...components.map((c) => c.readers));
}
