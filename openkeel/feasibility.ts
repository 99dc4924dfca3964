// OpenKeel's constraints in the feasibility model (lifecycle/feasibility.ts), each read from what
// the Plan renders for its release: the quorum of the OpenKeel control plane (Galera, RabbitMQ, OVN
// central), the Swift storage members, the gateway chassis of Neutron's routers, the Ironic
// conductors, the public ingress and the hypervisors. Errors: a step that can never finish, or a
// quorum or data lost; warnings: the cloud runs degraded. Each fix names the nodes. Each also says
// what a loss of nodes costs it (`loss`, lifecycle/failure-domains.ts): the quorums member by member
// (their counts and zone spread read from the releases), Swift's replicas, the gateways, the ingress,
// the hypervisors' VMs and the Ironic conductors.
import { valueAt, type Check } from "../config/problems";
import type { Config } from "../config/schema";
import { ROLES, roleOfLabelKey, ZONE_LABEL, type Role } from "../config/roles";
import {
  addFirst,
  concerned,
  downList,
  nodeList,
  ofTotal,
  transition,
  worstLost,
  type Inventory,
  type Loss,
  type NodeConstraint,
} from "../lifecycle/feasibility";
import { quorumConstraint, quorumLoss, quorumMembers } from "../lifecycle/quorums";
import type { LossFinding } from "../placement/failure-table";
import { findUnit, type Plan } from "../plan/plan";
import { arr, num, obj, type Obj } from "../placement/workloads";
import { INFRASTRUCTURE_UNIT, memberObjectName } from "./infrastructure";
import { SWIFT_REPLICAS } from "./replicas";
import { releaseName } from "./services";
import { workloadObjectName } from "./zone-spread";

/** The values of a release of the Plan, or undefined when the stack does not install it. */
function valuesOf(plan: Plan, unit: string): Obj | undefined {
  const u = findUnit(plan, unit);
  return u?.kind === "HelmRelease" ? (u.values as Obj) : undefined;
}

/** Galera, RabbitMQ and OVN central: one member per controlPlane node (required anti-affinity), 3 from 3 nodes on. */
const CONTROL_PLANE_QUORUM = quorumConstraint({
  key: "openkeel-control-plane",
  name: "the OpenKeel control plane",
  holds: "Galera, RabbitMQ and OVN central",
  holder: (n) => n.roles.includes("controlPlane"),
  members: quorumMembers,
  replacement: "the controlPlane role",
});

/**
 * Galera, RabbitMQ and OpenKeel's OVN central: where their member count is, the workload a zone term
 * of theirs patches, and the labels of their pods (the operators' and the chart's).
 */
export const QUORUMS = [
  {
    id: "galera",
    what: "Galera",
    unit: INFRASTRUCTURE_UNIT,
    path: ["infrastructure", "mariadb", "replicas"],
    target: { kind: "MariaDB", name: memberObjectName(INFRASTRUCTURE_UNIT, "mariadb") },
    pods: `app.kubernetes.io/instance=${memberObjectName(INFRASTRUCTURE_UNIT, "mariadb")}`,
    costs: "every API loses its database",
  },
  {
    id: "rabbitmq",
    what: "RabbitMQ",
    unit: INFRASTRUCTURE_UNIT,
    path: ["infrastructure", "rabbitmq", "replicas"],
    target: { kind: "RabbitmqCluster", name: memberObjectName(INFRASTRUCTURE_UNIT, "rabbitmq") },
    pods: `app.kubernetes.io/name=${memberObjectName(INFRASTRUCTURE_UNIT, "rabbitmq")}`,
    costs: "the services' RPC (quorum queues) stops",
  },
  {
    id: "ovnCentral",
    what: "OVN central",
    unit: releaseName("neutron"),
    path: ["ovnCentral", "replicas"],
    target: { kind: "StatefulSet", name: workloadObjectName(releaseName("neutron"), "ovnCentral") },
    pods: `app.kubernetes.io/name=${workloadObjectName(releaseName("neutron"), "ovnCentral")}`,
    costs: "Neutron can change no network, port or router",
  },
] as const;

/** The quorum fact that lists those whose members are one per zone. */
export const ZONE_SPREAD = "zoneSpread";

/** Whether a release's post-render patches give a workload a required pod anti-affinity term on the zone. */
function requiredZoneTerm(plan: Plan, unit: string, target: { kind: string; name: string }): boolean {
  const u = findUnit(plan, unit);
  const patch = u?.kind === "HelmRelease" ? (u.postRender ?? []).find((p) => p.target.kind === target.kind && p.target.name === target.name) : undefined;
  const found = (v: unknown): boolean => {
    if (Array.isArray(v)) return v.some(found);
    if (v === null || typeof v !== "object") return false;
    const o = v as Obj;
    const terms = arr<Obj>(obj(o.podAntiAffinity).requiredDuringSchedulingIgnoredDuringExecution);
    return terms.some((t) => t.topologyKey === ZONE_LABEL) || Object.values(o).some(found);
  };
  return found(patch?.patch);
}

/** The value at a path of a release's values. */
function releaseValue(plan: Plan, unit: string, path: readonly string[]): unknown {
  return path.reduce<unknown>((v, k) => obj(v)[k], valuesOf(plan, unit));
}

/**
 * What losing nodes costs the OpenKeel control plane's quorums, each on its own: its member count
 * and zone spread as the releases render them (the required zone anti-affinity of § 6.3 in large,
 * openkeel/zone-spread.ts and ./infrastructure.ts). Members sit on controlPlane nodes, one per node.
 */
const CONTROL_PLANE_QUORUMS: NodeConstraint = {
  key: "openkeel-quorums",
  facts: (plan) => {
    const facts: Record<string, number | string[]> = {};
    const spread: string[] = [];
    for (const q of QUORUMS) {
      const members = num(releaseValue(plan, q.unit, q.path));
      if (members === undefined) continue;
      facts[q.id] = members;
      if (requiredZoneTerm(plan, q.unit, q.target)) spread.push(q.id);
    }
    return Object.keys(facts).length === 0 ? undefined : { ...facts, [ZONE_SPREAD]: spread };
  },
  loss(loss, facts) {
    const holders = loss.all("controlPlane");
    const spread = arr<string>(facts?.[ZONE_SPREAD]);
    return QUORUMS.flatMap((q) => {
      const members = facts?.[q.id];
      if (typeof members !== "number") return [];
      return quorumLoss(loss, {
        what: q.what,
        holders,
        members,
        perZone: spread.includes(q.id),
        costs: q.costs,
        fix: `give ${q.what} 3 controlPlane nodes to its 3 members (one loss kept), and for a zone's loss a controlPlane node in each of 3 zones with one member per zone (the large topology, § 6.3)`,
      });
    });
  },
};

/**
 * A retirement or removal that leaves fewer storage nodes than Swift storage members: each member
 * needs a node of its own (required host anti-affinity), and the member of a leaving node cannot
 * start on a node that holds one (D5: its devices are strict-local, it re-syncs from a new PVC on a
 * free node). The rule of docs/node-lifecycle.md, `swift-members`: nodes staying < members.
 */
function swiftLeavingChecks(inv: Inventory, members: number): Check[] {
  const leaving = inv.leaving("storage");
  if (!concerned(inv, leaving)) return [];
  const left = inv.staying("storage").length;
  if (left >= members) return [];
  const release = releaseName("swift");
  return [
    {
      level: "error",
      code: "swift-members",
      message: `${inv.judging === "removal" ? "removing" : "retiring"} ${nodeList(leaving)} leaves ${left} storage node(s) for the ${members} Swift storage members of ${release} (one per storage node, required anti-affinity; its devices strict-local, D5): the member of ${nodeList(leaving)} has no node to start on${left < SWIFT_REPLICAS ? `, and the ${SWIFT_REPLICAS} replicas of each object (§ 6.1) no longer fit on separate members` : ""}`,
      fix:
        left >= SWIFT_REPLICAS
          ? `${addFirst("a storage node", leaving)}; or lower openkeel:services.swift.replicas.storage to ${left} first (its own change, deployed: the StatefulSet removes its highest ordinal, and the rings move that member's replicas)`
          : addFirst("a storage node", leaving),
      path: inv.path(leaving),
    },
  ];
}

/** Two storage members down at once: the StatefulSet's PodDisruptionBudget holds the second drain. */
function swiftDownChecks(inv: Inventory, members: number): Check[] {
  const down = inv.down("storage").filter((n) => !n.removed);
  if (inv.judging !== "states" || down.length < 2) return [];
  return [
    {
      level: "error",
      code: "swift-members",
      message: `${downList(down)} would be drained at once: each runs one of the ${members} Swift storage members, whose strict-local devices cannot follow them (D5), and the storage StatefulSet's PodDisruptionBudget (maxUnavailable: 1, § 2.2) holds the second drain while the first member is down`,
      fix: "put one storage node at a time into maintenance or retiring; set the others back to active (or cordoned)",
      path: inv.path(down.slice(1)),
    },
  ];
}

/** Where the stack sets Swift's member count: its replicas override, or its raw values. */
export function swiftMembersSet(cfg: Config): boolean {
  const swift = cfg.services.swift;
  return swift?.replicas.storage !== undefined || valueAt(swift?.values, ["storage", "replicas"]) !== undefined;
}

/**
 * Swift's members hold its ring's replicas apart: in distinct zones where the ring has them (Swift
 * zones = Kubernetes zones, § 6.3: ring.zoneLabel), else on distinct members ("as unique as
 * possible"). At worst an object has a replica on each lost member, up to one per zone.
 */
function swiftLoss(loss: Loss, members: number, zoned: boolean): LossFinding[] {
  const holders = loss.all("storage");
  if (!holders.some((n) => loss.lost.has(n.name))) return [];
  const replicas = Math.min(SWIFT_REPLICAS, members);
  const lost = worstLost(loss, holders, replicas, zoned && loss.zoneCount(holders) >= replicas);
  const at = `at worst ${ofTotal(lost, replicas)} replicas of an object on the lost nodes${zoned ? " (one per zone)" : ""}`;
  if (lost >= replicas) {
    return [
      {
        what: "Swift",
        level: "fatal",
        message: `${at}: objects whose replicas all sit there are unavailable until the nodes are back`,
        fix: `more storage nodes than the ${replicas} replicas, and for a zone's loss 3 zones with storage nodes (Swift zones = Kubernetes zones, § 6.3)`,
      },
    ];
  }
  return [
    {
      what: "Swift",
      level: "degraded",
      message: `${at}: reads come from the others, writes go to handoff members, and the replicators catch up once they are back`,
      fix: "bring the storage nodes back; a member lost for good re-syncs from a new, empty PVC (retire it, § 2.1)",
    },
  ];
}

const SWIFT: NodeConstraint = {
  key: "swift",
  facts: (plan, cfg) => {
    const values = valuesOf(plan, releaseName("swift"));
    const members = num(obj(values?.storage).replicas);
    const zoneLabel = obj(values?.ring).zoneLabel;
    // `set`: the stack gives the count; without, it follows the storage nodes (the preview refuses that it moves so)
    return members === undefined
      ? undefined
      : { members, ...(swiftMembersSet(cfg) ? { set: "stack" } : {}), ...(typeof zoneLabel === "string" ? { ringZones: zoneLabel } : {}) };
  },
  judge(inv, facts) {
    const members = facts?.members;
    if (typeof members !== "number") return [];
    return [...swiftDownChecks(inv, members), ...swiftLeavingChecks(inv, members)];
  },
  loss: (loss, facts) => (typeof facts?.members === "number" ? swiftLoss(loss, facts.members, typeof facts.ringZones === "string") : []),
};

/** § 3.2: an HA chassis group needs two gateway chassis, one active and one standby. */
const HA_GATEWAYS = 2;

const GATEWAYS: NodeConstraint = {
  key: "gateway-chassis",
  facts: (plan) => (valuesOf(plan, releaseName("neutron")) ? { haChassisGroup: HA_GATEWAYS } : undefined),
  loss: (loss, facts) => (facts ? gatewayLoss(loss) : []),
  judge(inv, facts) {
    const down = inv.down("network");
    if (!facts || !concerned(inv, down)) return [];
    const up = inv.up("network");
    if (up.length >= HA_GATEWAYS) return [];
    const gone = `${downList(down)} would leave ${up.length === 0 ? "no gateway chassis" : `one gateway chassis (${nodeList(up)})`}`;
    if (up.length === 0) {
      return [
        {
          level: "error",
          code: "gateway-chassis",
          message: `${gone}: the routers' gateways and the SNAT of VMs without a floating IP (§ 3.3) have nowhere to run`,
          fix: addFirst("a network node", down),
          path: inv.path(down),
        },
      ];
    }
    return [
      {
        level: "warning",
        code: "gateway-chassis",
        message: `${gone}: HA chassis groups need two (§ 3.2), so the routers' gateways run without a standby and the next failure of ${nodeList(up)} cuts them off`,
        fix: `add a network node first (3 are recommended, § 6.2), or take ${nodeList(down)} out only briefly`,
        path: inv.path(down),
      },
    ];
  },
};

/** Gateway chassis left: none cuts every router off, one runs them without a standby (§ 3.2). */
function gatewayLoss(loss: Loss): LossFinding[] {
  const all = loss.all("network");
  const up = loss.up("network");
  if (up.length === all.length) return [];
  const left = `${ofTotal(up.length, all.length)} gateway chassis left`;
  if (up.length === 0) {
    return [
      {
        what: "gateway chassis",
        level: "fatal",
        message: `${left}: every router's gateway and the SNAT of VMs without a floating IP (§ 3.3) are cut off`,
        fix: "network nodes in more than one failure domain: 3 are recommended (§ 6.2), one per zone in large (§ 6.3)",
      },
    ];
  }
  if (up.length < HA_GATEWAYS) {
    return [
      {
        what: "gateway chassis",
        level: "degraded",
        message: `${left}: the routers' HA chassis groups run without a standby (§ 3.2)`,
        fix: "a third network node (3 are recommended, § 6.2)",
      },
    ];
  }
  return [{ what: "gateway chassis", level: "holds", message: `${left}: the HA chassis groups fail over to them (§ 3.2)` }];
}

const IRONIC: NodeConstraint = {
  key: "ironic",
  facts: (plan) => {
    const conductors = num(obj(valuesOf(plan, releaseName("ironic"))?.conductor).replicas);
    return conductors === undefined ? undefined : { conductors };
  },
  loss(loss, facts) {
    const all = loss.all("provisioning");
    const up = loss.up("provisioning");
    if (typeof facts?.conductors !== "number" || up.length === all.length) return [];
    const left = `${ofTotal(up.length, all.length)} provisioning node(s) left for ${facts.conductors} conductor(s)`;
    if (up.length > 0) return [{ what: "Ironic", level: "holds", message: `${left}: the conductors left take over the bare-metal nodes (Ironic's hash ring)` }];
    return [
      {
        what: "Ironic",
        level: "degraded",
        message: `${left}: bare-metal deployments and power actions wait until one is back; running bare-metal servers are untouched`,
        fix: "a second provisioning node (one pair per provisioning network, § 6.3)",
      },
    ];
  },
  judge(inv, facts) {
    const conductors = facts?.conductors;
    const down = inv.down("provisioning");
    if (typeof conductors !== "number" || !concerned(inv, down)) return [];
    const leaving = inv.leaving("provisioning");
    const staying = inv.staying("provisioning");
    if (leaving.length > 0 && staying.length < conductors) {
      return [
        {
          level: "error",
          code: "ironic-conductors",
          message: `${inv.judging === "removal" ? "removing" : "retiring"} ${nodeList(leaving)} leaves ${staying.length} provisioning node(s) for the ${conductors} Ironic conductor(s), one per node (D7, required anti-affinity)`,
          fix: `${addFirst("a provisioning node", leaving)}; or lower openkeel:services.ironic.replicas.conductor`,
          path: inv.path(leaving),
        },
      ];
    }
    const up = inv.up("provisioning");
    if (up.length >= conductors) return [];
    return [
      {
        level: "warning",
        code: "ironic-conductors",
        message: `${downList(down)} would leave ${up.length} provisioning node(s) up for the ${conductors} Ironic conductor(s): a conductor evicted there cannot start elsewhere (one per node, D7), and the bare-metal nodes it manages wait for it`,
        fix: "take one provisioning node at a time, and only while no bare-metal deployment runs; a second provisioning node keeps a conductor up",
        path: inv.path(down),
      },
    ];
  },
};

/**
 * The roles of the public ingress (D8), as the infrastructure release places it: its chart reads no
 * placement for it (§ 5.2), so the role label keys its post-render patch selects (./unlisted.ts).
 */
function ingressRoles(plan: Plan): Role[] | undefined {
  const u = findUnit(plan, INFRASTRUCTURE_UNIT);
  if (u?.kind !== "HelmRelease") return undefined;
  const patch = (u.postRender ?? []).find((p) => p.target.kind === "DaemonSet" && p.target.name === workloadObjectName(u.release, "ingress"));
  const spec = obj(obj(obj(obj(patch?.patch).spec).template).spec);
  const terms = arr<Obj>(obj(obj(obj(spec.affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution).nodeSelectorTerms);
  const keys = [...Object.keys(obj(spec.nodeSelector)), ...terms.flatMap((t) => arr<Obj>(t.matchExpressions).map((e) => String(e.key)))];
  const roles = keys.map((k) => roleOfLabelKey(k)?.role);
  return ROLES.filter((r) => roles.includes(r));
}

const INGRESS: NodeConstraint = {
  key: "ingress",
  facts: (plan) => {
    const roles = ingressRoles(plan);
    return roles && roles.length > 0 ? { roles } : undefined;
  },
  loss(loss, facts) {
    const roles = arr<Role>(facts?.roles);
    const ingress = (n: { roles: readonly Role[] }) => n.roles.some((r) => roles.includes(r));
    const all = loss.all().filter(ingress);
    const up = loss.up().filter(ingress);
    if (roles.length === 0 || up.length === all.length) return [];
    const left = `${ofTotal(up.length, all.length)} ${roles.join(" or ")} node(s) left for the public ingress and its VIP (D8)`;
    if (up.length > 0) return [{ what: "ingress", level: "holds", message: `${left}: the VIP moves to one of them` }];
    return [
      {
        what: "ingress",
        level: "fatal",
        message: `${left}: every public API of the cloud is unreachable`,
        fix: `${roles.join(" or ")} nodes in more than one failure domain (one per zone in large, § 6.3)`,
      },
    ];
  },
  judge(inv, facts) {
    const roles = arr<Role>(facts?.roles);
    const ingress = (n: { roles: readonly Role[] }) => n.roles.some((r) => roles.includes(r));
    const down = inv.down().filter(ingress);
    if (roles.length === 0 || !concerned(inv, down)) return [];
    const up = inv.up().filter(ingress);
    if (up.length > 0) return [];
    return [
      {
        level: "error",
        code: "ingress-nodes",
        message: `${downList(down)} would leave the public ingress (D8, on the ${roles.join(" and ")} nodes) no node: every public API of the cloud becomes unreachable`,
        fix: down.length > 1 ? `take one node at a time: ${transition(down.slice(1))} later` : addFirst(`a ${roles.join(" or ")} node`, down),
        path: inv.path(down),
      },
    ];
  },
};

const HYPERVISORS: NodeConstraint = {
  key: "hypervisors",
  facts: (plan) => (valuesOf(plan, releaseName("nova")) ? { evictionStrategy: "LiveMigrate" } : undefined),
  loss(loss, facts) {
    const all = loss.all("compute");
    const out = loss.out("compute");
    if (!facts || out.length === 0) return [];
    if (out.length === all.length) {
      return [
        {
          what: "hypervisors",
          level: "fatal",
          message: `${ofTotal(0, all.length)} hypervisors left: every VM is down, and none can start anywhere`,
          fix: "compute nodes in more than one failure domain (per zone in large, § 6.3)",
        },
      ];
    }
    const free = Math.ceil((100 * out.length) / all.length);
    return [
      {
        what: "hypervisors",
        level: "degraded",
        message: `${ofTotal(all.length - out.length, all.length)} hypervisors left: the VMs of the lost ones are down until Masakari evacuates them (after fencing, § 5.6) to the others, which need ${free}% of their capacity free to take them (equal hosts and load assumed: the inventory has no VM sizing)`,
        fix: `keep ${free}% of the compute capacity free (Placement's allocation ratios or reserved hosts, § 5.6), or add compute nodes`,
      },
    ];
  },
  judge(inv, facts) {
    const down = inv.down("compute");
    if (!facts || !concerned(inv, down)) return [];
    const up = inv.up("compute");
    if (up.length === 0) {
      return [
        {
          level: "error",
          code: "hypervisors-left",
          message: `${downList(down)} would leave no hypervisor up: their VMs have nowhere to go, and their drain waits for live migrations that cannot start (KubeVirt evictionStrategy: LiveMigrate)`,
          fix: down.length > 1 ? `take one hypervisor at a time: ${transition(down.slice(1))} later` : addFirst("a compute node", down),
          path: inv.path(down),
        },
      ];
    }
    if (down.length < 2 && up.length > 1) return [];
    const last = up.length === 1 ? "; with one hypervisor left, no VM can live-migrate again until they are back" : "";
    const message =
      down.length > 1
        ? `${downList(down)} would be out at once: their VMs live-migrate to ${nodeList(up)}, which must have room for all of them${last}`
        : `${downList(down)} would leave one hypervisor up (${nodeList(up)}): its VMs live-migrate there, and none can live-migrate again until it is back`;
    return [
      {
        level: "warning",
        code: "hypervisors-left",
        message,
        fix:
          down.length > 1
            ? `take one hypervisor at a time: ${transition(down.slice(1))} later, or check first that ${nodeList(up)} can hold their VMs`
            : addFirst("a compute node", down),
        path: inv.path(down.slice(1).length > 0 ? down.slice(1) : down),
      },
    ];
  },
};

/** OpenKeel's constraints, in the order their findings read. */
export const OPENKEEL_CONSTRAINTS: readonly NodeConstraint[] = [CONTROL_PLANE_QUORUM, CONTROL_PLANE_QUORUMS, SWIFT, GATEWAYS, IRONIC, INGRESS, HYPERVISORS];
