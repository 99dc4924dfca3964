// OpenKeel's constraints in the feasibility model (lifecycle/feasibility.ts), each read from what
// the Plan renders for its release: the quorums of the OpenKeel control plane (Galera and RabbitMQ
// of the infrastructure release, and every service component that is a quorum: OVN central) and
// the public ingress, here; each service's own (Swift's storage members, Neutron's gateway chassis,
// the Ironic conductors, Nova's hypervisors) in its descriptor (./services/), read from the
// registry. Errors: a step that can never finish, or a quorum or data lost; warnings: the cloud
// runs degraded. Each fix names the nodes. Each also says what a loss of nodes costs it (`loss`,
// lifecycle/failure-domains.ts): the quorums member by member (their counts and zone spread read
// from the releases), Swift's replicas, the gateways, the ingress, the hypervisors' VMs and the
// Ironic conductors.
import { ROLES, roleOfLabelKey, ZONE_LABEL, type Role } from "../config/roles";
import { addFirst, concerned, downList, ofTotal, transition, type NodeConstraint } from "../lifecycle/feasibility";
import { quorumConstraint, quorumLoss, quorumMembers } from "../lifecycle/quorums";
import { findUnit, type Plan } from "../plan/plan";
import { arr, num, obj, type Obj } from "../placement/workloads";
import { INFRASTRUCTURE_UNIT, memberObjectName } from "./infrastructure";
import { releaseName, workloadObjectName } from "./names";
import { OPENKEEL_SERVICES } from "./services";
import { CONCERNS, releaseValues, type Concern } from "./service";

/** Galera, RabbitMQ and OVN central: one member per controlPlane node (required anti-affinity), 3 from 3 nodes on. */
const CONTROL_PLANE_QUORUM = quorumConstraint({
  key: "openkeel-control-plane",
  name: "the OpenKeel control plane",
  holds: "Galera, RabbitMQ and OVN central",
  holder: (n) => n.roles.includes("controlPlane"),
  members: quorumMembers,
  replacement: "the controlPlane role",
});

/** A quorum of the OpenKeel control plane: where its member count is, the workload a zone term of its patches, the labels of its pods. */
export interface Quorum {
  id: string;
  what: string;
  unit: string;
  path: readonly string[];
  target: { kind: string; name: string };
  /** The label selector of its pods (the operators' and the chart's). */
  pods: string;
  costs: string;
}

/** The quorum components of the services (OVN central), in install order. */
function serviceQuorums(): Quorum[] {
  return OPENKEEL_SERVICES.flatMap((s) =>
    Object.entries(s.components).flatMap(([key, c]) => {
      if (!c.quorum) return [];
      const release = releaseName(s.name);
      const name = workloadObjectName(release, key);
      return [
        {
          id: key,
          what: c.quorum.what,
          unit: release,
          path: [key, "replicas"],
          target: { kind: c.kind, name },
          pods: `app.kubernetes.io/name=${name}`,
          costs: c.quorum.costs,
        },
      ];
    }),
  );
}

/**
 * Galera and RabbitMQ, and the services' quorums (OpenKeel's OVN central): where their member
 * count is, the workload a zone term of theirs patches, and the labels of their pods (the
 * operators' and the chart's).
 */
export const QUORUMS: readonly Quorum[] = [
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
  ...serviceQuorums(),
];

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
  return path.reduce<unknown>((v, k) => obj(v)[k], releaseValues(plan, unit));
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

/** OpenKeel's constraints: the control plane's and the ingress's, and every service's (its descriptor's), in the order of their concerns (CONCERNS, ../service.ts). */
export const OPENKEEL_CONSTRAINTS: readonly NodeConstraint[] = (() => {
  const all: { constraint: NodeConstraint; concern: Concern | undefined }[] = [
    { constraint: CONTROL_PLANE_QUORUM, concern: "quorums" },
    { constraint: CONTROL_PLANE_QUORUMS, concern: "quorums" },
    { constraint: INGRESS, concern: "way in" },
    ...OPENKEEL_SERVICES.flatMap((s) => (s.constraints ?? []).map((constraint) => ({ constraint, concern: s.concern }))),
  ];
  const rank = ({ concern }: (typeof all)[number]) => (concern ? CONCERNS.indexOf(concern) : CONCERNS.length);
  return [...all].sort((a, b) => rank(a) - rank(b)).map((c) => c.constraint);
})();
