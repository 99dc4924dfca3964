// Issue 46: each unit's dependencies derived from what its objects and values use (plan/needs.ts),
// and the shipped stacks' graphs held to it: every use of something a unit before it offers is an
// edge, every edge is a use or a hand-written edge with its reason, and no chain of prod-large is
// longer than six units.
import { describe, expect, it } from "vitest";
import { clusterFacts } from "../../environments/compose";
import { kindOffersOf } from "../../platform/component";
import { resolveStack } from "../../environments";
import {
  dependencies,
  fact,
  graphProblems,
  longestChain,
  objectFacts,
  resourceOf,
  unitFacts,
  waitsOn,
  withDependencies,
  type ClusterFacts,
} from "../../plan/needs";
import { assertPlanInvariants, emptyPhases, findUnit, manifestsUnit, remoteManifestUnit, type K8sObject, type Plan, type Unit } from "../../plan/plan";
import { planOf } from "../helpers/plans";
import { SHIPPED_STACKS, shippedConfig } from "../helpers/stacks";

const PROD: ClusterFacts = { podNetwork: false, storageClasses: [] };
const ns = (name: string): K8sObject => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
const crd = (group: string, kind: string): K8sObject => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${resourceOf(kind)}.${group}` },
  spec: { group, names: { kind, plural: resourceOf(kind) }, scope: "Namespaced" },
});

/** A Plan of the given units, in one phase each after node-roles' (empty). */
function planOfUnits(...units: Unit[]): Plan {
  const phases = emptyPhases();
  phases[1].units.push(...units);
  return {
    stack: "t",
    environment: "talos-production",
    topology: "small",
    labelProfile: "default",
    taintedRoles: [],
    nodes: [],
    cluster: { context: "c" },
    phases,
    warnings: [],
  };
}

describe("what objects use and offer", () => {
  it("a CRD offers its kind; an object of the kind uses it and the webhooks of its resource; a namespaced object its namespace", () => {
    const f = objectFacts([crd("x.io", "Widget"), { apiVersion: "x.io/v1", kind: "Widget", metadata: { name: "w", namespace: "apps" } }]);
    expect([...f.offers]).toEqual(["api x.io/Widget"]);
    // its own CRD is its own: the use is left out; the webhook and the namespace are others'
    expect([...f.uses].filter((u) => !u.startsWith("admission apiextensions.k8s.io/")).sort()).toEqual(["admission x.io/widgets", "namespace apps"]);
  });

  it("a pod's class, network, attachments, runtime, Secrets, node labels and volumes' classes", () => {
    const f = objectFacts([
      {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: { name: "s", namespace: "apps" },
        spec: {
          template: {
            metadata: { annotations: { "k8s.v1.cni.cncf.io/networks": "storage, other/ext@eth1" } },
            spec: {
              priorityClassName: "openkeel-control",
              runtimeClassName: "kata",
              nodeSelector: { "node-role.openkeel.io/storage": "" },
              affinity: {
                nodeAffinity: {
                  requiredDuringSchedulingIgnoredDuringExecution: {
                    nodeSelectorTerms: [{ matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "Exists" }] }],
                  },
                },
              },
              volumes: [
                { name: "a", secret: { secretName: "tls" } },
                { name: "b", secret: { secretName: "maybe", optional: true } },
              ],
              containers: [{ name: "c", envFrom: [{ secretRef: { name: "creds" } }] }],
            },
          },
          volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { storageClassName: "longhorn-local" } }],
        },
      },
    ]);
    expect([...f.uses].filter((u) => !u.startsWith("admission")).sort()).toEqual([
      "attachment apps/storage",
      "attachment other/ext",
      "namespace apps",
      "network attachments",
      "network pods",
      "nodelabel node-role.openkeel.io/storage",
      "nodelabel topology.kubernetes.io/zone",
      "priorityclass openkeel-control",
      "runtimeclass kata",
      "secret apps/creds",
      "secret apps/tls",
      "storageclass longhorn-local",
    ]);
    expect([...f.offers]).toEqual(["object apps/StatefulSet apps/s"]);
  });

  it("a host-network pod needs no pod network; a webhook that fails closed offers admission, one that ignores failures does not", () => {
    const hook = (failurePolicy: string): K8sObject => ({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: failurePolicy },
      webhooks: [
        {
          name: "w",
          failurePolicy,
          rules: [{ apiGroups: ["x.io"], resources: [failurePolicy === "Fail" ? "widgets" : "gadgets", "widgets/status"], operations: ["CREATE"] }],
        },
      ],
    });
    const f = objectFacts([
      hook("Fail"),
      hook("Ignore"),
      { apiVersion: "apps/v1", kind: "DaemonSet", metadata: { name: "d", namespace: "kube-system" }, spec: { template: { spec: { hostNetwork: true } } } },
    ]);
    expect([...f.offers].sort()).toEqual(["admission x.io/widgets", "object apps/DaemonSet kube-system/d"]);
    expect([...f.uses]).not.toContain(fact.podNetwork);
  });

  it("a patch uses the object it amends; a Node patch offers the labels it sets; a LoadBalancer Service an address pool and the release its selector names", () => {
    const f = objectFacts(
      [
        { apiVersion: "v1", kind: "Node", metadata: { name: "n1", labels: { "kube-ovn/role": "master" } } },
        {
          apiVersion: "apps/v1",
          kind: "DaemonSet",
          metadata: { name: "speaker", namespace: "metallb-system", annotations: { "openkeel.io/apply-as": "patch" } },
        },
        {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "vip", namespace: "openkeel" },
          spec: { type: "LoadBalancer", selector: { "app.kubernetes.io/instance": "openkeel-chart" } },
        },
      ],
      (o) => o.kind === "Node" || o.metadata.annotations?.["openkeel.io/apply-as"] === "patch",
    );
    expect([...f.offers]).toEqual(["nodelabel kube-ovn/role"]);
    expect([...f.uses].filter((u) => !u.startsWith("admission")).sort()).toEqual([
      "loadbalancer addresses",
      "namespace metallb-system",
      "namespace openkeel",
      "object /Node /n1",
      "object apps/DaemonSet metallb-system/speaker",
      "release openkeel/openkeel-chart",
    ]);
  });

  it("an object of a custom kind offers what the kinds handed in say it does, and only then; a use of it in the same unit is its own", () => {
    const widget: K8sObject = { apiVersion: "x.io/v1", kind: "Widget", metadata: { name: "w", namespace: "apps" }, spec: { makes: "cfg" } };
    const user: K8sObject = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", namespace: "apps" },
      spec: { volumes: [{ name: "v", secret: { secretName: "cfg" } }] },
    };
    const kinds = { "x.io/Widget": (o: K8sObject) => [fact.secret(o.metadata.namespace!, String((o.spec as { makes: string }).makes))] };
    expect([...objectFacts([widget, user]).offers]).toEqual([]);
    expect([...objectFacts([widget, user]).uses]).toContain("secret apps/cfg");
    expect([...objectFacts([widget, user], undefined, kinds).offers]).toEqual(["secret apps/cfg"]);
    expect([...objectFacts([widget, user], undefined, kinds).uses]).not.toContain("secret apps/cfg");
    expect([...unitFacts(manifestsUnit("w", "openkeel:t:W", [widget]), kinds).offers]).toEqual(["secret apps/cfg"]);
  });

  it("a stated content's kinds bring the admission of their resources; a release its namespace and its pods", () => {
    const u = remoteManifestUnit("op", "openkeel:platform:Op", ["https://x/v1/op.yaml"], "v1", {
      content: { uses: [fact.api("cert-manager.io", "Certificate")] },
    });
    expect([...unitFacts(u).uses].sort()).toEqual(["admission cert-manager.io/certificates", "api cert-manager.io/Certificate"]);
  });
});

describe("the dependencies derived from them", () => {
  const a = manifestsUnit("a", "openkeel:t:A", [crd("x.io", "Widget"), ns("apps")]);
  const b = manifestsUnit("b", "openkeel:t:B", [{ apiVersion: "x.io/v1", kind: "Widget", metadata: { name: "w", namespace: "apps" } }]);
  const c = manifestsUnit("c", "openkeel:t:C", [ns("kube-system-like")]);

  it("a unit waits for each unit before it that offers what it uses, with the facts; for nothing the cluster has", () => {
    const { edges, unmet } = dependencies(planOfUnits(a, c, b), PROD);
    expect(edges.get("b")).toEqual([{ unit: "a", facts: ["api x.io/Widget", "namespace apps"] }]);
    expect(edges.get("c")).toEqual([]);
    expect(unmet).toEqual([]);
    const inDefault = manifestsUnit("d", "openkeel:t:D", [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "m", namespace: "kube-system" } }]);
    expect(dependencies(planOfUnits(inDefault), PROD).edges.get("d")).toEqual([]);
  });

  it("a use nothing before it offers is unmet, even when a later unit offers it: the Plan's order is the docs'", () => {
    expect(dependencies(planOfUnits(b, a), PROD).unmet).toEqual([
      { unit: "b", fact: "api x.io/Widget" },
      { unit: "b", fact: "namespace apps" },
    ]);
  });

  it("a hand-written edge keeps its reason; a manifest of unknown content waits for every unit before it", () => {
    const w = manifestsUnit("w", "openkeel:t:W", [], { waitsFor: [{ unit: "c", why: "its controller reads c's config at start" }] });
    const unknown = remoteManifestUnit("u", "openkeel:t:U", ["https://x/v9/u.yaml"], "v9", { contentUnknown: "v9 is not stated" });
    const { edges } = dependencies(planOfUnits(a, c, w, unknown), PROD);
    expect(edges.get("w")).toEqual([{ unit: "c", facts: [], why: "its controller reads c's config at start" }]);
    expect(edges.get("u")!.map((e) => e.unit)).toEqual(["a", "c", "w"]);
  });

  it("what a unit's pods use at run time makes it wait for the unit that offers it, with the reason; where none does, for nothing", () => {
    const vmi = fact.api("kubevirt.io", "VirtualMachineInstance");
    const offers = manifestsUnit("kv", "openkeel:t:Kv", [], { offersAtRunTime: [{ facts: [vmi], why: "virt-operator installs it" }] });
    const user = manifestsUnit("agent", "openkeel:t:Agent", [], { usesAtRunTime: [{ facts: [vmi], why: "the agent lists VMIs" }] });
    expect(dependencies(planOfUnits(offers, user), PROD).edges.get("agent")).toEqual([{ unit: "kv", facts: [], why: "the agent lists VMIs" }]);
    expect(dependencies(planOfUnits(user), PROD)).toEqual({ edges: new Map([["agent", []]]), unmet: [] });
  });

  it("the environment's own pod network and classes need no unit (kind's kindnet and `standard`)", () => {
    const pod = manifestsUnit("p", "openkeel:t:P", [
      { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "v", namespace: "default" }, spec: { storageClassName: "standard" } },
      { apiVersion: "batch/v1", kind: "Job", metadata: { name: "j", namespace: "default" }, spec: { template: { spec: {} } } },
    ]);
    expect(dependencies(planOfUnits(pod), PROD).unmet.map((u) => u.fact)).toEqual(["network pods", "storageclass standard"]);
    expect(dependencies(planOfUnits(pod), { podNetwork: true, storageClasses: ["standard"] }).unmet).toEqual([]);
  });

  it("waitsOn: phase barriers add every unit of the last non-empty phase before; the longest chain by count or by weight", () => {
    const phases = emptyPhases();
    phases[1].units.push({ ...a }, { ...c });
    phases[3].units.push({ ...b, dependsOn: ["a"] });
    const plan = { phases };
    expect(waitsOn(plan).get("b")).toEqual(["a"]);
    expect(waitsOn(plan, "phase-barriers").get("b")).toEqual(["a", "c"]);
    expect(longestChain(plan)).toEqual({ units: ["a", "b"], weight: 2 });
    const weights: Record<string, number> = { a: 1, c: 10, b: 1 };
    expect(longestChain(plan, "dependencies", (u) => weights[u]).units).toEqual(["c"]);
    expect(longestChain(plan, "phase-barriers", (u) => weights[u])).toEqual({ units: ["c", "b"], weight: 11 });
  });
});

describe("the shipped stacks' graphs", () => {
  const cases = SHIPPED_STACKS.map((s) => {
    const stack = resolveStack(shippedConfig(s));
    return [s, planOf(s), clusterFacts(stack), kindOffersOf(stack.components)] as const;
  });

  it.each(cases)(
    "%s: every use of what a unit before offers is an edge, every edge a use or a hand-written edge with its reason",
    (_s, plan, cluster, kinds) => {
      expect(graphProblems(plan, cluster, kinds)).toEqual([]);
      expect(withDependencies(plan, cluster, kinds).unmet).toEqual([]);
    },
  );

  it("prod-large: the ingress VIP waits for MetalLB's pool because MetalLB says what a pool offers; without its kindOffers nothing does", () => {
    const [, plan, cluster, kinds] = cases.find(([s]) => s === "prod-large")!;
    expect(findUnit(plan, "openkeel-ingress-vip")!.dependsOn).toContain("metallb-pool");
    expect(graphProblems(plan, cluster, {})).toEqual([
      "openkeel-ingress-vip depends on metallb-pool, whose objects it does not use, and no hand-written edge says why",
    ]);
    expect(withDependencies(plan, cluster, {}).unmet).toEqual([{ unit: "openkeel-ingress-vip", fact: fact.loadBalancer }]);
    expect(withDependencies(plan, cluster, kinds).plan).toEqual(plan);
  });

  it("the check trips: an edge taken away, an edge nothing justifies, a hand-written edge without a reason or that an object shows", () => {
    const [, plan, cluster, kinds] = cases.find(([s]) => s === "prod-large")!;
    const edit = (name: string, change: (u: Unit) => void): Plan => {
      const copy = structuredClone(plan);
      change(findUnit(copy, name)!);
      return copy;
    };
    expect(
      graphProblems(
        edit("openkeel-chart", (u) => (u.dependsOn = u.dependsOn!.filter((d) => d !== "mariadb-operator"))),
        cluster,
        kinds,
      ),
    ).toEqual(["openkeel-chart uses admission k8s.mariadb.com/mariadbs of mariadb-operator, but does not depend on it"]);
    expect(
      graphProblems(
        edit("longhorn", (u) => u.dependsOn!.push("olm")),
        cluster,
        kinds,
      ),
    ).toEqual(["longhorn depends on olm, whose objects it does not use, and no hand-written edge says why"]);
    expect(
      graphProblems(
        edit("multus", (u) => (u.waitsFor![0].why = " ")),
        cluster,
        kinds,
      ),
    ).toEqual(["multus's hand-written edge to kube-ovn has no reason"]);
    expect(
      graphProblems(
        edit("openkeel-chart", (u) => (u.waitsFor = [{ unit: "openkeel-namespace", why: "its release's namespace" }])),
        cluster,
        kinds,
      ),
    ).toEqual(["openkeel-chart's hand-written edge to openkeel-namespace is shown by its objects (namespace openkeel): derive it instead"]);
    // and the Plan's invariants refuse a hand-written edge without a reason before anything is deployed
    expect(() => assertPlanInvariants(edit("multus", (u) => (u.waitsFor![0].why = "")))).toThrow(/multus waits for kube-ovn without a reason/);
  });

  it("prod-large: no chain of units longer than six, where the phase barriers make one through every phase", () => {
    const [, plan] = cases.find(([s]) => s === "prod-large")!;
    expect(longestChain(plan).units).toHaveLength(6);
    const barriers = longestChain(plan, "phase-barriers").units;
    expect(plan.phases.every((p) => p.units.some((u) => barriers.includes(u.name)))).toBe(true);
    expect(barriers.length).toBeGreaterThan(11);
  });

  it("what waits for what, read off the objects: Longhorn not for RabbitMQ's operators, OpenKeel's namespace not for Medik8s", () => {
    const [, plan] = cases.find(([s]) => s === "prod-large")!;
    const on = (u: string) => findUnit(plan, u)!.dependsOn ?? [];
    expect(on("longhorn")).not.toContain("rabbitmq-cluster-operator");
    expect(on("openkeel-namespace")).toEqual([]);
    expect(on("openkeel-chart")).toEqual([
      "mariadb-operator",
      "mariadb-operator-crds",
      "node-roles",
      "openkeel-namespace",
      "priority-classes",
      "rabbitmq-cluster-operator",
      "storage-classes",
    ]);
    // OLM v0.38.0 holds no cert-manager object (v0.37.0 did: test/integration/plan/unit-content.test.ts)
    expect(on("olm")).toEqual(["kube-ovn"]);
  });
});
