// A node's place in its life (issue 15): `active` (the default), `cordoned` (no new pods),
// `maintenance` (drained for planned work, then back), `retiring` (drained and emptied of data
// before it leaves the inventory). The program turns a state into real mechanisms: the node-roles
// phase cordons the node (spec.unschedulable, the field kubectl cordon and the Node Maintenance
// Operator set) and labels it with its state; production adds a NodeMaintenance request (drain),
// leaves the node out of our NodeHealthChecks, and asks Longhorn to evict a retiring storage
// node's replicas (platform/medik8s.ts, platform/longhorn.ts). docs/node-lifecycle.md.

import type { Role, Taint, Toleration } from "./roles";

/**
 * What a node state does, trait by trait: every rule of the repository reads these, never a state's
 * name (test/repository/architecture.test.ts holds that), so a new state is its line here and its docs.
 */
export interface StateTraits {
  /** No new pods land there: the node-roles phase cordons it (spec.unschedulable) and labels it with its state. */
  cordons: boolean;
  /** Its pods are evicted: a NodeMaintenance in production (the Node Maintenance Operator drains it). */
  drains: boolean;
  /** Its data moves away: Longhorn evicts the replicas of its disks. */
  evictsData: boolean;
  /** It gives up its quorum memberships for good: no default quorum member (Kube-OVN master) any more, counted as leaving its quorums. */
  leavesQuorums: boolean;
  /** Our NodeHealthChecks no longer watch it (the state label takes it out of their selectors). */
  leavesHealthChecks: boolean;
  /** It is about to leave the inventory: the state a node must be deployed in before its entry is removed. */
  leavesInventory: boolean;
  /** How a finding says a node is in it: `in maintenance`, `retiring`. */
  words: string;
  /** How a fix says to put nodes into it: `retire`, `put … into maintenance` (`$` stands for the nodes). */
  verb: string;
}

const NONE = { cordons: false, drains: false, evictsData: false, leavesQuorums: false, leavesHealthChecks: false, leavesInventory: false };

/** The states, each a set of traits. */
export const STATE_TRAITS = {
  active: { ...NONE, words: "active", verb: "bring $ back to active" },
  cordoned: { ...NONE, cordons: true, words: "cordoned", verb: "cordon $" },
  maintenance: { ...NONE, cordons: true, drains: true, leavesHealthChecks: true, words: "in maintenance", verb: "put $ into maintenance" },
  retiring: {
    cordons: true,
    drains: true,
    evictsData: true,
    leavesQuorums: true,
    leavesHealthChecks: true,
    leavesInventory: true,
    words: "retiring",
    verb: "retire $",
  },
} as const satisfies Record<string, StateTraits>;

export type NodeState = keyof typeof STATE_TRAITS;
export const NODE_STATES = Object.keys(STATE_TRAITS) as [NodeState, ...NodeState[]];
/** A node's state where none is written. */
export const DEFAULT_STATE: NodeState = "active";
/** The state a node leaves the inventory from, and the one it is drained in and comes back from: what fixes tell operators to set. */
export const LEAVING_STATE: NodeState = NODE_STATES.find((s) => STATE_TRAITS[s].leavesInventory)!;
export const MAINTENANCE_STATE: NodeState = NODE_STATES.find((s) => STATE_TRAITS[s].drains && !STATE_TRAITS[s].leavesInventory)!;

type Trait = { [K in keyof StateTraits]: StateTraits[K] extends boolean ? K : never }[keyof StateTraits];

/** Whether a state (a node's, or the value of its NODE_STATE_LABEL; undefined: the default) has a trait. */
export function hasTrait(state: string | undefined, trait: Trait): boolean {
  const traits = (STATE_TRAITS as Readonly<Record<string, StateTraits>>)[state ?? DEFAULT_STATE];
  return traits?.[trait] === true;
}

/** How a finding says a node is in its state (`in maintenance`). */
export function stateWords(state: string | undefined): string {
  return (STATE_TRAITS as Readonly<Record<string, StateTraits>>)[state ?? DEFAULT_STATE]?.words ?? String(state);
}

/**
 * The label the node-roles phase puts on a node that is not active, valued with its state. Our
 * NodeHealthChecks select by labels (remediation.medik8s.io/v1alpha1 spec.selector), so this is
 * how a node in maintenance leaves them.
 */
export const NODE_STATE_LABEL = "openkeel.io/node-state";

/** States our NodeHealthChecks leave alone: their selectors exclude these values of NODE_STATE_LABEL. */
export const UNWATCHED_STATES: readonly NodeState[] = NODE_STATES.filter((s) => STATE_TRAITS[s].leavesHealthChecks);

/** `state`: a node's, or the value of its NODE_STATE_LABEL (undefined: the default). */
export function isDrained(state: string | undefined): boolean {
  return hasTrait(state, "drains");
}

/**
 * § 4.1: `openstack compute service set --disable` makes the compute agent taint its node
 * `openkeel.io/compute-disabled=:NoSchedule` (it does not cordon); the maintenance and retiring
 * runbooks disable the host first, so a compute node in a drained state carries it.
 */
export const COMPUTE_DISABLED_TAINT: Taint = { key: "openkeel.io/compute-disabled", effect: "NoSchedule" };

/** What the API server puts on a cordoned node (spec.unschedulable); the DaemonSet controller tolerates it by itself. */
export const UNSCHEDULABLE_TAINT: Taint = { key: "node.kubernetes.io/unschedulable", effect: "NoSchedule" };

/** A taint a node's state brings, and the nodes that get it. */
export interface NodeStateTaint {
  taint: Taint;
  /** The roles of the nodes that get it; undefined: any node. */
  roles?: readonly Role[];
  /** Why a node agent must tolerate it, for the placement check's message. */
  why: string;
}

/**
 * The taints a node's state brings that a node agent must tolerate to stay on (or come back to,
 * on its next rollout) a disabled or draining node, as this repository's own runbooks put them
 * there; the platform components add theirs (NodeLifecycle.agentTaints: the taint of the operator
 * that drains a node). Every node agent's tolerations are derived from the whole list
 * (nodeAgentTolerations, StackContext.agentTolerations), and the placement check holds every
 * DaemonSet to it. A DaemonSet gets `node.kubernetes.io/unschedulable` from its controller, so it
 * is not listed.
 */
export const NODE_STATE_TAINTS: readonly NodeStateTaint[] = [
  {
    taint: COMPUTE_DISABLED_TAINT,
    roles: ["compute"],
    why: "a disabled hypervisor carries it (§ 4.1), and the compute agent that owns it must land there to lift it, beside virt-handler, the metadata agent, the block storage's node agents and the chassis that serve the VMs still running there",
  },
];

/** What a node agent tolerates of the taints a node's state brings (Exists: whatever value a version sets). */
export function nodeAgentTolerations(taints: readonly NodeStateTaint[]): Toleration[] {
  return taints.map(({ taint }) => ({ key: taint.key, operator: "Exists", effect: taint.effect }));
}

/**
 * What a constraint of the feasibility model (lifecycle/feasibility.ts) needs of a stack besides
 * its nodes, as index.yaml records it (`feasibility.<constraint>`): a replica count, a policy, the
 * roles a component runs on. The removal guard judges with the committed render's.
 */
export type LifecycleFact = number | string | readonly string[];
export type LifecycleFacts = Readonly<Record<string, LifecycleFact>>;
