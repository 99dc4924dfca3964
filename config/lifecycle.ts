// A node's place in its life (issue 15): `active` (the default), `cordoned` (no new pods),
// `maintenance` (drained for planned work, then back), `retiring` (drained and emptied of data
// before it leaves the inventory). The program turns a state into real mechanisms: the node-roles
// phase cordons the node (spec.unschedulable, the field kubectl cordon and the Node Maintenance
// Operator set) and labels it with its state; production adds a NodeMaintenance request (drain),
// leaves the node out of our NodeHealthChecks, and asks Longhorn to evict a retiring storage
// node's replicas (platform/medik8s.ts, platform/longhorn.ts). docs/node-lifecycle.md.

import type { Role, Taint, Toleration } from "./roles";

export const NODE_STATES = ["active", "cordoned", "maintenance", "retiring"] as const;
export type NodeState = (typeof NODE_STATES)[number];

/**
 * What an operator may write for `state:` that is no state, and what to do instead. `disabled`: to
 * stop new VMs on a hypervisor without draining it, the design has two ways (§ 4.1), neither of which
 * is a drain: the stack's `cordoned` (no new pods at all; the compute agent reports the nova-compute
 * service disabled, "cordoned in Kubernetes"), or disabling the service in Nova alone, outside the
 * stack (the compute agent taints the node `openkeel.io/compute-disabled`, which every node agent
 * here tolerates: docs/node-lifecycle.md). `maintenance` would drain it.
 */
export const NOT_A_STATE: Readonly<Record<string, string>> = {
  disabled:
    "to stop new VMs on this hypervisor without draining it, write state: cordoned (no new pods land there, VMs included: the compute agent reports its nova-compute service disabled, 'cordoned in Kubernetes', § 4.1; nothing running moves), or leave the stack alone and run openstack compute service set --disable <node> nova-compute (the compute agent taints the node openkeel.io/compute-disabled:NoSchedule: no new VMs, other pods still land). maintenance would drain the node (docs/node-lifecycle.md)",
};

/**
 * The label the node-roles phase puts on a node that is not active, valued with its state. Our
 * NodeHealthChecks select by labels (remediation.medik8s.io/v1alpha1 spec.selector), so this is
 * how a node in maintenance leaves them.
 */
export const NODE_STATE_LABEL = "openkeel.io/node-state";

/** States in which the node is drained: a NodeMaintenance request in production, out of our health checks. */
export const DRAINED_STATES: readonly NodeState[] = ["maintenance", "retiring"];

/** `state`: a node's, or the value of its NODE_STATE_LABEL (undefined: active). */
export function isDrained(state: string | undefined): boolean {
  return (DRAINED_STATES as readonly (string | undefined)[]).includes(state);
}

/**
 * § 4.1: `openstack compute service set --disable` makes the compute agent taint its node
 * `openkeel.io/compute-disabled=:NoSchedule` (it does not cordon); the maintenance and retiring
 * runbooks disable the host first, so a compute node in a drained state carries it.
 */
export const COMPUTE_DISABLED_TAINT: Taint = { key: "openkeel.io/compute-disabled", effect: "NoSchedule" };

/**
 * The Node Maintenance Operator's taint on a node it drains, beside `node.kubernetes.io/unschedulable`
 * (medik8s/node-maintenance-operator controllers/taint.go, MaintenanceTaints).
 */
export const DRAIN_TAINT: Taint = { key: "medik8s.io/drain", effect: "NoSchedule" };

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
 * on its next rollout) a disabled or draining node: the one list every node agent's tolerations
 * are derived from (NODE_AGENT_TOLERATIONS), and the placement check holds every DaemonSet to.
 * A DaemonSet gets `node.kubernetes.io/unschedulable` from its controller, so it is not listed.
 */
export const NODE_STATE_TAINTS: readonly NodeStateTaint[] = [
  {
    taint: COMPUTE_DISABLED_TAINT,
    roles: ["compute"],
    why: "a disabled hypervisor carries it (§ 4.1), and the compute agent that owns it must land there to lift it, beside virt-handler, the metadata agent, Longhorn and the chassis that serve the VMs still running there",
  },
  {
    taint: DRAIN_TAINT,
    why: "a node the Node Maintenance Operator drains carries it; NMO leaves DaemonSet pods alone, but one that restarts there (a rollout) stays Pending without it, the SNR agent that would fence the node included (§ 5.6)",
  },
];

/** Every node agent tolerates the taints of NODE_STATE_TAINTS (Exists: whatever value a version sets). */
export const NODE_AGENT_TOLERATIONS: readonly Toleration[] = NODE_STATE_TAINTS.map(({ taint }) => ({
  key: taint.key,
  operator: "Exists",
  effect: taint.effect,
}));

/**
 * What a constraint of the feasibility model (lifecycle/feasibility.ts) needs of a stack besides
 * its nodes, as index.yaml records it (`feasibility.<constraint>`): a replica count, a policy, the
 * roles a component runs on. The removal guard judges with the committed render's.
 */
export type LifecycleFact = number | string | readonly string[];
export type LifecycleFacts = Readonly<Record<string, LifecycleFact>>;
