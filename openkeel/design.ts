// The design's § 2 rows of the OpenKeel components (§ 2.1, § 2.2, § 5.1): what kind each one is,
// the roles it runs on and where it must never run. Written from the design, not from the catalog
// (./catalog.ts): the placement checks hold what the releases render against it.
import type { Role } from "../config/roles";
import { CONTROL_PLANE, TENANT_WORKLOAD, type DesignRoles, type WorkloadKind } from "../placement/workloads";

/** What the design says about a component (§ 2): its roles, and where it must never be. */
export interface DesignRow {
  kind: WorkloadKind;
  roles: DesignRoles;
  /** Roles it covers too when the Plan holds this release (the chassis on Zun's containers nodes). */
  rolesWith?: { release: string; roles: Role[] };
  confinedTo?: Role | readonly Role[];
  forbiddenRoles?: Role[];
  /** A node agent that must run on Masakari reserved hosts too (§ 5.6). */
  reservedHosts?: true;
}

/**
 * The OVN chassis (§ 1.2, § 3.1 mode B): on compute and network nodes, and on containers nodes for
 * Zun's ports (§ 2.2); it tolerates every taint, so nothing but its selector keeps it elsewhere.
 */
const CHASSIS: DesignRow = {
  kind: "DaemonSet",
  roles: ["compute", "network"],
  rolesWith: { release: "openkeel-zun", roles: ["containers"] },
  confinedTo: ["compute", "network", "containers"],
  reservedHosts: true,
};

/**
 * OpenKeel components by chart and placement key (§ 2.1, § 2.2, § 5.1). A key not listed is a
 * Deployment on the chart's default role, the control plane (§ 5.2).
 */
const OPENKEEL_DESIGN: Record<string, Record<string, DesignRow>> = {
  "openkeel-chart": {
    mariadb: { kind: "StatefulSet", roles: CONTROL_PLANE, confinedTo: "controlPlane" },
    rabbitmq: { kind: "StatefulSet", roles: CONTROL_PLANE, confinedTo: "controlPlane" },
    ingress: { kind: "DaemonSet", roles: ["controlPlane", "network"] },
  },
  "openkeel-nova": {
    computeAgent: { kind: "DaemonSet", roles: ["compute"], ...TENANT_WORKLOAD, reservedHosts: true },
  },
  "openkeel-neutron": {
    // D2: the RAFT members on the control plane, whatever selector the chart is given
    ovnCentral: { kind: "StatefulSet", roles: CONTROL_PLANE, confinedTo: "controlPlane" },
    chassis: CHASSIS,
    metadataAgent: { kind: "DaemonSet", roles: ["compute"], reservedHosts: true },
    bgpAgent: { kind: "DaemonSet", roles: ["network", "compute"], reservedHosts: true },
  },
  "openkeel-neutron-vpnaas": {
    // § 5.2: the agent follows the chassis: the same nodes, every taint tolerated
    agent: CHASSIS,
  },
  "openkeel-swift": {
    storage: { kind: "StatefulSet", roles: ["storage"] },
  },
  "openkeel-ironic": {
    conductor: { kind: "StatefulSet", roles: ["provisioning"], confinedTo: "provisioning" },
  },
  "openkeel-zun": {
    computeAgent: { kind: "DaemonSet", roles: ["containers"], ...TENANT_WORKLOAD, reservedHosts: true },
  },
};

const OPENKEEL_DEFAULT: DesignRow = { kind: "Deployment", roles: CONTROL_PLANE };

/**
 * § 5.2 "What is implemented": these charts render their API's Jobs ("API Deployment and its Jobs
 * (placement.api)"; Nova's and Masakari's "migration Job (api)"), placed as the API is. The
 * database migration is the one every such chart runs: a component of its own, `<release>/db-sync`,
 * run once on the control plane.
 */
export const API_JOB = "db-sync";
export const API_JOB_CHARTS: ReadonlySet<string> = new Set(
  [
    "keystone",
    "placement",
    "glance",
    "neutron-fwaas",
    "ovn-octavia-provider",
    "skyline",
    "barbican",
    "cinder",
    "masakari",
    "neutron",
    "neutron-vpnaas",
    "nova",
    "ironic",
  ].map((c) => `openkeel-${c}`),
);
export const API_JOB_DESIGN: DesignRow = { kind: "Pods", roles: CONTROL_PLANE };

export function openkeelDesign(chart: string, key: string): DesignRow {
  return OPENKEEL_DESIGN[chart]?.[key] ?? OPENKEEL_DEFAULT;
}
