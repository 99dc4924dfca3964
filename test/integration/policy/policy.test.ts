// The CrossGuard pack (policy/), spawned for real and driven through the Analyzer protocol, judging
// what the program registers for each shipped stack and for mutations of a stack's config or Plan:
// every policy passes on the shipped stacks and trips on a mutation; the pack's rules as functions
// agree with it.
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../config/load";
import { planStack } from "../../../environments";
import { allUnits, findUnit, phase, type K8sObject, type ManifestsUnit, type Plan } from "../../../plan/plan";
import type { PackSession } from "../../../offline-engine/analyzer";
import { generatedProductionStack } from "../../../bench/generate";
import program from "../../../index";
import { runProgram } from "../../../offline-engine/mock-run";
import { openPack, PackPool, pulumiConfigMap } from "../../../offline-engine/policy-run";
import { judge, judgeMutatedConfig, judgeMutatedPlan, judgeShipped, packFor, runShipped, summary, violations, type PolicyResult } from "../../helpers/policy";
import { ruleFindings, runPlan } from "../../helpers/policy-rules";
import { SHIPPED_STACKS, shippedRaw } from "../../helpers/stacks";
import { object, release } from "../../helpers/plans";
import { STACK_DECLARATIONS } from "../../../environments/registry";

const PROD = "prod-medium";
const LARGE = "prod-large";
/** A production stack whose config is longer than an environment variable may be (E2BIG, policy-scale.test.ts). */
const BIG = generatedProductionStack(2000);
let prodPack: PackSession;
let labPack: PackSession;

beforeAll(async () => {
  // One pack per environment: the pack reads the environment from the stack config it starts with,
  // and judges every stack of that environment alike (npm run policy shares one the same way). The
  // production pack starts with the config of a 2000-node stack, so starting it proves that such
  // a config reaches a pack.
  [prodPack, labPack] = await Promise.all([openPack(BIG.stack, pulumiConfigMap(BIG.raw)), packFor("lab")]);
});
afterAll(() => {
  prodPack?.close();
  labPack?.close();
});

const packOf = (stack: string) => ((shippedRaw(stack) as any).environment === "kind-lab" ? labPack : prodPack);

/** The stack's longhorn-local class (the platform's), or a unit holding one when the platform has none. */
function localClass(plan: Plan): K8sObject {
  for (const u of allUnits(plan)) {
    if (u.kind !== "Manifests") continue;
    const sc = u.objects.find((o) => o.kind === "StorageClass" && o.metadata.name === "longhorn-local");
    if (sc) return sc;
  }
  const sc: K8sObject = {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: "longhorn-local" },
    provisioner: "driver.longhorn.io",
    parameters: { numberOfReplicas: "1", dataLocality: "strict-local" },
  };
  phase(plan, "platform-config").units.push({ kind: "Manifests", name: "test-storage-classes", type: "openkeel:platform:StorageClasses", objects: [sc] });
  return sc;
}

/** An object the platform writes, found by kind and name. */
function tripped(result: PolicyResult): string[] {
  return [...new Set(result.mandatory.map((d) => d.policy))].sort();
}

function expectTrip(result: PolicyResult, policy: string, resource: string) {
  const found = violations(result, policy);
  expect(found.length, summary(result)).toBeGreaterThan(0);
  expect(found.map((d) => d.resourceName)).toContain(resource);
  for (const d of found) {
    expect(d.level).toBe("mandatory");
    expect(d.message).toMatch(/Fix: /);
  }
}

describe.each(SHIPPED_STACKS)("policy pack, shipped stack %s", (stack) => {
  it("passes every policy", async () => {
    const result = await judgeShipped(stack, packOf(stack));
    expect(result.diagnostics, summary(result)).toEqual([]);
  });
});

describe("policy pack, started for a 2000-node stack", () => {
  it("starts the real pack for a 2000-node stack", async () => {
    expect(await prodPack.analyze([])).toEqual([]);
  });

  it("the rules as functions judge a generated stack as the real pack does, passing and tripped", async () => {
    const g = generatedProductionStack(40);
    const plan = planStack(loadConfig(structuredClone(g.raw), { stack: "generated", file: "stacks/Pulumi.generated.yaml" }, STACK_DECLARATIONS)).plan!;
    const tripped = structuredClone(plan);
    const neutron = allUnits(tripped).find((u) => u.name === "openkeel-neutron")!;
    if (neutron.kind === "HelmRelease") (neutron.values as any).backend = "kube-ovn";
    for (const p of [plan, tripped]) {
      const run = await runPlan(p);
      const real = await judge("generated", run, prodPack);
      const policies = (names: string[]) => [...new Set(names)].sort();
      expect(policies(ruleFindings(run, true).map((f) => f.split(" ")[0]))).toEqual(policies(real.mandatory.map((d) => d.policy)));
    }
    expect(ruleFindings(await runPlan(tripped), true).some((f) => f.startsWith("d2-parallel-ovn openkeel-neutron"))).toBe(true);
  });
});

describe("npm run policy's packs: one per environment, judging while the program runs", () => {
  it("gives every stack the verdicts of a pack of its own environment, each stack's own", async () => {
    const centralized = (raw: any) => (service(raw, "neutron").values = { gateway: { floatingIpMode: "centralized" } });
    const stacks = [
      { stack: "lab", config: pulumiConfigMap(shippedRaw("lab")) },
      ...["prod-medium", "prod-small"].map((stack) => {
        const raw = structuredClone(shippedRaw(stack));
        centralized(raw);
        return { stack, config: pulumiConfigMap(raw) };
      }),
    ];
    const pool = new PackPool();
    try {
      pool.prepare(stacks);
      expect(await pool.usage()).toHaveLength(2);
      for (const s of stacks) {
        const streamed = await pool.judge({ ...s, program });
        const alone = await judge(s.stack, await runProgram(s.stack, s.config, program), s.stack === "lab" ? labPack : prodPack);
        expect(streamed.resources, s.stack).toBe(alone.resources);
        expect(streamed.diagnostics, s.stack).toEqual(alone.diagnostics);
        if (s.stack !== "lab") expect(tripped(streamed)).toEqual(["d3-distributed-floating-ips"]);
        for (const d of streamed.diagnostics) expect(d.urn, s.stack).toMatch(new RegExp(`^urn:pulumi:${s.stack}::`));
      }
    } finally {
      pool.close();
    }
  });
});

describe("a pack session's verdicts", () => {
  it("answers an Analyze request it has judged under the same configuration without sending it, and none after a Configure", async () => {
    const compute = (plan: Plan) => (nodePatch(plan, "cmp-01").metadata.labels!["node-role.openkeel.io/compute"] = "");
    const first = await judgeMutatedPlan(PROD, compute, prodPack);
    const before = prodPack.sent;
    const again = await judgeMutatedPlan(PROD, compute, prodPack);
    const after = prodPack.sent;
    expect(again.diagnostics).toEqual(first.diagnostics);
    expect(violations(again, "d1-hardened-role-labels").map((d) => d.resourceName)).toContain("node-roles:node:cmp-01");
    expect(after.analyze - before.analyze).toBe(0);
    expect(after.reused - before.reused).toBe(again.resources);
    expect(after.analyzeStack - before.analyzeStack).toBe(1);
    try {
      await prodPack.configure({ "d1-hardened-role-labels": "advisory" });
      const advisory = await judgeMutatedPlan(PROD, compute, prodPack);
      expect(prodPack.sent.analyze - after.analyze).toBe(advisory.resources);
      expect(violations(advisory, "d1-hardened-role-labels")).toEqual([]);
      expect(advisory.diagnostics.filter((d) => d.policy === "d1-hardened-role-labels").map((d) => d.level)).toContain("advisory");
    } finally {
      await prodPack.configure();
    }
  });
});

describe("policy pack, environment awareness", () => {
  it("exempts the lab from D1 but holds production to it", async () => {
    const lab = await runShipped("lab");
    expect((await judge("lab", lab, labPack)).mandatory).toEqual([]);
    // The same registrations judged by a pack started with a production stack's config.
    const asProd = await judge("lab", lab, prodPack);
    expect(tripped(asProd)).toContain("d1-hardened-role-labels");
    expect(violations(asProd, "d1-hardened-role-labels").map((d) => d.resourceType)).toContain("kubernetes:core/v1:NodePatch");
  });

  it("holds the lab to the secret rule", async () => {
    const result = await judgeMutatedPlan(
      "lab",
      (plan) => {
        (release(plan, "openkeel-neutron").values as any).metadataAgent.sharedSecret = "written-in-plain-text-0123456789";
      },
      labPack,
    );
    expect(tripped(result)).toEqual(["d4-metadata-secret"]);
  });
});

interface Trip {
  what: string;
  stack?: string;
  policies: string[];
  resource: string;
  /** What one of its findings must say. */
  says?: RegExp;
  config?: (raw: any) => void;
  plan?: (plan: Plan) => void;
}

/** The pod spec of a release's post-render patch of `target` (its workload), to change in place. */
function podPatch(plan: Plan, name: string, target: string): any {
  const p = release(plan, name).postRender?.find((x) => x.target.name === target);
  if (!p) throw new Error(`no post-render patch of ${target} in release ${name}`);
  return (p.patch as any).spec.template.spec;
}

/** A release's patch of `target` moved to the network nodes alone (no node affinity, the network label). */
function networkOnly(plan: Plan, name: string, target: string): void {
  const spec = podPatch(plan, name, target);
  delete spec.affinity;
  spec.nodeSelector = { "node-restriction.kubernetes.io/openkeel-network": "" };
}

function dropPatch(plan: Plan, name: string, target: string): void {
  const u = release(plan, name);
  const patches = u.postRender ?? [];
  u.postRender = patches.filter((x) => x.target.name !== target);
  if (u.postRender.length === patches.length) throw new Error(`no post-render patch of ${target} in release ${name}`);
}

/** A release's patches of `target` aimed at `to` instead: they reach no object the chart renders. */
function retargetPatch(plan: Plan, name: string, target: string, to: string): void {
  const found = release(plan, name).postRender?.filter((x) => x.target.name === target) ?? [];
  if (found.length === 0) throw new Error(`no post-render patch of ${target} in release ${name}`);
  for (const p of found) p.target.name = to;
}

/** Every required anti-affinity term of a release's patches of `target` selecting `selector` instead. */
function reselect(plan: Plan, name: string, target: string, selector: unknown): void {
  const terms = (release(plan, name).postRender ?? []).filter((x) => x.target.name === target).flatMap((x) => requiredTerms(x.patch));
  if (terms.length === 0) throw new Error(`no required term in the post-render patches of ${target} in release ${name}`);
  for (const t of terms) t.labelSelector = structuredClone(selector);
}

function requiredTerms(tree: any): any[] {
  if (Array.isArray(tree)) return tree.flatMap(requiredTerms);
  if (typeof tree !== "object" || tree === null) return [];
  return Object.entries(tree).flatMap(([k, v]) => (k === "requiredDuringSchedulingIgnoredDuringExecution" && Array.isArray(v) ? v : requiredTerms(v)));
}

/** A spread constraint over pods no workload has, added to a release's patch of `target`. */
function spreadOverNothing(plan: Plan, name: string, target: string): void {
  podPatch(plan, name, target).topologySpreadConstraints = [
    {
      maxSkew: 1,
      topologyKey: "kubernetes.io/hostname",
      whenUnsatisfiable: "ScheduleAnyway",
      labelSelector: { matchLabels: { "app.kubernetes.io/name": "nothing" } },
    },
  ];
}

function withoutToleration(spec: any, key: string): void {
  const before = spec.tolerations.length;
  spec.tolerations = spec.tolerations.filter((t: { key?: string }) => t.key !== key);
  if (spec.tolerations.length === before) throw new Error(`no toleration of ${key} to remove`);
}

/** The Node patch of one node in the node-roles phase. */
const nodePatch = (plan: Plan, name: string): K8sObject => (findUnit(plan, "node-roles") as ManifestsUnit).objects.find((o) => o.metadata.name === name)!;

const service = (raw: any, name: string) => {
  raw.services ??= {};
  return (raw.services[name] ??= {});
};

const TRIPS: Trip[] = [
  {
    what: "D1: a placement override selecting the lab control-plane key",
    policies: ["d1-hardened-role-labels"],
    resource: "openkeel-keystone",
    // As a stack config this never reaches the pack: the placement checks refuse it first (issue 7).
    plan: (plan) => ((release(plan, "openkeel-keystone").values as any).placement.api.nodeSelector = { "node-role.openkeel.io/control-plane": "" }),
  },
  {
    what: "D1: a Node patch writing the lab compute key",
    policies: ["d1-hardened-role-labels"],
    resource: "node-roles:node:cmp-01",
    plan: (plan) => {
      const u = findUnit(plan, "node-roles") as ManifestsUnit;
      const node = u.objects.find((o) => o.metadata.name === "cmp-01")!;
      node.metadata.labels!["node-role.openkeel.io/compute"] = "";
    },
  },
  {
    what: "D1: a hardened key used as a taint key in global.nodeRoles",
    policies: ["d1-hardened-role-labels"],
    resource: "openkeel-nova",
    plan: (plan) => {
      (release(plan, "openkeel-nova").values as any).global.nodeRoles.roles.compute.taint.key = "node-restriction.kubernetes.io/openkeel-compute";
    },
  },
  {
    what: "D1: a NodeHealthCheck selecting the lab network key",
    policies: ["d1-hardened-role-labels"],
    resource: "medik8s-remediation:nodehealthcheck:openkeel-network",
    plan: (plan) => ((object(plan, "NodeHealthCheck", "openkeel-network") as any).spec.selector.matchExpressions[0].key = "node-role.openkeel.io/network"),
  },
  {
    what: "D1: KubeVirt infra placed on the lab control-plane key",
    policies: ["d1-hardened-role-labels"],
    resource: "kubevirt:kubevirt:kubevirt/kubevirt",
    plan: (plan) => ((object(plan, "KubeVirt", "kubevirt") as any).spec.infra.nodePlacement.nodeSelector = { "node-role.openkeel.io/control-plane": "" }),
  },
  {
    what: "D1: CDI workloads placed on the lab storage key",
    policies: ["d1-hardened-role-labels"],
    resource: "cdi:cdi:cdi",
    plan: (plan) => ((object(plan, "CDI", "cdi") as any).spec.workload.nodeSelector = { "node-role.openkeel.io/storage": "" }),
  },
  {
    what: "D1: Longhorn's system-managed selector on the lab storage key (its taintToleration keeps the taint keys)",
    policies: ["d1-hardened-role-labels"],
    resource: "longhorn",
    plan: (plan) => ((release(plan, "longhorn").values as any).defaultSettings.systemManagedComponentsNodeSelector = "node-role.openkeel.io/storage:"),
  },
  {
    what: "D1: a post-render patch selecting the lab control-plane key",
    policies: ["d1-hardened-role-labels"],
    resource: "openkeel-neutron:configmap:openkeel/openkeel-neutron-post-render",
    plan: (plan) => (podPatch(plan, "openkeel-neutron", "openkeel-neutron-worker").nodeSelector = { "node-role.openkeel.io/control-plane": "" }),
  },
  {
    what: "D2: the kube-ovn backend through a raw values override",
    policies: ["d2-parallel-ovn"],
    resource: "openkeel-neutron",
    config: (raw) => (service(raw, "neutron").values = { backend: "kube-ovn" }),
  },
  {
    what: "D2: OVN central without required anti-affinity (its post-render patch gone: the chart renders none)",
    policies: ["d2-ovn-central-anti-affinity"],
    resource: "openkeel-neutron",
    plan: (plan) => dropPatch(plan, "openkeel-neutron", "openkeel-neutron-ovn-central"),
  },
  {
    what: "D2: OVN central's patch aimed at another name (it reaches no object)",
    policies: ["d2-ovn-central-anti-affinity"],
    resource: "openkeel-neutron",
    plan: (plan) => retargetPatch(plan, "openkeel-neutron", "openkeel-neutron-ovn-central", "openkeel-neutron-ovncentral"),
    says: /no post-render patch reaches StatefulSet openkeel-neutron-ovn-central \(the release's patches target: .*StatefulSet openkeel-neutron-ovncentral/,
  },
  {
    what: "D2: OVN central's anti-affinity over another workload's pods",
    policies: ["d2-ovn-central-anti-affinity"],
    resource: "openkeel-neutron",
    plan: (plan) =>
      reselect(plan, "openkeel-neutron", "openkeel-neutron-ovn-central", {
        matchLabels: { "app.kubernetes.io/instance": "openkeel-neutron", "app.kubernetes.io/name": "openkeel-neutron-api" },
      }),
  },
  {
    what: "D2: OVN central's anti-affinity only preferred",
    policies: ["d2-ovn-central-anti-affinity"],
    resource: "openkeel-neutron",
    plan: (plan) => {
      const anti = podPatch(plan, "openkeel-neutron", "openkeel-neutron-ovn-central").affinity.podAntiAffinity;
      anti.preferredDuringSchedulingIgnoredDuringExecution = anti.requiredDuringSchedulingIgnoredDuringExecution.map((t: unknown) => ({
        weight: 100,
        podAffinityTerm: t,
      }));
      delete anti.requiredDuringSchedulingIgnoredDuringExecution;
    },
  },
  {
    what: "D2: OVN central's own nodeSelector, which wins over its role, on compute nodes",
    policies: ["d2-parallel-ovn"],
    resource: "openkeel-neutron",
    // As a stack config the placement checks refuse it first (OVN central is confined to the control plane).
    plan: (plan) => ((release(plan, "openkeel-neutron").values as any).ovnCentral.nodeSelector = { "node-restriction.kubernetes.io/openkeel-compute": "" }),
  },
  {
    what: "D2: one OVN central member",
    policies: ["d2-parallel-ovn"],
    resource: "openkeel-neutron",
    plan: (plan) => ((release(plan, "openkeel-neutron").values as any).ovnCentral.replicas = 1),
  },
  {
    what: "D2 and D3: chassis on network nodes only",
    policies: ["d2-chassis-nodes", "d3-bridge-mappings"],
    resource: "openkeel-neutron",
    // As a stack config the placement checks refuse it first (the chassis DaemonSet misses compute nodes).
    plan: (plan) => ((release(plan, "openkeel-neutron").values as any).chassis.nodeSelector = { "node-restriction.kubernetes.io/openkeel-network": "" }),
  },
  {
    what: "D2: the chassis, which tolerates every taint, without a nodeSelector: every node",
    policies: ["d2-parallel-ovn", "d2-chassis-nodes"],
    resource: "openkeel-neutron",
    plan: (plan) => delete (release(plan, "openkeel-neutron").values as any).chassis.nodeSelector,
  },
  {
    what: "D2: the chassis label on the provisioning node",
    policies: ["d2-chassis-nodes"],
    resource: "openkeel-neutron",
    plan: (plan) => (nodePatch(plan, "prov-1").metadata.labels!["node-restriction.kubernetes.io/openkeel-ovn-chassis"] = ""),
  },
  {
    what: "D1: a Node patch writing the lab OVN chassis label",
    policies: ["d1-hardened-role-labels"],
    resource: "node-roles:node:net-1",
    plan: (plan) => (nodePatch(plan, "net-1").metadata.labels!["openkeel.io/ovn-chassis"] = ""),
  },
  {
    what: "D2: Kube-OVN's BGP speaker",
    policies: ["d2-parallel-ovn"],
    resource: "kube-ovn-speaker",
    plan: (plan) =>
      phase(plan, "platform").units.push({
        kind: "RemoteManifest",
        name: "kube-ovn-speaker",
        type: "openkeel:platform:KubeOvnSpeaker",
        urls: ["https://raw.githubusercontent.com/kubeovn/kube-ovn/v1.16.2/yamls/speaker.yaml"],
        version: "v1.16.2",
      }),
  },
  {
    what: "D3: centralized floating IPs",
    policies: ["d3-distributed-floating-ips"],
    resource: "openkeel-neutron",
    config: (raw) => (service(raw, "neutron").values = { gateway: { floatingIpMode: "centralized" } }),
  },
  {
    what: "D3: the BGP agent on network nodes only",
    policies: ["d3-distributed-floating-ips"],
    resource: "openkeel-neutron",
    // As a stack config (bgp: true, bgpAgent on network) the placement checks refuse it first: the
    // agent DaemonSet misses the compute nodes it must cover.
    config: (raw) => (raw.bgp = true),
    plan: (plan) => networkOnly(plan, "openkeel-neutron", "openkeel-neutron-bgp-agent"),
  },
  {
    what: "D3: a hypervisor without its physnet bridge mappings",
    policies: ["d3-bridge-mappings"],
    resource: "node-roles:node:cmp-01",
    // As a stack config the plan checks refuse it first (bridge-mappings-missing).
    plan: (plan) => delete nodePatch(plan, "cmp-01").metadata.annotations,
  },
  {
    what: "D3: the chassis reading its bridge mappings from an annotation no node has",
    policies: ["d3-bridge-mappings"],
    resource: "openkeel-neutron",
    config: (raw) => (service(raw, "neutron").values = { chassis: { bridgeMappingsAnnotation: "network.openkeel.io/bridge-mapping" } }),
  },
  {
    what: "D3: the chassis reading the external NIC's bond from an annotation no node has",
    policies: ["d3-bridge-mappings"],
    resource: "openkeel-neutron",
    config: (raw) => (service(raw, "neutron").values = { chassis: { externalBondAnnotation: "network.openkeel.io/external-bonds" } }),
  },
  {
    what: "D3: the BGP agent without the toleration of Masakari reserved hosts",
    policies: ["d3-distributed-floating-ips"],
    resource: "openkeel-neutron",
    config: (raw) => (raw.bgp = true),
    plan: (plan) => withoutToleration(podPatch(plan, "openkeel-neutron", "openkeel-neutron-bgp-agent"), "openkeel.io/reserved"),
  },
  {
    what: "D3: the BGP agent enabled without its post-render patch (the chart places it nowhere)",
    policies: ["d3-distributed-floating-ips"],
    resource: "openkeel-neutron",
    config: (raw) => (raw.bgp = true),
    plan: (plan) => dropPatch(plan, "openkeel-neutron", "openkeel-neutron-bgp-agent"),
  },
  {
    what: "D4: the metadata agent without the toleration of Masakari reserved hosts",
    policies: ["d4-metadata-agent"],
    resource: "openkeel-neutron",
    plan: (plan) => withoutToleration(podPatch(plan, "openkeel-neutron", "openkeel-neutron-metadata-agent"), "openkeel.io/reserved"),
  },
  {
    what: "D4: the metadata agent on the control plane",
    policies: ["d4-metadata-agent"],
    resource: "openkeel-neutron",
    plan: (plan) =>
      (podPatch(plan, "openkeel-neutron", "openkeel-neutron-metadata-agent").nodeSelector = { "node-restriction.kubernetes.io/openkeel-control-plane": "" }),
  },
  {
    what: "D4: the metadata agent disabled",
    policies: ["d4-metadata-agent"],
    resource: "openkeel-neutron",
    config: (raw) => (service(raw, "neutron").values = { placement: { metadataAgent: { enabled: false } } }),
  },
  {
    what: "D4: a plaintext shared secret",
    policies: ["d4-metadata-secret"],
    resource: "openkeel-neutron",
    plan: (plan) => ((release(plan, "openkeel-neutron").values as any).metadataAgent.sharedSecret = "written-in-plain-text-0123456789"),
  },
  {
    what: "D5: Galera on a class the stack does not create",
    policies: ["d5-local-class"],
    resource: "openkeel-chart",
    plan: (plan) => ((release(plan, "openkeel-chart").values as any).infrastructure.mariadb.storage.storageClassName = "longhorn"),
  },
  {
    what: "D5: RabbitMQ without a storage class",
    policies: ["d5-local-volumes"],
    resource: "openkeel-chart",
    plan: (plan) => delete (release(plan, "openkeel-chart").values as any).infrastructure.rabbitmq.storage,
  },
  {
    what: "D5: OVN central's RAFT members on the replicated VM class",
    policies: ["d5-local-class"],
    resource: "storage-classes:storageclass:longhorn-vm",
    // As a stack config the plan checks may refuse it first: the pack must catch it on its own.
    plan: (plan) => ((release(plan, "openkeel-neutron").values as any).ovnCentral.storage.storageClassName = "longhorn-vm"),
  },
  {
    what: "D5: OVN central on a class the stack does not create",
    policies: ["d5-local-class"],
    resource: "openkeel-neutron",
    plan: (plan) => ((release(plan, "openkeel-neutron").values as any).ovnCentral.storage.storageClassName = "local-path"),
  },
  {
    what: "D5: Swift storage devices without a storage class",
    policies: ["d5-local-volumes"],
    resource: "openkeel-swift",
    plan: (plan) => delete (release(plan, "openkeel-swift").values as any).storage.devices.storageClassName,
  },
  {
    what: "D5: longhorn-local with three replicas",
    policies: ["d5-local-class"],
    resource: "storage-classes:storageclass:longhorn-local",
    plan: (plan) => {
      const sc = localClass(plan) as any;
      sc.parameters.numberOfReplicas = "3";
    },
  },
  {
    what: "D6: the dynamic reservation off",
    policies: ["d6-dynamic-reservation"],
    resource: "openkeel-nova",
    config: (raw) => (service(raw, "nova").values = { computeAgent: { dynamicReservation: { enabled: false } } }),
  },
  {
    what: "D7: the conductor on the control plane",
    stack: LARGE,
    policies: ["d7-ironic-conductor-placement"],
    resource: "openkeel-ironic",
    // As a stack config the placement checks refuse it first (the conductor outside provisioning nodes).
    plan: (plan) => ((release(plan, "openkeel-ironic").values as any).placement.conductor.role = "controlPlane"),
  },
  {
    what: "D7: the conductor without the provisioning toleration",
    stack: LARGE,
    policies: ["d7-ironic-conductor-placement"],
    resource: "openkeel-ironic",
    // As a stack config the placement checks refuse it first (the conductor has no node left).
    plan: (plan) => ((release(plan, "openkeel-ironic").values as any).placement.conductor.tolerations = []),
  },
  {
    what: "D7: more conductors than provisioning nodes",
    stack: LARGE,
    policies: ["d7-ironic-conductors-per-node"],
    resource: "openkeel-ironic",
    plan: (plan) => {
      const u = findUnit(plan, "node-roles") as ManifestsUnit;
      const prov = u.objects.filter((o) => Object.keys(o.metadata.labels ?? {}).some((k) => k.endsWith("openkeel-provisioning")));
      for (const k of Object.keys(prov[0].metadata.labels!)) if (k.endsWith("openkeel-provisioning")) delete prov[0].metadata.labels![k];
    },
  },
  {
    what: "D5: Galera without its post-render patch (the chart renders no anti-affinity for it)",
    policies: ["d5-members-apart"],
    resource: "openkeel-chart",
    plan: (plan) => dropPatch(plan, "openkeel-chart", "openkeel-chart-mariadb"),
  },
  {
    what: "D5: Galera's patch aimed at another name (it reaches no object)",
    policies: ["d5-members-apart"],
    resource: "openkeel-chart",
    plan: (plan) => retargetPatch(plan, "openkeel-chart", "openkeel-chart-mariadb", "openkeel-chart-galera"),
    says: /Galera members may share a node.*no post-render patch reaches MariaDB openkeel-chart-mariadb \(the release's patches target: MariaDB openkeel-chart-galera/,
  },
  {
    what: "D5: Galera's anti-affinity over app.kubernetes.io/name=<CR>, a label mariadb-operator does not set so",
    policies: ["d5-members-apart"],
    resource: "openkeel-chart",
    plan: (plan) => reselect(plan, "openkeel-chart", "openkeel-chart-mariadb", { matchLabels: { "app.kubernetes.io/name": "openkeel-chart-mariadb" } }),
    says: /writes spec\.affinity\.podAntiAffinity\.requiredDuringSchedulingIgnoredDuringExecution\.0\.labelSelector .* which matches none of its pods \(labels \{"app\.kubernetes\.io\/name":"mariadb","app\.kubernetes\.io\/instance":"openkeel-chart-mariadb"\}\)/,
  },
  {
    what: "D5: RabbitMQ's patch replacing the chart's host term with terms over app.kubernetes.io/instance, a label its operator does not set",
    stack: LARGE,
    policies: ["d5-members-apart"],
    resource: "openkeel-chart",
    plan: (plan) => reselect(plan, "openkeel-chart", "openkeel-chart-rabbitmq", { matchLabels: { "app.kubernetes.io/instance": "openkeel-chart-rabbitmq" } }),
  },
  {
    what: "D5: RabbitMQ's patch writing an anti-affinity list without the host term (a merge patch replaces the chart's)",
    policies: ["d5-members-apart"],
    resource: "openkeel-chart",
    plan: (plan) => {
      const p = release(plan, "openkeel-chart").postRender!.find((x) => x.target.name === "openkeel-chart-rabbitmq")!;
      const term = { labelSelector: { matchLabels: { "app.kubernetes.io/name": "openkeel-chart-rabbitmq" } }, topologyKey: "topology.kubernetes.io/zone" };
      (p.patch as any).spec.affinity = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } };
    },
  },
  {
    what: "D5: Swift storage without its anti-affinity patch",
    policies: ["d5-members-apart"],
    resource: "openkeel-swift",
    plan: (plan) => {
      const u = release(plan, "openkeel-swift");
      u.postRender = u.postRender!.filter((x) => !JSON.stringify(x.patch).includes("podAntiAffinity"));
    },
  },
  {
    what: "D5: Swift storage's patches aimed at another name (they reach no object)",
    policies: ["d5-members-apart"],
    resource: "openkeel-swift",
    plan: (plan) => retargetPatch(plan, "openkeel-swift", "openkeel-swift-storage", "openkeel-swift-storage-0"),
  },
  {
    what: "D5: Swift storage's anti-affinity over pods the chart does not label so",
    policies: ["d5-members-apart"],
    resource: "openkeel-swift",
    plan: (plan) => reselect(plan, "openkeel-swift", "openkeel-swift-storage", { matchLabels: { "app.kubernetes.io/name": "swift-storage" } }),
  },
  {
    what: "D4: the metadata agent's patch aimed at another name (it reaches no object)",
    policies: ["d4-metadata-agent"],
    resource: "openkeel-neutron",
    plan: (plan) => retargetPatch(plan, "openkeel-neutron", "openkeel-neutron-metadata-agent", "openkeel-neutron-metadata"),
    says: /the release's patches targeting .*DaemonSet openkeel-neutron-metadata[,)]/,
  },
  {
    what: "D4: the metadata agent's patch spreading over pods it does not have",
    policies: ["d4-metadata-agent"],
    resource: "openkeel-neutron",
    plan: (plan) => spreadOverNothing(plan, "openkeel-neutron", "openkeel-neutron-metadata-agent"),
  },
  {
    what: "D8: public ingress's patch aimed at a Deployment (it reaches no object)",
    policies: ["d8-public-ingress"],
    resource: "openkeel-chart",
    plan: (plan) => {
      for (const p of release(plan, "openkeel-chart").postRender!) if (p.target.name === "openkeel-chart-ingress") p.target.kind = "Deployment";
    },
  },
  {
    what: "D8: public ingress's patch spreading over pods it does not have",
    policies: ["d8-public-ingress"],
    resource: "openkeel-chart",
    plan: (plan) => spreadOverNothing(plan, "openkeel-chart", "openkeel-chart-ingress"),
  },
  {
    what: "D8: public ingress on network nodes only",
    policies: ["d8-public-ingress"],
    resource: "openkeel-chart",
    plan: (plan) => networkOnly(plan, "openkeel-chart", "openkeel-chart-ingress"),
  },
  {
    what: "D8: public ingress without its post-render patch (the chart places it nowhere)",
    policies: ["d8-public-ingress"],
    resource: "openkeel-chart",
    plan: (plan) => dropPatch(plan, "openkeel-chart", "openkeel-chart-ingress"),
  },
];

describe("policy pack, mutations each decision must catch", () => {
  it.each(TRIPS.map((t) => [t.what, t] as const))("%s", async (_what, t) => {
    const stack = t.stack ?? PROD;
    const result = t.plan ? await judgeMutatedPlan(stack, t.plan, prodPack, t.config) : await judgeMutatedConfig(stack, t.config!, prodPack);
    expect(tripped(result), summary(result)).toEqual([...t.policies].sort());
    for (const p of t.policies)
      expectTrip(result, p, t.resource === "kube-ovn-speaker" ? result.mandatory.find((d) => d.policy === p)!.resourceName! : t.resource);
    if (t.says) expect(result.mandatory.map((d) => d.message).join("\n")).toMatch(t.says);
  });

  it("every policy of the pack is tripped by some mutation", () => {
    const covered = new Set(TRIPS.flatMap((t) => t.policies));
    expect(prodPack.info.policies.map((p) => p.name).filter((n) => !covered.has(n))).toEqual([]);
  });

  it("a post-render record that is not what its release's post-renderer applies: every rule that reads it says so", async () => {
    const forged = JSON.stringify({ release: "openkeel-neutron", patches: [] });
    const run = await runProgram(PROD, pulumiConfigMap(shippedRaw(PROD)), async () => {
      pulumi.runtime.registerStackTransformation((args) =>
        args.type === "kubernetes:core/v1:ConfigMap" && args.name.endsWith("/openkeel-neutron-post-render")
          ? { props: { ...args.props, data: { "post-render.json": forged } }, opts: args.opts }
          : undefined,
      );
      return program();
    });
    const result = await judge(PROD, run, prodPack);
    expect(tripped(result), summary(result)).toEqual(["d2-ovn-central-anti-affinity", "d4-metadata-agent"]);
    for (const d of result.mandatory) expect(d.message).toMatch(/post-render record \(.*\) is not what its post-renderer applies/);
  });

  it("accepts BGP when the agent spans network and compute", async () => {
    const result = await judgeMutatedConfig(PROD, (raw) => (raw.bgp = true), prodPack);
    expect(result.diagnostics, summary(result)).toEqual([]);
  });
});
