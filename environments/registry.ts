// Which environments exist, and what each one installs: the only place that knows them.
import type { Environment as EnvironmentName, LoadedConfig } from "../config/schema";
import { OPENKEEL_PLACEMENT_CHECKS, OPENKEEL_READERS } from "../openkeel/workloads";
import type { PlacementCheck, StateTaints } from "../placement/report";
import { mergeReaders, type Readers } from "../placement/workloads";
import { buildTopology, type Topology } from "../topology/topology";
import { installed, type Environment } from "./environment";
import type { NodeConstraint } from "../lifecycle/feasibility";
import { ETCD_QUORUM } from "../lifecycle/quorums";
import { openkeelLifecycle } from "../openkeel/node-lifecycle";
import { lifecyclesOf, type PlatformComponent } from "../platform/component";
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

/**
 * The feasibility model's constraints (lifecycle/feasibility.ts) of a stack: those of the platform
 * components it installs, OpenKeel's, and etcd's, in the order their findings read.
 */
export function stackConstraints(cfg: LoadedConfig): NodeConstraint[] {
  return constraintsOf(installed(ENVIRONMENTS[cfg.environment], cfg));
}

/**
 * The constraints of every component an environment may install, for a removal judged against a
 * committed render: a constraint whose component that render did not install has no facts there.
 */
export function environmentConstraints(environment: string): NodeConstraint[] {
  const env = (ENVIRONMENTS as Record<string, Environment | undefined>)[environment];
  return constraintsOf(env ? env.platform : componentsOf([]));
}

/** The taints a node's state brings in a stack, by what its components contribute (the placement report's view). */
export function stackStateTaints(cfg: LoadedConfig): StateTaints {
  const lifecycles = [...lifecyclesOf(installed(ENVIRONMENTS[cfg.environment], cfg)), openkeelLifecycle];
  return (node) => lifecycles.flatMap((l) => l.stateTaints?.(node) ?? []);
}

function constraintsOf(components: readonly PlatformComponent[]): NodeConstraint[] {
  return [...lifecyclesOf(components).flatMap((l) => l.constraints ?? []), ...(openkeelLifecycle.constraints ?? []), ETCD_QUORUM];
}

/** How the placement report reads every unit the Plans of some environments can hold (all of them by default). */
export function placementReaders(...environments: EnvironmentName[]): Readers {
  return mergeReaders(OPENKEEL_READERS, ...componentsOf(environments).map((c) => c.readers));
}

/** The placement checks the components of some environments register with the report (all of them by default). */
export function placementChecks(...environments: EnvironmentName[]): PlacementCheck[] {
  return [...OPENKEEL_PLACEMENT_CHECKS, ...componentsOf(environments).flatMap((c) => c.placementChecks ?? [])];
}
