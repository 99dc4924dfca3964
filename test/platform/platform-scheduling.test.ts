// Where each platform component can run, per topology: its scheduling fields put through a small
// model of the scheduler's node filter, against the nodes as the node-roles phase labels them and
// as their roles taint them. Plus the NodeHealthChecks' selectors (§ 5.6).
import { isDrained } from "../../config/lifecycle";
import { describe, expect, it } from "vitest";
import { findUnit, type ManifestsUnit, type Plan } from "../../plan/plan";
import { HA_SEGMENT_LABEL, K8S_CONTROL_PLANE_LABEL, RESERVED_TAINT_KEY, roleLabelKey, ROLES, type Role } from "../../config/roles";
import { planStack } from "../../environments";
import { NHC_GROUPS, nhcSelector, type NhcGroup } from "../../platform/medik8s-groups";
import { KUBE_OVN_MASTER_LABEL_KEY } from "../../platform/kube-ovn";
import { VOLUME_CONSUMER_ROLES } from "../../platform/longhorn-names";
import { parseLonghornNodeSelector, parseLonghornTolerations } from "../helpers/longhorn";
import { fittingNodes, fits, matchesExpressions, nodeViews, type NodeView } from "../helpers/scheduling";
import { mutatedConfig, PRODUCTION_STACKS, shippedConfig } from "../helpers/stacks";
import type { LoadedConfig } from "../../config/schema";
import { objectsOf, valuesOf } from "../helpers/plans";

interface Case {
  name: string;
  cfg: LoadedConfig;
  plan: Plan;
  views: NodeView[];
}

function makeCase(name: string, cfg: LoadedConfig): Case {
  const plan = planStack(cfg).plan!;
  return { name, cfg, plan, views: nodeViews(cfg, plan) };
}

const PRODUCTION = PRODUCTION_STACKS.map((s) => makeCase(s, shippedConfig(s)));
const LAB = makeCase(
  "lab+realBackends",
  mutatedConfig("lab", (r) => (r.platform = { realBackends: true })),
);
/** Medium with a Masakari reserved host: cmp-03 carries openkeel.io/reserved. */
const WITH_RESERVED: Case = (() => {
  const c = makeCase("prod-medium+reserved", shippedConfig("prod-medium"));
  const v = c.views.find((x) => x.node.name === "cmp-03")!;
  v.taints = [...v.taints, { key: RESERVED_TAINT_KEY, value: "true", effect: "NoSchedule" }];
  return c;
})();
const ALL = [...PRODUCTION, LAB, WITH_RESERVED];

const withRole = (c: Case, ...roles: Role[]) =>
  c.views
    .filter((v) => v.node.roles.some((r) => roles.includes(r)))
    .map((v) => v.node.name)
    .sort();

const reserved = (c: Case) => c.views.filter((v) => v.taints.some((t) => t.key === RESERVED_TAINT_KEY)).map((v) => v.node.name);

function obj(plan: Plan, unit: string, kind: string, name?: string): any {
  return (findUnit(plan, unit) as ManifestsUnit).objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
}
describe.each(ALL)("$name", (c) => {
  it("KubeVirt: infra on the control plane, virt-handler on every compute node, reserved hosts included", () => {
    const kv = obj(c.plan, "kubevirt", "KubeVirt").spec;
    expect(fittingNodes(c.views, kv.infra.nodePlacement)).toEqual(withRole(c, "controlPlane"));
    expect(fittingNodes(c.views, kv.workloads.nodePlacement)).toEqual(withRole(c, "compute"));
    expect(Object.keys(kv.workloads.nodePlacement.nodeSelector)).toEqual([roleLabelKey("compute", c.plan.labelProfile)]);
    expect(kv.configuration).toMatchObject({
      evictionStrategy: "LiveMigrate",
      migrations: { parallelMigrationsPerCluster: 5, parallelOutboundMigrationsPerNode: 2 },
    });
  });

  it("CDI: infra on the control plane, importer/cloner/upload pods on every storage node", () => {
    const cdi = obj(c.plan, "cdi", "CDI").spec;
    expect(fittingNodes(c.views, cdi.infra)).toEqual(withRole(c, "controlPlane"));
    // A Masakari reserved host stays empty but for the DaemonSets (§ 5.6).
    expect(fittingNodes(c.views, cdi.workload)).toEqual(withRole(c, "storage").filter((n) => !reserved(c).includes(n)));
    expect(Object.keys(cdi.workload.nodeSelector)).toEqual([roleLabelKey("storage", c.plan.labelProfile)]);
  });

  it("Longhorn: engines, instance managers and CSI plugin wherever volumes are used; driver and UI on the control plane", () => {
    const v = valuesOf(c.plan, "longhorn");
    const systemManaged = {
      nodeSelector: parseLonghornNodeSelector(v.defaultSettings.systemManagedComponentsNodeSelector),
      tolerations: parseLonghornTolerations(v.defaultSettings.taintToleration),
    };
    const consumers = withRole(c, ...VOLUME_CONSUMER_ROLES);
    const sm = fittingNodes(c.views, systemManaged);
    for (const n of consumers) expect(sm, `system-managed components on ${n}`).toContain(n);
    // never restricted to storage nodes
    expect(sm.length).toBeGreaterThanOrEqual(consumers.length);
    const manager = fittingNodes(c.views, v.longhornManager);
    for (const n of consumers) expect(manager, `longhorn-manager on ${n}`).toContain(n);
    expect(fittingNodes(c.views, v.longhornDriver)).toEqual(withRole(c, "controlPlane"));
    expect(fittingNodes(c.views, v.longhornUI)).toEqual(withRole(c, "controlPlane"));
    expect(v.defaultSettings.createDefaultDiskLabeledNodes).toBe(true);
  });

  it("Longhorn disks on storage and controlPlane nodes; the storage tag, hence replicated volumes, on storage nodes only", () => {
    const labelled = c.views
      // `config` where a storage node also holds the capacity disk (Swift's HDD tier, test/openkeel/large-scale.test.ts)
      .filter((v) => ["true", "config"].includes(v.labels["node.longhorn.io/create-default-disk"]))
      .map((v) => v.node.name)
      .sort();
    expect(labelled).toEqual([...new Set([...withRole(c, "storage"), ...withRole(c, "controlPlane")])].sort());
    const patches = objectsOf(c.plan, "node-roles");
    const tagged = patches
      .filter((p) => p.metadata.annotations?.["node.longhorn.io/default-node-tags"] === '["storage"]')
      .map((p) => p.metadata.name)
      .sort();
    expect(tagged).toEqual(withRole(c, "storage"));
    const vm = obj(c.plan, "storage-classes", "StorageClass", "longhorn-vm");
    expect(vm.parameters.nodeSelector).toBe("storage");
    expect(valuesOf(c.plan, "longhorn").persistence.defaultNodeSelector).toEqual({ enable: true, selector: "storage" });
    // strict-local: the only replica sits on the pod's node, whichever disk node that is
    expect(obj(c.plan, "storage-classes", "StorageClass", "longhorn-local").parameters.nodeSelector).toBeUndefined();
  });

  it("snapshot-controller, cert-manager and the MariaDB operator on the control plane", () => {
    const cp = withRole(c, "controlPlane");
    const snap = obj(c.plan, "snapshot-controller", "Deployment").spec.template.spec;
    expect(fittingNodes(c.views, snap)).toEqual(cp);
    expect(snap.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey).toBe("kubernetes.io/hostname");
    const cm = valuesOf(c.plan, "cert-manager");
    for (const part of [cm, cm.webhook, cm.cainjector, cm.startupapicheck]) expect(fittingNodes(c.views, part)).toEqual(cp);
    const mdb = valuesOf(c.plan, "mariadb-operator");
    for (const part of [mdb, mdb.webhook, mdb.certController]) expect(fittingNodes(c.views, part)).toEqual(cp);
  });

  it("Multus on every node", () => {
    const ds = obj(c.plan, "multus", "DaemonSet").spec.template.spec;
    expect(fittingNodes(c.views, ds)).toEqual(c.views.map((v) => v.node.name).sort());
  });
});

describe.each([...PRODUCTION, WITH_RESERVED])("$name (production)", (c) => {
  it("Kube-OVN: MASTER_NODES are the internal IPs of exactly the labelled master nodes, all controlPlane, an odd number", () => {
    const v = valuesOf(c.plan, "kube-ovn");
    const [key, value] = v.MASTER_NODES_LABEL.split("=");
    expect(key).toBe(KUBE_OVN_MASTER_LABEL_KEY);
    const labelled = c.views.filter((x) => x.labels[key] === value);
    expect(v.MASTER_NODES.split(",").sort()).toEqual(labelled.map((x) => x.node.internalIP).sort());
    expect(labelled.length % 2).toBe(1);
    for (const m of labelled) expect(m.node.roles).toContain("controlPlane");
    // one member per zone when the control plane spans enough zones (large: losing a zone keeps a majority)
    const cpZones = new Set(c.views.filter((x) => x.node.roles.includes("controlPlane")).map((x) => x.node.zone));
    if (cpZones.size >= labelled.length) expect(new Set(labelled.map((m) => m.node.zone)).size).toBe(labelled.length);
  });

  it("the Medik8s operators on the control plane; SNR agents on every node they may fence", () => {
    const cp = withRole(c, "controlPlane");
    const subs = (findUnit(c.plan, "medik8s-operators") as ManifestsUnit).objects.filter((o) => o.kind === "Subscription") as any[];
    for (const s of subs) expect(fittingNodes(c.views, s.spec.config)).toEqual(cp);
    const snr = obj(c.plan, "medik8s-remediation", "SelfNodeRemediationConfig");
    // § 5.6: it tolerates everything, so every node, the Kubernetes-only control plane included
    const agents = fittingNodes(c.views, { tolerations: snr.spec.customDsTolerations });
    expect(agents).toEqual(c.views.map((v) => v.node.name).sort());
    expect(agents).toEqual(expect.arrayContaining(withRole(c, ...ROLES)));
  });

  it("operators installed from fixed upstream manifests (virt-operator, cdi-operator, RabbitMQ, OLM) land on untainted nodes: the control plane", () => {
    const untainted = c.views
      .filter((v) => v.taints.length === 0)
      .map((v) => v.node.name)
      .sort();
    expect(untainted.length).toBeGreaterThan(0);
    for (const n of untainted) expect(withRole(c, "controlPlane")).toContain(n);
  });

  it("NodeHealthChecks: every node in exactly one, a quorum's nodes in one with maxUnhealthy 1, Masakari's segment hosts in none", () => {
    const nhcs = (findUnit(c.plan, "medik8s-remediation") as ManifestsUnit).objects.filter((o) => o.kind === "NodeHealthCheck") as any[];
    // the first group of the node's, in NHC_GROUPS order: a hyperconverged node is the control plane's
    const groupOf = (node: (typeof c.views)[number]["node"]) =>
      NHC_GROUPS.find((g) => (g === "kubernetesControlPlane" ? node.kubernetesControlPlane : node.roles.includes(g)))!;
    for (const v of c.views) {
      const matching = nhcs.filter((n) => matchesExpressions(v.labels, n.spec.selector.matchExpressions));
      // a node in maintenance or retiring is left out on purpose, and one alone in its group (docs/node-lifecycle.md)
      const alone = c.views.filter((x) => groupOf(x.node) === groupOf(v.node)).length === 1;
      if (isDrained(v.node.state) || alone) {
        expect(matching, v.node.name).toEqual([]);
        continue;
      }
      expect(
        matching.map((n) => n.metadata.name),
        v.node.name,
      ).toHaveLength(1);
      const group = groupOf(v.node);
      // in a zoned stack, a group that holds no quorum has one check per zone holding two or more of its nodes (issue 39), the rest one (issue 45)
      const quorum = group === "controlPlane" || group === "kubernetesControlPlane";
      const zoneMates = c.views.filter((x) => groupOf(x.node) === group && x.node.zone !== undefined && x.node.zone === v.node.zone).length;
      const zone = zoneMates >= 2 && !quorum ? `-${v.node.zone}` : "";
      expect(matching[0].metadata.name, v.node.name).toBe(`openkeel-${group.replace(/[A-Z]/g, (x) => `-${x.toLowerCase()}`)}${zone}`);
      if (v.node.roles.includes("controlPlane") || v.node.kubernetesControlPlane) expect(matching[0].spec.maxUnhealthy, v.node.name).toBe(1);
      const inSegment = { ...v.labels, [HA_SEGMENT_LABEL]: "segment-uuid" };
      expect(nhcs.filter((n) => matchesExpressions(inSegment, n.spec.selector.matchExpressions))).toEqual([]);
    }
    const tmpl = obj(c.plan, "medik8s-remediation", "SelfNodeRemediationTemplate");
    expect(tmpl.spec.template.spec.remediationStrategy).toBe("OutOfServiceTaint");
    for (const n of nhcs) expect(n.spec.remediationTemplate).toMatchObject({ kind: tmpl.kind, name: tmpl.metadata.name, namespace: tmpl.metadata.namespace });
  });
});

describe("NodeHealthCheck selectors over every combination of roles", () => {
  it.each(["default", "hardened"] as const)("%s keys: exactly one check per node (its first group), none for a segment host", (profile) => {
    for (let mask = 0; mask < 1 << (ROLES.length + 1); mask++) {
      const roles = ROLES.filter((_, i) => mask & (1 << i));
      const k8sControlPlane = (mask & (1 << ROLES.length)) !== 0;
      if (roles.length === 0 && !k8sControlPlane) continue; // node-without-role: refused by the plan checks
      for (const segment of [false, true]) {
        const labels: Record<string, string> = Object.fromEntries(roles.map((r) => [roleLabelKey(r, profile), ""]));
        if (k8sControlPlane) labels[K8S_CONTROL_PLANE_LABEL] = "";
        if (segment) labels[HA_SEGMENT_LABEL] = "s";
        const matching = NHC_GROUPS.filter((g: NhcGroup) => matchesExpressions(labels, nhcSelector(g, profile)));
        const first = NHC_GROUPS.find((g) => (g === "kubernetesControlPlane" ? k8sControlPlane : roles.includes(g)));
        expect(matching, `${roles.join("+")}${k8sControlPlane ? "+k8s" : ""}${segment ? " in a segment" : ""}`).toEqual(segment ? [] : [first]);
      }
    }
  });
});

describe("the scheduler model", () => {
  const view = (labels: Record<string, string>, taints: NodeView["taints"] = []) => ({ labels, taints });
  it("honours selectors, required affinity terms and taints", () => {
    expect(fits(view({ a: "" }), { nodeSelector: { a: "" } })).toBe(true);
    expect(fits(view({ a: "x" }), { nodeSelector: { a: "" } })).toBe(false);
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: "a", operator: "Exists" as const }] },
            { matchExpressions: [{ key: "b", operator: "Exists" as const }] },
          ],
        },
      },
    };
    expect(fits(view({ b: "" }), { affinity })).toBe(true);
    expect(fits(view({ c: "" }), { affinity })).toBe(false);
    const taint = { key: "t", effect: "NoSchedule" as const };
    expect(fits(view({}, [taint]), {})).toBe(false);
    expect(fits(view({}, [taint]), { tolerations: [{ key: "t", operator: "Exists", effect: "NoSchedule" }] })).toBe(true);
    expect(fits(view({}, [taint]), { tolerations: [{ operator: "Exists", effect: "NoSchedule" }] })).toBe(true);
    expect(fits(view({}, [taint]), { tolerations: [{ key: "t", operator: "Exists", effect: "NoExecute" }] })).toBe(false);
  });
});
