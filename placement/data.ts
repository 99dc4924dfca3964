// The placement report as data: what rendered/<stack>/placement.json holds, and everything
// placement.md and placement.svg show (./picture.ts draws them from this alone). Readers of a
// render — the preview's placement delta, the e2e's check against the real scheduler — read this
// data (render/rendered.ts), never the Markdown.
import type { NodeState } from "../config/lifecycle";
import type { Role, Taint } from "../config/roles";
import type { PlacementReport } from "./report";
import type { DesignRoles } from "./workloads";
import { HOST_CAPABILITY_KINDS, type HostCapabilityKind } from "../plan/host";
import type { FailureDomainTable } from "./failure-table";

export interface PlacementNode {
  name: string;
  roles: Role[];
  zone?: string | undefined;
  kubernetesControlPlane: boolean;
  /** Its state in the inventory (config/lifecycle.ts). */
  state: NodeState;
  /** Every label it will carry (the node-roles phase's and the kubelet's), sorted by key. */
  labels: Record<string, string>;
  /** The taints it registers with or is given. */
  taints: Taint[];
}

export interface PlacementComponent {
  /** `<unit>/<component>`: the row's name. */
  name: string;
  source: "platform" | "openkeel";
  /** The Plan unit whose values or objects place it. */
  unit: string;
  /** Deployment, StatefulSet, DaemonSet, Pods, or a kind that selects nodes (NodeHealthCheck, LonghornDisks). */
  kind: string;
  replicas?: number | undefined;
  /** The PriorityClass its pods name, where its reader says (absent in renders before schema 5). */
  priorityClass?: string | undefined;
  /** The design's § 2 row. */
  designRoles: DesignRoles;
  /** The nodes it may run on, in node order. */
  eligible: string[];
  /** Per node it may not run on, why. */
  reasons: Record<string, string[]>;
  /** The roles with at least one node it may run on. */
  reaches: Role[];
  /**
   * Nodes of `eligible` whose state keeps its new pods off them now (cordoned, drained, a disabled
   * hypervisor), and why; absent when none (and in renders before schema 2).
   */
  heldOff?: Record<string, string[]> | undefined;
  /** What it needs of the host of every node it may run on, in words (the host contract); absent when nothing. */
  hostNeeds?: string[] | undefined;
}

/** Nodes whose hosts have the same capabilities (names by kind; `*`: any name), in node order. */
export interface HostGroup {
  nodes: string[];
  has: Partial<Record<HostCapabilityKind, string[]>>;
}

export interface PlacementData {
  stack: string;
  topology: string;
  /** The label profile (D1). */
  profile: string;
  taintedRoles: Role[];
  /** Grouped by role set, then zone, then name: the column order of the grid. */
  nodes: PlacementNode[];
  components: PlacementComponent[];
  /** What each node's host has (the host contract's providers), nodes that agree grouped; absent in renders before schema 4. */
  hosts?: HostGroup[] | undefined;
  /** What every pod on the pod network needs of its node's host, in words (schema 4). */
  podNeeds?: string[] | undefined;
  /** What losing a node, a zone or the drained nodes costs (./failure-table.ts); absent in renders before schema 6. */
  failureDomains?: FailureDomainTable | undefined;
}

/** The hosts' capabilities by kind, names sorted; nodes with the same grouped, in node order. */
function hostGroups(r: PlacementReport): HostGroup[] {
  const groups = new Map<string, HostGroup>();
  for (const n of r.nodes) {
    const have = r.hosts.get(n.name) ?? [];
    const has: HostGroup["has"] = {};
    for (const kind of HOST_CAPABILITY_KINDS) {
      const names = [...new Set(have.filter((p) => p.kind === kind).map((p) => (p.master ? `${p.name} (in ${p.master})` : p.name)))].sort();
      if (names.length > 0) has[kind] = names;
    }
    const key = JSON.stringify(has);
    const g = groups.get(key);
    if (g) g.nodes.push(n.name);
    else groups.set(key, { nodes: [n.name], has });
  }
  return [...groups.values()];
}

/** The report's data, without its checks (a report with failed checks renders nothing). */
export function placementData(r: PlacementReport): PlacementData {
  return {
    stack: r.stack,
    topology: r.topology,
    profile: r.profile,
    taintedRoles: [...r.taintedRoles],
    nodes: r.nodes.map((n) => ({
      name: n.name,
      roles: [...n.roles],
      ...(n.zone !== undefined ? { zone: n.zone } : {}),
      kubernetesControlPlane: n.kubernetesControlPlane,
      state: n.state,
      labels: { ...n.labels },
      taints: n.taints.map((t) => ({ key: t.key, ...(t.value !== undefined ? { value: t.value } : {}), effect: t.effect })),
    })),
    components: r.placements.map((p) => ({
      name: p.component.name,
      source: p.component.source,
      unit: p.component.unit,
      kind: p.component.kind,
      ...(p.component.replicas !== undefined ? { replicas: p.component.replicas } : {}),
      ...(p.component.priorityClass !== undefined ? { priorityClass: p.component.priorityClass } : {}),
      designRoles: p.component.designRoles,
      eligible: [...p.eligible],
      reasons: p.reasons,
      reaches: [...p.reaches],
      ...(Object.keys(p.heldOff).length > 0 ? { heldOff: p.heldOff } : {}),
      ...(r.hostNeeds.get(p.component.name)?.length ? { hostNeeds: r.hostNeeds.get(p.component.name) } : {}),
    })),
    ...(r.hosts.size > 0 ? { hosts: hostGroups(r) } : {}),
    ...(r.podNeeds.length > 0 ? { podNeeds: [...r.podNeeds] } : {}),
    ...(r.failureDomains ? { failureDomains: r.failureDomains } : {}),
  };
}
