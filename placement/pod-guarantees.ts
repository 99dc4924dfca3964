// What a workload promises of its pods beyond the nodes they may run on (issue 45), read as
// Kubernetes applies it, and what the model states of the component that stands for it: the
// required anti-affinity and the DoNotSchedule spread over its own pods, the PodDisruptionBudgets
// over them, its tolerations and its priority class.
// - A required pod anti-affinity term counts the pods its labelSelector selects ("If it's null, this
//   PodAffinityTerm matches with no Pods"), in the pod's own namespace when it lists none and has no
//   namespaceSelector, in every namespace with an empty one (k8s.io/api v0.35.1 core/v1/types.go
//   PodAffinityTerm, lines 3919-3943): a term that selects none of the workload's own pods keeps
//   nothing apart.
// - Only DoNotSchedule spread constraints filter nodes; ScheduleAnyway ones only score
//   (k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/podtopologyspread/plugin.go
//   getConstraints, lines 278-297).
// - A budget covers the pods of its namespace its selector matches, none for a nil selector
//   (pkg/controller/disruption/disruption.go getPodsForPdb, lines 624-634; LabelSelectorAsSelector).
// tools/chart-placement.ts holds every platform chart's workloads to these, against the model.
import type { Toleration } from "../config/roles";
import type { K8sObject } from "../plan/plan";
import { tolerationId } from "./chart-helper";
import { matchesLabelSelector, type LabelSelector } from "./scheduling";
import { arr, isObj, obj, type Component, type DisruptionBudget, type Obj, type PodTemplate, type RequiredSpread } from "./workloads";

/** Everything a workload promises of its pods beyond their nodes, in a canonical order. */
export interface PodGuarantees {
  /** Topology keys of required anti-affinity over its own pods: at most one per domain. */
  apart: string[];
  spread: RequiredSpread[];
  /** The budgets over its pods (none: a drain may evict every pod at once). */
  budgets: DisruptionBudget[];
  tolerations: Toleration[];
  priorityClass?: string | undefined;
}

/** Whether a selector (of a pod affinity term, a spread constraint, a budget) selects pods with these labels: a missing one selects none. */
export const selects = (selector: unknown, labels: Record<string, string>): boolean =>
  isObj(selector) && matchesLabelSelector(selector as LabelSelector, labels);

/** A term that counts pods of its own namespace: no namespaces listed (or its own among them), no or an empty namespace selector. */
const ownNamespace = (term: Obj, namespace: string) => {
  const names = arr<string>(term.namespaces);
  const selector = term.namespaceSelector;
  return (
    (names.length === 0 || names.includes(namespace)) &&
    (selector === undefined || selector === null || (isObj(selector) && Object.keys(selector).length === 0))
  );
};

/** A pod template's required anti-affinity terms, each with whether it selects the template's own pods. */
export function antiAffinityTerms(pods: PodTemplate, namespace: string): { topologyKey: string; selector: unknown; own: boolean }[] {
  const terms = arr<Obj>(obj(obj(pods.spec.affinity).podAntiAffinity).requiredDuringSchedulingIgnoredDuringExecution);
  return terms
    .filter((t) => typeof t.topologyKey === "string")
    .map((t) => ({ topologyKey: String(t.topologyKey), selector: t.labelSelector, own: selects(t.labelSelector, pods.labels) && ownNamespace(t, namespace) }));
}

/** The budgets of `budgets` (PodDisruptionBudget objects) over pods with these labels in `namespace`; `namespaceOf` for an object that names none (Helm's release namespace). */
export function budgetsOver(
  budgets: readonly K8sObject[],
  namespace: string,
  labels: Record<string, string>,
  namespaceOf = (o: K8sObject) => o.metadata.namespace,
): K8sObject[] {
  return budgets.filter((b) => b.kind === "PodDisruptionBudget" && namespaceOf(b) === namespace && selects(obj(b.spec).selector, labels));
}

const budgetOf = (b: K8sObject): DisruptionBudget => {
  const spec = obj(b.spec);
  const bound = (v: unknown) => (typeof v === "number" || typeof v === "string" ? v : undefined);
  const min = bound(spec.minAvailable);
  const max = bound(spec.maxUnavailable);
  return { ...(min !== undefined ? { minAvailable: min } : {}), ...(max !== undefined ? { maxUnavailable: max } : {}) };
};

const sortedTolerations = (list: readonly Toleration[]) =>
  [...new Map(list.map((t) => [tolerationId(t), t])).entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, t]) => t);
const spreadId = (s: RequiredSpread) => `${s.topologyKey} (maxSkew ${s.maxSkew})`;
const budgetId = (b: DisruptionBudget) =>
  [b.minAvailable !== undefined ? `minAvailable: ${b.minAvailable}` : "", b.maxUnavailable !== undefined ? `maxUnavailable: ${b.maxUnavailable}` : ""]
    .filter(Boolean)
    .join(", ") || "neither minAvailable nor maxUnavailable";

/** What a workload's pods are promised: read from its pod template, in its namespace, with the budgets beside it. */
export function podGuarantees(
  pods: PodTemplate,
  namespace: string,
  budgets: readonly K8sObject[],
  namespaceOf?: (o: K8sObject) => string | undefined,
): PodGuarantees {
  const apart = antiAffinityTerms(pods, namespace)
    .filter((t) => t.own)
    .map((t) => t.topologyKey);
  const spread = arr<Obj>(pods.spec.topologySpreadConstraints)
    .filter((c) => c.whenUnsatisfiable !== "ScheduleAnyway" && typeof c.topologyKey === "string" && selects(c.labelSelector, pods.labels))
    .map((c) => ({ topologyKey: String(c.topologyKey), maxSkew: typeof c.maxSkew === "number" ? c.maxSkew : 1 }));
  const priority = pods.spec.priorityClassName;
  return {
    apart: [...new Set(apart)].sort(),
    spread: spread.sort((a, b) => (spreadId(a) < spreadId(b) ? -1 : 1)),
    budgets: budgetsOver(budgets, namespace, pods.labels, namespaceOf).map(budgetOf),
    tolerations: sortedTolerations(arr<Toleration>(pods.spec.tolerations)),
    ...(typeof priority === "string" && priority !== "" ? { priorityClass: priority } : {}),
  };
}

/** What the model states of a component's pods (absent statements: none). */
export function modelGuarantees(c: Component): PodGuarantees {
  return {
    apart: [...new Set(c.requiredAntiAffinity ?? [])].sort(),
    spread: [...(c.requiredSpread ?? [])].sort((a, b) => (spreadId(a) < spreadId(b) ? -1 : 1)),
    budgets: [...(c.disruptionBudgets ?? [])],
    tolerations: sortedTolerations(c.scheduling.tolerations ?? []),
    ...(c.priorityClass !== undefined ? { priorityClass: c.priorityClass } : {}),
  };
}

const list = (xs: readonly string[]) => (xs.length > 0 ? xs.join(", ") : "none");
const on = (xs: readonly string[]) => (xs.length > 0 ? `on ${xs.join(", ")}` : "none");
const showToleration = (t: Toleration) =>
  `${t.key || "(every key)"} ${t.operator ?? "Equal"}${t.value ? ` ${t.value}` : ""}${t.effect ? ` ${t.effect}` : " (every effect)"}${t.tolerationSeconds !== undefined ? ` for ${t.tolerationSeconds}s` : ""}`;

/**
 * Every guarantee a workload's pods get otherwise than the model states, each naming the guarantee
 * (`why`: what a required anti-affinity term that selects none of the workload's own pods selects).
 */
export function guaranteeDifferences(got: PodGuarantees, want: PodGuarantees, why: { apartMisses?: string } = {}): string[] {
  const out: string[] = [];
  if (got.apart.join() !== want.apart.join()) {
    out.push(`required anti-affinity over its own pods: ${on(got.apart)}, the model's ${on(want.apart)}${why.apartMisses ? ` (${why.apartMisses})` : ""}`);
  }
  if (got.spread.map(spreadId).join() !== want.spread.map(spreadId).join()) {
    out.push(`DoNotSchedule spread over its own pods: ${on(got.spread.map(spreadId))}, the model's ${on(want.spread.map(spreadId))}`);
  }
  if (got.budgets.map(budgetId).sort().join() !== want.budgets.map(budgetId).sort().join()) {
    out.push(`PodDisruptionBudget over its pods: ${list(got.budgets.map(budgetId))}, the model's ${list(want.budgets.map(budgetId))}`);
  }
  const ids = (ts: readonly Toleration[]) => new Set(ts.map(tolerationId));
  const [has, wants] = [ids(got.tolerations), ids(want.tolerations)];
  const lacks = want.tolerations.filter((t) => !has.has(tolerationId(t)));
  const adds = got.tolerations.filter((t) => !wants.has(tolerationId(t)));
  if (lacks.length > 0 || adds.length > 0) {
    out.push(
      `tolerations ${[lacks.length ? `without the model's ${lacks.map(showToleration).join("; ")}` : "", adds.length ? `with ${adds.map(showToleration).join("; ")}, which the model lacks` : ""].filter(Boolean).join(", and ")}`,
    );
  }
  if ((got.priorityClass ?? "") !== (want.priorityClass ?? ""))
    out.push(`priority class ${got.priorityClass ?? "(none)"}, the model's ${want.priorityClass ?? "(none)"}`);
  return out;
}
