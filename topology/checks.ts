// The okadm plan rules (§ 5.2, § 6): what a stack's inventory must hold before anything is
// installed. Errors stop the render, `npm run plan` and `pulumi preview` (exit 1); warnings are printed.
import type { Check } from "../config/problems";
import type { Role } from "../config/roles";
import type { Config } from "../config/schema";
import { addressChecks, attachmentEnvironmentChecks } from "./addresses";
import { serviceEnabled } from "./services";
import type { Topology } from "./topology";
import { bridgeMappingChecks } from "./wiring";

/** Where a group of rules puts what it finds. */
function collect() {
  const checks: Check[] = [];
  const error = (code: string, message: string, fix: string, path?: string) => checks.push({ level: "error", code, message, fix, path });
  const warning = (code: string, message: string, fix: string, path?: string) => checks.push({ level: "warning", code, message, fix, path });
  return { checks, error, warning };
}

/** Every node once, by name. */
function uniqueNodeChecks(cfg: Config): Check[] {
  const { checks, error } = collect();
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
  return checks;
}

/** § 6: what a cloud's inventory holds, where the environment asks for one (topology/environment.ts). */
function cloudInventoryChecks(cfg: Config, topo: Topology): Check[] {
  const { checks, error } = collect();
  const count = (role: Role) => topo.nodesByRole[role].length;
  if (!topo.environment.cloudInventory) return checks;
  if (count("controlPlane") < 3) {
    error(
      "control-plane-count",
      `${count("controlPlane")} controlPlane node(s); Galera, RabbitMQ and OVN central need 3 (required anti-affinity, one member per node)`,
      "give the controlPlane role to at least 3 nodes",
      "openkeel:nodes",
    );
  }
  // § 1.2, § 1.4, D7: "provisioning … NoSchedule always": BMC credentials and the provisioning
  // network stay off every other workload's node, whatever the stack taints otherwise.
  if (count("provisioning") > 0 && !topo.taintedRoles.includes("provisioning")) {
    const list = cfg.taints === false ? "[provisioning]" : `[${[...(cfg.taints as string[]), "provisioning"].join(", ")}]`;
    error(
      "provisioning-taint",
      `${count("provisioning")} provisioning node(s) without the provisioning taint: the design taints provisioning nodes always (§ 1.4, D7), so that no other workload shares a node with the BMC network`,
      `add provisioning to the tainted roles: openkeel:taints: ${list}, or true`,
      "openkeel:taints",
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
  return checks;
}

/** A zone on every node, or on none. */
function zoneChecks(cfg: Config, topo: Topology): Check[] {
  const { checks, error, warning } = collect();
  if (topo.zones.length > 0) {
    const missing = cfg.nodes.map((n, i) => ({ n, i })).filter(({ n }) => n.zone === undefined);
    if (topo.zones.length > 1) {
      for (const { n, i } of missing) {
        error(
          "zone-missing",
          `node '${n.name}' has no zone while other nodes are in ${topo.zones.join(", ")}`,
          "set zone: on every node of a multi-zone topology (spread constraints and availability zones need it)",
          `openkeel:nodes[${i}].zone`,
        );
      }
    } else if (missing.length > 0) {
      // one zone: one warning about the nodes that have it (a zone added to one node), not one per other node
      const zoned = cfg.nodes.map((n, i) => ({ n, i })).filter(({ n }) => n.zone !== undefined);
      const names = zoned.map(({ n }) => `'${n.name}'`).join(", ");
      warning(
        "zone-missing",
        `${zoned.length === 1 ? `only node ${names} has` : `only nodes ${names} have`} a zone (${topo.zones[0]}); the ${missing.length} other node(s) have none`,
        "set zone: on every node, or on none",
        `openkeel:nodes[${zoned[0].i}].zone`,
      );
    }
  }
  return checks;
}

/** A service turned on needs the role it runs on and the service it extends (what its module declares: cfg.serviceCatalog). */
function serviceChecks(cfg: Config, topo: Topology): Check[] {
  const { checks, error } = collect();
  const count = (role: Role) => topo.nodesByRole[role].length;
  for (const { name: service, requiredRole: role } of cfg.serviceCatalog) {
    if (role && cfg.services[service]?.enabled === true && count(role) === 0) {
      error(
        "service-needs-role",
        `${service} is enabled but no node has the ${role} role`,
        `give the ${role} role to a node, or set openkeel:services.${service}.enabled: false`,
        `openkeel:services.${service}.enabled`,
      );
    }
  }

  for (const { name: service, extends: base } of cfg.serviceCatalog) {
    if (base && cfg.services[service]?.enabled === true && !serviceEnabled(cfg, topo, base)) {
      error(
        "service-needs-service",
        `${service} is enabled but ${base}, which it extends, is off`,
        `turn ${base} on, or set openkeel:services.${service}.enabled: false`,
        `openkeel:services.${service}.enabled`,
      );
    }
  }
  return checks;
}

/**
 * The HPAs' bounds (§ 6.3): a floor above the ceiling has no replica count, and a floor under 3
 * lets an HPA scale an API below what its PodDisruptionBudget keeps available (§ 2: APIs
 * minAvailable 2), so that no node running one of its pods could be drained.
 */
function autoscalingChecks(cfg: Config): Check[] {
  const { checks, error } = collect();
  const apis = cfg.autoscaling?.apis;
  if (!apis) return checks;
  if (apis.minReplicas > apis.maxReplicas) {
    error(
      "autoscaling-bounds",
      `minReplicas ${apis.minReplicas} is above maxReplicas ${apis.maxReplicas}: no replica count satisfies both`,
      "set minReplicas at most maxReplicas",
      "openkeel:autoscaling.apis",
    );
  }
  if (apis.minReplicas < MIN_API_REPLICAS) {
    error(
      "autoscaling-bounds",
      `minReplicas ${apis.minReplicas} would let the APIs scale below ${MIN_API_REPLICAS} replicas, while their PodDisruptionBudgets keep 2 available (§ 2): no node running one of them could be drained`,
      `set minReplicas to ${MIN_API_REPLICAS} or more`,
      "openkeel:autoscaling.apis.minReplicas",
    );
  }
  return checks;
}

/**
 * A role a cloud's inventory needs a node of (§ 6) because of what runs there, from the module of
 * what does (Nova's hypervisors, Neutron's gateways, Longhorn's disks): its check, where the
 * environment asks for an inventory and no node has the role.
 */
export function cloudRoleCheck(topo: Topology, role: Role, check: Omit<Check, "path">): Check[] {
  return topo.environment.cloudInventory && topo.nodesByRole[role].length < 1 ? [{ ...check, path: "openkeel:nodes" }] : [];
}

/** The design's API replica count (§ 2.2), which the PodDisruptionBudgets (minAvailable 2) assume. */
const MIN_API_REPLICAS = 3;

/** The okadm plan rules. Errors stop the render (exit 1); warnings are printed. */
export function planChecks(cfg: Config, topo: Topology): Check[] {
  return [
    ...uniqueNodeChecks(cfg),
    ...cloudInventoryChecks(cfg, topo),
    ...zoneChecks(cfg, topo),
    ...serviceChecks(cfg, topo),
    ...bridgeMappingChecks(cfg, topo),
    ...addressChecks(cfg, topo),
    ...attachmentEnvironmentChecks(cfg, topo),
    ...autoscalingChecks(cfg),
  ];
}
