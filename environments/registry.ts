// Which environments exist, and what each one installs: the only place that knows them.
import type { Environment as EnvironmentName, LoadedConfig } from "../config/schema";
import { OPENKEEL_PLACEMENT_CHECKS, OPENKEEL_READERS } from "../openkeel/workloads";
import type { PlacementCheck } from "../placement/report";
import { mergeReaders, type Readers } from "../placement/workloads";
import { buildTopology, type Topology } from "../topology/topology";
import type { Environment } from "./environment";
import { kindLab } from "./kind-lab";
import { talosProduction } from "./talos-production";

export const ENVIRONMENTS: Record<EnvironmentName, Environment> = {
  "kind-lab": kindLab,
  "talos-production": talosProduction,
};

/** A stack's inventory as the scheduler sees it, with what its environment tells the layers below. */
export function stackTopology(cfg: LoadedConfig): Topology {
  return buildTopology(cfg, ENVIRONMENTS[cfg.environment].traits);
}

/** The platform components some environments may install (all of them by default). */
function componentsOf(environments: EnvironmentName[]) {
  const names = environments.length > 0 ? environments : (Object.keys(ENVIRONMENTS) as EnvironmentName[]);
  return [...new Set(names.flatMap((e) => ENVIRONMENTS[e].platform))];
}

/** How the placement report reads every unit the Plans of some environments can hold (all of them by default). */
export function placementReaders(...environments: EnvironmentName[]): Readers {
  return mergeReaders(OPENKEEL_READERS, ...componentsOf(environments).map((c) => c.readers));
}

/** The placement checks the components of some environments register with the report (all of them by default). */
export function placementChecks(...environments: EnvironmentName[]): PlacementCheck[] {
  return [...OPENKEEL_PLACEMENT_CHECKS, ...componentsOf(environments).flatMap((c) => c.placementChecks ?? [])];
}
