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
// - The strict-local volumes of D5 (controlPlane: Galera, RabbitMQ, OVN central; storage: Swift
//   devices) hold their only replica on their node: their drain finishes only under a drain
//   policy that lets a stopped last replica go (platform/longhorn.ts, LONGHORN_NODE_DRAIN_POLICY).
import type { LifecycleFacts } from "../config/lifecycle";
import type { Check } from "../config/problems";
import { addFirst, concerned, downList, joined, nodeList, transition, type Inventory, type JudgedNode, type NodeConstraint } from "../lifecycle/feasibility";
import { findUnit, type Plan } from "../plan/plan";
import { obj, type Obj } from "../placement/workloads";

/** The fact of the drain policy; every numeric fact is a replicated class's numberOfReplicas. */
const DRAIN_POLICY_FACT = "nodeDrainPolicy";
/** The chart's own default class (persistence.defaultClass). */
const CHART_DEFAULT_CLASS = "longhorn";

/** The facts of a Plan that installs Longhorn, else undefined. */
export function longhornFacts(plan: Plan, release: string, classesUnit: string, driver: string, defaultPolicy: string): LifecycleFacts | undefined {
  const unit = findUnit(plan, release);
  if (unit?.kind !== "HelmRelease") return undefined;
  const values = unit.values as Obj;
  const facts: Record<string, number | string> = {};
  const classes = findUnit(plan, classesUnit);
  for (const o of classes?.kind === "Manifests" ? classes.objects : []) {
    const replicas = Number(obj(o.parameters).numberOfReplicas);
    if (o.kind === "StorageClass" && o.provisioner === driver && replicas > 1) facts[o.metadata.name] = replicas;
  }
  const persistence = obj(values.persistence);
  if (persistence.defaultClass === true && typeof persistence.defaultClassReplicaCount === "number" && persistence.defaultClassReplicaCount > 1) {
    facts[CHART_DEFAULT_CLASS] = persistence.defaultClassReplicaCount;
  }
  const policy = obj(values.defaultSettings).nodeDrainPolicy;
  facts[DRAIN_POLICY_FACT] = typeof policy === "string" ? policy : defaultPolicy;
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

/** A retiring storage node must find its replicas a new home; a removal must leave a node for each. */
function capacityChecks(inv: Inventory, replicas: number, classes: string[]): Check[] {
  const leaving = inv.leaving("storage");
  if (!concerned(inv, leaving)) return [];
  const removal = inv.judging === "removal";
  // a removal: what stays holds the replicas in the end; a retirement: what takes new replicas now
  const targets = removal ? inv.staying("storage") : inv.schedulable("storage").filter((n) => !leaving.includes(n));
  if (targets.length >= replicas) return [];
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

/** Longhorn's constraint: its facts read by `facts` (platform/longhorn.ts binds its names). */
export function longhornConstraint(facts: (plan: Plan) => LifecycleFacts | undefined): NodeConstraint {
  return {
    key: "longhorn",
    facts,
    judge(inv, f) {
      if (!f) return [];
      const replicated = replicatedClasses(f);
      const policy = f[DRAIN_POLICY_FACT];
      return [
        ...(replicated
          ? [...capacityChecks(inv, replicated.replicas, replicated.classes), ...redundancyChecks(inv, replicated.replicas, replicated.classes)]
          : []),
        ...(typeof policy === "string" ? drainPolicyChecks(inv, policy) : []),
      ];
    },
  };
}
