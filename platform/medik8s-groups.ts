// Our NodeHealthChecks (§ 5.6) as groups of nodes, and what NHC does with them when nodes fail: the
// groups platform/medik8s.ts renders as NodeHealthCheck objects, the threshold NHC v0.12.0 computes
// from maxUnhealthy (medik8s/node-healthcheck-operator internal/controller/nodehealthcheck_controller.go),
// and so which simultaneous failures it fences (SNR reboots them and taints them out-of-service; a
// fenced hypervisor's HA VMs are then Masakari's to evacuate) and which it leaves to a human on
// purpose (storm protection). The loss of nodes (lifecycle/failure-domains.ts) asks it per loss.
import type { Check } from "../config/problems";
import { hasTrait, NODE_STATE_LABEL, UNWATCHED_STATES } from "../config/lifecycle";
import { HA_SEGMENT_LABEL, K8S_CONTROL_PLANE_LABEL, roleLabelKey, type LabelProfile } from "../config/roles";
import { ofTotal, type NodeConstraint } from "../lifecycle/feasibility";
import type { LossFinding } from "../placement/failure-table";
import type { LabelSelector } from "../placement/scheduling";
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
function inGroup(node: NhcNode, group: NhcGroup): boolean {
  return group === "kubernetesControlPlane" ? node.kubernetesControlPlane === true : node.roles.includes(group);
}

/**
 * One of our NodeHealthChecks: a group, in one zone where the inventory has zones and the group
 * holds no quorum. maxUnhealthy bounds the failures fenced at once within the check's nodes, so the
 * checks are drawn along the failure domains (§ 5.6, issue 39): two failures in two zones are two
 * independent faults, each fenced, its VMs evacuated; several in one zone at once are more likely one
 * cause (power, a switch, the zone), which fencing does not fix and which a reboot storm makes worse:
 * NHC leaves them to a human (storm protection). A quorum group stays whole: its maxUnhealthy of 1
 * holds across zones, so that no two members are ever fenced at once.
 */
export interface NhcCheck {
  name: string;
  group: NhcGroup;
  /** The zone it selects: a zone, `null` for the nodes without one; undefined: every zone (unzoned stack, quorum group). */
  zone?: string | null;
  /** Its nodes, whatever their state (the selector leaves out those whose state leaves the checks). */
  nodes: string[];
}

/** A zone as an object name takes it. */
const zoneSlug = (zone: string) =>
  zone
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "");

/** Our NodeHealthChecks of an inventory, each with its nodes; a check that would select none is left out. */
export function nhcChecks(nodes: readonly NhcNode[]): NhcCheck[] {
  const zoned = nodes.some((n) => n.zone !== undefined);
  const checks = new Map<string, NhcCheck>();
  for (const node of nodes) {
    const group = NHC_GROUPS.find((g) => inGroup(node, g));
    if (!group) continue;
    const zone = zoned && !QUORUM_GROUPS.has(group) ? (node.zone ?? null) : undefined;
    const name = `openkeel-${groupSlug(group)}${typeof zone === "string" ? `-${zoneSlug(zone)}` : ""}`;
    const c = checks.get(name) ?? { name, group, ...(zone !== undefined ? { zone } : {}), nodes: [] };
    c.nodes.push(node.name);
    checks.set(name, c);
  }
  return NHC_GROUPS.flatMap((g) => [...checks.values()].filter((c) => c.group === g).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
}

const NHC_REPO = "node-healthcheck-operator v0.12.0 internal/controller/nodehealthcheck_controller.go";

/**
 * Whether NHC remediates the unhealthy nodes of one check, as v0.12.0 decides it: the nodes without
 * a remediation are healthy (276–290); remediation is skipped for every one of them when fewer are
 * healthy than total − maxUnhealthy, maxUnhealthy a count or a percentage of the total rounded up
 * (337–347, getMinHealthy 911–934), and NHC refuses a maxUnhealthy above the total (926–928).
 */
export function nhcFences(total: number, unhealthy: number, maxUnhealthy: number | string): { fences: boolean; allowed: number; refused?: string } {
  const pct = typeof maxUnhealthy === "string" ? /^(\d+)%$/.exec(maxUnhealthy) : null;
  const allowed = typeof maxUnhealthy === "number" ? maxUnhealthy : pct ? Math.ceil((Number(pct[1]) * total) / 100) : Number(maxUnhealthy);
  if (allowed > total)
    return {
      fences: false,
      allowed,
      refused: `maxUnhealthy ${maxUnhealthy} is greater than its ${total} selected node(s): NHC refuses the check (getMinHealthy, 926–928) and remediates none`,
    };
  return { fences: total - unhealthy >= total - allowed, allowed };
}

/** A check whose maxUnhealthy (a count) is more than its nodes: NHC would never remediate any of them. */
export function nhcGroupChecks(nodes: readonly (NhcNode & { state?: string })[], maxUnhealthy: (group: NhcGroup) => number | string): Check[] {
  return nhcChecks(nodes).flatMap((c): Check[] => {
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

/** The fact of the checks' storm cooldown; the others are each check's maxUnhealthy by name. */
const COOLDOWN_FACT = "stormCooldownDuration";

/** The checks of a Plan: their maxUnhealthy by name, and the storm cooldown they share. */
function nhcFacts(plan: Plan): Record<string, number | string> | undefined {
  const u = findUnit(plan, "medik8s-remediation");
  const nhcs = u?.kind === "Manifests" ? u.objects.filter((o) => o.kind === "NodeHealthCheck") : [];
  if (nhcs.length === 0) return undefined;
  const facts: Record<string, number | string> = {};
  for (const o of nhcs) {
    const spec = obj(o.spec);
    if (typeof spec.maxUnhealthy === "number" || typeof spec.maxUnhealthy === "string") facts[o.metadata.name] = spec.maxUnhealthy;
    if (typeof spec.stormCooldownDuration === "string") facts[COOLDOWN_FACT] = spec.stormCooldownDuration;
  }
  return facts;
}

/** What a check does with the lost nodes it selects (a node whose state leaves the checks it does not select). */
function checkLoss(c: NhcCheck, lost: readonly string[], total: number, max: number | string, hypervisors: boolean, cooldown: string): LossFinding {
  const what = `NHC ${c.name}`;
  const r = nhcFences(total, lost.length, max);
  const count = `${ofTotal(lost.length, total)} of its nodes unhealthy`;
  if (r.fences) {
    return {
      what,
      level: "holds",
      message: `${count}, within maxUnhealthy ${max}: SNR fences ${lost.length === 1 ? "it" : "them"} (reboot, out-of-service taint), and their pods and volumes move${hypervisors ? "; Masakari evacuates the HA VMs of the fenced hypervisors (§ 5.6)" : ""}`,
    };
  }
  const why = r.refused ?? `more than maxUnhealthy ${max} allows: it fences none of them (storm protection, ${NHC_REPO} 337–347, 911–934)`;
  return {
    what,
    level: "degraded",
    message: `${count}, ${why}${hypervisors ? "; Masakari evacuates none of their VMs: it waits for the fencing (§ 5.6)" : ""}; left to a human`,
    fix: `on purpose: find the shared cause (power, a switch, the zone); fence a node that stays down by hand (power it off, then kubectl taint nodes <node> node.kubernetes.io/out-of-service=nodeshutdown:NoExecute, what SNR's OutOfServiceTaint strategy sets); once the nodes are back within the threshold, NHC waits stormCooldownDuration (${cooldown}) before it fences again`,
  };
}

/** The checks of an inventory, once per inventory: every loss of a table asks with the same nodes. */
const checksCache = new WeakMap<readonly NhcNode[], NhcCheck[]>();
function checksOf(nodes: readonly NhcNode[]): NhcCheck[] {
  let checks = checksCache.get(nodes);
  if (!checks) checksCache.set(nodes, (checks = nhcChecks(nodes)));
  return checks;
}

/**
 * NHC in the failure domains (lifecycle/failure-domains.ts): per check, whether it fences the lost
 * nodes it selects; across checks, NHC fences one Kubernetes control-plane node at a time
 * (isControlPlaneRemediationAllowed, 697–733): a second waits until the first is healthy again.
 */
export const NHC_CONSTRAINT: NodeConstraint = {
  key: "medik8s-remediation",
  facts: nhcFacts,
  loss(loss, facts) {
    if (!facts) return [];
    const cooldown = typeof facts[COOLDOWN_FACT] === "string" ? facts[COOLDOWN_FACT] : "none";
    const findings: LossFinding[] = [];
    const fencedControlPlane: string[] = [];
    // the selectors leave out a node whose state leaves the health checks, drained or not
    const unwatched = new Set(loss.nodes.filter((n) => hasTrait(n.state, "leavesHealthChecks")).map((n) => n.name));
    for (const c of checksOf(loss.nodes)) {
      const max = facts[c.name];
      if (typeof max !== "number" && typeof max !== "string") continue;
      const selected = c.nodes.filter((n) => !unwatched.has(n));
      const lost = selected.filter((n) => loss.lost.has(n));
      if (lost.length === 0) continue;
      const lostSet = new Set(lost);
      const lostNodes = loss.nodes.filter((n) => lostSet.has(n.name));
      const finding = checkLoss(
        c,
        lost,
        selected.length,
        max as number | string,
        lostNodes.some((n) => n.roles.includes("compute")),
        cooldown,
      );
      findings.push(finding);
      if (finding.level === "holds") fencedControlPlane.push(...lostNodes.filter((n) => n.kubernetesControlPlane).map((n) => n.name));
    }
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
