// The OpenKeel phases of every shipped stack: which releases exist, in which order, and the values
// that carry each decision of the node placement design (D1–D8) per topology.
import { describe, expect, it } from "vitest";
import type { PlacementValue } from "../../../config/placement";
import { resolvePlacement } from "../../../placement/chart-helper";
import { PHASES, phase } from "../../../plan/plan";
import { renderPlan } from "../../../render/rendered";
import { chassisLabelKey, ROLES, roleLabelKey, type Role } from "../../../config/roles";
import { MARIADB_IMAGE, OPENKEEL_CHART_REPOSITORY, OPENKEEL_CHARTS, RABBITMQ_IMAGE } from "../../../platform/versions";
import { checkValues } from "../../../openkeel/contract";
import { isUnlisted } from "../../../openkeel/unlisted";
import { infrastructureContract, infrastructureValues } from "../../../openkeel/infrastructure";
import { OPENKEEL_SERVICES } from "../../../openkeel/services";
import { resolveEnvironment, planStack, resolveStack } from "../../../environments";
import { composePlan } from "../../../environments/compose";
import { placementReport } from "../../../placement/report";
import { planComponents } from "../../../placement/workloads";
import { dependsOnUnit, MOCK_SECRET_VALUE, runProgram } from "../../helpers/pulumi";
import { mutatedConfig, PRODUCTION_STACKS, pulumiConfigOf, SHIPPED_STACKS, shippedConfig, shippedRaw } from "../../helpers/stacks";
import program from "../../../index";
import { contextOf, object, objectsOf, openkeelReleases, planOf, release, valuesOf, shippedPlan } from "../../helpers/plans";

const PRODUCTION = PRODUCTION_STACKS;
/** § 5.6: the toleration of Masakari reserved hosts. */
const RESERVED = { key: "openkeel.io/reserved", operator: "Exists", effect: "NoSchedule" };
/** A disabled hypervisor's taint (§ 4.1) and NMO's drain taint: every node agent stays (issue 21). */
const STATE = [
  { key: "openkeel.io/compute-disabled", operator: "Exists", effect: "NoSchedule" },
  { key: "medik8s.io/drain", operator: "Exists", effect: "NoSchedule" },
];

const values = valuesOf;

/** The pod spec a release's post-render patch gives a component § 5.2 does not list (openkeel/unlisted.ts). */
function unlistedPatch(plan: ReturnType<typeof planOf>, name: string, target: string): any {
  const p = (release(plan, name).postRender ?? []).find((x) => x.target.name === target && x.why.startsWith("§ 5.2 does not list"));
  if (!p) throw new Error(`no § 5.2 patch of ${target} in ${name}`);
  return (p.patch as any).spec.template.spec;
}
const shipped = (stack: string) => planOf(stack);

describe("releases per stack", () => {
  // § 6: Ironic needs provisioning nodes (medium, large), Zun containers nodes (small)
  const expected: Record<string, { ironic: boolean; zun: boolean }> = {
    lab: { ironic: false, zun: false },
    "prod-small": { ironic: false, zun: true },
    "prod-medium": { ironic: true, zun: false },
    "prod-large": { ironic: true, zun: false },
  };

  it.each(SHIPPED_STACKS)("%s: the infrastructure release, then one release per enabled service", (stack) => {
    const plan = shipped(stack);
    expect(phase(plan, "openkeel-infra").units.map((u) => u.name)).toEqual([
      "openkeel-namespace",
      "openkeel-chart",
      // RabbitMQ's PodDisruptionBudget: its operator makes none (§ 2.1)
      "openkeel-rabbitmq-budget",
      ...(expected[stack].ironic ? ["openkeel-ironic-egress", "openkeel-ironic-provisioning-network"] : []),
      // the ingress VIP where MetalLB has a pool (test/integration/platform/metallb.test.ts)
      ...(shippedConfig(stack).platform.metallb ? ["openkeel-ingress-vip"] : []),
    ]);
    const names = phase(plan, "openkeel")
      .units.filter((u) => u.kind === "HelmRelease")
      .map((u) => u.name);
    const want = OPENKEEL_SERVICES.map((s) => s.name).filter((s) => (s === "ironic" ? expected[stack].ironic : s === "zun" ? expected[stack].zun : true));
    expect(names).toEqual(want.map((s) => `openkeel-${s}`));
    for (const u of openkeelReleases(plan)) {
      // § 1.4, § 2.2: Ironic in a namespace of its own
      expect(u.namespace).toBe(u.name === "openkeel-ironic" ? "openkeel-ironic" : "openkeel");
      expect(u.release).toBe(u.name);
    }
  });

  it("a service the stack turns off has no release", () => {
    const plan = planOf(mutatedConfig("prod-medium", (r) => (r.services.heat = { enabled: false })));
    expect(phase(plan, "openkeel").units.map((u) => u.name)).not.toContain("openkeel-heat");
    expect(phase(plan, "openkeel").units.map((u) => u.name)).toContain("openkeel-nova");
  });

  it.each([
    ["prod-medium", "zun", "containers"],
    ["prod-small", "ironic", "provisioning"],
  ] as const)("%s: turning on %s without %s nodes fails the plan checks", (stack, service, role) => {
    const r = planStack(mutatedConfig(stack, (raw) => (raw.services = { ...(raw.services ?? {}), [service]: { enabled: true } })));
    expect(r.plan).toBeUndefined();
    expect(r.problems.find((c) => c.code === "service-needs-role")?.message).toBe(`${service} is enabled but no node has the ${role} role`);
  });

  it("Swift is off without storage nodes, and rejected when turned on there", () => {
    const noStorage = (raw: any) => {
      for (const n of raw.nodes) n.roles = n.roles.filter((r: string) => r !== "storage");
    };
    const plan = planOf(mutatedConfig("prod-medium", noStorage));
    expect(phase(plan, "openkeel").units.map((u) => u.name)).not.toContain("openkeel-swift");
    const on = planStack(
      mutatedConfig("prod-medium", (raw) => {
        noStorage(raw);
        raw.services.swift = { enabled: true };
      }),
    );
    expect(on.problems.find((c) => c.code === "service-needs-role")?.message).toMatch(/swift is enabled but no node has the storage role/);
  });
});

describe("order", () => {
  it("the infrastructure phase comes after the platform phases, the services after the infrastructure", () => {
    expect(PHASES.indexOf("openkeel-infra")).toBeGreaterThan(PHASES.indexOf("platform-config"));
    expect(PHASES.indexOf("openkeel")).toBe(PHASES.indexOf("openkeel-infra") + 1);
    const plan = shipped("prod-medium");
    // the CRs it renders: their CRDs and webhooks; its namespace, classes and nodes' labels
    expect(release(plan, "openkeel-chart").dependsOn).toEqual([
      "mariadb-operator",
      "mariadb-operator-crds",
      "node-roles",
      "openkeel-namespace",
      "priority-classes",
      "rabbitmq-cluster-operator",
      "storage-classes",
    ]);
    expect(release(plan, "openkeel-keystone").dependsOn).toEqual(["kube-ovn", "node-roles", "openkeel-namespace", "priority-classes"]);
    expect(release(plan, "openkeel-nova").waitsFor!.map((w) => w.unit)).toEqual(["openkeel-keystone", "openkeel-placement"]);
    for (const u of phase(plan, "openkeel").units.filter((x) => x.kind === "HelmRelease" && x.name !== "openkeel-keystone")) {
      expect(u.waitsFor!.map((w) => w.unit)).toContain("openkeel-keystone");
    }
  });

  it("under Pulumi, no service release waits for the infrastructure release, whose end promises no database; each waits for Keystone", async () => {
    const run = await runProgram("prod-small", pulumiConfigOf(shippedRaw("prod-small")), program);
    for (const s of ["openkeel-keystone", "openkeel-neutron", "openkeel-zun"]) {
      expect(dependsOnUnit(run.byName(s).dependencies, "openkeel-chart"), s).toBe(false);
    }
    for (const s of ["openkeel-neutron", "openkeel-zun"]) expect(dependsOnUnit(run.byName(s).dependencies, "openkeel-keystone"), s).toBe(true);
    expect(dependsOnUnit(run.byName("openkeel-chart").dependencies, "openkeel-namespace")).toBe(true);
    expect(dependsOnUnit(run.byName("openkeel-nova").dependencies, "openkeel-placement")).toBe(true);
  });
});

describe("D1: role label keys", () => {
  const slug = {
    controlPlane: "control-plane",
    compute: "compute",
    network: "network",
    storage: "storage",
    containers: "containers",
    provisioning: "provisioning",
  };

  it.each(PRODUCTION)("%s passes the hardened keys, as okadm does, to every release", (stack) => {
    const plan = shipped(stack);
    for (const r of openkeelReleases(plan)) {
      const roles = (r.values as any).global.nodeRoles.roles;
      expect(Object.keys(roles).sort()).toEqual([...ROLES].sort());
      for (const role of ROLES) {
        expect(roles[role]).toEqual({
          label: `node-restriction.kubernetes.io/openkeel-${slug[role]}`,
          taint: { key: `node-role.openkeel.io/${slug[role]}`, effect: "NoSchedule" },
        });
      }
    }
    expect(values(plan, "openkeel-nova").config.kubernetes.compute_role_label).toBe("node-restriction.kubernetes.io/openkeel-compute");
  });

  it("the lab uses the default keys, since its node carries roles", () => {
    const plan = shipped("lab");
    for (const r of openkeelReleases(plan)) {
      const roles = (r.values as any).global.nodeRoles.roles;
      for (const role of ROLES) expect(roles[role].label).toBe(`node-role.openkeel.io/${slug[role]}`);
    }
    expect(values(plan, "openkeel-nova").config.kubernetes.compute_role_label).toBe("node-role.openkeel.io/compute");
  });

  it("a lab whose nodes carry no role passes no role keys at all", () => {
    const plan = planOf(mutatedConfig("lab", (r) => (r.nodes[0].roles = [])));
    for (const r of openkeelReleases(plan)) {
      expect((r.values as any).global.nodeRoles).toBeUndefined();
      expect((r.values as any).global.placementDefaults.zoneKey).toBe("topology.kubernetes.io/zone");
    }
    expect(values(plan, "openkeel-nova").config.kubernetes).toBeUndefined();
  });

  it("the taints flag follows the stack", () => {
    expect(values(shipped("prod-small"), "openkeel-keystone").global.nodeRoles.taints).toBe(false);
    expect(values(shipped("prod-medium"), "openkeel-keystone").global.nodeRoles.taints).toBe(true);
  });

  it("placement defaults name the three priority classes of § 2", () => {
    expect(values(shipped("prod-large"), "openkeel-glance").global.placementDefaults).toEqual({
      zoneKey: "topology.kubernetes.io/zone",
      zoneSpread: "ScheduleAnyway",
      hostSpread: "DoNotSchedule",
      priorityClasses: { infra: "openkeel-infra-critical", control: "openkeel-control", vm: "openkeel-vm" },
    });
  });
});

describe.each(SHIPPED_STACKS)("decisions in the values of %s", (stack) => {
  const plan = shipped(stack);
  const lab = stack === "lab";
  const neutron = values(plan, "openkeel-neutron");
  const nova = values(plan, "openkeel-nova");
  const chart = values(plan, "openkeel-chart");
  // § 6.3: in the large topology the quorum members are one per zone too
  // openkeel-chart reads the role only (§ 5.2): the anti-affinity comes from its post-render patches
  const QUORUM = { role: "controlPlane" };
  /** The pod spec a release's post-render patch (any, not only § 5.2's) gives its workload `target`. */
  const patchOf = (name: string, target: string): any => {
    const p = (release(plan, name).postRender ?? []).find((x) => x.target.name === target);
    return (p?.patch as any)?.spec?.template?.spec;
  };

  it("D2: Neutron writes its own OVN NB; OVN central on the control plane, one member per node", () => {
    expect(neutron.backend).toBe("ovn-nb");
    // no chart reads anti-affinity (§ 5.2): the host term (and large's zone term) is the release's patch
    expect(neutron.placement.ovnCentral).toEqual(QUORUM);
    const terms = patchOf("openkeel-neutron", "openkeel-neutron-ovn-central").affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution;
    expect(terms.map((t: { topologyKey: string }) => t.topologyKey)).toEqual([
      "kubernetes.io/hostname",
      ...(stack === "prod-large" ? ["topology.kubernetes.io/zone"] : []),
    ]);
    expect(neutron.ovnCentral.replicas).toBe(lab ? 1 : 3);
    // § 5.2: ovnCentral.nodeSelector wins over the role, so the release writes the role's label there
    expect(neutron.ovnCentral.nodeSelector).toEqual({ [roleLabelKey("controlPlane", plan.labelProfile)]: "" });
  });

  it("D2: the chassis is placed by chassis.nodeSelector (§ 5.2), the chassis label the node-roles phase puts on exactly its nodes", () => {
    const label = chassisLabelKey(plan.labelProfile);
    expect(neutron.placement.chassis).toBeUndefined();
    expect(neutron.chassis.nodeSelector).toEqual({ [label]: "" });
    const zun = openkeelReleases(plan).some((u) => u.name === "openkeel-zun");
    const chassisRoles = ["compute", "network", ...(zun ? ["containers"] : [])];
    for (const node of objectsOf(plan, "node-roles")) {
      const roles = plan.nodes.find((n) => n.name === node.metadata.name)!.roles;
      expect(label in (node.metadata.labels ?? {}), node.metadata.name).toBe(roles.some((r) => chassisRoles.includes(r)));
    }
  });

  it("D3: every hypervisor's and gateway's bridge mappings on its Node, as an annotation, where the chassis reads them", () => {
    expect(neutron.chassis.bridgeMappingsAnnotation).toBe("network.openkeel.io/bridge-mappings");
    const cfg = shippedConfig(stack);
    for (const node of cfg.nodes) {
      const patch = object(plan, "Node", node.name, "node-roles");
      expect(patch.metadata.annotations?.["network.openkeel.io/bridge-mappings"], node.name).toBe(node.bridgeMappings);
      if (!lab && (node.roles.includes("compute") || node.roles.includes("network"))) expect(node.bridgeMappings, node.name).toBe("physnet1:br-ex");
    }
  });

  it("D3: distributed floating IPs; the BGP agent on network and compute nodes, off by default, on reserved hosts too", () => {
    expect(neutron.gateway).toEqual({ floatingIpMode: "distributed" });
    // off: the chart reads bgpAgent.enabled, and renders no agent to patch (the placement: "openkeel:bgp turns the BGP agent on")
    expect(neutron.placement.bgpAgent).toBeUndefined();
    expect(neutron.bgpAgent).toEqual({ enabled: false });
    expect(patchOf("openkeel-neutron", "openkeel-neutron-bgp-agent")).toBeUndefined();
  });

  it("D4: the metadata agent on compute nodes, reserved hosts included, sharing one generated secret with Nova's metadata API", () => {
    // § 5.2 lists no metadata agent: the chart reads metadataAgent.enabled, the release's patch places it
    expect(neutron.placement.metadataAgent).toBeUndefined();
    expect(neutron.metadataAgent.enabled).toBe(true);
    const agent = unlistedPatch(plan, "openkeel-neutron", "openkeel-neutron-metadata-agent");
    expect(agent.nodeSelector).toEqual({ [roleLabelKey("compute", plan.labelProfile)]: "" });
    expect(agent.tolerations).toEqual([{ key: "node-role.openkeel.io/compute", operator: "Exists", effect: "NoSchedule" }, RESERVED, ...STATE]);
    expect(neutron.metadataAgent.sharedSecret).toEqual({ secretRef: "metadata-proxy-shared-secret" });
    expect(nova.metadata.sharedSecret).toEqual(neutron.metadataAgent.sharedSecret);
  });

  it("D5: Galera, RabbitMQ, OVN central and Swift devices on the strict-local class (longhorn-local; kind's own in the lab)", () => {
    const local = lab ? "standard" : "longhorn-local";
    for (const member of ["mariadb", "rabbitmq"]) {
      expect(chart.infrastructure[member].placement).toEqual(QUORUM);
      expect(chart.infrastructure[member].storage).toEqual({ storageClassName: local });
      expect(chart.infrastructure[member].replicas).toBe(lab ? 1 : 3);
    }
    // § 5.2 lists no PriorityClass template: the platform phase creates them (platform/priority-classes.ts)
    expect(chart.priorityClasses).toBeUndefined();
    expect(neutron.ovnCentral.storage).toEqual({ storageClassName: local });
    const swift = values(plan, "openkeel-swift");
    // large puts Swift's devices on its HDD capacity tier, strict-local too (§ 6.3: test/openkeel/large-scale.test.ts)
    expect(swift.storage.devices).toEqual({ storageClassName: stack === "prod-large" ? "longhorn-capacity" : local });
    // Storage nodes that are also tainted hypervisors (medium, § 6.2) need the compute toleration too.
    const tainted = stack === "prod-medium" ? [{ key: "node-role.openkeel.io/compute", operator: "Exists", effect: "NoSchedule" }] : [];
    // § 5.2 lists no Swift component: the chart reads no placement, the release's patch carries it
    expect(swift.placement).toBeUndefined();
    const storage = unlistedPatch(plan, "openkeel-swift", "openkeel-swift-storage");
    expect(storage.nodeSelector).toEqual({ [roleLabelKey("storage", plan.labelProfile)]: "" });
    expect(storage.tolerations).toEqual([{ key: "node-role.openkeel.io/storage", operator: "Exists", effect: "NoSchedule" }, ...tainted]);
    const storageNodes = plan.nodes.filter((n) => n.roles.includes("storage")).length;
    expect(swift.storage.replicas).toBe(storageNodes);
  });

  it("D6: dynamic reservation on, with § 4.2's debounce and thresholds; the agent tolerates reserved hosts", () => {
    expect(nova.computeAgent.dynamicReservation).toEqual({ enabled: true, debounceSeconds: 30, thresholds: { vcpu: 1, memoryMiB: 256 } });
    expect(nova.placement.computeAgent).toEqual({
      role: "compute",
      extraTolerations: [{ key: "openkeel.io/reserved", operator: "Exists", effect: "NoSchedule" }, ...STATE],
    });
  });

  it("D8: the public ingress on control plane and network nodes", () => {
    // § 5.2 lists no ingress for the chart: its placement is the release's patch, not a value
    expect(chart.ingress).toBeUndefined();
    const s = unlistedPatch(plan, "openkeel-chart", "openkeel-chart-ingress");
    expect(s.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual(
      ["controlPlane", "network"].map((r) => ({ matchExpressions: [{ key: roleLabelKey(r as Role, plan.labelProfile), operator: "Exists" }] })),
    );
    expect(s.tolerations).toEqual(expect.arrayContaining(STATE));
  });

  it("every API and worker on the control plane, sized to the nodes that can take it", () => {
    const controlPlane = plan.nodes.filter((n) => n.roles.includes("controlPlane")).length;
    for (const r of openkeelReleases(plan).filter((u) => u.name !== "openkeel-chart")) {
      const v = r.values as any;
      const key = v.proxy ? "proxy" : "api";
      if (isUnlisted(r.chart.chart, key)) {
        // § 5.2 does not list it: its placement is the release's patch, not a value
        expect(v.placement?.[key], r.name).toBeUndefined();
        const s = unlistedPatch(plan, r.name, `${r.name}-${key}`);
        expect(s.nodeSelector, r.name).toEqual({ [roleLabelKey("controlPlane", plan.labelProfile)]: "" });
        expect(s.priorityClassName, r.name).toBe("openkeel-control");
      } else expect(v.placement[key], r.name).toEqual({ role: "controlPlane" });
      const replicas = (v.api ?? v.proxy).replicas;
      // large's APIs start at their HPA's floor, 3 (openkeel:autoscaling: test/openkeel/large-scale.test.ts)
      const design = r.name === "openkeel-skyline" || r.name === "openkeel-ovn-octavia-provider" ? 2 : 3;
      expect(replicas, r.name).toBe(lab ? 1 : stack === "prod-large" ? 3 : Math.min(design, controlPlane));
    }
  });
});

describe("quorum per zone in the large topology (§ 6.3)", () => {
  const MEMBERS = ["openkeel-chart/mariadb", "openkeel-chart/rabbitmq", "openkeel-neutron/ovnCentral"];

  it("Galera, RabbitMQ and OVN central have required anti-affinity on the zone key, one member in each of the 3 zones", () => {
    const report = shippedPlan("prod-large").placement!;
    for (const name of MEMBERS) {
      const c = report.placements.find((p) => p.component.name === name)!.component;
      expect(c.requiredAntiAffinity, name).toEqual(["kubernetes.io/hostname", "topology.kubernetes.io/zone"]);
      expect(c.replicas, name).toBe(3);
    }
  });

  it.each(["prod-small", "prod-medium"])("%s (no zones): host anti-affinity only", (stack) => {
    const report = shippedPlan(stack).placement!;
    for (const name of MEMBERS)
      expect(report.placements.find((p) => p.component.name === name)!.component.requiredAntiAffinity, name).toEqual(["kubernetes.io/hostname"]);
  });

  it("a large stack whose control plane spans 2 zones cannot hold 3 members: the placement check trips for each", () => {
    const r = planStack(
      mutatedConfig("prod-large", (raw) => {
        for (const n of raw.nodes) if (n.name === "ok-cp-5" || n.name === "ok-cp-6") n.zone = "zone-b";
      }),
    );
    expect(r.plan).toBeUndefined();
    const zone = r.problems.filter((c) => c.code === "placement-anti-affinity" && c.message.includes("topology.kubernetes.io/zone"));
    expect(zone.map((c) => c.message.split(" ")[0]).sort()).toEqual([...MEMBERS].sort());
    expect(zone[0].message).toMatch(/required anti-affinity on topology\.kubernetes\.io\/zone but only 2 domain\(s\) can take it/);
  });
});

describe("the data services' versions (seed 004: MariaDB 11.4, RabbitMQ 4.1)", () => {
  it("are pinned to exact tags and a digest in platform/versions.ts", () => {
    expect(MARIADB_IMAGE.tag).toMatch(/^11\.4\.\d+$/);
    expect(RABBITMQ_IMAGE.tag).toMatch(/^4\.1\.\d+-management$/);
    for (const pin of [MARIADB_IMAGE, RABBITMQ_IMAGE]) expect(pin.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it.each(SHIPPED_STACKS)("%s: the infrastructure release hands them to the MariaDB and RabbitMQ members", (stack) => {
    const chart = values(shipped(stack), "openkeel-chart");
    expect(chart.infrastructure.mariadb.image).toBe(`docker.io/library/mariadb:${MARIADB_IMAGE.tag}@${MARIADB_IMAGE.digest}`);
    expect(chart.infrastructure.rabbitmq.image).toBe(`docker.io/library/rabbitmq:${RABBITMQ_IMAGE.tag}@${RABBITMQ_IMAGE.digest}`);
  });

  it("the contract refuses a floating image", () => {
    const cfg = mutatedConfig("prod-small", () => {});
    const v: any = infrastructureValues(contextOf(cfg));
    v.infrastructure.mariadb.image = "docker.io/library/mariadb:latest";
    v.infrastructure.rabbitmq.image = "rabbitmq";
    expect(checkValues(infrastructureContract("hardened"), v).map((i) => i.path.join("."))).toEqual([
      "infrastructure.mariadb.image",
      "infrastructure.rabbitmq.image",
    ]);
  });
});

describe("D7: the Ironic conductor", () => {
  it.each([
    ["prod-medium", 1],
    ["prod-large", 2],
  ] as const)("%s: on provisioning nodes, one per node (required anti-affinity), %i replica(s)", (stack, replicas) => {
    const plan = shipped(stack);
    const ironic = values(plan, "openkeel-ironic");
    // one per node is the conductor template's own (§ 5.2): no value asks for it
    expect(ironic.placement.conductor).toEqual({ role: "provisioning" });
    expect(ironic.conductor.replicas).toBe(replicas);
    expect(ironic.conductor.replicas).toBeLessThanOrEqual(plan.nodes.filter((n) => n.roles.includes("provisioning")).length);
    expect(resolvePlacement(ironic.placement.conductor, { profile: "hardened" }).nodeSelector).toEqual({
      "node-restriction.kubernetes.io/openkeel-provisioning": "",
    });
    expect(values(plan, "openkeel-nova").placement.ironicAgent).toEqual({ role: "controlPlane", enabled: true });
  });

  it("without Ironic, Nova's Ironic agent is off", () => {
    expect(values(shipped("prod-small"), "openkeel-nova").placement.ironicAgent.enabled).toBe(false);
  });
});

describe("the Neutron extensions (§ 5.2: openkeel-neutron-fwaas, openkeel-neutron-vpnaas)", () => {
  it.each(SHIPPED_STACKS)("%s: both releases after Neutron, their APIs on the control plane, the VPNaaS agent following the chassis", (stack) => {
    const plan = shipped(stack);
    for (const name of ["openkeel-neutron-fwaas", "openkeel-neutron-vpnaas"]) {
      expect(release(plan, name).waitsFor!.map((w) => w.unit)).toEqual(["openkeel-keystone", "openkeel-neutron"]);
      expect(values(plan, name).placement.api).toEqual({ role: "controlPlane" });
    }
    const vpnaas = values(plan, "openkeel-neutron-vpnaas");
    expect(vpnaas.placement.agent).toBeUndefined();
    expect(vpnaas.agent.nodeSelector).toEqual(values(plan, "openkeel-neutron").chassis.nodeSelector);
  });

  it("the placement report puts the VPNaaS agent on exactly the chassis' nodes, tolerating every taint", () => {
    const report = shippedPlan("prod-large").placement!;
    const of = (name: string) => report.placements.find((p) => p.component.name === name)!;
    expect(of("openkeel-neutron-vpnaas/agent").eligible).toEqual(of("openkeel-neutron/chassis").eligible);
    expect(of("openkeel-neutron-vpnaas/agent").component.scheduling.tolerations).toEqual([{ operator: "Exists" }]);
  });

  it("they follow Neutron: off with it, and refused when turned on without it", () => {
    const off = planOf(mutatedConfig("prod-medium", (r) => (r.services.neutron = { enabled: false })));
    expect(phase(off, "openkeel").units.map((u) => u.name)).not.toContain("openkeel-neutron-vpnaas");
    expect(phase(off, "openkeel").units.map((u) => u.name)).not.toContain("openkeel-neutron-fwaas");
    const r = planStack(
      mutatedConfig("prod-medium", (raw) => {
        raw.services.neutron = { enabled: false };
        raw.services["neutron-vpnaas"] = { enabled: true };
      }),
    );
    expect(r.plan).toBeUndefined();
    expect(r.problems.find((c) => c.code === "service-needs-service")).toMatchObject({
      path: "openkeel:services.neutron-vpnaas.enabled",
      message: "neutron-vpnaas is enabled but neutron, which it extends, is off",
    });
  });
});

describe("Ironic in its own namespace, egress limited to the BMC networks (§ 1.4, § 2.2, § 6.3)", () => {
  it("prod-large: the namespace, before the release, and a NetworkPolicy of the stack's BMC networks, the OpenKeel services and DNS", () => {
    const plan = shipped("prod-large");
    expect(release(plan, "openkeel-ironic").namespace).toBe("openkeel-ironic");
    expect(object(plan, "Namespace", "openkeel-ironic", "openkeel-namespace").metadata.labels).toEqual({
      "pod-security.kubernetes.io/enforce": "privileged",
      "pod-security.kubernetes.io/audit": "privileged",
      "pod-security.kubernetes.io/warn": "privileged",
    });
    const policy = object(plan, "NetworkPolicy", "ironic-egress", "openkeel-ironic-egress");
    expect(policy.metadata.namespace).toBe("openkeel-ironic");
    expect(policy.spec.podSelector).toEqual({});
    expect(policy.spec.policyTypes).toEqual(["Egress"]);
    const [bmc, openkeel, dns] = policy.spec.egress;
    expect(bmc).toEqual({ to: ["10.40.9.0/24", "10.40.10.0/24", "10.40.11.0/24"].map((cidr) => ({ ipBlock: { cidr } })) });
    expect(openkeel.to).toEqual([{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "openkeel" } } }, { podSelector: {} }]);
    expect(dns.ports).toEqual([
      { protocol: "UDP", port: 53 },
      { protocol: "TCP", port: 53 },
    ]);
    // the policy is in place before the openkeel phase, whose releases wait for every openkeel-infra unit
    expect(phase(plan, "openkeel-infra").units.map((u) => u.name)).toEqual([
      "openkeel-namespace",
      "openkeel-chart",
      "openkeel-rabbitmq-budget",
      "openkeel-ironic-egress",
      "openkeel-ironic-provisioning-network",
      "openkeel-ingress-vip",
    ]);
    expect(phase(plan, "openkeel-infra").units.find((u) => u.name === "openkeel-ironic-egress")!.dependsOn).toEqual(["openkeel-namespace"]);
  });

  it("the BMC networks come from the stack", () => {
    const plan = planOf(mutatedConfig("prod-medium", (r) => (r.services.ironic.bmcNetworks = ["fd00:50::/64", "192.168.0.0/16"])));
    expect(object(plan, "NetworkPolicy", "ironic-egress").spec.egress[0].to).toEqual([
      { ipBlock: { cidr: "fd00:50::/64" } },
      { ipBlock: { cidr: "192.168.0.0/16" } },
    ]);
  });

  it("prod-small (no Ironic): neither the namespace nor the policy", () => {
    const plan = shipped("prod-small");
    expect(objectsOf(plan, "openkeel-namespace").map((o) => o.metadata.name)).toEqual(["openkeel"]);
    expect(phase(plan, "openkeel-infra").units.map((u) => u.name)).not.toContain("openkeel-ironic-egress");
  });

  it("production needs the BMC networks when Ironic runs; a stack without Ironic may not set them", () => {
    const missing = planStack(mutatedConfig("prod-medium", (r) => delete r.services.ironic.bmcNetworks));
    expect(missing.plan).toBeUndefined();
    expect(missing.problems.find((c) => c.code === "ironic-bmc-networks")?.path).toBe("openkeel:services.ironic.bmcNetworks");
    const unused = planStack(mutatedConfig("prod-small", (r) => (r.services = { ironic: { bmcNetworks: ["10.20.9.0/24"] } })));
    expect(unused.problems.find((c) => c.code === "ironic-bmc-networks")?.message).toMatch(/Ironic does not run in this stack/);
  });
});

describe("Zun", () => {
  it("prod-small: the compute agent on containers nodes; Zun reads Nova's compute label", () => {
    const plan = shipped("prod-small");
    const zun = values(plan, "openkeel-zun");
    // § 5.2 lists no Zun component: the agent's placement is the release's patch
    expect(zun.placement).toBeUndefined();
    const agent = unlistedPatch(plan, "openkeel-zun", "openkeel-zun-compute-agent");
    expect(agent.nodeSelector).toEqual({ [roleLabelKey("containers", plan.labelProfile)]: "" });
    expect(agent.tolerations).toEqual([{ key: "node-role.openkeel.io/containers", operator: "Exists", effect: "NoSchedule" }, RESERVED, ...STATE]);
    expect(zun.config.kubernetes.nova_compute_label).toBe("node-restriction.kubernetes.io/openkeel-compute");
  });

  it("Zun's containers tolerate the containers role (compute_toleration, § 2.2)", () => {
    expect(values(shipped("prod-small"), "openkeel-zun").config.kubernetes.compute_toleration).toEqual({
      key: "node-role.openkeel.io/containers",
      operator: "Exists",
      effect: "NoSchedule",
    });
  });

  it("the kata RuntimeClass selects the containers role, before the Zun release (§ 2.2)", () => {
    const plan = shipped("prod-small");
    expect(object(plan, "RuntimeClass", "kata", "openkeel-zun-runtime-class")).toEqual({
      apiVersion: "node.k8s.io/v1",
      kind: "RuntimeClass",
      metadata: { name: "kata" },
      handler: "kata",
      overhead: { podFixed: { memory: "130Mi", cpu: "250m" } },
      scheduling: {
        nodeSelector: { "node-restriction.kubernetes.io/openkeel-containers": "" },
        tolerations: [{ key: "node-role.openkeel.io/containers", operator: "Exists", effect: "NoSchedule" }],
      },
    });
    expect(release(plan, "openkeel-zun").dependsOn).toContain("openkeel-zun-runtime-class");
    // no Zun, no RuntimeClass
    expect(phase(shipped("prod-medium"), "openkeel").units.map((u) => u.name)).not.toContain("openkeel-zun-runtime-class");
  });

  it("the placement report confines the Pods of the kata RuntimeClass to containers nodes", () => {
    const kata = { name: "kata-1", internalIP: "10.30.4.11", roles: ["containers"] };
    const ok = planStack(mutatedConfig("prod-medium", (r) => r.nodes.push(kata))).placement!;
    expect(ok.placements.find((p) => p.component.name === "openkeel-zun-runtime-class/kata")!.eligible).toEqual(["kata-1"]);
    const cfg = mutatedConfig("prod-medium", (r) => r.nodes.push(kata));
    const plan = composePlan(resolveStack(cfg), []).plan;
    delete (object(plan, "RuntimeClass", "kata") as any).scheduling.nodeSelector;
    const checks = placementReport(
      plan,
      resolveStack(cfg).topology,
      planComponents(plan, resolveEnvironment(cfg.environment).readers),
      resolveEnvironment(cfg.environment).placementChecks,
    ).checks;
    expect(checks.map((c) => c.code)).toEqual(["placement-forbidden"]);
    expect(checks[0].message).toMatch(/^openkeel-zun-runtime-class\/kata \(Pods\) may run on cp-1, cp-2, cp-3, .*which lack the containers role/);
  });

  it("a containers-only node is an OVN chassis while Zun runs, and not when Zun is off", () => {
    const kata = { name: "kata-1", internalIP: "10.30.4.11", roles: ["containers"] };
    const label = chassisLabelKey("hardened");
    const withZun = planOf(mutatedConfig("prod-medium", (r) => r.nodes.push(kata)));
    expect(object(withZun, "Node", "kata-1", "node-roles").metadata.labels).toHaveProperty([label], "");
    const withoutZun = planOf(
      mutatedConfig("prod-medium", (r) => {
        r.nodes.push(kata);
        r.services.zun = { enabled: false };
      }),
    );
    expect(object(withoutZun, "Node", "kata-1", "node-roles").metadata.labels).not.toHaveProperty([label]);
  });
});

describe("stack settings", () => {
  it("openkeel:bgp turns the BGP agent on: on network and compute nodes, reserved hosts too (its release's patch)", () => {
    const plan = planOf(mutatedConfig("prod-large", (r) => (r.bgp = true)));
    expect(values(plan, "openkeel-neutron").bgpAgent).toEqual({ enabled: true });
    const agent = unlistedPatch(plan, "openkeel-neutron", "openkeel-neutron-bgp-agent");
    expect(agent.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual(
      (["network", "compute"] as const).map((r) => ({ matchExpressions: [{ key: roleLabelKey(r, "hardened"), operator: "Exists" }] })),
    );
    expect(agent.tolerations).toEqual(expect.arrayContaining([RESERVED, ...STATE]));
  });

  it("a stack's placement role replaces the default role(s)", () => {
    // prod-small: every node is compute and network, so the moved agent still covers its nodes
    const plan = planOf(mutatedConfig("prod-small", (r) => ((r.bgp = true), (r.services = { neutron: { placement: { bgpAgent: { role: "network" } } } }))));
    const agent = unlistedPatch(plan, "openkeel-neutron", "openkeel-neutron-bgp-agent");
    expect([agent.nodeSelector, agent.affinity]).toEqual([{ [roleLabelKey("network", "hardened")]: "" }, undefined]);
    expect(agent.tolerations).toEqual(expect.arrayContaining([RESERVED, ...STATE]));
  });

  it("a stack's placement of a component placed by its own nodeSelector also sets what the chart reads", () => {
    const sel = { "node-restriction.kubernetes.io/openkeel-control-plane": "", "topology.kubernetes.io/zone": "zone-a" };
    const plan = planOf(mutatedConfig("prod-large", (r) => (r.services = { ...r.services, masakari: { placement: { engine: { nodeSelector: sel } } } })));
    expect(values(plan, "openkeel-masakari").nodePlacement).toEqual({
      api: { nodeSelector: { "node-restriction.kubernetes.io/openkeel-control-plane": "" } },
      engine: { nodeSelector: sel },
    });
  });

  it("raw placement fields beat the role (§ 5.1 precedence)", () => {
    const nodeSelector = { "node-restriction.kubernetes.io/openkeel-control-plane": "", "topology.kubernetes.io/zone": "zone-a" };
    const plan = planOf(mutatedConfig("prod-large", (r) => (r.services = { ...r.services, keystone: { placement: { api: { nodeSelector } } } })));
    const api: PlacementValue = values(plan, "openkeel-keystone").placement.api;
    expect(api.role).toBe("controlPlane");
    expect(resolvePlacement(api, { profile: "hardened" }).nodeSelector).toEqual(nodeSelector);
  });

  it("raw values win over the stack's placement, the stack's replicas and the topology's", () => {
    const plan = planOf(
      mutatedConfig("prod-large", (r) => {
        r.services = {
          ...r.services,
          keystone: {
            replicas: { api: 2 },
            placement: { api: { nodeSelector: { "topology.kubernetes.io/zone": "zone-a" } } },
            values: { api: { replicas: 5 }, placement: { api: { nodeSelector: { "topology.kubernetes.io/zone": "zone-b" } } } },
          },
          // within the bounds of the HPA that owns it (openkeel:autoscaling.apis: 3 to 6)
          glance: { replicas: { api: 4 } },
        };
      }),
    );
    const keystone = values(plan, "openkeel-keystone");
    expect(keystone.api.replicas).toBe(5);
    expect(keystone.placement.api.nodeSelector).toEqual({ "topology.kubernetes.io/zone": "zone-b" });
    expect(values(plan, "openkeel-glance").api.replicas).toBe(4);
  });

  it("null in raw values removes a default, as in Helm", () => {
    const plan = planOf(
      mutatedConfig(
        "prod-small",
        (r) => ((r.bgp = true), (r.services = { neutron: { values: { placement: { bgpAgent: { roles: null, role: "network" } } } } })),
      ),
    );
    const agent = unlistedPatch(plan, "openkeel-neutron", "openkeel-neutron-bgp-agent");
    expect([agent.nodeSelector, agent.affinity]).toEqual([{ [roleLabelKey("network", "hardened")]: "" }, undefined]);
  });
});

describe("chart sources", () => {
  it("default to platform/versions.ts", () => {
    const plan = shipped("prod-medium");
    expect(release(plan, "openkeel-chart").chart).toEqual({
      repository: OPENKEEL_CHART_REPOSITORY,
      chart: "openkeel-chart",
      version: OPENKEEL_CHARTS.version,
    });
    // one release line: every service's chart (its descriptor's) at the one pin
    for (const s of OPENKEEL_SERVICES.filter((x) => x.name !== "zun")) {
      expect(release(plan, `openkeel-${s.name}`).chart).toEqual({ repository: OPENKEEL_CHART_REPOSITORY, chart: s.chart, version: OPENKEEL_CHARTS.version });
      expect(s.chart.startsWith(OPENKEEL_CHARTS.prefix), s.chart).toBe(true);
    }
  });

  it("a stack pins its own registry, a version for every chart and a version per chart", () => {
    const plan = planOf(
      mutatedConfig("prod-medium", (r) => {
        r.charts = { repository: "oci://registry.example.org/openkeel", version: "2.1.0", versions: { nova: "2.1.1", infrastructure: "2.0.3" } };
      }),
    );
    expect(release(plan, "openkeel-nova").chart).toEqual({ repository: "oci://registry.example.org/openkeel", chart: "openkeel-nova", version: "2.1.1" });
    expect(release(plan, "openkeel-chart").chart.version).toBe("2.0.3");
    expect(release(plan, "openkeel-glance").chart.version).toBe("2.1.0");
  });

  it.each([
    [{ version: "latest" }, "openkeel:charts.version", /not a pinned version/],
    [{ versions: { nova: "^2.1.0" } }, "openkeel:charts.versions.nova", /not a pinned version/],
    [{ versions: { nvoa: "2.1.0" } }, "openkeel:charts.versions.nvoa", /unknown key/],
    [{ repository: "registry.example.org/openkeel" }, "openkeel:charts.repository", /not a chart source/],
    [{ repository: "oci://registry.example.org/openkeel/" }, "openkeel:charts.repository", /not a chart source/],
  ])("rejects %j at %s", (charts, path, message) => {
    let problems: { path: string; message: string }[] = [];
    try {
      mutatedConfig("prod-medium", (r) => (r.charts = charts));
    } catch (e: any) {
      problems = e.problems;
    }
    expect(problems.map((p) => p.path)).toEqual([path]);
    expect(problems[0].message).toMatch(message);
  });
});

describe("secrets", () => {
  it.each(SHIPPED_STACKS)("%s: the rendered values show the metadata secret by name only", (stack) => {
    const files = renderPlan(shipped(stack));
    const nova = files.find((f) => f.path === "values/openkeel-nova.yaml")!.content;
    const neutron = files.find((f) => f.path === "values/openkeel-neutron.yaml")!.content;
    expect(nova).toMatch(/sharedSecret: <pulumi-secret:metadata-proxy-shared-secret>/);
    expect(neutron).toMatch(/sharedSecret: <pulumi-secret:metadata-proxy-shared-secret>/);
  });

  it("under Pulumi, the generated value reaches both releases as a secret and never the render", async () => {
    const run = await runProgram("prod-medium", pulumiConfigOf(shippedRaw("prod-medium")), program);
    const helm = run.ofType("kubernetes:helm.sh/v3:Release");
    const nova = helm.find((r) => r.name === "openkeel-nova")!.inputs.values.metadata.sharedSecret;
    const neutron = helm.find((r) => r.name === "openkeel-neutron")!.inputs.values.metadataAgent.sharedSecret;
    expect(nova.value).toBe(MOCK_SECRET_VALUE);
    expect(neutron.value).toBe(MOCK_SECRET_VALUE);
    expect(nova["4dabf18193072939515e22adb298388d"]).toBeDefined();
    for (const f of renderPlan(shipped("prod-medium"))) expect(f.content).not.toContain(MOCK_SECRET_VALUE);
  });
});
