import { resolveStack } from "../../environments";
// The scheduler's node filter, small: does a pod with these scheduling fields fit a node with
// these labels and taints? Node selector (exact values), required node affinity (terms ORed,
// expressions ANDed) and NoSchedule/NoExecute taints, as kube-scheduler filters them.
//
// A test oracle, independent of placement/scheduling.ts on purpose (written from the scheduler's
// rules, not from that code); test/policy/oracles.test.ts proves the two agree where both apply.
import type { LoadedConfig, NodeConfig } from "../../config/schema";
import type { Affinity, NodeSelectorRequirement } from "../../placement/chart-helper";
import { findUnit, type ManifestsUnit, type Plan } from "../../plan/plan";
import type { Taint, Toleration } from "../../config/roles";
import { nodeTaints, schedulingNodeLabels } from "../../topology/topology";

export interface NodeView {
  node: NodeConfig;
  labels: Record<string, string>;
  taints: Taint[];
}

export interface PodScheduling {
  nodeSelector?: Record<string, string> | undefined;
  affinity?: Affinity | undefined;
  tolerations?: Toleration[] | undefined;
}

function tolerates(tolerations: Toleration[], taint: Taint): boolean {
  return tolerations.some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (t.key === undefined || t.key === "") return t.operator === "Exists";
    if (t.key !== taint.key) return false;
    return t.operator === "Exists" || (t.value ?? "") === (taint.value ?? "");
  });
}

function matchesRequirement(labels: Record<string, string>, r: NodeSelectorRequirement | { key: string; operator: string; values?: string[] }): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  switch (r.operator) {
    case "Exists":
      return has;
    case "DoesNotExist":
      return !has;
    case "In":
      return has && (r.values ?? []).includes(labels[r.key]);
    case "NotIn":
      return !has || !(r.values ?? []).includes(labels[r.key]);
    default:
      throw new Error(`operator ${r.operator} not modelled`);
  }
}

/** Label selector matchExpressions (NodeHealthCheck, …): every requirement holds. */
export function matchesExpressions(labels: Record<string, string>, exprs: { key: string; operator: string; values?: string[] }[]): boolean {
  return exprs.every((r) => matchesRequirement(labels, r));
}

export function fits(view: Pick<NodeView, "labels" | "taints">, pod: PodScheduling): boolean {
  for (const [k, v] of Object.entries(pod.nodeSelector ?? {})) if (view.labels[k] !== v) return false;
  const terms = pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms && !terms.some((t) => (t.matchExpressions ?? []).every((r) => matchesRequirement(view.labels, r)))) return false;
  return view.taints.filter((t) => t.effect !== "PreferNoSchedule").every((t) => tolerates(pod.tolerations ?? [], t));
}

/** Every node as the scheduler sees it once the node-roles phase ran (contributed labels included). */
export function nodeViews(cfg: LoadedConfig, plan: Plan): NodeView[] {
  const topo = resolveStack(cfg).topology;
  const patches = (findUnit(plan, "node-roles") as ManifestsUnit).objects;
  return cfg.nodes.map((node) => {
    const patch = patches.find((o) => o.metadata.name === node.name);
    return {
      node,
      // kubernetes.io/os: set by every kubelet (Talos and kind nodes are Linux).
      labels: { "kubernetes.io/os": "linux", ...schedulingNodeLabels(node, topo.profile), ...(patch?.metadata.labels ?? {}) },
      taints: nodeTaints(node, topo),
    };
  });
}

/** Names of the nodes a pod fits, sorted. */
export function fittingNodes(views: NodeView[], pod: PodScheduling): string[] {
  return views
    .filter((v) => fits(v, pod))
    .map((v) => v.node.name)
    .sort();
}
