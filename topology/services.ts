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

const DEFAULT_IRONIC_CONDUCTORS = 2;

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
