// What a workload promises its pods, read as Kubernetes applies it (placement/pod-guarantees.ts):
// only terms and constraints over its own pods count, only DoNotSchedule spread, only budgets of its
// namespace whose selector matches it; and the differences from the model, each naming the guarantee.
import { describe, expect, it } from "vitest";
import type { K8sObject } from "../../plan/plan";
import { guaranteeDifferences, podGuarantees, type PodGuarantees } from "../../placement/pod-guarantees";

const labels = { app: "central" };
const own = { matchLabels: labels };
const pods = (spec: Record<string, unknown>) => ({ labels, spec });
const anti = (...terms: Record<string, unknown>[]) => ({ affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms } } });
const budget = (name: string, namespace: string | undefined, spec: Record<string, unknown>): K8sObject => ({
  apiVersion: "policy/v1",
  kind: "PodDisruptionBudget",
  metadata: { name, ...(namespace ? { namespace } : {}) },
  spec,
});
const none: PodGuarantees = { apart: [], spread: [], budgets: [], tolerations: [] };

describe("podGuarantees: what counts", () => {
  it("required anti-affinity: a term over its own pods in its namespace (none listed, or its own, or an empty namespace selector)", () => {
    const g = podGuarantees(
      pods(
        anti(
          { topologyKey: "kubernetes.io/hostname", labelSelector: own },
          { topologyKey: "topology.kubernetes.io/zone", labelSelector: own, namespaces: ["kube-system"] },
          { topologyKey: "rack", labelSelector: own, namespaceSelector: {} },
        ),
      ),
      "kube-system",
      [],
    );
    expect(g.apart).toEqual(["kubernetes.io/hostname", "rack", "topology.kubernetes.io/zone"]);
  });

  it("not a term that selects other pods, none (a nil selector), or pods of other namespaces only", () => {
    const g = podGuarantees(
      pods(
        anti(
          { topologyKey: "a", labelSelector: { matchLabels: { app: "other" } } },
          { topologyKey: "b" },
          { topologyKey: "c", labelSelector: own, namespaces: ["elsewhere"] },
          { topologyKey: "d", labelSelector: own, namespaceSelector: { matchLabels: { team: "x" } } },
        ),
      ),
      "kube-system",
      [],
    );
    expect(g.apart).toEqual([]);
  });

  it("spread: DoNotSchedule constraints over its own pods, with maxSkew; not ScheduleAnyway, not over other pods", () => {
    const c = (topologyKey: string, whenUnsatisfiable: string, labelSelector: unknown, maxSkew = 1) => ({
      topologyKey,
      whenUnsatisfiable,
      labelSelector,
      maxSkew,
    });
    const g = podGuarantees(
      pods({
        topologySpreadConstraints: [
          c("zone", "DoNotSchedule", own, 2),
          c("host", "ScheduleAnyway", own),
          c("rack", "DoNotSchedule", { matchLabels: { app: "other" } }),
        ],
      }),
      "ns",
      [],
    );
    expect(g.spread).toEqual([{ topologyKey: "zone", maxSkew: 2 }]);
  });

  it("budgets: those of its namespace (an object naming none is in the release's) whose selector matches its pods", () => {
    const budgets = [
      budget("mine", "ns", { selector: own, maxUnavailable: 1 }),
      budget("unnamed-ns", undefined, { selector: own, minAvailable: "50%" }),
      budget("elsewhere", "other", { selector: own, minAvailable: 1 }),
      budget("others", "ns", { selector: { matchLabels: { app: "other" } }, minAvailable: 1 }),
      budget("nil-selector", "ns", { minAvailable: 1 }),
    ];
    expect(podGuarantees(pods({}), "ns", budgets, (o) => o.metadata.namespace ?? "ns").budgets).toEqual([{ maxUnavailable: 1 }, { minAvailable: "50%" }]);
  });

  it("tolerations in one order, each once; the priority class when named", () => {
    const t1 = { key: "b", operator: "Exists" as const, effect: "NoSchedule" as const };
    const t2 = { operator: "Exists" as const, effect: "NoExecute" as const };
    const g = podGuarantees(pods({ tolerations: [t1, t2, t1], priorityClassName: "system-cluster-critical" }), "ns", []);
    expect(g.tolerations).toEqual([t2, t1]);
    expect(g.priorityClass).toBe("system-cluster-critical");
  });
});

describe("guaranteeDifferences: each guarantee named, both ways", () => {
  it("agrees with itself", () => expect(guaranteeDifferences(none, none)).toEqual([]));

  it("a chart that drops what the model states, and one that adds what it does not", () => {
    const model: PodGuarantees = {
      apart: ["kubernetes.io/hostname"],
      spread: [],
      budgets: [{ maxUnavailable: 1 }],
      tolerations: [{ operator: "Exists", effect: "NoExecute" }],
      priorityClass: "system-cluster-critical",
    };
    expect(guaranteeDifferences(none, model, { apartMisses: "its terms select others" })).toEqual([
      "required anti-affinity over its own pods: none, the model's on kubernetes.io/hostname (its terms select others)",
      "PodDisruptionBudget over its pods: none, the model's maxUnavailable: 1",
      "tolerations without the model's (every key) Exists NoExecute",
      "priority class (none), the model's system-cluster-critical",
    ]);
    const chart: PodGuarantees = {
      ...none,
      spread: [{ topologyKey: "zone", maxSkew: 1 }],
      tolerations: [{ key: "k", value: "v", effect: "NoExecute", tolerationSeconds: 30 }],
    };
    expect(guaranteeDifferences(chart, none)).toEqual([
      "DoNotSchedule spread over its own pods: on zone (maxSkew 1), the model's none",
      "tolerations with k Equal v NoExecute for 30s, which the model lacks",
    ]);
  });
});
