// Kubernetes' scheduling semantics, as pure functions over plain node data: which nodes a pod may
// be bound to, given its nodeSelector, required node affinity and tolerations, and how many replicas
// a required pod anti-affinity admits. Mirrors k8s.io/component-helpers/scheduling/corev1 (node
// affinity, taints/tolerations) and the DaemonSet controller's admission; nothing here knows about
// OpenKeel roles.
import type { Affinity, NodeSelectorRequirement, NodeSelectorTerm, Scheduling } from "./chart-helper";
import type { Taint, Toleration } from "../config/roles";

/** A node as the scheduler sees it. */
export interface SchedNode {
  name: string;
  labels: Record<string, string>;
  taints: Taint[];
}

interface LabelSelectorRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
  values?: string[];
}
/** metav1.LabelSelector (used by NodeHealthCheck, pod affinity terms…). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

const has = (labels: Record<string, string>, key: string) => Object.prototype.hasOwnProperty.call(labels, key);

/** `nodeSelector`: every key present with exactly that value. An empty map matches every node. */
export function matchesNodeSelector(selector: Record<string, string> | undefined, labels: Record<string, string>): boolean {
  if (!selector) return true;
  return Object.entries(selector).every(([k, v]) => has(labels, k) && labels[k] === v);
}

/** Integer parse the way Kubernetes does it for Gt/Lt (strconv.ParseInt base 10). */
function parseIntStrict(s: string): number | undefined {
  return /^[+-]?\d+$/.test(s) ? Number(s) : undefined;
}

/**
 * One NodeSelectorRequirement against a key→value map. NotIn and DoesNotExist match a node without
 * the key; Gt/Lt need the key, a single integer value and an integer label value.
 */
export function matchesRequirement(req: NodeSelectorRequirement, labels: Record<string, string>): boolean {
  const present = has(labels, req.key);
  const value = labels[req.key];
  const values = req.values ?? [];
  switch (req.operator) {
    case "In":
      return present && values.includes(value);
    case "NotIn":
      return !present || !values.includes(value);
    case "Exists":
      return present;
    case "DoesNotExist":
      return !present;
    case "Gt":
    case "Lt": {
      if (!present || values.length !== 1) return false;
      const want = parseIntStrict(values[0]);
      const got = parseIntStrict(value);
      if (want === undefined || got === undefined) return false;
      return req.operator === "Gt" ? got > want : got < want;
    }
    default:
      return false;
  }
}

/**
 * One term: its matchExpressions (on labels) and matchFields (only `metadata.name` exists) ANDed.
 * A term with neither matches no node (Kubernetes: "a null or empty node selector term matches no
 * objects").
 */
export function matchesTerm(term: NodeSelectorTerm, node: Pick<SchedNode, "name" | "labels">): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const fieldMap = { "metadata.name": node.name };
  return (
    exprs.every((r) => matchesRequirement(r, node.labels)) &&
    fields.every((r) => (r.operator === "In" || r.operator === "NotIn") && matchesRequirement(r, fieldMap))
  );
}

/** Terms are ORed; an empty list matches nothing (the API server rejects it anyway). */
function matchesNodeSelectorTerms(terms: NodeSelectorTerm[], node: Pick<SchedNode, "name" | "labels">): boolean {
  return terms.some((t) => matchesTerm(t, node));
}

/** Required node affinity, or true when the pod has none. Preferred terms never exclude a node. */
export function matchesRequiredNodeAffinity(affinity: Affinity | undefined, node: Pick<SchedNode, "name" | "labels">): boolean {
  const required = affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  return matchesNodeSelectorTerms(required.nodeSelectorTerms ?? [], node);
}

/** metav1.LabelSelector: matchLabels and matchExpressions ANDed; an empty selector matches everything. */
export function matchesLabelSelector(sel: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!sel) return true;
  return matchesNodeSelector(sel.matchLabels, labels) && (sel.matchExpressions ?? []).every((r) => matchesRequirement(r as NodeSelectorRequirement, labels));
}

/**
 * v1.Toleration.ToleratesTaint: the effect must match unless the toleration's is empty; the key
 * must match unless the toleration's is empty (with Exists: tolerate everything); Exists ignores the
 * value, Equal (the default operator) compares it.
 */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  const op = t.operator ?? "Equal";
  if (op === "Exists") return true;
  if (op === "Equal") return (t.value ?? "") === (taint.value ?? "");
  return false;
}

/** Effects that keep a pod off a node; PreferNoSchedule is only a scoring hint. */
const BLOCKING_EFFECTS: ReadonlyArray<Taint["effect"]> = ["NoSchedule", "NoExecute"];

/** The node's taints that keep this pod off it: blocking effect and no toleration for it. */
export function untoleratedTaints(taints: Taint[], tolerations: Toleration[]): Taint[] {
  return taints.filter((taint) => BLOCKING_EFFECTS.includes(taint.effect) && !tolerations.some((t) => toleratesTaint(t, taint)));
}

/**
 * Tolerations the DaemonSet controller adds to every DaemonSet pod (pkg/controller/daemon/util:
 * AddOrUpdateDaemonPodTolerations): the node-lifecycle taints, never an operator's own taints such
 * as OpenKeel's role taints. network-unavailable only for hostNetwork pods.
 */
export function daemonSetTolerations(hostNetwork = false): Toleration[] {
  const t = (key: string, effect: Toleration["effect"]): Toleration => ({ key, operator: "Exists", effect });
  return [
    t("node.kubernetes.io/not-ready", "NoExecute"),
    t("node.kubernetes.io/unreachable", "NoExecute"),
    t("node.kubernetes.io/disk-pressure", "NoSchedule"),
    t("node.kubernetes.io/memory-pressure", "NoSchedule"),
    t("node.kubernetes.io/pid-pressure", "NoSchedule"),
    t("node.kubernetes.io/unschedulable", "NoSchedule"),
    ...(hostNetwork ? [t("node.kubernetes.io/network-unavailable", "NoSchedule")] : []),
  ];
}

export interface PodScheduling extends Pick<Scheduling, "nodeSelector" | "affinity" | "tolerations"> {
  /** DaemonSet pods get the controller's automatic tolerations. */
  daemonSet?: boolean | undefined;
  hostNetwork?: boolean | undefined;
}

/** Why a node is not eligible, empty when it is. */
export function ineligibility(pod: PodScheduling, node: SchedNode): string[] {
  const reasons: string[] = [];
  for (const [k, v] of Object.entries(pod.nodeSelector ?? {})) {
    if (!has(node.labels, k)) reasons.push(`no label ${k}`);
    else if (node.labels[k] !== v) reasons.push(`label ${k}=${node.labels[k]}, not ${JSON.stringify(v)}`);
  }
  if (!matchesRequiredNodeAffinity(pod.affinity, node)) reasons.push("required node affinity does not match");
  const tolerations = [...(pod.tolerations ?? []), ...(pod.daemonSet ? daemonSetTolerations(pod.hostNetwork) : [])];
  for (const taint of untoleratedTaints(node.taints, tolerations)) {
    reasons.push(`taint ${taint.key}${taint.value ? `=${taint.value}` : ""}:${taint.effect} not tolerated`);
  }
  return reasons;
}

export function isEligible(pod: PodScheduling, node: SchedNode): boolean {
  return ineligibility(pod, node).length === 0;
}

export function eligibleNodes(pod: PodScheduling, nodes: SchedNode[]): SchedNode[] {
  return nodes.filter((n) => isEligible(pod, n));
}

/**
 * How many replicas a required anti-affinity against the component's own pods admits: one per
 * distinct value of the topology key among the eligible nodes. Nodes without the key impose no
 * limit (the scheduler finds no pod in "their" domain), so they make the capacity unbounded.
 */
export function antiAffinityCapacity(eligible: SchedNode[], topologyKey: string): number {
  if (eligible.some((n) => !has(n.labels, topologyKey))) return Number.POSITIVE_INFINITY;
  return new Set(eligible.map((n) => n.labels[topologyKey])).size;
}

/**
 * The topology keys of required pod anti-affinity terms. Every term is taken to select the
 * component's own pods: the charts and operators render it that way (one member per host).
 */
export function requiredAntiAffinityKeys(affinity: Affinity | undefined): string[] {
  const terms = (affinity?.podAntiAffinity as { requiredDuringSchedulingIgnoredDuringExecution?: { topologyKey?: string }[] } | undefined)
    ?.requiredDuringSchedulingIgnoredDuringExecution;
  return [...new Set((terms ?? []).map((t) => t.topologyKey).filter((k): k is string => typeof k === "string"))];
}

/**
 * The pods a PodDisruptionBudget lets a drain evict at once while all `replicas` are healthy:
 * maxUnavailable, or the replicas above minAvailable; a percentage is scaled and rounded up, as
 * the disruption controller does for both (pkg/controller/disruption: GetScaledValueFromIntOrPercent, roundUp).
 */
export function disruptionsAllowed(budget: { maxUnavailable?: unknown; minAvailable?: unknown }, replicas: number): number {
  const scaled = (v: unknown) => (typeof v === "string" && v.endsWith("%") ? Math.ceil((Number(v.slice(0, -1)) * replicas) / 100) : Number(v));
  const allowed = budget.maxUnavailable !== undefined ? scaled(budget.maxUnavailable) : replicas - scaled(budget.minAvailable);
  return Math.max(0, Math.min(replicas, allowed));
}
