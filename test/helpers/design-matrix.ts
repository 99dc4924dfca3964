// The design's § 2 matrix, transcribed from the design text (§ 2.1–2.3, § 5.1 for the role lists,
// § 5.6 for NodeHealthChecks), not from the code: a component-name pattern and the nodes it must reach.
// OpenKeel's rows are here; a platform component's are on its descriptor (placement/design-row.ts),
// and so are a service's the design does not list (its components' `design`).
import { hasTrait } from "../../config/lifecycle";
import type { LoadedConfig } from "../../config/schema";
import type { PlacementReport } from "../../placement/report";
import { ROLES, type Role } from "../../config/roles";
import { environmentComponents } from "../../environments/registry";
import { designOf } from "../../openkeel/components";
import type { OpenKeelService } from "../../openkeel/service";
import { OPENKEEL_SERVICES } from "../../openkeel/services";
import type { PlatformComponent } from "../../platform/component";
import type { DesignRoles } from "../../placement/workloads";
import type { DesignNodes as Expect, DesignRow, NhcGroup } from "../../placement/design-row";

/** Exactly the nodes carrying one of the roles; every node; or a non-empty subset of the roles' nodes. */

const CP: readonly Role[] = ["controlPlane"];
/**
 * § 5.6: one NodeHealthCheck per role (and one for the Kubernetes-only control plane), in this
 * order, none overlapping: a node is in the first it matches. Segment hosts are Masakari's (none
 * in the shipped inventories); issue 14: no other node is left without one.
 */
const NHC_ORDER: NhcGroup[] = ["controlPlane", "kubernetesControlPlane", "network", "storage", "compute", "containers", "provisioning"];

/**
 * OpenKeel's rows (§ 2.1 shared infrastructure, § 2.2 its services), kept here as the independent
 * copy of the design its charts' placement is held to; every platform component carries its own
 * rows (`design`, platform/component.ts), read below from every environment's components.
 */
const OPENKEEL_ROWS: DesignRow[] = [
  // § 2.1 shared infrastructure
  { workloads: /openkeel-chart\/(mariadb|rabbitmq)$/, reach: CP },
  // § 2.2 OpenKeel services: every API, worker, scheduler and conductor on the control plane
  { workloads: /openkeel-(keystone|placement|glance|skyline|ovn-octavia-provider|ec2-api|zun|ironic|swift)\/(api|proxy)$/, reach: CP },
  { workloads: /openkeel-nova\/(api|conductor|scheduler|consoleProxy|ironicAgent)$/, reach: CP },
  { workloads: /openkeel-neutron\/(api|worker|ovnCentral)$/, reach: CP },
  { workloads: /openkeel-(cinder|manila|heat|barbican|designate|masakari)\/\w+$/, reach: CP },
  { workloads: /openkeel-nova\/computeAgent$/, reach: ["compute"] },
  { workloads: /openkeel-neutron\/chassis$/, reach: ["compute", "network"] },
  // § 5.2: an API's Jobs ("API Deployment and its Jobs", the migration Job) run where the API does
  { workloads: /openkeel-[a-z-]+\/db-sync$/, reach: CP },
  // § 5.2: the Neutron extensions' APIs on the control plane; the VPNaaS agent follows the chassis
  { workloads: /openkeel-neutron-(fwaas|vpnaas)\/api$/, reach: CP },
  { workloads: /openkeel-neutron-vpnaas\/agent$/, reach: ["compute", "network"] },
  // § 2.2: Zun's containers run with the kata RuntimeClass, whose scheduling selects containers nodes
  { workloads: /openkeel-zun-runtime-class\/kata$/, reach: ["containers"] },
  { workloads: /openkeel-neutron\/metadataAgent$/, reach: ["compute"] },
  { workloads: /openkeel-neutron\/bgpAgent$/, reach: ["network", "compute"] },
  { workloads: /openkeel-chart\/ingress$/, reach: ["controlPlane", "network"] },
  { workloads: /openkeel-swift\/storage$/, reach: ["storage"] },
  { workloads: /openkeel-ironic\/conductor$/, reach: ["provisioning"] },
  { workloads: /openkeel-zun\/computeAgent$/, reach: ["containers"] },
];

/** The services § 2.2 names: OPENKEEL_ROWS are their rows, and no descriptor's row stands in for a missing one. */
const DESIGN_SERVICES = [
  "keystone",
  "placement",
  "nova",
  "neutron",
  "neutron-fwaas",
  "neutron-vpnaas",
  "glance",
  "cinder",
  "manila",
  "swift",
  "heat",
  "barbican",
  "designate",
  "masakari",
  "ironic",
  "skyline",
  "ovn-octavia-provider",
  "zun",
  "ec2-api",
];

/** The nodes a descriptor's design roles (openkeel/components.ts) reach. */
function reachOf(roles: DesignRoles): Expect {
  if (roles === "all") return ROLES;
  if (roles === "allNodes") return "every node";
  if (roles === "kubernetesControlPlane") return "kubernetes control plane";
  return roles;
}

/**
 * A service the design does not list (one added since) is held, as a platform component is, to the
 * rows its descriptor carries: each component's `design`, transcribed by whoever adds the service.
 */
function descriptorRows(services: readonly OpenKeelService[]): DesignRow[] {
  return services
    .filter((s) => !DESIGN_SERVICES.includes(s.name))
    .flatMap((s) =>
      Object.entries(s.components).map(([key, c]) => ({ workloads: new RegExp(`^openkeel-${s.name}/${key}$`), reach: reachOf(designOf(c).roles) })),
    );
}

/** Every row: OpenKeel's first, then each component's in install order (the first row a name matches is its row). */
export function designRows(
  components: readonly PlatformComponent[] = environmentComponents(),
  services: readonly OpenKeelService[] = OPENKEEL_SERVICES,
): DesignRow[] {
  return [...OPENKEEL_ROWS, ...descriptorRows(services), ...components.flatMap((c) => c.design ?? [])];
}

/** `Array.isArray`, which does not narrow a readonly array. */
const isRoles = (e: Expect): e is readonly Role[] => Array.isArray(e);

function nodesOf(cfg: LoadedConfig, roles: readonly Role[]): string[] {
  return cfg.nodes
    .filter((n) => n.roles.some((r) => roles.includes(r)))
    .map((n) => n.name)
    .sort();
}

function expectedNodes(cfg: LoadedConfig, e: Expect): string[] {
  if (e === "every node") return cfg.nodes.map((n) => n.name).sort();
  if (e === "kubernetes control plane")
    return cfg.nodes
      .filter((n) => n.kubernetesControlPlane)
      .map((n) => n.name)
      .sort();
  if (isRoles(e)) return nodesOf(cfg, e);
  if ("nhc" in e) {
    const has = (n: LoadedConfig["nodes"][number], g: NhcGroup) => (g === "kubernetesControlPlane" ? n.kubernetesControlPlane : n.roles.includes(g));
    const earlier = NHC_ORDER.slice(0, NHC_ORDER.indexOf(e.nhc));
    // a node whose state leaves the health checks (maintenance, retiring) is in none (docs/node-lifecycle.md)
    return cfg.nodes
      .filter((n) => has(n, e.nhc) && !earlier.some((g) => has(n, g)) && !hasTrait(n.state, "leavesHealthChecks"))
      .map((n) => n.name)
      .sort();
  }
  return nodesOf(cfg, e.within);
}

/**
 * A NodeHealthCheck of a group that holds no quorum, in a stack whose nodes have zones, selects one
 * zone (its name's suffix), or, without a suffix, the group's nodes of every zone that has no check
 * of its own (those alone in their zone, or without one: platform/medik8s-groups.ts). `names`: the
 * report's components, among them the group's other checks.
 */
function nhcZone(cfg: LoadedConfig, e: Expect, name: string, nodes: string[], names: readonly string[]): string[] {
  if (typeof e !== "object" || isRoles(e) || !("nhc" in e) || e.nhc === "controlPlane" || e.nhc === "kubernetesControlPlane") return nodes;
  // ours (platform/medik8s.ts); the synthetic units of ./design-units.ts keep one check per group
  if (!name.startsWith("medik8s-remediation/") || !cfg.nodes.some((n) => n.zone !== undefined)) return nodes;
  const suffixOf = (n: string) => new RegExp(`${e.nhc}(?:-([a-z0-9-]+))?/remediates$`).exec(n)?.[1];
  const suffix = suffixOf(name);
  const zoneOf = new Map(
    cfg.nodes.map((n) => [
      n.name,
      n.zone === undefined
        ? undefined
        : n.zone
            .toLowerCase()
            .replace(/[^a-z0-9-]+/g, "-")
            .replace(/^-+|-+$/g, ""),
    ]),
  );
  if (suffix !== undefined) return nodes.filter((n) => zoneOf.get(n) === suffix);
  const own = new Set(names.filter((n) => n.startsWith("medik8s-remediation/")).map(suffixOf));
  return nodes.filter((n) => zoneOf.get(n) === undefined || !own.has(zoneOf.get(n)));
}

/** Compares every placement with its row (`rows`: every component's, by default); a placement without a row fails. */
export function checkMatrix(cfg: LoadedConfig, report: PlacementReport, expect: (actual: unknown, message?: string) => any, rows = designRows()): void {
  for (const p of report.placements) {
    const row = rows.find((r) => r.workloads.test(p.component.name));
    expect(row, `no § 2 row for ${p.component.name}`).toBeDefined();
    if (row === undefined) continue;
    const e = row.reach;
    const got = [...p.eligible].sort();
    if (typeof e === "object" && !isRoles(e) && "within" in e) {
      expect(got.length, p.component.name).toBeGreaterThan(0);
      for (const n of got) expect(expectedNodes(cfg, e), `${p.component.name} on ${n}`).toContain(n);
    } else {
      const names = report.placements.map((x) => x.component.name);
      expect(got, p.component.name).toEqual(nhcZone(cfg, e, p.component.name, expectedNodes(cfg, e), names));
    }
  }
}
