// The placement report (issue 7): the design's § 2 matrix per topology, every placement check
// tripped, and the report files (placement.md, placement.svg).
import { nodeAgentTolerations } from "../../config/lifecycle";
import { nodeAgentTaints } from "../../environments/resolve";
import { describe, expect, it } from "vitest";
import { findUnit, helmReleaseUnit, manifestsUnit, type ManifestsUnit, type Plan } from "../../plan/plan";
import { placementReport, type PlacementReport } from "../../placement/report";
import { placementData } from "../../placement/data";
import { NO, placementMarkdown, placementSvg, SVG_NODE_COLUMNS, YES } from "../../placement/picture";
import { planComponents } from "../../placement/workloads";
import { parseLonghornNodeSelector, parseLonghornTolerations } from "../../platform/longhorn-names";
import { resolveEnvironment, planStack, resolveStack } from "../../environments";
import { composePlan } from "../../environments/compose";
import type { LoadedConfig } from "../../config/schema";
import { checkMatrix } from "../helpers/design-matrix";
import { generatedProductionStack } from "../../bench/generate";
import { loadConfig } from "../../config/load";
import { withDesignUnits, type DesignOpts } from "../helpers/design-units";
import { mutatedConfig, SHIPPED_STACKS, shippedConfig } from "../helpers/stacks";
import { parseXml } from "../helpers/xml";
import { planOf, valuesOf } from "../helpers/plans";
import { STACK_DECLARATIONS } from "../../environments/registry";

/** A stack's plan with the design's units (§ 4.4, § 5.1, § 5.3), as the topology allows. */
function designPlan(cfg: LoadedConfig, opts: DesignOpts = {}) {
  // The environment's Plan without the placement checks (they may be what a test trips).
  const resolved = resolveStack(cfg);
  const topology = resolved.topology;
  const base = composePlan(resolved, []).plan;
  const prov = cfg.nodes.filter((n) => n.roles.includes("provisioning")).length;
  const containers = cfg.nodes.some((n) => n.roles.includes("containers"));
  const cp = cfg.nodes.filter((n) => n.roles.includes("controlPlane")).length;
  const plan = withDesignUnits(base, {
    ironic: prov > 0,
    conductorReplicas: prov,
    zun: containers,
    quorum: Math.min(3, cp),
    ...opts,
  });
  return { plan, topology };
}

function report(plan: Plan, topology: ReturnType<typeof planStack>["topology"]): PlacementReport {
  return placementReport(plan, topology, planComponents(plan, resolveEnvironment().readers), resolveEnvironment(plan.environment).placementChecks);
}

const STACKS = SHIPPED_STACKS;

describe("the design's § 2 matrix, per topology", () => {
  it.each(STACKS)("%s: every component reaches exactly the nodes of its design roles", (stack) => {
    const cfg = shippedConfig(stack);
    const { plan, topology } = designPlan(cfg);
    const r = report(plan, topology);
    expect(r.checks).toEqual([]);
    checkMatrix(cfg, r, expect);
    expect(r.placements.length).toBeGreaterThan(20);
  });

  it("prod-large: the Kubernetes-only control plane runs no OpenKeel component, only the every-node DaemonSets", () => {
    const { plan, topology } = designPlan(shippedConfig("prod-large"));
    const onK8sCp = report(plan, topology)
      .placements.filter((p) => p.eligible.includes("k8s-cp-1"))
      .map((p) => p.component.name);
    expect(onK8sCp.sort()).toEqual([
      "kubevirt-cr/kubernetes-control-plane/remediates",
      "kubevirt-cr/self-node-remediation-config/self-node-remediation-agent",
      "multus/kube-multus-ds",
    ]);
  });

  it("prod-medium: the Ironic conductor lands on prov-1 only, and nothing of the tenants does", () => {
    const { plan, topology } = designPlan(shippedConfig("prod-medium"));
    const r = report(plan, topology);
    const onProv = r.placements.filter((p) => p.eligible.includes("prov-1")).map((p) => p.component.name);
    expect(onProv.sort()).toEqual(
      [
        "kubevirt-cr/provisioning/remediates",
        "kubevirt-cr/self-node-remediation-config/self-node-remediation-agent",
        "longhorn/longhorn-csi-plugin+instance-managers",
        // the CSI sidecars follow the CSI plugin at 1.12.1 (issue 22 item 4: a deviation of § 2.3)
        "longhorn/csi-attacher",
        "longhorn/csi-provisioner",
        "longhorn/csi-resizer",
        "longhorn/csi-snapshotter",
        "longhorn/longhorn-manager",
        // its hook Jobs take the manager's tolerations (issue 22, item 7)
        "longhorn/longhorn-pre-upgrade",
        "longhorn/longhorn-post-upgrade+uninstall",
        "multus/kube-multus-ds",
        "openkeel-ironic/conductor",
      ].sort(),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Each check, tripped.

/** One more NodeHealthCheck, selecting nodes by one expression. */
function addNodeHealthCheck(plan: Plan, name: string, expression: { key: string; operator: string; values?: string[] }) {
  (findUnit(plan, "kubevirt-cr") as ManifestsUnit).objects.push({
    apiVersion: "remediation.medik8s.io/v1alpha1",
    kind: "NodeHealthCheck",
    metadata: { name },
    spec: { selector: { matchExpressions: [expression] } },
  });
}

function checksOf(stack: string, mutate: (plan: Plan) => void, opts: DesignOpts = {}, cfg = shippedConfig(stack)) {
  const { plan, topology } = designPlan(cfg, opts);
  mutate(plan);
  return report(plan, topology).checks;
}

describe("placement checks", () => {
  it("a selector with a typo: no eligible node, named with every node it cannot reach", () => {
    const checks = checksOf("prod-medium", (plan) => {
      valuesOf(plan, "openkeel-nova").placement.api.nodeSelector = { "node-restriction.kubernetes.io/openkeel-control-plan": "" };
    });
    // the API and its migration Job, which the chart places as the API (§ 5.2)
    expect(checks.map((c) => c.code)).toEqual(["placement-no-node", "placement-no-node"]);
    expect(checks[0].level).toBe("error");
    expect(checks[0].message).toMatch(/^openkeel-nova\/api \(Deployment, 3 replica\(s\)\) can run on no node: /);
    expect(checks[1].message).toMatch(/^openkeel-nova\/db-sync \(Pods, 1 replica\(s\)\) can run on no node: /);
    for (const n of ["cp-1", "cp-2", "cp-3", "cmp-01", "net-1", "prov-1"]) expect(checks[0].message).toContain(n);
    expect(checks[0].message).toContain("no label node-restriction.kubernetes.io/openkeel-control-plan");
  });

  it("a wrong label in global.nodeRoles misplaces every role-placed component of the release", () => {
    const wrong = {
      nodeRoles: { roles: { controlPlane: { label: "node-role.openkeel.io/control-plane" }, storage: { label: "node-role.openkeel.io/storage" } } },
    };
    const checks = checksOf("prod-small", () => {}, { values: (name, v) => name === "openkeel-swift" && (v.global = wrong) });
    expect(checks.map((c) => `${c.code} ${c.message.split(" ")[0]}`)).toEqual([
      "placement-no-node openkeel-swift/proxy",
      "placement-no-node openkeel-swift/storage",
    ]);
    // changed after the release is built, the values move nothing: § 5.2 lists no Swift component,
    // so its chart reads none of them and the patches already carry the labels
    expect(checksOf("prod-small", (plan) => (valuesOf(plan, "openkeel-swift").global = wrong))).toEqual([]);
  });

  it("required anti-affinity with more replicas than eligible nodes: 2 Ironic conductors, 1 provisioning node", () => {
    // The okadm plan check refuses this at config level; the placement check catches it in the values.
    const checks = checksOf("prod-medium", (plan) => {
      valuesOf(plan, "openkeel-ironic").replicas.conductor = 2;
    });
    expect(checks.map((c) => c.code)).toEqual(["placement-anti-affinity"]);
    expect(checks[0].message).toMatch(
      /^openkeel-ironic\/conductor \(StatefulSet, 2 replica\(s\)\) has required anti-affinity on kubernetes\.io\/hostname but only 1 node\(s\) can take it \(prov-1\)/,
    );
    expect(checks[0].message).toContain("cp-1");
  });

  it("required anti-affinity from a CR (MariaDB antiAffinityEnabled) counts too", () => {
    const checks = checksOf("prod-medium", (plan) => {
      (findUnit(plan, "kubevirt-cr") as ManifestsUnit).objects.push({
        apiVersion: "k8s.mariadb.com/v1alpha1",
        kind: "MariaDB",
        metadata: { name: "galera", namespace: "openkeel" },
        spec: {
          replicas: 5,
          nodeSelector: { "node-restriction.kubernetes.io/openkeel-control-plane": "" },
          affinity: { antiAffinityEnabled: true },
        },
      });
    });
    expect(checks.map((c) => c.code)).toEqual(["placement-anti-affinity"]);
    expect(checks[0].message).toContain("galera/galera (StatefulSet, 5 replica(s))");
  });

  it("a DaemonSet that misses a node of a role it must cover: Longhorn's manager without the provisioning toleration", () => {
    const checks = checksOf("prod-medium", (plan) => {
      const v = valuesOf(plan, "longhorn");
      v.longhornManager.tolerations = v.longhornManager.tolerations.filter((t: { key: string }) => !t.key.endsWith("/provisioning"));
    });
    expect(checks.map((c) => c.code)).toEqual(["placement-daemonset-coverage"]);
    expect(checks[0].message).toBe(
      "longhorn/longhorn-manager (DaemonSet) must run on every node of controlPlane, compute, storage, containers, provisioning (design § 2) but misses prov-1 (taint node-role.openkeel.io/provisioning:NoSchedule not tolerated)",
    );
  });

  it("NodeHealthChecks that overlap: a node selected twice", () => {
    const checks = checksOf("prod-medium", (plan) => {
      addNodeHealthCheck(plan, "everything", { key: "kubernetes.io/hostname", operator: "In", values: ["cp-2", "net-1"] });
    });
    expect(checks.map((c) => c.code)).toEqual(["placement-nhc-overlap", "placement-nhc-overlap"]);
    expect(checks[0].message).toBe(
      "node cp-2 is selected by 2 NodeHealthChecks (kubevirt-cr/control-plane/remediates, kubevirt-cr/everything/remediates): they would remediate it concurrently",
    );
    expect(checks[1].message).toMatch(
      /^node net-1 is selected by 2 NodeHealthChecks \(kubevirt-cr\/network\/remediates, kubevirt-cr\/everything\/remediates\)/,
    );
  });

  it("a NodeHealthCheck that selects no node is not an error (a role the topology lacks)", () => {
    const checks = checksOf("prod-small", (plan) => {
      addNodeHealthCheck(plan, "provisioning", { key: "node-restriction.kubernetes.io/openkeel-provisioning", operator: "Exists" });
    });
    expect(checks).toEqual([]);
  });

  it("a DaemonSet that can run nowhere fails as no eligible node: virt-handler without the compute toleration", () => {
    const checks = checksOf("prod-medium", (plan) => {
      const kv = (findUnit(plan, "kubevirt-cr") as ManifestsUnit).objects.find((o) => o.kind === "KubeVirt")! as any;
      kv.spec.workloads.nodePlacement.tolerations = [];
    });
    expect(checks.map((c) => c.code)).toEqual(["placement-no-node"]);
    expect(checks[0].message).toContain("cmp-01, cmp-02, cmp-03 (taint node-role.openkeel.io/compute:NoSchedule not tolerated)");
  });

  it("a DaemonSet spanning roles that misses one: the chassis selecting the compute label only", () => {
    const checks = checksOf("prod-large", (plan) => {
      valuesOf(plan, "openkeel-neutron").chassis.nodeSelector = { "node-restriction.kubernetes.io/openkeel-compute": "" };
    });
    expect(checks.map((c) => c.code)).toEqual(["placement-daemonset-coverage"]);
    expect(checks[0].message).toContain("misses net-1, net-2, net-3");
  });

  it("the chassis tolerates every taint: with no nodeSelector it may run on every node, and that is forbidden", () => {
    const checks = checksOf("prod-large", (plan) => {
      delete valuesOf(plan, "openkeel-neutron").chassis;
    });
    expect(checks.map((c) => c.code)).toEqual(["placement-forbidden"]);
    expect(checks[0].message).toMatch(
      /^openkeel-neutron\/chassis \(DaemonSet\) may run on ok-cp-1, .*sto-1, .*prov-1, .*k8s-cp-1, .*which lack the compute or network or containers role/,
    );
  });

  it("the chassis ignores placement.chassis: a role there moves nothing", () => {
    const plan = designPlan(shippedConfig("prod-large")).plan;
    valuesOf(plan, "openkeel-neutron").placement.chassis = { role: "storage" };
    const chassis = report(plan, resolveStack(shippedConfig("prod-large")).topology).placements.find((p) => p.component.name === "openkeel-neutron/chassis")!;
    expect(chassis.component.scheduling.tolerations).toEqual([{ operator: "Exists" }]);
    expect(new Set(chassis.eligible)).toEqual(new Set(plan.nodes.filter((n) => n.roles.includes("compute") || n.roles.includes("network")).map((n) => n.name)));
  });

  it("Masakari's nodePlacement.<x>: its nodeSelector wins over the role, its tolerations are added to the role's (§ 5.2)", () => {
    const cfg = mutatedConfig("prod-medium", (r) => {
      r.services.masakari = {
        values: { nodePlacement: { api: { nodeSelector: { "topology.kubernetes.io/zone": "z" }, tolerations: [{ key: "gpu", operator: "Exists" }] } } },
      };
    });
    const plan = composePlan(resolveStack(cfg), []).plan;
    const api = planComponents(plan, resolveEnvironment(cfg.environment).readers).find((c) => c.name === "openkeel-masakari/api")!;
    // raw values merge over the release's own nodePlacement.api.nodeSelector, as Helm merges maps
    expect(api.scheduling.nodeSelector).toEqual({ "node-restriction.kubernetes.io/openkeel-control-plane": "", "topology.kubernetes.io/zone": "z" });
    expect(api.scheduling.tolerations).toEqual([
      { key: "node-role.openkeel.io/control-plane", operator: "Exists", effect: "NoSchedule" },
      { key: "gpu", operator: "Exists" },
    ]);
  });

  // the § 5.1 values changed before the release is built: the metadata and BGP agents' placement
  // reaches them as the release's post-render patch (§ 5.2 does not list them), derived from these
  it.each<[string, string, DesignOpts["values"]]>([
    [
      "the metadata agent",
      "openkeel-neutron/metadataAgent",
      // the node agent tolerations kept: only the reserved host's is missing
      (name, v) => name === "openkeel-neutron" && (v.placement.metadataAgent.extraTolerations = nodeAgentTolerations(nodeAgentTaints())),
    ],
    [
      "Nova's compute agent",
      "openkeel-nova/computeAgent",
      (name, v) => name === "openkeel-nova" && (v.placement.computeAgent.extraTolerations = nodeAgentTolerations(nodeAgentTaints())),
    ],
    [
      "the BGP agent",
      "openkeel-neutron/bgpAgent",
      (name, v) => {
        if (name !== "openkeel-neutron") return;
        v.placement.bgpAgent = { roles: ["network", "compute"], enabled: true, extraTolerations: nodeAgentTolerations(nodeAgentTaints()) };
        v.bgpAgent = { enabled: true };
      },
    ],
  ])("a hypervisor agent that does not tolerate Masakari reserved hosts: %s", (_what, component, values) => {
    const checks = checksOf("prod-medium", () => {}, { values });
    expect(checks.map((c) => c.code)).toEqual(["placement-reserved-host"]);
    expect(checks[0].message).toMatch(new RegExp(`^${component} \\(DaemonSet\\) does not tolerate openkeel\\.io/reserved=true:NoSchedule`));
  });

  it("Galera outside the control plane is forbidden", () => {
    const checks = checksOf("prod-medium", (plan) => {
      const infra = valuesOf(plan, "openkeel-chart").infrastructure;
      infra.mariadb.placement = { roles: ["controlPlane", "compute"], antiAffinity: "required" };
    });
    expect(checks.map((c) => c.code)).toEqual(["placement-forbidden"]);
    expect(checks[0].message).toMatch(/^openkeel-chart\/mariadb .* may run on cmp-01, cmp-02, cmp-03, which lack the controlPlane role/);
  });

  it("RabbitMQ with a raw selector that widens it is forbidden too", () => {
    const checks = checksOf(
      "prod-small",
      (plan) => {
        valuesOf(plan, "openkeel-chart").infrastructure.rabbitmq.placement = { nodeSelector: {}, antiAffinity: "required" };
      },
      {},
      mutatedConfig("prod-small", (raw) => {
        raw.nodes[2].roles = ["compute", "network", "storage", "containers"];
        raw.nodes.push({ ...raw.nodes[0], name: "node-4", internalIP: "10.20.0.14" });
      }),
    );
    expect(checks.map((c) => c.code)).toEqual(["placement-forbidden"]);
    expect(checks[0].message).toMatch(/^openkeel-chart\/rabbitmq .* may run on node-3, which lack the controlPlane role/);
  });

  it("the Ironic conductor outside provisioning nodes is forbidden", () => {
    const checks = checksOf("prod-large", (plan) => {
      valuesOf(plan, "openkeel-ironic").placement.conductor = { roles: ["provisioning", "controlPlane"], antiAffinity: "required" };
    });
    expect(checks.map((c) => c.code)).toEqual(["placement-forbidden"]);
    expect(checks[0].message).toContain("ok-cp-1");
  });

  it("tenant workloads on a provisioning node are forbidden: a virt-handler that tolerates everything", () => {
    const checks = checksOf("prod-medium", (plan) => {
      const kv = (findUnit(plan, "kubevirt-cr") as ManifestsUnit).objects.find((o) => o.kind === "KubeVirt")! as any;
      kv.spec.workloads.nodePlacement = { tolerations: [{ operator: "Exists" }] };
    });
    expect(checks.map((c) => c.code)).toEqual(["placement-forbidden"]);
    expect(checks[0].message).toMatch(/^kubevirt-cr\/kubevirt\/virt-handler \(DaemonSet\) may run on prov-1, which carry the provisioning role/);
    // prov-1 is dedicated to provisioning: the agent's own placement is at fault, no node's roles
    expect(checks[0].path).toBeUndefined();
  });

  it("tenant workloads on a node that is both compute and provisioning are forbidden", () => {
    const cfg = mutatedConfig("lab", (raw) => {
      raw.nodes[0].roles = ["controlPlane", "compute", "network", "storage", "provisioning"];
      raw.services = { ironic: { enabled: false } };
    });
    const checks = checksOf("lab", () => {}, { ironic: false }, cfg);
    expect(checks.map((c) => `${c.code} ${c.message.split(" ")[0]}`)).toEqual([
      "placement-forbidden kubevirt-cr/kubevirt/virt-handler",
      "placement-forbidden openkeel-nova/computeAgent",
    ]);
    // the node shared with provisioning is the stack's mistake: its roles are the key path, not the agent's placement
    expect(checks.map((c) => c.path)).toEqual(["openkeel:nodes[0].roles", "openkeel:nodes[0].roles"]);
  });
});

describe("roles the topology lacks", () => {
  it("no node of the component's roles at all (no storage node): not an error, the plan checks judge the topology", () => {
    const cfg = mutatedConfig("prod-medium", (r) => r.nodes.forEach((n: any) => (n.roles = n.roles.filter((x: string) => x !== "storage"))));
    const { plan, topology } = designPlan(cfg);
    const r = report(plan, topology);
    expect(r.placements.find((p) => p.component.name.endsWith("cdi-importer+cloner+upload"))!.eligible).toEqual([]);
    expect(r.checks).toEqual([]);
  });

  it("a lab whose nodes carry no role must run everything: a role selector there has no node", () => {
    const cfg = mutatedConfig("lab", (r) => (r.nodes[0].roles = []));
    const checks = checksOf("lab", () => {}, { quorum: 1 }, cfg);
    expect(checks.length).toBeGreaterThan(0);
    expect(new Set(checks.map((c) => c.code))).toEqual(new Set(["placement-no-node"]));
    expect(checks.map((c) => c.message).join("\n")).toContain(
      "openkeel-nova/api (Deployment, 3 replica(s)) can run on no node: openkeel-lab-control-plane (no label node-role.openkeel.io/control-plane)",
    );
  });
});

describe("Longhorn's string formats (longhorn-manager types/setting.go)", () => {
  it("tolerations: key:Effect is Exists, key=value:Effect is Equal, ';' separates, spaces allowed", () => {
    expect(parseLonghornTolerations("a/b:NoSchedule; c=d:NoExecute ;e=:NoSchedule")).toEqual([
      { key: "a/b", operator: "Exists", effect: "NoSchedule" },
      { key: "c", operator: "Equal", value: "d", effect: "NoExecute" },
      { key: "e", operator: "Equal", value: "", effect: "NoSchedule" },
    ]);
  });
  it("node selector: key:value pairs, key: for an empty value", () => {
    expect(parseLonghornNodeSelector("node-role.openkeel.io/storage:;zone:a")).toEqual({ "node-role.openkeel.io/storage": "", zone: "a" });
  });
});

// ---------------------------------------------------------------------------------------------
// The report files.

describe("placement.md and placement.svg", () => {
  const cfg = shippedConfig("prod-medium");
  const { plan, topology } = designPlan(cfg);
  const r = report(plan, topology);

  it("are deterministic", () => {
    const again = report(designPlan(cfg).plan, topology);
    expect(placementMarkdown(placementData(again))).toBe(placementMarkdown(placementData(r)));
    expect(placementSvg(placementData(again))).toBe(placementSvg(placementData(r)));
  });

  it("the markdown grid has a column per node, grouped by role, and a row per component", () => {
    const md = placementMarkdown(placementData(r));
    const header = md.split("\n").find((l) => l.startsWith("| component |"))!;
    const nodesInHeader = [...header.matchAll(/\| ([a-z0-9-]+)<br>/g)].map((m) => m[1]);
    expect(nodesInHeader).toEqual(["cp-1", "cp-2", "cp-3", "cmp-01", "cmp-02", "cmp-03", "net-1", "net-2", "prov-1"]);
    const row = md.split("\n").find((l) => l.startsWith("| openkeel-ironic/conductor |"))!;
    const cells = row
      .split("|")
      .slice(-10, -1)
      .map((c) => c.trim());
    expect(cells).toEqual([NO, NO, NO, NO, NO, NO, NO, NO, YES]);
    for (const p of r.placements) expect(md).toContain(`| ${p.component.name} |`);
  });

  it("the SVG is well-formed XML with a column per node and a row per component", () => {
    const svg = placementSvg(placementData(r));
    const root = parseXml(svg);
    expect(root.name).toBe("svg");
    expect(root.attrs.xmlns).toBe("http://www.w3.org/2000/svg");
    const all = root.descendants();
    const nodeNames = all.filter((e) => e.name === "text" && e.attrs.class === "node").map((e) => e.text());
    expect(nodeNames).toEqual(r.nodes.map((n) => n.name));
    const rows = all.filter((e) => e.name === "g" && e.attrs.class === "component");
    expect(rows.map((g) => g.attrs["data-component"])).toEqual(r.placements.map((p) => p.component.name));
    for (const [i, g] of rows.entries()) {
      const cells = g.descendants().filter((e) => e.name === "circle");
      expect(cells).toHaveLength(r.nodes.length);
      const yes = cells.map((c, j) => (c.attrs.class === "cell yes" ? r.nodes[j].name : null)).filter((x) => x !== null);
      expect(yes).toEqual(r.placements[i].eligible);
    }
    const groups = all.filter((e) => e.name === "g" && e.attrs.class === "group").map((g) => g.attrs["data-group"]);
    expect(groups).toEqual(["controlPlane", "compute+storage", "network", "provisioning"]);
  });

  it("a component added is its own lines: no other row, cell or legend moves (issue 47 item 4: review shows the row, not a reflow)", () => {
    const data = placementData(r);
    /** Lines of `b` that `a` lacks, each as often as it lacks it. */
    const minus = (a: string[], b: string[]) => {
      const left = new Map<string, number>();
      for (const line of a) left.set(line, (left.get(line) ?? 0) + 1);
      return b.filter((line) => {
        const n = left.get(line) ?? 0;
        left.set(line, n - 1);
        return n <= 0;
      });
    };
    const before = placementSvg(data).split("\n");
    for (const at of [1, Math.floor(data.components.length / 2), data.components.length]) {
      const copy = data.components[Math.min(at, data.components.length - 1)];
      const added = { ...copy, name: `${copy.unit}/a-component-added-with-a-name-longer-than-any-other-row-of-the-picture-has` };
      const after = placementSvg({ ...data, components: [...data.components.slice(0, at), added, ...data.components.slice(at)] }).split("\n");
      const gone = minus(after, before);
      const row = after.slice(after.findIndex((l) => l.includes(`data-component="${added.name}"`)));
      const own = row.slice(0, row.indexOf("</g>") + 1);
      expect(own).toHaveLength(data.nodes.length + 3);
      // what changes besides: the canvas's height, the count of components, the rows' background and the groups' ends
      const changed = [
        /^<svg .* height="\d+" viewBox=/,
        /^<text .* fill="#444444">hardened role labels; .*, \d+ component\(s\)<\/text>$/,
        /^<rect .* height="\d+" fill="url\(#placement-rows\)"\/>$/,
        /^(<\/g>)+$/,
      ];
      expect(gone).toEqual(changed.map((re) => expect.stringMatching(re)));
      const extra = minus([...own, '<g transform="translate(0 20)">'], minus(before, after));
      expect(extra).toEqual(changed.map((re) => expect.stringMatching(re)));
    }
  });

  it("names with XML specials are escaped", () => {
    const odd = { ...r, stack: `a<b & "c">` };
    expect(() => parseXml(placementSvg(placementData(odd)))).not.toThrow();
  });

  it(`beyond ${SVG_NODE_COLUMNS} nodes the SVG draws a column per kind of node: every node in one column, each column's cells its nodes' own`, () => {
    const g = generatedProductionStack(300);
    const big = planStack(loadConfig(structuredClone(g.raw), { stack: g.stack, file: `stacks/Pulumi.${g.stack}.yaml` }, STACK_DECLARATIONS));
    const data = placementData(big.placement!);
    const root = parseXml(placementSvg(data));
    const all = root.descendants();
    const columns = all.filter((e) => e.name === "text" && e.attrs.class === "node").map((e) => e.text());
    expect(columns.length).toBeGreaterThan(3);
    expect(columns.length).toBeLessThan(data.nodes.length / 4);
    // each column names its first and last node and their count; together, every node once, in order
    const covered = columns.flatMap((c) => {
      const m = /^(\S+) … (\S+) \((\d+)\)$/.exec(c);
      if (!m) return [c];
      const from = data.nodes.findIndex((n) => n.name === m[1]);
      expect(data.nodes[from + Number(m[3]) - 1].name).toBe(m[2]);
      return data.nodes.slice(from, from + Number(m[3])).map((n) => n.name);
    });
    expect(covered).toEqual(data.nodes.map((n) => n.name));
    expect(all.find((e) => e.name === "text" && /node\(s\) in \d+ columns/.test(e.text()))).toBeDefined();
    // a column's cell is what the component may do on every node of it
    const sizes = columns.map((c) => Number(/\((\d+)\)$/.exec(c)?.[1] ?? 1));
    const rows = all.filter((e) => e.name === "g" && e.attrs.class === "component");
    for (const [i, row] of rows.entries()) {
      const c = data.components[i];
      const cells = row.descendants().filter((e) => e.name === "circle");
      expect(cells).toHaveLength(columns.length);
      let at = 0;
      for (const [k, cell] of cells.entries()) {
        for (const node of data.nodes.slice(at, at + sizes[k]))
          expect(cell.attrs.class === "cell yes", `${c.name} on ${node.name}`).toBe(c.eligible.includes(node.name));
        at += sizes[k];
      }
    }
  });
});

describe("placement readers", () => {
  it("every unit of every shipped stack is claimed by a reader", () => {
    for (const stack of SHIPPED_STACKS) {
      const plan = planOf(stack);
      expect(() => planComponents(plan, resolveEnvironment(plan.environment).readers), stack).not.toThrow();
    }
  });

  it("a unit, or an object kind, that no reader claims is refused instead of escaping the checks", () => {
    const plan = planOf("prod-medium");
    const platform = plan.phases.find((p) => p.name === "platform")!;
    platform.units.push(
      helmReleaseUnit(
        "sriov",
        "openkeel:platform:SriovNetworkOperator",
        "sriov",
        { repository: "https://example.invalid", chart: "sriov", version: "1.0.0" },
        {},
      ),
    );
    expect(() => planComponents(plan, resolveEnvironment("talos-production").readers)).toThrow(
      /no reader claims unit sriov \(openkeel:platform:SriovNetworkOperator\)/,
    );
    platform.units.pop();
    platform.units.push(manifestsUnit("gadget", "openkeel:platform:Gadget", [{ apiVersion: "example.io/v1", kind: "Gadget", metadata: { name: "g" } }]));
    expect(() => planComponents(plan, resolveEnvironment("talos-production").readers)).toThrow(/no reader claims Gadget g of unit gadget/);
  });
});
