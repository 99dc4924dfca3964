// Our NodeHealthChecks (§ 5.6) as groups of nodes, and what NHC does with them when nodes fail: the
// groups platform/medik8s.ts renders as NodeHealthCheck objects, the threshold NHC v0.12.0 computes
// from maxUnhealthy (medik8s/node-healthcheck-operator internal/controller/nodehealthcheck_controller.go),
// and so which simultaneous failures it fences (SNR reboots them and taints them out-of-service; a
// fenced hypervisor's HA VMs are then Masakari's to evacuate) and which it leaves to a human on
// purpose (storm protection). The loss of nodes (lifecycle/failure-domains.ts) asks it per loss, of
// the checks the Plan holds: the nodes each one's selector selects, recorded with its maxUnhealthy.
import type { Check } from "../config/problems";
import { hasTrait, NODE_STATE_LABEL, UNWATCHED_STATES, type LifecycleFacts } from "../config/lifecycle";
import { HA_SEGMENT_LABEL, K8S_CONTROL_PLANE_LABEL, roleLabelKey, type LabelProfile } from "../config/roles";
import { ofTotal, type NodeConstraint } from "../lifecycle/feasibility";
import type { LossFinding } from "../placement/failure-table";
import { matchesLabelSelector, type LabelSelector } from "../placement/scheduling";
import { findUnit, type Plan } from "../plan/plan";
import { obj } from "../placement/workloads";

/**
 * What our NodeHealthChecks select, highest precedence first: a node is in the first group whose
 * label it carries. The Kubernetes-only control plane (etcd, large topology) has no OpenKeel role
 * and is its own group. A node with several roles is watched by the check of its first one: a
 * hyperconverged node (small topology) by the control plane's, whose maxUnhealthy is 1.
 */
export const NHC_GROUPS = ["controlPlane", "kubernetesControlPlane", "network", "storage", "compute", "containers", "provisioning"] as const;
export type NhcGroup = (typeof NHC_GROUPS)[number];

/** Groups that hold a quorum (Galera, RabbitMQ, OVN central; etcd): never more than one node fenced at a time. */
const QUORUM_GROUPS: ReadonlySet<NhcGroup> = new Set(["controlPlane", "kubernetesControlPlane"]);

export const isQuorumGroup = (group: NhcGroup) => QUORUM_GROUPS.has(group);

function groupLabel(group: NhcGroup, profile: LabelProfile): string {
  return group === "kubernetesControlPlane" ? K8S_CONTROL_PLANE_LABEL : roleLabelKey(group, profile);
}

function groupSlug(group: NhcGroup): string {
  return group.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/**
 * Selector of the NodeHealthCheck of one group: nodes with its label, none of the labels of the
 * groups before it (so no node is in two checks), no segment host (Masakari's), and no node whose
 * state leaves the health checks (its state label; NotIn also matches nodes without it).
 */
export function nhcSelector(group: NhcGroup, profile: LabelProfile): NonNullable<LabelSelector["matchExpressions"]> {
  const earlier = NHC_GROUPS.slice(0, NHC_GROUPS.indexOf(group));
  return [
    { key: groupLabel(group, profile), operator: "Exists" },
    ...earlier.map((g) => ({ key: groupLabel(g, profile), operator: "DoesNotExist" as const })),
    { key: HA_SEGMENT_LABEL, operator: "DoesNotExist" },
    { key: NODE_STATE_LABEL, operator: "NotIn", values: [...UNWATCHED_STATES] },
  ];
}

/** A node as the NodeHealthChecks group it: the inventory's, or a loss's (lifecycle/failure-domains.ts). */
export interface NhcNode {
  name: string;
  roles: readonly string[];
  kubernetesControlPlane?: boolean | undefined;
  zone?: string | undefined;
}

/** Whether a node of the inventory carries a group's label. */
function inGroup(node: Pick<NhcNode, "roles" | "kubernetesControlPlane">, group: NhcGroup): boolean {
  return group === "kubernetesControlPlane" ? node.kubernetesControlPlane === true : node.roles.includes(group);
}

/** The group whose check watches a node: its first (NHC_GROUPS), or none (a node without a role). */
export function nhcGroupOf(node: Pick<NhcNode, "roles" | "kubernetesControlPlane">): NhcGroup | undefined {
  return NHC_GROUPS.find((g) => inGroup(node, g));
}

/**
 * The nodes alone in their group (prod-medium's only provisioning node): no check of ours watches
 * them (see NhcCheck).
 */
export function aloneInGroup(nodes: readonly Pick<NhcNode, "name" | "roles" | "kubernetesControlPlane">[]): Set<string> {
  const count = new Map<NhcGroup | undefined, number>();
  for (const n of nodes) count.set(nhcGroupOf(n), (count.get(nhcGroupOf(n)) ?? 0) + 1);
  return new Set(nodes.filter((n) => nhcGroupOf(n) !== undefined && count.get(nhcGroupOf(n)) === 1).map((n) => n.name));
}

/**
 * One of our NodeHealthChecks. maxUnhealthy bounds the failures fenced at once within the check's
 * nodes, so the checks are drawn along the failure domains (§ 5.6, issue 39): two failures in two
 * zones are two independent faults, each fenced, its VMs evacuated; several in one zone at once are
 * more likely one cause (power, a switch, the zone), which fencing does not fix and which a reboot
 * storm makes worse: NHC leaves them to a human (storm protection). The rule they keep
 * (./medik8s-rule.ts, issue 45), and how:
 * - a quorum group stays whole across zones, maxUnhealthy 1: no two members are ever fenced at once;
 * - another group, where the nodes have zones, has one check per zone that holds two or more of its
 *   nodes (the stack's maxUnhealthy for the group), and one check of the rest (`joined`: the nodes
 *   alone in their zone, or without one), which fences up to half of them: one failure in each of
 *   two zones is fenced, and a cluster-wide event (the API path, a CNI rollout: every node NotReady)
 *   fences none of them. A check of one node is no storm guard: with maxUnhealthy 1 it always fences
 *   (NHC v0.12.0 internal/controller/nodehealthcheck_controller.go 336–347), so one-node checks per
 *   zone (the network nodes of the large topology, one per zone) would fence every gateway at once;
 * - a node alone in its group has no check: a check of it alone would fence it in every
 *   cluster-wide event, and no check can count it with its group's peers, which it has none of (a
 *   check selects one group's nodes; prod-medium's only provisioning node). It is left to a human
 *   (docs/node-lifecycle.md).
 */
export interface NhcCheck {
  name: string;
  group: NhcGroup;
  /** The one zone it selects (a per-zone check). */
  zone?: string;
  /** The joined check beside per-zone checks: every zone but these (NotIn also selects a node without a zone). */
  notInZones?: string[];
  /** Its maxUnhealthy where it is not the stack's for the group (a joined check over several zones). */
  maxUnhealthy?: number | string;
  /** Its nodes, whatever their state (the selector leaves out at run time those whose state leaves the checks). */
  nodes: string[];
}

/** A zone as an object name takes it. */
const zoneSlug = (zone: string) =>
  zone
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "");

/** `value` added to the list of `key` in `map`. */
export function listIn<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

const byName = (a: NhcCheck, b: NhcCheck) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The maxUnhealthy of a joined check of `n` nodes in several zones: the group's only check fences
 * up to half of them (a percentage, rounded up by NHC, 923–931: so a node drained for maintenance
 * lowers it too), none when more fail; beside per-zone checks, which hold the group's storm guard,
 * it fences a failure in each of two zones.
 */
function joinedMaxUnhealthy(n: number, only: boolean): number | string {
  return only ? "50%" : Math.min(n, Math.max(2, Math.ceil(n / 2)));
}

/** The checks of one group's nodes (see NhcCheck). */
function groupChecks(group: NhcGroup, nodes: readonly NhcNode[], zoned: boolean): NhcCheck[] {
  if (nodes.length < 2) return [];
  const whole: NhcCheck = { name: `openkeel-${groupSlug(group)}`, group, nodes: nodes.map((n) => n.name) };
  if (!zoned || isQuorumGroup(group)) return [whole];
  const byZone = new Map<string, string[]>();
  for (const n of nodes) if (n.zone !== undefined) listIn(byZone, n.zone, n.name);
  const own = [...byZone].filter(([, names]) => names.length >= 2).map(([zone]) => zone);
  const perZone = own.map((zone): NhcCheck => ({ name: `${whole.name}-${zoneSlug(zone)}`, group, zone, nodes: byZone.get(zone)! }));
  const rest = nodes.filter((n) => n.zone === undefined || !own.includes(n.zone));
  if (rest.length === 0) return perZone.sort(byName);
  const domains = new Set(rest.map((n) => n.zone)).size;
  const joined: NhcCheck = {
    ...whole,
    nodes: rest.map((n) => n.name),
    ...(own.length > 0 ? { notInZones: [...own].sort() } : {}),
    ...(domains > 1 ? { maxUnhealthy: joinedMaxUnhealthy(rest.length, own.length === 0) } : {}),
  };
  return [...perZone, joined].sort(byName);
}

/** Our NodeHealthChecks of an inventory, each with its nodes (see NhcCheck). */
export function nhcChecks(nodes: readonly NhcNode[]): NhcCheck[] {
  const zoned = nodes.some((n) => n.zone !== undefined);
  const members = new Map<NhcGroup, NhcNode[]>();
  for (const node of nodes) {
    const group = nhcGroupOf(node);
    if (group) listIn(members, group, node);
  }
  return NHC_GROUPS.flatMap((g) => groupChecks(g, members.get(g) ?? [], zoned));
}

export const NHC_REPO = "node-healthcheck-operator v0.12.0 internal/controller/nodehealthcheck_controller.go";

/**
 * Whether NHC remediates the unhealthy nodes of one check, as v0.12.0 decides it: it judges the
 * nodes its selector selects (239); those without a remediation are healthy (276–290); remediation
 * is skipped for every one of them when fewer are healthy than total − maxUnhealthy, maxUnhealthy a
 * count or a percentage of the total rounded up (336–347, getMinHealthy 911–934: 924), and NHC
 * refuses a maxUnhealthy above the total (928–930).
 */
export function nhcFences(total: number, unhealthy: number, maxUnhealthy: number | string): { fences: boolean; allowed: number; refused?: string } {
  const pct = typeof maxUnhealthy === "string" ? /^(\d+)%$/.exec(maxUnhealthy) : null;
  const allowed = typeof maxUnhealthy === "number" ? maxUnhealthy : pct ? Math.ceil((Number(pct[1]) * total) / 100) : Number(maxUnhealthy);
  if (allowed > total)
    return {
      fences: false,
      allowed,
      refused: `maxUnhealthy ${maxUnhealthy} is greater than its ${total} selected node(s): NHC refuses the check (getMinHealthy, 928–930) and remediates none`,
    };
  return { fences: total - unhealthy >= total - allowed, allowed };
}

/** A check of the stack's maxUnhealthy (a count) with fewer nodes: NHC would never remediate any of them. */
export function nhcGroupChecks(nodes: readonly (NhcNode & { state?: string })[], maxUnhealthy: (group: NhcGroup) => number | string): Check[] {
  return nhcChecks(nodes).flatMap((c): Check[] => {
    if (c.maxUnhealthy !== undefined) return [];
    const max = maxUnhealthy(c.group);
    const r = nhcFences(c.nodes.length, 0, max);
    if (!r.refused) return [];
    return [
      {
        level: "error",
        code: "nhc-max-unhealthy",
        message: `NodeHealthCheck ${c.name} selects ${c.nodes.length} node(s) (${c.nodes.join(", ")}), and its ${r.refused} (${NHC_REPO})`,
        fix: `set openkeel:platform.medik8s.maxUnhealthy.${c.group} to at most ${c.nodes.length}, or to a percentage`,
        path: `openkeel:platform.medik8s.maxUnhealthy.${c.group}`,
      },
    ];
  });
}

/** The fact of the checks' storm cooldown; the others are each check's maxUnhealthy by name, and the nodes it selects under SELECTS. */
const COOLDOWN_FACT = "stormCooldownDuration";
const SELECTS = "selects.";

/** A Plan's checks, as its facts record them: each its maxUnhealthy and the nodes its selector selects. */
export interface PlannedCheck {
  name: string;
  maxUnhealthy: number | string;
  nodes: readonly string[];
}

/** The checks the facts of a Plan record (nhcFacts). */
export function plannedChecks(facts: LifecycleFacts | undefined): PlannedCheck[] {
  if (!facts) return [];
  return Object.keys(facts)
    .filter((k) => k.startsWith(SELECTS))
    .map((k) => {
      const name = k.slice(SELECTS.length);
      const max = facts[name];
      const nodes = facts[k];
      return {
        name,
        maxUnhealthy: typeof max === "number" || typeof max === "string" ? max : NaN,
        nodes: Array.isArray(nodes) ? (nodes as readonly string[]) : [],
      };
    });
}

/**
 * The labels of a Plan's nodes as NHC's selectors meet them at run time, in the steady state: what
 * the node-roles phase writes (role labels, zone), and the Kubernetes control plane's label, which
 * Talos sets. The state label is left out: a drained node is out of a check only while it is drained
 * (the losses read the inventory's states).
 */
function nodeLabels(plan: Plan): Map<string, Record<string, string>> {
  const u = findUnit(plan, "node-roles");
  const patches = new Map((u?.kind === "Manifests" ? u.objects.filter((o) => o.kind === "Node") : []).map((o) => [o.metadata.name, o.metadata.labels ?? {}]));
  return new Map(
    plan.nodes.map((n) => {
      const { [NODE_STATE_LABEL]: _state, ...labels } = patches.get(n.name) ?? {};
      return [n.name, n.kubernetesControlPlane ? { ...labels, [K8S_CONTROL_PLANE_LABEL]: "" } : labels];
    }),
  );
}

/**
 * The checks of a Plan, as the objects say (issue 45: the failure domains and the rule judge what the
 * cluster gets, not a model of it): each check's maxUnhealthy by name, the nodes its selector
 * selects (SELECTS), and the storm cooldown they share.
 */
function nhcFacts(plan: Plan): LifecycleFacts | undefined {
  const u = findUnit(plan, "medik8s-remediation");
  const nhcs = u?.kind === "Manifests" ? u.objects.filter((o) => o.kind === "NodeHealthCheck") : [];
  if (nhcs.length === 0) return undefined;
  const labels = [...nodeLabels(plan)];
  const facts: Record<string, LifecycleFacts[string]> = {};
  for (const o of nhcs) {
    const spec = obj(o.spec);
    if (typeof spec.maxUnhealthy === "number" || typeof spec.maxUnhealthy === "string") facts[o.metadata.name] = spec.maxUnhealthy;
    facts[`${SELECTS}${o.metadata.name}`] = labels.filter(([, l]) => matchesLabelSelector(spec.selector as LabelSelector | undefined, l)).map(([name]) => name);
    if (typeof spec.stormCooldownDuration === "string") facts[COOLDOWN_FACT] = spec.stormCooldownDuration;
  }
  return facts;
}

/** What a check does with the lost nodes it selects (a node whose state leaves the checks it does not select). */
function checkLoss(c: PlannedCheck, lost: readonly string[], total: number, hypervisors: boolean, cooldown: string): LossFinding {
  const what = `NHC ${c.name}`;
  const max = c.maxUnhealthy;
  const r = nhcFences(total, lost.length, max);
  const count = `${ofTotal(lost.length, total)} of its nodes unhealthy`;
  if (r.fences) {
    return {
      what,
      level: "holds",
      message: `${count}, within maxUnhealthy ${max}: SNR fences ${lost.length === 1 ? "it" : "them"} (reboot, out-of-service taint), and their pods and volumes move${hypervisors ? "; the HA VMs of the fenced hypervisors are evacuated (§ 5.6)" : ""}`,
    };
  }
  const why = r.refused ?? `more than maxUnhealthy ${max} allows: it fences none of them (storm protection, ${NHC_REPO} 336–347, 911–934)`;
  return {
    what,
    level: "degraded",
    message: `${count}, ${why}${hypervisors ? "; none of their VMs is evacuated: evacuation waits for the fencing (§ 5.6)" : ""}; left to a human`,
    fix: `on purpose: find the shared cause (power, a switch, the zone); fence a node that stays down by hand (${FENCE_BY_HAND}); once the nodes are back within the threshold, NHC waits stormCooldownDuration (${cooldown}) before it fences again`,
  };
}

/** How an operator fences a node that nothing fences: what SNR's OutOfServiceTaint strategy does. */
const FENCE_BY_HAND =
  "power it off, then kubectl taint nodes <node> node.kubernetes.io/out-of-service=nodeshutdown:NoExecute, what SNR's OutOfServiceTaint strategy sets";

/** The lost nodes no check selects, though not drained: alone in their group (NhcCheck), left to a human. */
function unwatchedLoss(nodes: readonly NhcNode[]): LossFinding[] {
  if (nodes.length === 0) return [];
  return [
    {
      what: "NHC (no check)",
      level: "degraded",
      message: `${nodes.map((n) => n.name).join(", ")}: ${nodes.length === 1 ? "alone in its group" : "each alone in its group"} (a node is in the check of its first role), watched by no NodeHealthCheck of ours (a check of one node would fence it in a cluster-wide event too): nothing fences ${nodes.length === 1 ? "it" : "them"}, left to a human`,
      fix: `on purpose (docs/node-lifecycle.md): a node that stays down is fenced by hand (${FENCE_BY_HAND}); a second node whose first role is the same gives them a check`,
    },
  ];
}

/**
 * NHC in the failure domains (lifecycle/failure-domains.ts): per check the Plan has (the nodes its
 * selector selects), whether it fences the lost nodes it selects; across checks, NHC fences one
 * Kubernetes control-plane node at a time (isControlPlaneRemediationAllowed, 697–733): a second
 * waits until the first is healthy again.
 */
export const NHC_CONSTRAINT: NodeConstraint = {
  key: "medik8s-remediation",
  facts: nhcFacts,
  loss(loss, facts) {
    const checks = plannedChecks(facts);
    if (checks.length === 0) return [];
    const cooldown = typeof facts?.[COOLDOWN_FACT] === "string" ? facts[COOLDOWN_FACT] : "none";
    const findings: LossFinding[] = [];
    const fencedControlPlane: string[] = [];
    const watched = new Set<string>();
    // the selectors leave out a node whose state leaves the health checks, drained or not
    const unwatched = new Set(loss.nodes.filter((n) => hasTrait(n.state, "leavesHealthChecks")).map((n) => n.name));
    for (const c of checks) {
      const selected = c.nodes.filter((n) => !unwatched.has(n));
      const lost = selected.filter((n) => loss.lost.has(n));
      for (const n of lost) watched.add(n);
      if (lost.length === 0) continue;
      const lostSet = new Set(lost);
      const lostNodes = loss.nodes.filter((n) => lostSet.has(n.name));
      const finding = checkLoss(
        c,
        lost,
        selected.length,
        lostNodes.some((n) => n.roles.includes("compute")),
        cooldown,
      );
      findings.push(finding);
      if (finding.level === "holds") fencedControlPlane.push(...lostNodes.filter((n) => n.kubernetesControlPlane).map((n) => n.name));
    }
    findings.push(...unwatchedLoss(loss.nodes.filter((n) => loss.lost.has(n.name) && !unwatched.has(n.name) && !watched.has(n.name))));
    if (fencedControlPlane.length > 1) {
      findings.push({
        what: "NHC control plane",
        level: "degraded",
        message: `${fencedControlPlane.length} Kubernetes control-plane nodes to fence: NHC fences one at a time (${NHC_REPO} 697–733), the next once the first is healthy again`,
        fix: "a control-plane node that stays down: fence it by hand (power it off, then the out-of-service taint), and delete its SelfNodeRemediation so that NHC goes on to the next",
      });
    }
    return findings;
  },
};
