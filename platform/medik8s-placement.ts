// How the placement report reads this repository's NodeHealthChecks, and the checks Medik8s
// registers with it (§ 5.6): no node in two checks, and every node watched by exactly one, a
// quorum's by one that fences one node at a time. The report itself knows no NodeHealthCheck.
import { hasTrait, NODE_STATE_LABEL } from "../config/lifecycle";
import type { Check } from "../config/problems";
import { HA_SEGMENT_LABEL, ROLES, roleLabelKey } from "../config/roles";
import { roleGroup, type ComponentPlacement, type PlacementCheck, type ReportNode } from "../placement/report";
import type { LabelSelector } from "../placement/scheduling";
import { obj, platformComponent, type DesignRoles, type ObjectReader } from "../placement/workloads";
import { aloneInGroup } from "./medik8s-groups";

/** The kind the report shows a NodeHealthCheck as (it selects nodes to remediate, it places no pod). */
export const NHC_KIND = "NodeHealthCheck";
/** A NodeHealthCheck's maxUnhealthy, among its component's facts: how many of its nodes it may remediate at once. */
const MAX_UNHEALTHY = "maxUnhealthy";

/** A NodeHealthCheck's design roles: the roles whose label its selector requires. */
function nhcDesignRoles(sel: LabelSelector | undefined): DesignRoles {
  const keys = [
    ...Object.keys(sel?.matchLabels ?? {}),
    ...(sel?.matchExpressions ?? []).filter((e) => e.operator === "Exists" || e.operator === "In").map((e) => e.key),
  ];
  const roles = ROLES.filter((r) => keys.includes(roleLabelKey(r, "hardened")) || keys.includes(roleLabelKey(r, "default")));
  return roles.length > 0 ? roles : "all";
}

/** A NodeHealthCheck: the nodes it selects, which may rightly be none (all of them drained, say). */
export const readNodeHealthCheck: ObjectReader = (u, o) => {
  const spec = obj(o.spec);
  const sel = spec.selector as LabelSelector | undefined;
  const maxUnhealthy = spec.maxUnhealthy;
  return [
    platformComponent(u, `${o.metadata.name}/remediates`, NHC_KIND, { tolerations: [] }, nhcDesignRoles(sel), {
      nodeSelection: sel ?? {},
      mayMatchNone: true,
      ...(typeof maxUnhealthy === "number" || typeof maxUnhealthy === "string" ? { facts: { [MAX_UNHEALTHY]: maxUnhealthy } } : {}),
    }),
  ];
};

/** The NodeHealthChecks that select each node. */
function checksByNode(placements: readonly ComponentPlacement[], nodes: readonly ReportNode[]): Map<string, ComponentPlacement[]> {
  const nhcs = placements.filter((p) => p.component.kind === NHC_KIND);
  const eligible = nhcs.map((p) => ({ p, on: new Set(p.eligible) }));
  return new Map(nodes.map((n) => [n.name, eligible.filter((e) => e.on.has(n.name)).map((e) => e.p)]));
}

/**
 * NodeHealthChecks must not overlap: two checks remediating one node race each other (the NHC
 * documentation warns against it), and the control plane's maxUnhealthy would not hold.
 */
const overlap: PlacementCheck = {
  check: ({ placements, nodes }) => {
    const byNode = checksByNode(placements, nodes);
    return nodes.flatMap((n): Check[] => {
      const by = byNode.get(n.name)!.map((p) => p.component.name);
      if (by.length <= 1) return [];
      return [
        {
          level: "error",
          code: "placement-nhc-overlap",
          message: `node ${n.name} is selected by ${by.length} NodeHealthChecks (${by.join(", ")}): they would remediate it concurrently`,
          fix: "make the NodeHealthCheck selectors disjoint (each excludes the roles of the checks before it)",
        },
      ];
    });
  },
};

/** The finding of one node, or none: watched by no check (unless alone in its group, on purpose: ./medik8s-groups.ts), or a quorum's node by a check that fences several at once. */
function coverageOf(n: ReportNode, by: readonly ComponentPlacement[], alone: boolean): Check[] {
  if (by.length === 0 && alone) return [];
  if (by.length === 0) {
    return [
      {
        level: "error",
        code: "placement-nhc-coverage",
        message: `node ${n.name} (${roleGroup(n)}) is selected by no NodeHealthCheck: nothing would remediate it when it fails (§ 5.6)`,
        fix: "give every node that has a peer in its group a NodeHealthCheck (platform/medik8s-groups.ts), or leave it to a failover segment of the VMs' HA service (openkeel.io/ha-segment, § 5.6)",
      },
    ];
  }
  // two checks on one node are the overlap check's to report
  const quorum = n.roles.includes("controlPlane") || n.kubernetesControlPlane;
  const loose = by.filter((p) => p.component.facts?.[MAX_UNHEALTHY] !== 1);
  if (!quorum || by.length !== 1 || loose.length === 0) return [];
  return [
    {
      level: "error",
      code: "placement-nhc-coverage",
      message: `node ${n.name} holds a quorum (${n.roles.includes("controlPlane") ? "Galera, RabbitMQ, OVN central" : "etcd"}) but ${loose.map((p) => p.component.name).join(", ")} may fence ${loose.map((p) => String(p.component.facts?.[MAX_UNHEALTHY] ?? "any number of")).join(", ")} of its nodes at once`,
      fix: "select it by the control plane's NodeHealthCheck, whose maxUnhealthy is 1 (§ 5.6)",
    },
  ];
}

/**
 * § 5.6: every node is watched by exactly one NodeHealthCheck (the overlap check catches two),
 * unless it is a Masakari segment host (its segment's check watches it), in a state that leaves
 * the health checks (maintenance, retiring: their selectors leave it out by its state label,
 * ./medik8s-groups.ts; the trait, not `drains`, which a state may lack and still leave them), or
 * alone in its group (no check could guard it against a cluster-wide event: ./medik8s-groups.ts);
 * a node that holds a quorum (the OpenKeel or the Kubernetes control plane) by one that fences one
 * node at a time. No stack file can trip it: every node of a stack that installs Medik8s has a role
 * or is a Kubernetes control-plane node (plan checks), and our checks cover every role.
 */
const coverage: PlacementCheck = {
  origin: "code",
  check: ({ placements, nodes }) => {
    const byNode = checksByNode(placements, nodes);
    const alone = aloneInGroup(nodes);
    return nodes
      .filter((n) => n.labels[HA_SEGMENT_LABEL] === undefined && !hasTrait(n.labels[NODE_STATE_LABEL], "leavesHealthChecks"))
      .flatMap((n) => coverageOf(n, byNode.get(n.name)!, alone.has(n.name)));
  },
};

/** The placement checks Medik8s registers with the report. */
export const MEDIK8S_PLACEMENT_CHECKS: readonly PlacementCheck[] = [overlap, coverage];
