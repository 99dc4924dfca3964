// The inventory as the scheduler will see it: labels and taints per node, nodes per role, zones.
import type { Config, NodeConfig } from "../config/schema";
import { K8S_CONTROL_PLANE_LABEL, ROLES, roleLabelKey, roleTaint, ZONE_LABEL, HOSTNAME_LABEL, type LabelProfile, type Role, type Taint } from "../config/roles";
import type { EnvironmentTraits } from "./environment";

export interface Topology {
  /** The stack's label profile, else its environment's (D1). */
  profile: LabelProfile;
  /** What its environment tells the layers below environments/ (./environment.ts). */
  environment: EnvironmentTraits;
  /** Roles whose nodes carry the role taint (`taints: true` = every role). */
  taintedRoles: Role[];
  nodes: NodeConfig[];
  nodesByRole: Record<Role, NodeConfig[]>;
  /** Distinct zones, sorted. */
  zones: string[];
}

function taintedRoles(taints: Config["taints"]): Role[] {
  if (taints === true) return [...ROLES];
  if (taints === false) return [];
  return ROLES.filter((r) => taints.includes(r));
}

export function buildTopology(cfg: Config, environment: EnvironmentTraits): Topology {
  const nodesByRole = Object.fromEntries(ROLES.map((r) => [r, [] as NodeConfig[]])) as Record<Role, NodeConfig[]>;
  for (const node of cfg.nodes) for (const role of node.roles) nodesByRole[role].push(node);
  const zones = [...new Set(cfg.nodes.map((n) => n.zone).filter((z): z is string => z !== undefined))].sort();
  return {
    profile: cfg.labelProfile ?? environment.labelProfile,
    environment,
    taintedRoles: taintedRoles(cfg.taints),
    nodes: cfg.nodes,
    nodesByRole,
    zones,
  };
}

/**
 * Whether the stack places by role labels (the releases get global.nodeRoles): always where every
 * node must carry a role (its environment's cloudInventory), else only if some node carries one
 * (§ 5.2: roles are optional in a lab, and a chart without global.nodeRoles places nothing by role).
 */
export function roleLabelsInUse(topo: Pick<Topology, "environment" | "nodes">): boolean {
  return topo.environment.cloudInventory || topo.nodes.some((n) => n.roles.length > 0);
}

/** The labels this repository applies to a node: its role labels, its zone, its extra labels. */
export function appliedNodeLabels(node: NodeConfig, profile: LabelProfile): Record<string, string> {
  const labels: Record<string, string> = { ...node.labels };
  for (const role of node.roles) labels[roleLabelKey(role, profile)] = "";
  if (node.zone !== undefined) labels[ZONE_LABEL] = node.zone;
  return labels;
}

/** Every label the scheduler sees on the node: applied labels plus those the kubelet sets itself. */
export function schedulingNodeLabels(node: NodeConfig, profile: LabelProfile): Record<string, string> {
  const labels = appliedNodeLabels(node, profile);
  labels[HOSTNAME_LABEL] = node.name;
  if (node.kubernetesControlPlane) labels[K8S_CONTROL_PLANE_LABEL] = "";
  return labels;
}

/**
 * Taints of a node: the taint of each of its tainted roles. A Kubernetes control-plane node with no
 * OpenKeel role keeps the upstream control-plane taint (large topology: etcd and kube-apiserver
 * alone); one that carries OpenKeel roles must accept workloads, so it has none.
 */
export function nodeTaints(node: NodeConfig, topo: Pick<Topology, "taintedRoles">): Taint[] {
  const taints = node.roles.filter((r) => topo.taintedRoles.includes(r)).map(roleTaint);
  if (node.kubernetesControlPlane && node.roles.length === 0) {
    taints.push({ key: K8S_CONTROL_PLANE_LABEL, effect: "NoSchedule" });
  }
  return taints;
}
