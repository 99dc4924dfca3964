// Kubernetes' scheduling semantics, case by case from the documentation ("Assigning Pods to Nodes",
// "Taints and Tolerations", "DaemonSet": how daemon pods are scheduled) and the API reference.
import { describe, expect, it } from "vitest";
import {
  antiAffinityCapacity,
  daemonSetTolerations,
  eligibleNodes,
  ineligibility,
  matchesLabelSelector,
  matchesNodeSelector,
  matchesRequiredNodeAffinity,
  matchesRequirement,
  matchesTerm,
  requiredAntiAffinityKeys,
  toleratesTaint,
  untoleratedTaints,
  type SchedNode,
} from "../../placement/scheduling";
import type { Taint } from "../../config/roles";

const node = (name: string, labels: Record<string, string>, taints: Taint[] = []): SchedNode => ({ name, labels, taints });
const affinity = (...terms: object[]) => ({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } });

describe("nodeSelector", () => {
  it("needs every key with exactly its value; an empty value matches only an empty label value", () => {
    const labels = { "node-role.openkeel.io/compute": "", zone: "a" };
    expect(matchesNodeSelector({ "node-role.openkeel.io/compute": "" }, labels)).toBe(true);
    expect(matchesNodeSelector({ "node-role.openkeel.io/compute": "true" }, labels)).toBe(false);
    expect(matchesNodeSelector({ "node-role.openkeel.io/compute": "", zone: "b" }, labels)).toBe(false);
    expect(matchesNodeSelector({ "node-role.openkeel.io/computer": "" }, labels)).toBe(false);
  });
  it("an absent or empty selector matches every node", () => {
    expect(matchesNodeSelector(undefined, {})).toBe(true);
    expect(matchesNodeSelector({}, {})).toBe(true);
  });
});

describe("node selector requirements", () => {
  const labels = { a: "1", b: "x", n: "10" };
  it("In: key present with one of the values", () => {
    expect(matchesRequirement({ key: "b", operator: "In", values: ["x", "y"] }, labels)).toBe(true);
    expect(matchesRequirement({ key: "b", operator: "In", values: ["y"] }, labels)).toBe(false);
    expect(matchesRequirement({ key: "c", operator: "In", values: [""] }, labels)).toBe(false);
  });
  it("NotIn: matches a node without the key, or with another value", () => {
    expect(matchesRequirement({ key: "c", operator: "NotIn", values: ["x"] }, labels)).toBe(true);
    expect(matchesRequirement({ key: "b", operator: "NotIn", values: ["y"] }, labels)).toBe(true);
    expect(matchesRequirement({ key: "b", operator: "NotIn", values: ["x"] }, labels)).toBe(false);
  });
  it("Exists / DoesNotExist look at the key only", () => {
    expect(matchesRequirement({ key: "a", operator: "Exists" }, labels)).toBe(true);
    expect(matchesRequirement({ key: "c", operator: "Exists" }, labels)).toBe(false);
    expect(matchesRequirement({ key: "c", operator: "DoesNotExist" }, labels)).toBe(true);
    expect(matchesRequirement({ key: "a", operator: "DoesNotExist" }, labels)).toBe(false);
  });
  it("Gt / Lt compare integers; a missing key, a non-integer or several values never match", () => {
    expect(matchesRequirement({ key: "n", operator: "Gt", values: ["9"] }, labels)).toBe(true);
    expect(matchesRequirement({ key: "n", operator: "Gt", values: ["10"] }, labels)).toBe(false);
    expect(matchesRequirement({ key: "n", operator: "Lt", values: ["11"] }, labels)).toBe(true);
    expect(matchesRequirement({ key: "n", operator: "Lt", values: ["10"] }, labels)).toBe(false);
    expect(matchesRequirement({ key: "b", operator: "Gt", values: ["1"] }, labels)).toBe(false);
    expect(matchesRequirement({ key: "c", operator: "Lt", values: ["1"] }, labels)).toBe(false);
    expect(matchesRequirement({ key: "n", operator: "Gt", values: ["1", "2"] }, labels)).toBe(false);
    expect(matchesRequirement({ key: "n", operator: "Gt", values: ["1.5"] }, labels)).toBe(false);
  });
});

describe("required node affinity", () => {
  const n = node("cmp-01", { "role/compute": "", "role/storage": "", zone: "a" });
  it("ANDs the expressions of one term", () => {
    expect(
      matchesTerm(
        {
          matchExpressions: [
            { key: "role/compute", operator: "Exists" },
            { key: "zone", operator: "In", values: ["a"] },
          ],
        },
        n,
      ),
    ).toBe(true);
    expect(
      matchesTerm(
        {
          matchExpressions: [
            { key: "role/compute", operator: "Exists" },
            { key: "zone", operator: "In", values: ["b"] },
          ],
        },
        n,
      ),
    ).toBe(false);
  });
  it("ORs the terms (roles: [a, b])", () => {
    const a = affinity(
      { matchExpressions: [{ key: "role/network", operator: "Exists" }] },
      { matchExpressions: [{ key: "role/compute", operator: "Exists" }] },
    );
    expect(matchesRequiredNodeAffinity(a, n)).toBe(true);
    expect(matchesRequiredNodeAffinity(a, node("cp-1", { "role/control-plane": "" }))).toBe(false);
  });
  it("an empty term matches no node; an empty term list matches no node", () => {
    expect(matchesTerm({}, n)).toBe(false);
    expect(matchesTerm({ matchExpressions: [] }, n)).toBe(false);
    expect(matchesRequiredNodeAffinity(affinity(), n)).toBe(false);
  });
  it("matchFields selects metadata.name with In / NotIn", () => {
    expect(matchesTerm({ matchFields: [{ key: "metadata.name", operator: "In", values: ["cmp-01"] }] }, n)).toBe(true);
    expect(matchesTerm({ matchFields: [{ key: "metadata.name", operator: "NotIn", values: ["cmp-01"] }] }, n)).toBe(false);
    expect(matchesTerm({ matchFields: [{ key: "metadata.name", operator: "Exists" }] }, n)).toBe(false);
  });
  it("no required affinity, or only preferred terms, excludes no node", () => {
    expect(matchesRequiredNodeAffinity(undefined, n)).toBe(true);
    expect(matchesRequiredNodeAffinity({ nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{}] } }, n)).toBe(true);
  });
});

describe("label selectors (NodeHealthCheck.spec.selector)", () => {
  it("ANDs matchLabels and matchExpressions; an empty selector matches everything", () => {
    const labels = { "role/compute": "", "node-role.kubernetes.io/control-plane": "" };
    expect(matchesLabelSelector({}, labels)).toBe(true);
    expect(matchesLabelSelector({ matchLabels: { "role/compute": "" } }, labels)).toBe(true);
    expect(
      matchesLabelSelector(
        {
          matchExpressions: [
            { key: "role/compute", operator: "Exists" },
            { key: "node-role.kubernetes.io/control-plane", operator: "DoesNotExist" },
          ],
        },
        labels,
      ),
    ).toBe(false);
  });
});

describe("taints and tolerations", () => {
  const taint: Taint = { key: "node-role.openkeel.io/compute", effect: "NoSchedule" };
  it("Exists with the key and effect tolerates; another key or effect does not", () => {
    expect(toleratesTaint({ key: taint.key, operator: "Exists", effect: "NoSchedule" }, taint)).toBe(true);
    expect(toleratesTaint({ key: "node-role.openkeel.io/network", operator: "Exists", effect: "NoSchedule" }, taint)).toBe(false);
    expect(toleratesTaint({ key: taint.key, operator: "Exists", effect: "NoExecute" }, taint)).toBe(false);
  });
  it("an empty effect matches every effect", () => {
    expect(toleratesTaint({ key: taint.key, operator: "Exists" }, taint)).toBe(true);
    expect(toleratesTaint({ key: taint.key, operator: "Exists" }, { ...taint, effect: "NoExecute" })).toBe(true);
  });
  it("an empty key with Exists tolerates every taint", () => {
    expect(toleratesTaint({ operator: "Exists" }, taint)).toBe(true);
    expect(toleratesTaint({ operator: "Exists", effect: "NoSchedule" }, taint)).toBe(true);
    expect(toleratesTaint({ operator: "Exists", effect: "NoExecute" }, taint)).toBe(false);
  });
  it("Equal (the default operator) compares values; an empty value equals an unset one", () => {
    const valued: Taint = { key: "openkeel.io/reserved", value: "true", effect: "NoSchedule" };
    expect(toleratesTaint({ key: valued.key, operator: "Equal", value: "true", effect: "NoSchedule" }, valued)).toBe(true);
    expect(toleratesTaint({ key: valued.key, value: "true" }, valued)).toBe(true);
    expect(toleratesTaint({ key: valued.key, operator: "Equal", value: "false" }, valued)).toBe(false);
    expect(toleratesTaint({ key: valued.key, operator: "Equal" }, valued)).toBe(false);
    expect(toleratesTaint({ key: taint.key, operator: "Equal", value: "" }, taint)).toBe(true);
  });
  it("NoSchedule and NoExecute keep pods off; PreferNoSchedule does not", () => {
    const taints: Taint[] = [
      { key: "a", effect: "NoSchedule" },
      { key: "b", effect: "NoExecute" },
      { key: "c", effect: "PreferNoSchedule" },
    ];
    expect(untoleratedTaints(taints, []).map((t) => t.key)).toEqual(["a", "b"]);
    expect(untoleratedTaints(taints, [{ key: "a", operator: "Exists" }]).map((t) => t.key)).toEqual(["b"]);
  });
});

describe("DaemonSet pods", () => {
  const lifecycle: Taint = { key: "node.kubernetes.io/unschedulable", effect: "NoSchedule" };
  const role: Taint = { key: "node-role.openkeel.io/network", effect: "NoSchedule" };
  it("tolerate the node-lifecycle taints automatically", () => {
    const n = node("n", {}, [lifecycle, { key: "node.kubernetes.io/not-ready", effect: "NoExecute" }]);
    expect(ineligibility({ tolerations: [] }, n)).not.toEqual([]);
    expect(ineligibility({ tolerations: [], daemonSet: true }, n)).toEqual([]);
  });
  it("do not tolerate role taints by themselves", () => {
    const n = node("net-1", {}, [role]);
    expect(ineligibility({ tolerations: [], daemonSet: true }, n)).toEqual([`taint ${role.key}:NoSchedule not tolerated`]);
  });
  it("tolerate network-unavailable only with hostNetwork", () => {
    const has = (hostNetwork: boolean) => daemonSetTolerations(hostNetwork).some((t) => t.key === "node.kubernetes.io/network-unavailable");
    expect(has(true)).toBe(true);
    expect(has(false)).toBe(false);
  });
});

describe("eligibility", () => {
  it("needs selector, affinity and taints to agree, and says why not", () => {
    const nodes = [
      node("cp-1", { "role/cp": "" }),
      node("cmp-1", { "role/compute": "" }, [{ key: "role/compute", effect: "NoSchedule" }]),
      node("cmp-2", { "role/compute": "" }, [{ key: "role/compute", effect: "NoSchedule" }]),
    ];
    const pod = { nodeSelector: { "role/compute": "" }, tolerations: [] };
    expect(eligibleNodes(pod, nodes)).toEqual([]);
    expect(ineligibility(pod, nodes[0])).toEqual(["no label role/compute"]);
    expect(ineligibility(pod, nodes[1])).toEqual(["taint role/compute:NoSchedule not tolerated"]);
    const tolerating = { ...pod, tolerations: [{ key: "role/compute", operator: "Exists" as const }] };
    expect(eligibleNodes(tolerating, nodes).map((n) => n.name)).toEqual(["cmp-1", "cmp-2"]);
  });
});

describe("required pod anti-affinity", () => {
  const nodes = [node("a", { h: "a", z: "1" }), node("b", { h: "b", z: "1" }), node("c", { h: "c", z: "2" })];
  it("admits one replica per topology domain", () => {
    expect(antiAffinityCapacity(nodes, "h")).toBe(3);
    expect(antiAffinityCapacity(nodes, "z")).toBe(2);
  });
  it("nodes without the topology key impose no limit", () => {
    expect(antiAffinityCapacity([...nodes, node("d", {})], "z")).toBe(Number.POSITIVE_INFINITY);
  });
  it("reads the topology keys of required terms only", () => {
    expect(
      requiredAntiAffinityKeys({
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: "kubernetes.io/hostname" }],
          preferredDuringSchedulingIgnoredDuringExecution: [{ podAffinityTerm: { topologyKey: "topology.kubernetes.io/zone" } }],
        },
      }),
    ).toEqual(["kubernetes.io/hostname"]);
    expect(requiredAntiAffinityKeys(undefined)).toEqual([]);
  });
});
