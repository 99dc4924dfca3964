// A node's place in its life (issue 15): `active` (the default), `cordoned` (no new pods),
// `maintenance` (drained for planned work, then back), `retiring` (drained and emptied of data
// before it leaves the inventory). The program turns a state into real mechanisms: the node-roles
// phase cordons the node (spec.unschedulable, the field kubectl cordon and the Node Maintenance
// Operator set) and labels it with its state; production adds a NodeMaintenance request (drain),
// leaves the node out of our NodeHealthChecks, and asks Longhorn to evict a retiring storage
// node's replicas (platform/medik8s.ts, platform/longhorn.ts). docs/node-lifecycle.md.

export const NODE_STATES = ["active", "cordoned", "maintenance", "retiring"] as const;
export type NodeState = (typeof NODE_STATES)[number];

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
