// Which OpenKeel services a stack runs: each service's `enabled` flag, else on when the topology has
// the role it cannot run without (§ 1.2); and the Ironic conductor count (D7).
import type { Config, ServiceName } from "../config/schema";
import type { Role } from "../config/roles";
import type { Topology } from "./topology";

/** Roles a service cannot run without: enabling it on a stack without them is an error. */
export const SERVICE_REQUIRED_ROLE: Partial<Record<ServiceName, Role>> = {
  ironic: "provisioning",
  zun: "containers",
  // Swift storage pods hold the object devices: without storage nodes there is nowhere to put them
  swift: "storage",
};

/** Services that extend another one: on by default with it, and nothing without it. */
export const SERVICE_REQUIRED_SERVICE: Partial<Record<ServiceName, ServiceName>> = {
  // Neutron extensions (§ 5.2: openkeel-neutron-fwaas, openkeel-neutron-vpnaas)
  "neutron-fwaas": "neutron",
  "neutron-vpnaas": "neutron",
};

const DEFAULT_IRONIC_CONDUCTORS = 2;

/**
 * Whether a service is on: its `enabled` flag, else on when the topology has the role it needs and
 * the service it extends is on.
 */
export function serviceEnabled(cfg: Config, topo: Topology, service: ServiceName): boolean {
  const explicit = cfg.services[service]?.enabled;
  if (explicit !== undefined) return explicit;
  const required = SERVICE_REQUIRED_ROLE[service];
  const extended = SERVICE_REQUIRED_SERVICE[service];
  return (required === undefined || topo.nodesByRole[required].length > 0) && (extended === undefined || serviceEnabled(cfg, topo, extended));
}

export function ironicConductorReplicas(cfg: Config): number {
  return cfg.services.ironic?.replicas.conductor ?? DEFAULT_IRONIC_CONDUCTORS;
}

/**
 * The roles whose nodes are OVN chassis (§ 1.2, § 3.1 mode B): hypervisors (their VMs' ports, and
 * distributed FIPs, D3), gateways (router gateways, SNAT), and containers nodes when Zun runs (the
 * containers' Neutron ports, § 2.2).
 */
export function chassisRoles(cfg: Config, topo: Topology): Role[] {
  return serviceEnabled(cfg, topo, "zun") ? ["compute", "network", "containers"] : ["compute", "network"];
}
