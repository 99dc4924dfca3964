// How the OpenKeel values builders size and place from the stack's context (platform/context.ts):
// how many nodes a placement can use, and how replicas follow the topology.
import { quorumMembers } from "../lifecycle/quorums";
import { placementRoles } from "../placement/chart-helper";
import type { StackContext } from "../platform/context";
import type { PlacementValue } from "../config/placement";

/**
 * How replicas follow the topology:
 * - `fixed`: the design's count (§ 2.2), capped at the nodes that can take one (a 1-node lab runs 1);
 * - `quorum`: Galera, RabbitMQ and OVN RAFT members: 3, or 1 where fewer than 3 nodes can host one
 *   (an even member count gains nothing and required anti-affinity forbids stacking);
 * - `perNode`: one per node of the role (Swift storage, § 2.2);
 * - `own`: the service's own rule, from the stack (Ironic's conductors: its count, default 2), which
 *   the service's plan checks hold to the topology, not the replica checks of ./replicas.ts.
 */
export type ReplicaRule = { fixed: number } | "quorum" | "perNode" | { own: (ctx: StackContext) => number };

/** Nodes a placement can land on: those with one of its roles, or every node when roles are not passed. */
export function eligibleNodes(p: PlacementValue, ctx: StackContext): number {
  const roles = placementRoles(p);
  if (!ctx.rolesPassed || roles.length === 0) return ctx.topo.nodes.length;
  return ctx.topo.nodes.filter((n) => n.roles.some((r) => roles.includes(r))).length;
}

/** Whether a rule is the service's own (its plan checks judge the count). */
export function isOwnRule(rule: ReplicaRule): rule is { own: (ctx: StackContext) => number } {
  return typeof rule === "object" && "own" in rule;
}

export function replicasFor(rule: ReplicaRule, p: PlacementValue, ctx: StackContext): number {
  const nodes = eligibleNodes(p, ctx);
  if (isOwnRule(rule)) return rule.own(ctx);
  // at least one member, also where no node is eligible
  if (rule === "quorum") return Math.max(1, quorumMembers(nodes));
  if (rule === "perNode") return Math.max(1, nodes);
  return Math.max(1, Math.min(rule.fixed, nodes));
}

/**
 * The placement of a quorum member (Galera, RabbitMQ, OVN central): on the control plane, one per
 * node (§ 2.1, § 2.2), and in the large topology one per zone too (§ 6.3: a zone lost keeps the
 * quorum), enforced: a member that finds no free zone stays Pending rather than stacking.
 */
export function quorumPlacement(ctx: StackContext): PlacementValue {
  return { role: "controlPlane", antiAffinity: "required", ...(membersApartByZone(ctx.cfg.topology) ? { zoneAntiAffinity: "required" } : {}) };
}

/** Whether a topology keeps its quorum members one per zone too (§ 6.3: the large topology's three zones). */
export function membersApartByZone(topology: string): boolean {
  return topology === "large";
}
