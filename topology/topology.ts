// The inventory as the scheduler will see it (labels and taints per node) and the plan checks
// okadm plan applies before anything is installed (§ 5.2, § 6).
import type { Config, NodeConfig, ServiceName } from "../config/schema";
import {
  K8S_CONTROL_PLANE_LABEL,
  ROLES,
  roleLabelKey,
  roleTaint,
  ZONE_LABEL,
  HOSTNAME_LABEL,
  type LabelProfile,
  type Role,
  type Taint,
} from "../config/roles";

export interface Topology {
  profile: LabelProfile;
  production: boolean;
  /** Roles whose nodes carry the role taint (`taints: true` = every role). */
  taintedRoles: Role[];
  nodes: NodeConfig[];
  nodesByRole: Record<Role, NodeConfig[]>;
  /** Distinct zones, sorted. */
  zones: string[];
}

export function taintedRoles(taints: Config["taints"]): Role[] {
  if (taints === true) return [...ROLES];
  if (taints === false) return [];
  return ROLES.filter((r) => taints.includes(r));
}

export function buildTopology(cfg: Config): Topology {
  const nodesByRole = Object.fromEntries(ROLES.map((r) => [r, [] as NodeConfig[]])) as Record<Role, NodeConfig[]>;
  for (const node of cfg.nodes) for (const role of node.roles) nodesByRole[role].push(node);
  const zones = [...new Set(cfg.nodes.map((n) => n.zone).filter((z): z is string => z !== undefined))].sort();
  return {
    profile: cfg.labelProfile,
    production: cfg.environment === "talos-production",
    taintedRoles: taintedRoles(cfg.taints),
    nodes: cfg.nodes,
    nodesByRole,
    zones,
  };
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

export type CheckLevel = "error" | "warning";

export interface PlanCheck {
  level: CheckLevel;
  /** Stable identifier, e.g. `control-plane-count`. */
  code: string;
  message: string;
  remediation: string;
  /** Config key path the check is about, when there is one. */
  path?: string;
}

/** Roles a service cannot run without: enabling it on a stack without them is an error. */
export const SERVICE_REQUIRED_ROLE: Partial<Record<ServiceName, Role>> = {
  ironic: "provisioning",
  zun: "containers",
  // Swift storage pods hold the object devices: without storage nodes there is nowhere to put them
  swift: "storage",
};

export const DEFAULT_IRONIC_CONDUCTORS = 2;

/** Whether a service is on: its `enabled` flag, else on when the topology has the role it needs. */
export function serviceEnabled(cfg: Config, topo: Topology, service: ServiceName): boolean {
  const explicit = cfg.services[service]?.enabled;
  if (explicit !== undefined) return explicit;
  const required = SERVICE_REQUIRED_ROLE[service];
  return required === undefined || topo.nodesByRole[required].length > 0;
}

export function ironicConductorReplicas(cfg: Config): number {
  return cfg.services.ironic?.replicas.conductor ?? DEFAULT_IRONIC_CONDUCTORS;
}

/** The okadm plan rules. Errors stop the render (exit 1); warnings are printed. */
export function planChecks(cfg: Config, topo: Topology): PlanCheck[] {
  const checks: PlanCheck[] = [];
  const error = (code: string, message: string, remediation: string, path?: string) =>
    checks.push({ level: "error", code, message, remediation, path });
  const warning = (code: string, message: string, remediation: string, path?: string) =>
    checks.push({ level: "warning", code, message, remediation, path });
  const count = (role: Role) => topo.nodesByRole[role].length;

  const seen = new Map<string, number>();
  cfg.nodes.forEach((node, i) => {
    const first = seen.get(node.name);
    if (first !== undefined) {
      error(
        "duplicate-node",
        `node '${node.name}' is listed twice (nodes[${first}] and nodes[${i}])`,
        "give every node a unique name, or merge the two entries",
        `openkeel:nodes[${i}].name`,
      );
    } else seen.set(node.name, i);
  });

  if (topo.production) {
    if (count("controlPlane") < 3) {
      error(
        "control-plane-count",
        `${count("controlPlane")} controlPlane node(s); Galera, RabbitMQ and OVN central need 3 (required anti-affinity, one member per node)`,
        "give the controlPlane role to at least 3 nodes",
        "openkeel:nodes",
      );
    }
    if (count("compute") < 1) {
      error("compute-count", "no compute node: Nova has no hypervisor", "give the compute role to at least 1 node", "openkeel:nodes");
    }
    if (count("network") < 1) {
      error(
        "network-count",
        "no network node: Neutron has no gateway chassis for router gateways and SNAT",
        "give the network role to at least 1 node",
        "openkeel:nodes",
      );
    }
    if (count("storage") < 1) {
      warning(
        "storage-recommended",
        "no storage node: Longhorn creates no default disks, so no volume can be scheduled",
        "give the storage role to the nodes whose disks hold Longhorn replicas",
        "openkeel:nodes",
      );
    }
    cfg.nodes.forEach((node, i) => {
      if (node.roles.length === 0 && !node.kubernetesControlPlane) {
        error(
          "node-without-role",
          `node '${node.name}' has no role and is not a Kubernetes control-plane node`,
          "give it at least one role, or remove it from the inventory",
          `openkeel:nodes[${i}].roles`,
        );
      }
    });
  }

  if (topo.zones.length > 0) {
    const missing = cfg.nodes.map((n, i) => ({ n, i })).filter(({ n }) => n.zone === undefined);
    for (const { n, i } of missing) {
      const multi = topo.zones.length > 1;
      (multi ? error : warning)(
        "zone-missing",
        `node '${n.name}' has no zone while other nodes are in ${topo.zones.join(", ")}`,
        multi
          ? "set zone: on every node of a multi-zone topology (spread constraints and availability zones need it)"
          : "set zone: on every node, or on none",
        `openkeel:nodes[${i}].zone`,
      );
    }
  }

  for (const [service, role] of Object.entries(SERVICE_REQUIRED_ROLE) as [ServiceName, Role][]) {
    if (cfg.services[service]?.enabled === true && count(role) === 0) {
      error(
        "service-needs-role",
        `${service} is enabled but no node has the ${role} role`,
        `give the ${role} role to a node, or set openkeel:services.${service}.enabled: false`,
        `openkeel:services.${service}.enabled`,
      );
    }
  }

  if (serviceEnabled(cfg, topo, "ironic") && count("provisioning") > 0) {
    const replicas = ironicConductorReplicas(cfg);
    if (replicas > count("provisioning")) {
      error(
        "ironic-conductors",
        `${replicas} Ironic conductor replicas but ${count("provisioning")} provisioning node(s): each conductor needs its own provisioning node (D7, required anti-affinity)`,
        `label more nodes with the provisioning role, or set openkeel:services.ironic.replicas.conductor to ${count("provisioning")}`,
        "openkeel:services.ironic.replicas.conductor",
      );
    }
  }
  return checks;
}
