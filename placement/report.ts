// Where every component can run on every node of a stack: the inventory as the scheduler sees it
// (topology/), each component's scheduling as rendered (the readers of ./workloads.ts), Kubernetes'
// matching rules (./scheduling.ts), and the checks that fail the render when a component cannot
// run, or runs where the design (§ 2) forbids it.
import { hasTrait, NODE_STATE_TAINTS, UNSCHEDULABLE_TAINT, type NodeState, type NodeStateTaint } from "../config/lifecycle";
import type { NodeConfig } from "../config/schema";
import type { Plan } from "../plan/plan";
import { HOSTNAME_LABEL, K8S_CONTROL_PLANE_LABEL, ROLES, type Role, type Taint } from "../config/roles";
import { antiAffinityCapacity, ineligibility, matchesLabelSelector, untoleratedTaints, type SchedNode } from "./scheduling";
import type { Check } from "../config/problems";
import type { Component, DesignRoles } from "./workloads";
import { nodeTaints, schedulingNodeLabels, type Topology } from "../topology/topology";
import type { HostProvision } from "../plan/host";
import { describeNeeds, describePodNeeds, hostContractChecks, nodeProvisions } from "./host";
import type { FailureDomainTable } from "./failure-table";
import { byCodePoint } from "../config/plain";

export interface ReportNode extends SchedNode {
  roles: Role[];
  zone?: string | undefined;
  kubernetesControlPlane: boolean;
  state: NodeState;
  /**
   * The taints its state adds to `taints` (a cordon's, NMO's drain, a disabled hypervisor's): what
   * keeps new pods off it while it is in that state. The checks judge the nodes without them (the
   * inventory's steady state); the report marks what they hold off.
   */
  stateTaints: Taint[];
}

/** The taints a node's state brings, beside the cordon's: what the stack's components contribute (lifecycle/). */
export type StateTaints = (node: Pick<NodeConfig, "roles" | "state">) => Taint[];

export interface ComponentPlacement {
  component: Component;
  /** Eligible node names, in report node order. */
  eligible: string[];
  /** Per ineligible node, why. */
  reasons: Record<string, string[]>;
  /** Roles with at least one eligible node. */
  reaches: Role[];
  /** Eligible nodes whose state keeps its new pods off them (cordoned, drained, disabled), and why. */
  heldOff: Record<string, string[]>;
}

export interface PlacementReport {
  stack: string;
  topology: string;
  profile: string;
  taintedRoles: Role[];
  nodes: ReportNode[];
  placements: ComponentPlacement[];
  /**
   * What each node's host has (its OS, what is rendered for it, what the agents that run there
   * install), by node: the host contract's providers (./host.ts). Empty where no environment says.
   */
  hosts: Map<string, HostProvision[]>;
  /** What each component needs of its nodes' hosts, in words (placement.md), by component name. */
  hostNeeds: Map<string, string[]>;
  /** What every pod on the pod network needs of its node's host, in words. */
  podNeeds: string[];
  /** Errors of the placement checks (empty when the placement holds). */
  checks: Check[];
  /** Findings of the checks only this repository's code can trip (origin `code`): bugs, never the stack's. */
  bugs: Check[];
  /** What losing nodes or zones costs (lifecycle/failure-domains.ts), set once the placement holds. */
  failureDomains?: FailureDomainTable;
}

/** Labels the kubelet sets on every node that role selectors of upstream charts use. */
const KUBELET_NODE_LABELS: Record<string, string> = { "kubernetes.io/os": "linux" };

/**
 * Every label a node will carry: those the node-roles phase applies (role labels, zone, inventory
 * labels and what platform modules contribute, read from the Plan's Node patches), plus the ones
 * the kubelet sets itself.
 */
function reportNodes(plan: Plan, topo: Pick<Topology, "nodes" | "profile" | "taintedRoles" | "environment">, stateTaints: StateTaints): ReportNode[] {
  const patched = new Map<string, Record<string, string>>();
  for (const ph of plan.phases) {
    for (const u of ph.units) {
      if (u.kind !== "Manifests") continue;
      for (const o of u.objects) {
        if (o.kind === "Node" && o.apiVersion === "v1") {
          patched.set(o.metadata.name, { ...(patched.get(o.metadata.name) ?? {}), ...(o.metadata.labels ?? {}) });
        }
      }
    }
  }
  // kind untaints its control-plane nodes when the cluster has no worker (kubeadminit action), so a
  // lab's only node takes workloads even without an OpenKeel role.
  const kindUntainted = topo.environment.untaintsLoneControlPlane && topo.nodes.every((n) => n.kubernetesControlPlane);
  const nodes = topo.nodes.map((n: NodeConfig) => ({
    name: n.name,
    roles: [...n.roles],
    ...(n.zone !== undefined ? { zone: n.zone } : {}),
    kubernetesControlPlane: n.kubernetesControlPlane,
    labels: sortKeys({ ...KUBELET_NODE_LABELS, ...(patched.get(n.name) ?? {}), ...schedulingNodeLabels(n, topo.profile) }),
    taints: nodeTaints(n, topo).filter((t) => !(kindUntainted && t.key === K8S_CONTROL_PLANE_LABEL)),
    state: n.state,
    stateTaints: hasTrait(n.state, "cordons") ? [UNSCHEDULABLE_TAINT, ...stateTaints(n)] : [],
  }));
  return sortNodes(nodes);
}

function sortKeys(r: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => byCodePoint(a, b)));
}

/** The role group of a node: its roles in ROLES order, or none (Kubernetes control plane only). */
export function roleGroup(node: Pick<ReportNode, "roles">): string {
  const roles = ROLES.filter((r) => node.roles.includes(r));
  return roles.length > 0 ? roles.join("+") : "(no role)";
}

function groupRank(node: Pick<ReportNode, "roles">): number[] {
  if (node.roles.length === 0) return [ROLES.length];
  // First by the first role, then by how many roles (dedicated before combined), then the rest.
  const idx = ROLES.map((r, i) => (node.roles.includes(r) ? i : -1)).filter((i) => i >= 0);
  return [idx[0], idx.length, ...idx];
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? -1) - (b[i] ?? -1);
    if (d !== 0) return d;
  }
  return 0;
}

/** Nodes grouped by role set (control plane first, Kubernetes-only nodes last), then zone, then name. */
// The orders of String.prototype.localeCompare, built once: its first calls in a process cost
// about 150 ms (V8 sets a collator up per call until it caches one: `node --cpu-prof` of a render),
// which every render and policy run paid.
const zoneOrder = new Intl.Collator().compare;
const nameOrder = new Intl.Collator("en", { numeric: true }).compare;

function sortNodes<T extends Pick<ReportNode, "roles" | "zone" | "name">>(nodes: T[]): T[] {
  return [...nodes].sort((a, b) => compareRanks(groupRank(a), groupRank(b)) || zoneOrder(a.zone ?? "", b.zone ?? "") || nameOrder(a.name, b.name));
}

/** The nodes a design row names. */
function designNodes(roles: DesignRoles, nodes: Pick<ReportNode, "name" | "roles" | "kubernetesControlPlane">[]): string[] {
  if (roles === "allNodes") return nodes.map((n) => n.name);
  if (roles === "kubernetesControlPlane") return nodes.filter((n) => n.kubernetesControlPlane).map((n) => n.name);
  if (roles === "all") return nodes.filter((n) => n.roles.length > 0).map((n) => n.name);
  return nodes.filter((n) => n.roles.some((r) => roles.includes(r))).map((n) => n.name);
}

export function describeDesignRoles(roles: DesignRoles): string {
  if (roles === "allNodes") return "all nodes";
  if (roles === "all") return "all role nodes";
  if (roles === "kubernetesControlPlane") return "Kubernetes control plane";
  return roles.join(", ");
}

function nodeEligibility(c: Component, node: ReportNode): string[] {
  if (c.nodeSelection !== undefined) {
    return matchesLabelSelector(c.nodeSelection, node.labels) ? [] : ["node selector does not match its labels"];
  }
  return ineligibility({ ...c.scheduling, daemonSet: c.kind === "DaemonSet" }, node);
}

/**
 * The node labels a component's scheduling reads (its node selector's keys, its required node
 * affinity's expressions, or its nodeSelection's), or undefined when it also picks nodes by name
 * (matchFields on metadata.name): what, with the node's taints, decides whether a node is eligible.
 */
function labelsRead(c: Component): string[] | undefined {
  if (c.nodeSelection !== undefined) return [...Object.keys(c.nodeSelection.matchLabels ?? {}), ...(c.nodeSelection.matchExpressions ?? []).map((r) => r.key)];
  const terms = c.scheduling.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  if (terms.some((t) => (t.matchFields ?? []).length > 0)) return undefined;
  return [...Object.keys(c.scheduling.nodeSelector ?? {}), ...terms.flatMap((t) => (t.matchExpressions ?? []).map((r) => r.key))];
}

const taintKeys = new WeakMap<ReportNode, string>();
const taintKey = (n: ReportNode) => {
  let key = taintKeys.get(n);
  if (key === undefined) taintKeys.set(n, (key = JSON.stringify(n.taints)));
  return key;
};

/** Why a node's state keeps new pods of a component off it (a component that selects nodes is not a pod: none). */
function heldOffBy(c: Component, node: ReportNode): string[] {
  if (c.nodeSelection !== undefined || node.stateTaints.length === 0) return [];
  return ineligibility(
    { ...c.scheduling, daemonSet: c.kind === "DaemonSet", nodeSelector: {}, affinity: undefined },
    { ...node, taints: node.stateTaints },
  ).map((why) => `${why} (${node.state})`);
}

/**
 * Per node, what a component that reads these labels sees of it (their values and its taints), as
 * one string; computed once per set of labels read, since most components read the same few.
 */
const kindKeys = new WeakMap<readonly ReportNode[], Map<string, string[]>>();
function nodeKinds(read: string[], nodes: readonly ReportNode[]): string[] {
  let byRead = kindKeys.get(nodes);
  if (!byRead) kindKeys.set(nodes, (byRead = new Map()));
  const id = JSON.stringify(read);
  let keys = byRead.get(id);
  if (!keys) byRead.set(id, (keys = nodes.map((n) => JSON.stringify([read.map((k) => (Object.hasOwn(n.labels, k) ? n.labels[k] : null)), taintKey(n)]))));
  return keys;
}

function placeComponent(c: Component, nodes: ReportNode[]): ComponentPlacement {
  const eligible: string[] = [];
  const reasons: Record<string, string[]> = {};
  const heldOff: Record<string, string[]> = {};
  // nodes that agree on what the component reads (a large inventory has a few kinds of node) get
  // the same answer: each kind judged once, unless the component picks nodes by name
  const read = labelsRead(c);
  const byKey = read && new Map<string, string[]>();
  const kinds = read && nodeKinds(read, nodes);
  for (const [i, n] of nodes.entries()) {
    const key = kinds?.[i];
    let why = key === undefined ? undefined : byKey!.get(key);
    if (why === undefined) {
      why = nodeEligibility(c, n);
      if (key !== undefined) byKey!.set(key, why);
    } else why = [...why];
    if (why.length > 0) {
      reasons[n.name] = why;
      continue;
    }
    eligible.push(n.name);
    const held = heldOffBy(c, n);
    if (held.length > 0) heldOff[n.name] = held;
  }
  const eligibleSet = new Set(eligible);
  const reaches = ROLES.filter((r) => nodes.some((n) => n.roles.includes(r) && eligibleSet.has(n.name)));
  return { component: c, eligible, reasons, reaches, heldOff };
}

/** "a, b: reason; c: other reason": nodes with the same reasons listed together. */
function describeUnreachable(names: string[], reasons: Record<string, string[]>): string {
  const byReason = new Map<string, string[]>();
  for (const n of names) {
    const why = (reasons[n] ?? []).join(", ") || "not eligible";
    byReason.set(why, [...(byReason.get(why) ?? []), n]);
  }
  return [...byReason.entries()].map(([why, ns]) => `${ns.join(", ")} (${why})`).join("; ");
}

const FIX_SELECTOR =
  "correct the component's nodeSelector, affinity or tolerations (a raw placement field in openkeel:services.<service>.placement, or the platform module's values) so that they match the role labels and taints of the inventory";

/** The stack has role labels, but none of the component's design roles. */
function roleAbsent(c: Component, nodes: ReportNode[]): boolean {
  if (!Array.isArray(c.designRoles) || !nodes.some((n) => n.roles.length > 0)) return false;
  return !nodes.some((n) => n.roles.some((r) => (c.designRoles as Role[]).includes(r)));
}

/** `name (kind, n replica(s))`: how a check names a component. */
export function describeComponent(c: Component): string {
  return `${c.name} (${c.kind}${c.replicas !== undefined ? `, ${c.replicas} replica(s)` : ""})`;
}

/** What a component's own placement check sees: the Plan, every node as the scheduler sees it, where each component may run. */
export interface PlacementFacts {
  plan: Plan;
  nodes: readonly ReportNode[];
  placements: readonly ComponentPlacement[];
}

/**
 * A placement check a component registers with the report (platform/, openkeel/), beside the
 * report's own checks, which know no component.
 */
export interface PlacementCheck {
  /**
   * `code`: no stack file can trip it, only this repository's code can (what it relies on is
   * enforced before, by plan checks); planStack throws its findings as bugs instead of blaming the stack.
   * @default a stack file can trip it: its findings are placement checks that stop the plan
   */
  origin?: "code";
  check(facts: PlacementFacts): Check[];
}

/** A component that can run on no node, or on fewer than its required anti-affinity needs. */
function capacityChecks(p: ComponentPlacement, nodes: ReportNode[], byName: ReadonlyMap<string, ReportNode>): Check[] {
  const c = p.component;
  const checks: Check[] = [];
  if (p.eligible.length === 0) {
    // A stack without any node of the component's roles (no storage node: a warning of the plan
    // checks) leaves it unscheduled by design; a stack whose nodes carry no role at all (a lab)
    // must run everything somewhere.
    if (c.mayMatchNone || roleAbsent(c, nodes)) return [];
    const all = nodes.map((n) => n.name);
    return [error("placement-no-node", `${describeComponent(c)} can run on no node: ${describeUnreachable(all, p.reasons)}`, FIX_SELECTOR)];
  }
  for (const key of c.requiredAntiAffinity ?? []) {
    const capacity = antiAffinityCapacity(
      p.eligible.map((n) => byName.get(n)!),
      key,
    );
    if (c.replicas !== undefined && c.replicas > capacity) {
      const eligible = new Set(p.eligible);
      const unreachable = nodes.map((n) => n.name).filter((n) => !eligible.has(n));
      checks.push(
        error(
          "placement-anti-affinity",
          `${describeComponent(c)} has required anti-affinity on ${key} but only ${capacity} ${key === HOSTNAME_LABEL ? "node(s)" : "domain(s)"} can take it (${p.eligible.join(", ")})` +
            (unreachable.length > 0 ? `; it cannot reach ${describeUnreachable(unreachable, p.reasons)}` : ""),
          `lower its replicas to ${capacity}, or give its role to more nodes`,
        ),
      );
    }
  }
  return checks;
}

/** A component on nodes the design (§ 2) does not give it: a DaemonSet missing some, or one outside its roles. */
function designChecks(p: ComponentPlacement, nodes: ReportNode[], byName: ReadonlyMap<string, ReportNode>): Check[] {
  const c = p.component;
  const what = describeComponent(c);
  const checks: Check[] = [];
  if (c.kind === "DaemonSet") {
    const eligible = new Set(p.eligible);
    const missed = designNodes(c.designRoles, nodes).filter((n) => !eligible.has(n));
    if (missed.length > 0) {
      checks.push(
        error(
          "placement-daemonset-coverage",
          `${what} must run on every node of ${describeDesignRoles(c.designRoles)} (design § 2) but misses ${describeUnreachable(missed, p.reasons)}`,
          `${FIX_SELECTOR}; a DaemonSet needs the tolerations of every tainted role it covers`,
        ),
      );
    }
  }
  // A lab whose nodes carry no role has no control plane to keep Galera on (§ 5.2: labs need no roles).
  const allowed: readonly Role[] = c.confinedTo === undefined ? [] : typeof c.confinedTo === "string" ? [c.confinedTo] : c.confinedTo;
  const confined = nodes.some((n) => n.roles.some((r) => allowed.includes(r)));
  const outside = p.eligible.filter((n) => confined && !byName.get(n)!.roles.some((r) => allowed.includes(r)));
  if (outside.length > 0) {
    const roles = allowed.join(" or ");
    checks.push(
      error(
        "placement-forbidden",
        `${what} may run on ${outside.join(", ")}, which lack the ${roles} role: the design (§ 2) keeps it on ${roles} nodes only`,
        `restrict it to the ${roles} role (its selector), and remove any raw nodeSelector or affinity that widens it`,
      ),
    );
  }
  for (const role of c.forbiddenRoles ?? []) {
    const onRole = p.eligible.filter((n) => byName.get(n)!.roles.includes(role));
    if (onRole.length > 0) {
      const check = error(
        "placement-forbidden",
        `${what} may run on ${onRole.join(", ")}, which carry the ${role} role: the design (§ 1.4, § 2) keeps it off ${role} nodes`,
        `keep ${role} nodes dedicated (no other role on them), taint them, and do not give ${c.name} their toleration`,
      );
      // a node that is not dedicated to the role is the stack's mistake: its roles are the key path
      const shared = nodes.findIndex((n) => onRole.includes(n.name) && n.roles.some((r) => r !== role));
      checks.push(shared >= 0 ? { ...check, path: `openkeel:nodes[${shared}].roles` } : check);
    }
  }
  return checks;
}

/**
 * A node agent (every DaemonSet) tolerates the taints a node's state brings on the nodes it runs on
 * (`taints`: config/lifecycle.ts NODE_STATE_TAINTS, a disabled hypervisor's; a component's
 * agentTaints, the drain of the operator that drains nodes), or the next rollout leaves a disabled
 * or draining node without it.
 */
function agentChecks(p: ComponentPlacement, byName: ReadonlyMap<string, ReportNode>, taints: readonly NodeStateTaint[]): Check[] {
  const c = p.component;
  if (c.kind !== "DaemonSet") return [];
  return taints
    .filter(
      (s) =>
        p.eligible.some((n) => !s.roles || byName.get(n)!.roles.some((r) => s.roles!.includes(r))) &&
        untoleratedTaints([s.taint], c.scheduling.tolerations ?? []).length > 0,
    )
    .map(({ taint, why }) =>
      withPath(
        error(
          "placement-agent-tolerations",
          `${describeComponent(c)} does not tolerate ${taint.key}:${taint.effect}: ${why}`,
          `give it the node agent tolerations (StackContext.agentTolerations of platform/context.ts: {key: ${taint.key}, operator: Exists, effect: ${taint.effect}}), or remove the raw tolerations that drop them`,
        ),
        c,
      ),
    );
}

/** The same check for the taints a component declares (NodeLifecycle.agentTaints), registered by the stack that installs it. */
export function agentTaintsCheck(taints: readonly NodeStateTaint[]): PlacementCheck {
  return {
    check: ({ nodes, placements }) => {
      const byName = new Map(nodes.map((n) => [n.name, n]));
      return placements.flatMap((p) => (p.eligible.length > 0 ? agentChecks(p, byName, taints) : []));
    },
  };
}

const error = (code: string, message: string, fix: string): Check => ({ level: "error", code, message, fix });

/** A check about a component the stack places (openkeel:services.<service>.placement.<component>) points there, unless it names its own path. */
function withPath(check: Check, c: Component): Check {
  return c.configPath && check.path === undefined ? { ...check, path: c.configPath } : check;
}

/** The report's own checks, the same for every component: every error names it, the nodes it cannot reach, and why. */
function placementChecks(placements: ComponentPlacement[], nodes: ReportNode[]): Check[] {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  // a component with no node at all has that one problem, whatever else its design asks
  return placements.flatMap((p) =>
    [
      ...capacityChecks(p, nodes, byName),
      ...(p.eligible.length > 0 ? [...designChecks(p, nodes, byName), ...agentChecks(p, byName, NODE_STATE_TAINTS)] : []),
    ].map((c) => withPath(c, p.component)),
  );
}

/** Where every component can run, and the placement checks: the report's own, then those the components registered. */
export function placementReport(
  plan: Plan,
  topo: Pick<Topology, "nodes" | "profile" | "taintedRoles" | "environment">,
  components: Component[],
  registered: readonly PlacementCheck[],
  stateTaints: StateTaints = () => [],
  hostProvisions: ReadonlyMap<string, readonly HostProvision[]> = new Map(),
): PlacementReport {
  const nodes = reportNodes(plan, topo, stateTaints);
  const placements = components.map((c) => placeComponent(c, nodes));
  const facts: PlacementFacts = { plan, nodes, placements };
  const contract = plan.host ?? { needs: [], installs: [] };
  const hosts = nodeProvisions(plan, hostProvisions, contract.installs, placements);
  const index = new Map(topo.nodes.map((n, i) => [n.name, i]));
  const hostChecks =
    hostProvisions.size === 0 ? [] : hostContractChecks({ plan, nodes, placements, contract, provisions: hosts, nodeIndex: (n) => index.get(n) ?? -1 });
  return {
    stack: plan.stack,
    topology: plan.topology,
    profile: plan.labelProfile,
    taintedRoles: [...plan.taintedRoles],
    nodes,
    placements,
    hosts,
    hostNeeds: describeNeeds(plan, contract),
    podNeeds: describePodNeeds(contract),
    checks: [...placementChecks(placements, nodes), ...registered.filter((r) => r.origin !== "code").flatMap((r) => r.check(facts)), ...hostChecks],
    bugs: registered.filter((r) => r.origin === "code").flatMap((r) => r.check(facts)),
  };
}
