// Which OpenKeel services a stack runs: each service's `enabled` flag, else on when the topology has
// the role it cannot run without (§ 1.2) and the service it extends runs. What each service needs is
// its module's to say (openkeel/services/); the loaded config carries it here (config/services.ts).
import type { Config } from "../config/schema";
import type { ServiceNeeds } from "../config/services";
import type { Role } from "../config/roles";
import type { Topology } from "./topology";

/** What a service of the stack's registry needs; a name no service has is a bug of the caller. */
export function serviceNeeds(cfg: Pick<Config, "serviceCatalog">, service: string): ServiceNeeds {
  const needs = cfg.serviceCatalog.find((s) => s.name === service);
  if (!needs)
    throw new Error(`services: no OpenKeel service is named ${service} (openkeel/services/ lists ${cfg.serviceCatalog.map((s) => s.name).join(", ")})`);
  return needs;
}

/**
 * Whether a service is on: its `enabled` flag, else on when the topology has the role it needs and
 * the service it extends is on.
 */
export function serviceEnabled(cfg: Config, topo: Topology, service: string): boolean {
  const { requiredRole, extends: extended } = serviceNeeds(cfg, service);
  const explicit = cfg.services[service]?.enabled;
  if (explicit !== undefined) return explicit;
  return (requiredRole === undefined || topo.nodesByRole[requiredRole].length > 0) && (extended === undefined || serviceEnabled(cfg, topo, extended));
}

/**
 * The roles whose nodes are OVN chassis (§ 1.2, § 3.1 mode B): hypervisors (their VMs' ports, and
 * distributed FIPs, D3), gateways (router gateways, SNAT), and the roles of a running service whose
 * pods have Neutron ports (its `chassisRoles`: Zun's containers nodes, § 2.2).
 */
export function chassisRoles(cfg: Config, topo: Topology): Role[] {
  const more = cfg.serviceCatalog.filter((s) => s.chassisRoles && serviceEnabled(cfg, topo, s.name)).flatMap((s) => s.chassisRoles ?? []);
  return [...new Set<Role>(["compute", "network", ...more])];
}
