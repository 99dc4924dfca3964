// A stack resolved once: its environment, its inventory as the scheduler sees it, the components it
// installs, the one context their builders share, and what the later stages read of those
// components (the feasibility constraints, the placement readers and checks, the state taints).
// planStack runs its stages over this value; the preview resolves a committed render's environment
// the same way (resolveEnvironment).
import { NODE_STATE_TAINTS, nodeAgentTolerations, type NodeStateTaint } from "../config/lifecycle";
import type { Environment as EnvironmentName, LoadedConfig } from "../config/schema";
import type { NodeConstraint } from "../lifecycle/feasibility";
import { ETCD_QUORUM } from "../lifecycle/quorums";
import type { Holding, NodeLifecycle } from "../lifecycle/contributor";
import { agentTaintsCheck, type PlacementCheck, type StateTaints } from "../placement/report";
import { mergeReaders, type Readers } from "../placement/workloads";
import { lifecyclesOf, type PlatformComponent } from "../platform/component";
import { customKindsOf, stackContext, type CustomKinds, type StackContext } from "../platform/context";
import { buildTopology, type Topology } from "../topology/topology";
import type { Environment } from "./environment";
import { ENVIRONMENTS, environmentComponents, stackComponents } from "./registry";

/** What the components of a list contribute to the stages after the Plan is built. */
export interface ComponentFacts {
  /** Their part in a node's life, in their order. */
  lifecycles: NodeLifecycle[];
  /** The feasibility model's constraints (lifecycle/feasibility.ts): the components', then etcd's, in the order their findings read. */
  constraints: NodeConstraint[];
  /** How the placement report reads their units. */
  readers: Readers;
  /** The placement checks they register with the report. */
  placementChecks: PlacementCheck[];
  /** What they keep on nodes (their lifecycles' `holds`), in their order: what the removal guard names. */
  holdings: Holding[];
  /** Who of them drains a node in a drained state (a lifecycle's `drains`), or undefined: none does. */
  drainer: string | undefined;
  /** What their operators and webhooks do with objects of their custom kinds (each one's `customKinds`). */
  kinds: CustomKinds;
}

export interface ResolvedStack extends ComponentFacts {
  cfg: LoadedConfig;
  env: Environment;
  topology: Topology;
  /** What it installs, in install order: the environment's platform components, then OpenKeel. */
  components: PlatformComponent[];
  /** The one context of every builder of its Plan. */
  ctx: StackContext;
  /** The taints a node's state brings, by what its components contribute (the placement report's view). */
  stateTaints: StateTaints;
}

function componentFacts(components: readonly PlatformComponent[]): ComponentFacts {
  const lifecycles = lifecyclesOf(components);
  return {
    lifecycles,
    constraints: [...lifecycles.flatMap((l) => l.constraints ?? []), ETCD_QUORUM],
    readers: mergeReaders(...components.map((c) => c.readers)),
    // a component's check of its agentTaints beside its own checks, in its order
    placementChecks: components.flatMap((c) => [
      ...(c.placementChecks ?? []),
      ...(c.lifecycle?.agentTaints ? [agentTaintsCheck(c.lifecycle.agentTaints)] : []),
    ]),
    holdings: lifecycles.flatMap((l) => l.holds ?? []),
    drainer: lifecycles.find((l) => l.drains)?.drains,
    kinds: customKindsOf(components),
  };
}

/**
 * The taints a node's state brings that every node agent tolerates: the repository's own, then
 * those of every component of the registry, whether the stack installs it or not (a lab's agents
 * tolerate a drain taint no operator of its puts: one toleration set for every stack).
 */
export function nodeAgentTaints(registry: readonly PlatformComponent[] = environmentComponents()): NodeStateTaint[] {
  return [...NODE_STATE_TAINTS, ...lifecyclesOf(registry).flatMap((l) => l.agentTaints ?? [])];
}

export function resolveStack(cfg: LoadedConfig): ResolvedStack {
  const env = ENVIRONMENTS[cfg.environment];
  const topology = buildTopology(cfg, env.traits);
  const components = stackComponents(env, cfg);
  const facts = componentFacts(components);
  return {
    cfg,
    env,
    topology,
    components,
    ctx: stackContext(cfg, topology, env.storage(cfg), components, nodeAgentTolerations(nodeAgentTaints())),
    ...facts,
    stateTaints: (node) => facts.lifecycles.flatMap((l) => l.stateTaints?.(node) ?? []),
  };
}

/**
 * What the components some environments may install contribute (all of them by default): for a
 * render read without its stack file (a removal judged against the committed render, the preview).
 * An environment this repository does not know (a render of a later version) gets every one.
 */
export function resolveEnvironment(...environments: string[]): ComponentFacts {
  const known = environments.filter((e): e is EnvironmentName => e in ENVIRONMENTS);
  return componentFacts(environmentComponents(...known));
}
