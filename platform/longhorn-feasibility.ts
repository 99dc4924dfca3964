// Longhorn's constraint in the feasibility model (lifecycle/feasibility.ts), read from what the
// Plan renders for it: the replica count of each replicated class (`longhorn-vm`, and the chart's
// default class `longhorn` where it creates one) and its node drain policy.
// - A replica of a replicated class lives on a storage node (Longhorn node tag `storage`), one per
//   node (replica soft anti-affinity is off by default). Eviction rebuilds each replica of a
//   retiring node on another storage node first, and only then removes it (longhorn/longhorn
//   enhancements/20200727-add-replica-eviction-support-for-disks-and-nodes.md): with no storage
//   node left that holds none, the eviction never finishes. A cordoned or drained node takes no
//   new replica (the conservative view: Longhorn disables scheduling on cordoned nodes by default).
// - After a removal every volume keeps its numberOfReplicas: with fewer storage nodes it stays
//   degraded, and a StorageClass's parameters cannot change in place (its unit is protected).
// - Drained or removed storage nodes take their replicas down with them: a volume whose every
//   replica was there has none, and the drain of the node with its last healthy one is blocked by
//   the instance manager's PodDisruptionBudget; with one replica left it runs one failure from loss.
// - The strict-local volumes of D5 (on controlPlane and storage nodes: openkeel/storage.ts) hold
//   their only replica on their node: their drain finishes only under a drain
//   policy that lets a stopped last replica go (platform/longhorn.ts, LONGHORN_NODE_DRAIN_POLICY).
// - Where replica-zone-soft-anti-affinity is false (a zoned stack, platform/longhorn.ts), a zone holds
//   at most one replica of a volume: a retiring node's replicas are rebuilt in its own zone when
//   every zone already holds one, and a zone's loss takes one replica of a volume at most.
// - What a loss of nodes costs (`loss`, lifecycle/failure-domains.ts): the strict-local volumes on
//   them wait (their members' quorums say what that costs), and a replicated volume whose replicas
//   may all sit on them is gone until they are back.
import type { LifecycleFacts } from "../config/lifecycle";
import type { Check } from "../config/problems";
import {
  addFirst,
  concerned,
  downList,
  joined,
  nodeList,
  ofTotal,
  transition,
  worstLost,
  type Inventory,
  type JudgedNode,
  type Loss,
  type NodeConstraint,
} from "../lifecycle/feasibility";
import type { LossFinding } from "../placement/failure-table";
import { findUnit, type Plan } from "../plan/plan";
import { arr, obj, type Obj } from "../placement/workloads";

/** The fact of the drain policy; every numeric fact is a replicated class's numberOfReplicas. */
const DRAIN_POLICY_FACT = "nodeDrainPolicy";
/**
 * replica-zone-soft-anti-affinity, "true" or "false" (longhorn-manager v1.12.1 types/setting.go
 * 1021–1030: default true): whether replicas of a volume may share a zone.
 */
const ZONE_SOFT_FACT = "replicaZoneSoftAntiAffinity";
const ZONE_SOFT_DEFAULT = "true";
/** The strict-local classes (D5): one replica, on the node of its pod. */
const STRICT_LOCAL_FACT = "strictLocal";
/** The chart's own default class (persistence.defaultClass). */
const CHART_DEFAULT_CLASS = "longhorn";

/** The facts of a Plan that installs Longhorn, else undefined. */
export function longhornFacts(plan: Plan, release: string, classesUnit: string, driver: string, defaultPolicy: string): LifecycleFacts | undefined {
  const unit = findUnit(plan, release);
  if (unit?.kind !== "HelmRelease") return undefined;
  const values = unit.values as Obj;
  const facts: Record<string, number | string | string[]> = {};
  const strictLocal: string[] = [];
  const classes = findUnit(plan, classesUnit);
  for (const o of classes?.kind === "Manifests" ? classes.objects : []) {
    const replicas = Number(obj(o.parameters).numberOfReplicas);
    if (o.kind !== "StorageClass" || o.provisioner !== driver) continue;
    if (replicas > 1) facts[o.metadata.name] = replicas;
    else if (obj(o.parameters).dataLocality === "strict-local") strictLocal.push(o.metadata.name);
  }
  if (strictLocal.length > 0) facts[STRICT_LOCAL_FACT] = strictLocal.sort();
  const persistence = obj(values.persistence);
  if (persistence.defaultClass === true && typeof persistence.defaultClassReplicaCount === "number" && persistence.defaultClassReplicaCount > 1) {
    facts[CHART_DEFAULT_CLASS] = persistence.defaultClassReplicaCount;
  }
  const settings = obj(values.defaultSettings);
  const policy = settings.nodeDrainPolicy;
  facts[DRAIN_POLICY_FACT] = typeof policy === "string" ? policy : defaultPolicy;
  const zoneSoft = settings.replicaZoneSoftAntiAffinity;
  facts[ZONE_SOFT_FACT] = typeof zoneSoft === "boolean" || typeof zoneSoft === "string" ? String(zoneSoft) : ZONE_SOFT_DEFAULT;
  return facts;
}

/** The replicated classes and their replica count, the largest first. */
function replicatedClasses(facts: LifecycleFacts): { replicas: number; classes: string[] } | undefined {
  const counts = Object.entries(facts).filter((e): e is [string, number] => typeof e[1] === "number");
  if (counts.length === 0) return undefined;
  const replicas = Math.max(...counts.map(([, n]) => n));
  // by name: the same words whether the facts come from a Plan or a committed index.yaml (keys sorted)
  return {
    replicas,
    classes: counts
      .filter(([, n]) => n === replicas)
      .map(([c]) => c)
      .sort(),
  };
}

const classText = (classes: string[]) => `the volumes of ${joined(classes)}`;

/**
 * With one replica per zone (replica-zone-soft-anti-affinity false) and no more zones than replicas,
 * every zone holds a replica of every volume: a leaving node's replicas can only be rebuilt in its
 * own zone (longhorn-manager v1.12.1 scheduler/replica_scheduler.go 486–503: unused zones, the
 * evicting node's own counted unused).
 */
function zoneChecks(inv: Inventory, leaving: JudgedNode[], targets: JudgedNode[], replicas: number, classes: string[], zoneHard: boolean): Check[] {
  const zones = new Set(inv.all("storage").map((n) => n.zone ?? ""));
  if (!zoneHard || zones.size > replicas) return [];
  const stranded = leaving.filter((n) => !targets.some((t) => (t.zone ?? "") === (n.zone ?? "")));
  if (stranded.length === 0) return [];
  const zone = stranded[0].zone ?? "(no zone)";
  const removal = inv.judging === "removal";
  return [
    {
      level: "error",
      code: "longhorn-replicas",
      message: `${removal ? "removing" : "the Longhorn eviction of"} ${nodeList(stranded)} ${removal ? "leaves" : "can never finish: it leaves"} zone ${zone} no storage node for its replica of ${joined(classes)}: each zone holds one replica of every volume (${ZONE_SOFT_FACT} false, ${zones.size} zones for ${replicas} replicas), and no other zone may take a second`,
      fix: addFirst(`a storage node in zone ${zone}`, stranded),
      path: inv.path(stranded),
    },
  ];
}

/** A retiring storage node must find its replicas a new home; a removal must leave a node for each. */
function capacityChecks(inv: Inventory, replicas: number, classes: string[], zoneHard = false): Check[] {
  const leaving = inv.leaving("storage");
  if (!concerned(inv, leaving)) return [];
  const removal = inv.judging === "removal";
  // a removal: what stays holds the replicas in the end; a retirement: what takes new replicas now
  const targets = removal ? inv.staying("storage") : inv.schedulable("storage").filter((n) => !leaving.includes(n));
  if (targets.length >= replicas) return zoneChecks(inv, leaving, targets, replicas, classes, zoneHard);
  const held = `${classText(classes)} keep ${replicas} replicas, each on its own storage node`;
  const message = removal
    ? `removing ${nodeList(inv.removed("storage"))} leaves ${targets.length} storage node(s) for the ${replicas} replicas of ${joined(classes)} that ${inv.where} has: every volume would stay degraded for good, and a StorageClass's numberOfReplicas cannot change in place`
    : `the Longhorn eviction of ${nodeList(leaving)} can never finish: ${held}, and ${targets.length} storage node(s) can take one (${nodeList(targets)})`;
  return [{ level: "error", code: "longhorn-replicas", message, fix: addFirst("a storage node", leaving), path: inv.path(leaving) }];
}

/** Replicas down with their nodes: none left is a blocked drain, one left is a volume one failure from loss. */
function redundancyChecks(inv: Inventory, replicas: number, classes: string[]): Check[] {
  const down = inv.down("storage");
  if (!concerned(inv, down) || replicas - down.length > 1) return [];
  const left = Math.max(0, replicas - down.length);
  const what = `${downList(down)} would be out at once, and ${classText(classes)} keep ${replicas} replicas, one per storage node`;
  if (left === 0) {
    return [
      {
        level: "error",
        code: "longhorn-replicas",
        message: `${what}: a volume with a replica on each would keep none, and the instance manager's PodDisruptionBudget holds the drain of the node with its last healthy replica`,
        fix: `put at most ${replicas - 1} storage node(s) into maintenance or retiring at a time; set the others back to active (or cordoned)`,
        path: inv.path(down.slice(1)),
      },
    ];
  }
  return [
    {
      level: "warning",
      code: "longhorn-replicas",
      message: `${what}: a volume with replicas on them runs on its last replica until they are back, one failure from losing its data`,
      fix: `take one storage node at a time: ${transition(down.slice(1))} later; or add storage nodes`,
      path: inv.path(down.slice(1)),
    },
  ];
}

/** The policies under which the drain of a node holding a strict-local volume's only replica can finish. */
const STRICT_LOCAL_DRAINABLE: ReadonlySet<string> = new Set(["allow-if-replica-is-stopped", "always-allow"]);

/** Nodes that hold the only replica of strict-local volumes (D5): a Longhorn disk of their own. */
const holdsStrictLocal = (n: JudgedNode) => n.roles.includes("controlPlane") || n.roles.includes("storage");

function drainPolicyChecks(inv: Inventory, policy: string): Check[] {
  const drained = inv.down().filter((n) => !n.removed && holdsStrictLocal(n));
  if (drained.length === 0 || STRICT_LOCAL_DRAINABLE.has(policy)) return [];
  return [
    {
      level: "error",
      code: "longhorn-drain-policy",
      message: `the drain of ${nodeList(drained)} would never finish: they hold the only replica of strict-local volumes (D5), and Longhorn's node drain policy ${policy} keeps the instance manager's PodDisruptionBudget while a node holds a volume's last replica`,
      fix: `set Longhorn's defaultSettings.nodeDrainPolicy to allow-if-replica-is-stopped (platform/longhorn.ts), render and deploy it before draining`,
      path: inv.path(drained),
    },
  ];
}

/** The strict-local volumes (D5) of the lost controlPlane and storage nodes wait for them: their members' rows say what that costs. */
function strictLocalLoss(loss: Loss, classes: readonly string[]): LossFinding[] {
  const out = loss.out().filter(holdsStrictLocal);
  if (out.length === 0 || classes.length === 0) return [];
  return [
    {
      what: `Longhorn ${joined(classes)}`,
      level: "degraded",
      message: `the strict-local volumes on ${out.length} lost node(s) are unavailable until they are back: their one replica is there (D5), and the members that use them wait, Pending: their own findings in this row say what that costs`,
      fix: "bring the nodes back; a node lost for good: retire it, and its members re-sync on other nodes from new PVCs (docs/node-lifecycle.md)",
    },
  ];
}

/** A replicated volume's replicas on the lost storage nodes, at worst: one per node, one per zone where a zone holds one at most. */
function replicaLoss(loss: Loss, replicas: number, classes: string[], zoneHard: boolean): LossFinding[] {
  const holders = loss.all("storage");
  if (!holders.some((n) => loss.lost.has(n.name))) return [];
  const lost = worstLost(loss, holders, replicas, zoneHard);
  const left = replicas - lost;
  const what = `Longhorn ${joined(classes)}`;
  const at = `at worst ${ofTotal(lost, replicas)} replicas of a volume on the lost nodes${zoneHard ? " (one per zone)" : ""}`;
  if (left <= 0) {
    return [
      {
        what,
        level: "fatal",
        message: `${at}: a volume with all its replicas there is unavailable, its only data on them${zoneHard ? "" : ` (${ZONE_SOFT_FACT} lets replicas share a zone)`}`,
        fix: `more storage nodes than ${replicas} outside the lost ones; for a zone's loss storage nodes in ${replicas} zones with ${ZONE_SOFT_FACT} false (platform/longhorn.ts sets it where the storage nodes span as many zones as replicas)`,
      },
    ];
  }
  if (left === 1) {
    return [
      {
        what,
        level: "degraded",
        message: `${at}: a volume with replicas there runs on its last one, one failure from losing its data`,
        fix: "bring the nodes back, or let Longhorn rebuild the replicas on other storage nodes before anything else fails",
      },
    ];
  }
  return [
    {
      what,
      level: "holds",
      message: `${at}: ${left} left, and Longhorn rebuilds the others${zoneHard ? " in their zone, or when the zone is back" : " on other storage nodes"}`,
    },
  ];
}

/** Longhorn's constraint: its facts read by `facts` (platform/longhorn.ts binds its names). */
export function longhornConstraint(facts: (plan: Plan) => LifecycleFacts | undefined): NodeConstraint {
  return {
    key: "longhorn",
    facts,
    loss(loss, f) {
      if (!f) return [];
      const replicated = replicatedClasses(f);
      return [
        ...strictLocalLoss(loss, arr<string>(f[STRICT_LOCAL_FACT])),
        ...(replicated ? replicaLoss(loss, replicated.replicas, replicated.classes, f[ZONE_SOFT_FACT] === "false") : []),
      ];
    },
    judge(inv, f) {
      if (!f) return [];
      const replicated = replicatedClasses(f);
      const policy = f[DRAIN_POLICY_FACT];
      return [
        ...(replicated
          ? [
              ...capacityChecks(inv, replicated.replicas, replicated.classes, f[ZONE_SOFT_FACT] === "false"),
              ...redundancyChecks(inv, replicated.replicas, replicated.classes),
            ]
          : []),
        ...(typeof policy === "string" ? drainPolicyChecks(inv, policy) : []),
      ];
    },
  };
}
