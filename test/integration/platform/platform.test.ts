// The platform phases: which units each stack gets, their order (CRDs and operators before the
// CRs that need them), the lab's realBackends toggle, the storage classes of D5, Longhorn's string
// settings read the way Longhorn reads them, the platform settings and their checks.
import * as fs from "node:fs";
import * as path from "node:path";
import { isDrained } from "../../../config/lifecycle";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatProblem } from "../../../config/problems";
import { allUnits, APPLY_AS_PATCH_ANNOTATION, findUnit, PHASES, type HelmReleaseUnit, type Plan, type Unit } from "../../../plan/plan";
import { DEFAULT_ROLE_PREFIX, ROLES, roleTaint } from "../../../config/roles";
import { planStack } from "../../../environments";
import { PLATFORM_NAMESPACES_UNIT, type PlatformComponent } from "../../../platform/component";
import type { LoadedConfig } from "../../../config/schema";
import { resolveStack } from "../../../environments/resolve";
import { OPENKEEL } from "../../../openkeel/descriptor";
import { cdi } from "../../../platform/cdi";
import { certManager } from "../../../platform/cert-manager";
import { kubeOvn } from "../../../platform/kube-ovn";
import { kubevirt } from "../../../platform/kubevirt";
import { longhorn, LONGHORN_VM_CLASS } from "../../../platform/longhorn";
import { mariadbOperator } from "../../../platform/mariadb-operator";
import { medik8s } from "../../../platform/medik8s";
import { metallb } from "../../../platform/metallb";
import { multus } from "../../../platform/multus";
import { nodeFeatureDiscovery } from "../../../platform/node-feature-discovery";
import { rabbitmqOperator } from "../../../platform/rabbitmq-operator";
import { rabbitmqTopologyOperator } from "../../../platform/rabbitmq-topology-operator";
import { snapshots } from "../../../platform/snapshots";
import { PRIORITY_CLASSES_UNIT } from "../../../platform/priority-classes";
import { formatLonghornNodeSelector, formatLonghornTolerations, LONGHORN_LOCAL_CLASS, LONGHORN_NAMESPACE } from "../../../platform/longhorn-names";
import { imageRef, MEDIK8S_NHC, MEDIK8S_NMO, MEDIK8S_SNR, MULTUS_IMAGE, SNAPSHOT_CONTROLLER_IMAGE } from "../../../platform/versions";
import { LONGHORN_RESERVED_TOLERATION_SUBSTRING, parseLonghornNodeSelector, parseLonghornTolerations } from "../../helpers/longhorn";
import { configProblems, mutatedConfig, PRODUCTION_STACKS, pulumiConfigOf, SHIPPED_STACKS, shippedConfig, shippedRaw } from "../../helpers/stacks";
import { runProgram } from "../../helpers/pulumi";
import { KINDS } from "../../../e2e/standins/crds";
import program from "../../../index";
import { object, objectsOf, planOf, release, unitNames } from "../../helpers/plans";
import { longhornSettings } from "../../../platform/longhorn-settings";

const PRODUCTION = PRODUCTION_STACKS;
const MIRROR = process.env.OPENKEEL_MIRROR ?? path.resolve(__dirname, "../../../../shared/mirror");

const labWithBackends = () => mutatedConfig("lab", (r) => (r.platform = { realBackends: true }));

const SNAPSHOT_CRDS = [
  "volumesnapshotclasses",
  "volumesnapshotcontents",
  "volumesnapshots",
  "volumegroupsnapshotclasses",
  "volumegroupsnapshotcontents",
  "volumegroupsnapshots",
].map((p) => `snapshot-crd-${p}`);
const LAB_ALWAYS = [
  PRIORITY_CLASSES_UNIT,
  "platform-namespaces",
  "multus",
  "cert-manager-crds",
  "cert-manager",
  "mariadb-operator-crds",
  "mariadb-operator",
  "rabbitmq-cluster-operator",
  "rabbitmq-messaging-topology-operator",
  "node-feature-discovery",
];
const BACKENDS = {
  "crds-operators": [...SNAPSHOT_CRDS, "kubevirt-operator", "cdi-operator"],
  platform: ["longhorn", "snapshot-controller", "kubevirt", "cdi"],
  "platform-config": ["storage-classes", "volume-snapshot-classes"],
};

/**
 * The components whose units this oracle spells out: those of the environments when it was written.
 * A component added later is held by its own tests; its units are left out here (`known`), so that
 * adding one touches no list of this file (issue 47).
 */
const KNOWN = new Set<PlatformComponent>([
  multus,
  certManager,
  mariadbOperator,
  rabbitmqOperator,
  rabbitmqTopologyOperator,
  nodeFeatureDiscovery,
  kubeOvn,
  snapshots,
  kubevirt,
  cdi,
  longhorn,
  medik8s,
  metallb,
  OPENKEEL,
]);

/** The names of a phase's units, without those of the components this oracle does not know. */
function known(cfg: LoadedConfig, plan: Plan, phaseName: string): string[] {
  const s = resolveStack(cfg);
  // the pod network's unit, which a builder may name (Multus waits for it)
  const wiring = { problems: [], podNetwork: allUnits(plan).find((u) => u.name === "kube-ovn") };
  const others = new Set(
    s.components.filter((c) => !KNOWN.has(c)).flatMap((c) => Object.values(c.units(s.ctx, wiring)).flatMap((us) => us.map((u) => u.name))),
  );
  return unitNames(plan, phaseName).filter((n) => !others.has(n));
}

describe("units per environment", () => {
  it("a component the oracle does not know: its units are left out, every other unit stays", () => {
    const cfg = shippedConfig("prod-medium");
    const plan = planOf(cfg);
    const all = unitNames(plan, "crds-operators");
    KNOWN.delete(metallb);
    try {
      expect(known(cfg, plan, "crds-operators")).toEqual(all.filter((n) => n !== "metallb"));
    } finally {
      KNOWN.add(metallb);
    }
    expect(known(cfg, plan, "crds-operators")).toEqual(all);
  });

  it.each(PRODUCTION)("%s (Talos): the CNI, every platform component and its configuration", (stack) => {
    const cfg = shippedConfig(stack);
    const plan = planOf(cfg);
    // MetalLB where the stack gives it a pool (the ingress VIP, D8: test/integration/platform/metallb.test.ts)
    const metallb = shippedConfig(stack).platform.metallb !== undefined;
    expect(known(cfg, plan, "crds-operators").sort()).toEqual(
      [
        ...LAB_ALWAYS,
        "kube-ovn",
        ...BACKENDS["crds-operators"],
        "olm",
        "medik8s-install-plan-approver",
        "medik8s-operators",
        ...(metallb ? ["metallb"] : []),
      ].sort(),
    );
    // Longhorn's storage network where the stack names one (large: test/platform/attachment-networks.test.ts)
    const storageNetwork = longhornSettings(shippedConfig(stack).platform).storageNetwork !== undefined;
    expect(known(cfg, plan, "platform").sort()).toEqual(
      [...BACKENDS.platform, ...(metallb ? ["metallb-placement"] : []), ...(storageNetwork ? ["longhorn-storage-network"] : [])].sort(),
    );
    // a drained node's NodeMaintenance and a retiring storage node's eviction come and go with them
    const nodes = shippedConfig(stack).nodes;
    const lifecycle = [
      ...(nodes.some((n) => isDrained(n.state)) ? ["node-maintenance"] : []),
      ...(nodes.some((n) => n.state === "retiring" && n.roles.includes("storage")) ? ["longhorn-node-eviction"] : []),
    ];
    expect(known(cfg, plan, "platform-config").sort()).toEqual(
      [...BACKENDS["platform-config"], "medik8s-installed", "medik8s-remediation", ...lifecycle, ...(metallb ? ["metallb-pool"] : [])].sort(),
    );
  });

  it("lab: kind keeps its CNI; Multus and the operators OpenKeel's infrastructure needs, no backends", () => {
    const cfg = shippedConfig("lab");
    const plan = planOf(cfg);
    expect(known(cfg, plan, "crds-operators").sort()).toEqual([...LAB_ALWAYS].sort());
    for (const ph of ["platform", "platform-config"]) expect(known(cfg, plan, ph)).toEqual([]);
    expect(allUnits(plan).map((u) => u.name)).not.toContain("kube-ovn");
    expect(allUnits(plan).map((u) => u.name)).not.toContain("medik8s-operators");
  });

  it("lab with realBackends: KubeVirt (emulation), CDI, Longhorn and snapshots, in their phases", () => {
    const plan = planOf(labWithBackends());
    for (const [ph, names] of Object.entries(BACKENDS)) {
      const have = unitNames(plan, ph);
      for (const n of names) expect(have, `${ph} has ${n}`).toContain(n);
    }
    expect(object(plan, "KubeVirt", "kubevirt").spec.configuration.developerConfiguration).toEqual({ useEmulation: true });
    expect(objectsOf(plan, PLATFORM_NAMESPACES_UNIT).map((o) => o.metadata.name)).toContain(LONGHORN_NAMESPACE);
    // explicit false is the default
    const off = planOf(mutatedConfig("lab", (r) => (r.platform = { realBackends: false })));
    expect(allUnits(off).map((u) => u.name)).toEqual(allUnits(planOf(shippedConfig("lab"))).map((u) => u.name));
  });

  it.each(PRODUCTION)("%s: no emulation in production", (stack) => {
    const kv = object(planOf(stack), "KubeVirt", "kubevirt", "kubevirt");
    expect(kv.spec.configuration.developerConfiguration).toBeUndefined();
  });
});

/** API groups our objects use, and the unit that brings each group's CRDs. */
const CRD_SOURCE: Record<string, string> = {
  "kubevirt.io": "kubevirt-operator",
  "cdi.kubevirt.io": "cdi-operator",
  "snapshot.storage.k8s.io": "snapshot-crd-volumesnapshotclasses",
  "operators.coreos.com": "olm",
  // OLM installs these CRDs with the operator: the Subscriptions wait for the installed CSV.
  "remediation.medik8s.io": "medik8s-operators",
  "self-node-remediation.medik8s.io": "medik8s-operators",
  "nodemaintenance.medik8s.io": "medik8s-operators",
  // the chart installs Longhorn's CRDs (its node objects are patched for an eviction)
  "longhorn.io": "longhorn",
  "metallb.io": "metallb",
  // the secondary networks: the NAD CRD is Multus', the Subnet CRD comes with the Kube-OVN chart
  "k8s.cni.cncf.io": "multus",
  "kubeovn.io": "kube-ovn",
};
const BUILT_IN = new Set([
  "v1",
  "apps/v1",
  "batch/v1",
  "rbac.authorization.k8s.io/v1",
  "storage.k8s.io/v1",
  "apiextensions.k8s.io/v1",
  "node.k8s.io/v1",
  "networking.k8s.io/v1",
  "autoscaling/v2",
  "scheduling.k8s.io/v1",
  "policy/v1",
]);

function position(plan: Plan, unit: string): { phase: number; index: number; unit: Unit } {
  for (const [pi, ph] of plan.phases.entries()) {
    const index = ph.units.findIndex((u) => u.name === unit);
    if (index >= 0) return { phase: pi, index, unit: ph.units[index] };
  }
  throw new Error(`no unit ${unit}`);
}

function dependsTransitively(plan: Plan, from: string, to: string): boolean {
  const u = findUnit(plan, from);
  return (u?.dependsOn ?? []).some((d) => d === to || dependsTransitively(plan, d, to));
}

describe("order: CRDs and operators before the objects that need them", () => {
  const stacks = [...SHIPPED_STACKS.map((s) => [s, () => shippedConfig(s)] as const), ["lab+realBackends", labWithBackends] as const];

  it.each(stacks)("%s: the phases in their order", (_, cfg) => {
    expect(planOf(cfg()).phases.map((p) => p.name)).toEqual([...PHASES]);
  });

  it.each(stacks)("%s: every custom resource comes after the unit that brings its CRD", (name, cfg) => {
    const plan = planOf(cfg());
    let checked = 0;
    for (const unit of allUnits(plan)) {
      if (unit.kind !== "Manifests") continue;
      for (const o of unit.objects) {
        if (BUILT_IN.has(o.apiVersion)) continue;
        const group = o.apiVersion.split("/")[0];
        const source = CRD_SOURCE[group];
        expect(source, `${o.kind} ${o.metadata.name}: a CRD source is known`).toBeDefined();
        // the phases are no barriers: only its dependencies put it after the CRD's unit
        expect(dependsTransitively(plan, unit.name, source), `${unit.name}/${o.kind} after ${source}`).toBe(true);
        checked++;
      }
    }
    // the lab without its backends has no custom resource of ours
    if (name !== "lab") expect(checked).toBeGreaterThan(0);
  });

  it.each(PRODUCTION)("%s: the OLM subscriptions hold until OLM has installed the operator (its CRDs first)", (stack) => {
    const plan = planOf(stack);
    const subs = objectsOf(plan, "medik8s-operators").filter((o) => o.kind === "Subscription");
    expect(subs.map((s) => s.metadata.name).sort()).toEqual(["node-healthcheck-operator", "node-maintenance-operator", "self-node-remediation"]);
    for (const s of subs) expect(s.metadata.annotations?.["pulumi.com/waitFor"]).toBe("jsonpath={.status.installedCSV}");
    expect(dependsTransitively(plan, "medik8s-operators", "olm")).toBe(true);
    // the CRs that need those CRDs are two phases later
    expect(position(plan, "medik8s-remediation").phase - position(plan, "medik8s-operators").phase).toBeGreaterThanOrEqual(1);
  });

  it.each(PRODUCTION)(
    "%s: the SNR config, the template, the NodeHealthChecks and NodeMaintenances wait until OLM reports each operator Succeeded (its webhooks answer)",
    (stack) => {
      const plan = planOf(stack);
      const waits = objectsOf(plan, "medik8s-installed");
      expect(
        waits.map((o) => [
          o.kind,
          o.metadata.namespace,
          o.metadata.name,
          o.metadata.annotations?.["pulumi.com/waitFor"]?.replace(/=[0-9a-f]{16}"/, '=<digest>"'),
        ]),
      ).toEqual(
        [MEDIK8S_SNR, MEDIK8S_NHC, MEDIK8S_NMO].map((p) => [
          "ClusterServiceVersion",
          "medik8s",
          p.startingCSV,
          // Succeeded, on the object that carries this patch as it is now (not the provider informer's copy from before it)
          `["jsonpath={.status.phase}=Succeeded","jsonpath={.metadata.annotations['openkeel.io/patch-content']}=<digest>"]`,
        ]),
      );
      // a patch of the CSV OLM creates, never an object of ours
      for (const o of waits) expect(o.metadata.annotations?.[APPLY_AS_PATCH_ANNOTATION]).toBe("patch");
      expect(dependsTransitively(plan, "medik8s-remediation", "medik8s-installed")).toBe(true);
      // the CSVs exist once the Subscriptions report them installed: the wait comes after that unit
      expect(dependsTransitively(plan, "medik8s-installed", "medik8s-operators")).toBe(true);
      const drained = { ...shippedConfig(stack) };
      drained.nodes = drained.nodes.map((n, i) => (i === 0 ? { ...n, state: "maintenance" as const } : n));
      expect(dependsTransitively(planOf(drained), "node-maintenance", "medik8s-installed")).toBe(true);
    },
  );

  it.skipIf(!fs.existsSync(MIRROR)).each(PRODUCTION)(
    "%s: a pinned manifest that holds cert-manager objects at its pin (the mirror's file) waits for cert-manager; one that holds none does not",
    (stack) => {
      const plan = planOf(stack);
      const holders: string[] = [];
      for (const u of allUnits(plan)) {
        if (u.kind !== "RemoteManifest" || u.name === "cert-manager-crds") continue;
        const files = u.urls.map((url) => {
          const { host, pathname } = new URL(url);
          return path.join(MIRROR, "files", host, ...pathname.split("/").filter(Boolean));
        });
        const holds = files.some((f) => /^apiVersion: cert-manager\.io\//m.test(fs.readFileSync(f, "utf8")));
        if (holds) holders.push(u.name);
        expect(dependsTransitively(plan, u.name, "cert-manager"), `${u.name} (${files.map((f) => path.relative(MIRROR, f)).join(", ")})`).toBe(holds);
      }
      // the RabbitMQ operators' manifests; not OLM's olm.yaml at v0.38.0 (v0.37.0's did: its statement,
      // which the Renovate path deploys, is test/integration/plan/unit-content.test.ts's)
      expect(holders).toEqual(["rabbitmq-cluster-operator", "rabbitmq-messaging-topology-operator"]);
    },
  );

  it.each(PRODUCTION)("%s: nothing that runs pods starts before the CNI", (stack) => {
    const plan = planOf(stack);
    // no pods: the priority classes, the namespaces, the CNI itself, CRDs
    const crdsOnly = new Set([PRIORITY_CLASSES_UNIT, PLATFORM_NAMESPACES_UNIT, "kube-ovn", "cert-manager-crds", "mariadb-operator-crds", ...SNAPSHOT_CRDS]);
    const phase = plan.phases.find((p) => p.name === "crds-operators")!;
    expect([PRIORITY_CLASSES_UNIT, PLATFORM_NAMESPACES_UNIT, "kube-ovn"]).toContain(phase.units[0].name);
    for (const u of phase.units.filter((x) => !crdsOnly.has(x.name))) {
      expect(dependsTransitively(plan, u.name, "kube-ovn"), `${u.name} waits for kube-ovn`).toBe(true);
    }
  });

  it.each([...PRODUCTION, "lab"])("%s: every release's namespace exists before it, with its pod-security level", (stack) => {
    const cfg = stack === "lab" ? labWithBackends() : shippedConfig(stack);
    const plan = planOf(cfg);
    const namespaceUnits = allUnits(plan).filter((u) => u.kind === "Manifests" && u.objects.some((o) => o.kind === "Namespace"));
    const unitOf = (ns: string) =>
      namespaceUnits.find((u) => u.kind === "Manifests" && u.objects.some((o) => o.kind === "Namespace" && o.metadata.name === ns));
    const namespaces = namespaceUnits.flatMap((u) => (u.kind === "Manifests" ? u.objects.filter((o) => o.kind === "Namespace") : []));
    for (const u of allUnits(plan).filter((x): x is HelmReleaseUnit => x.kind === "HelmRelease")) {
      if (u.namespace === "kube-system") continue;
      const nsUnit = unitOf(u.namespace);
      expect(nsUnit, `${u.name}: namespace ${u.namespace} is an object of the plan`).toBeDefined();
      expect(dependsTransitively(plan, u.name, nsUnit!.name), `${u.name} waits for its namespace`).toBe(true);
    }
    const level = (name: string) => namespaces.find((n) => n.metadata.name === name)?.metadata.labels?.["pod-security.kubernetes.io/enforce"];
    // Talos enforces baseline: Longhorn and the SNR agents need privileged pods.
    expect(level(LONGHORN_NAMESPACE)).toBe("privileged");
    if (stack !== "lab") expect(level("medik8s")).toBe("privileged");
    for (const n of namespaces) expect(["privileged", "baseline", "restricted"]).toContain(level(n.metadata.name));
  });

  it.each([...PRODUCTION, "lab"])("%s: every namespace the Plan creates sets enforce, audit and warn to one level (issue 22 item 5)", (stack) => {
    const plan = planOf(stack === "lab" ? labWithBackends() : shippedConfig(stack));
    const namespaces = allUnits(plan).flatMap((u) => (u.kind === "Manifests" ? u.objects.filter((o) => o.kind === "Namespace") : []));
    expect(namespaces.map((n) => n.metadata.name)).toEqual(
      expect.arrayContaining(["openkeel", ...(stack === "prod-small" || stack === "lab" ? [] : ["openkeel-ironic"])]),
    );
    for (const n of namespaces) {
      const labels = n.metadata.labels ?? {};
      const enforce = labels["pod-security.kubernetes.io/enforce"];
      // Talos audits and warns at restricted by default: a privileged namespace left there would flag every pod
      expect({ audit: labels["pod-security.kubernetes.io/audit"], warn: labels["pod-security.kubernetes.io/warn"] }, n.metadata.name).toEqual({
        audit: enforce,
        warn: enforce,
      });
    }
  });

  it.each(PRODUCTION)("%s: what owns data is protected", (stack) => {
    const plan = planOf(stack);
    const protectedUnits = allUnits(plan)
      .filter((u) => u.protect)
      .map((u) => u.name);
    for (const name of [
      "longhorn",
      "storage-classes",
      PLATFORM_NAMESPACES_UNIT,
      "kube-ovn",
      "multus",
      "cert-manager-crds",
      "mariadb-operator-crds",
      "rabbitmq-cluster-operator",
      "kubevirt-operator",
      "cdi-operator",
      "olm",
      "kubevirt",
      "cdi",
      ...SNAPSHOT_CRDS,
    ]) {
      expect(protectedUnits, name).toContain(name);
    }
  });
});

describe("StorageClasses (D5) and snapshots", () => {
  const sc = (plan: Plan, name: string) => object(plan, "StorageClass", name);
  const cases: [string, number, boolean, () => ReturnType<typeof shippedConfig>][] = [
    ["prod-small", 3, true, () => shippedConfig("prod-small")],
    ["prod-medium", 3, true, () => shippedConfig("prod-medium")],
    ["prod-large", 3, true, () => shippedConfig("prod-large")],
    ["lab+realBackends", 1, false, labWithBackends],
  ];

  it.each(cases)("%s: longhorn-local is one strict-local replica, bound where its pod runs", (_, _r, _m, cfg) => {
    const local = sc(planOf(cfg()), LONGHORN_LOCAL_CLASS);
    expect(local.provisioner).toBe("driver.longhorn.io");
    expect(local.parameters.numberOfReplicas).toBe("1");
    expect(local.parameters.dataLocality).toBe("strict-local");
    expect(local.volumeBindingMode).toBe("WaitForFirstConsumer");
    expect(local.allowedTopologies).toBeUndefined();
  });

  it.each(cases)("%s: longhorn-vm has the topology's replica count (%i), migratable with live migration (%s)", (_, replicas, migratable, cfg) => {
    const plan = planOf(cfg());
    const vm = sc(plan, LONGHORN_VM_CLASS);
    expect(vm.parameters.numberOfReplicas).toBe(String(replicas));
    expect(vm.parameters.migratable).toBe(String(migratable));
    const values = release(plan, "longhorn").values as any;
    expect(values.persistence.defaultClassReplicaCount).toBe(replicas);
    expect(values.defaultSettings.defaultReplicaCount).toBe(replicas);
  });

  it("the replica count follows openkeel:platform.longhorn.volumeReplicas", () => {
    const plan = planOf(mutatedConfig("prod-large", (r) => (r.platform = { longhorn: { volumeReplicas: 2 } })));
    expect(sc(plan, LONGHORN_VM_CLASS).parameters.numberOfReplicas).toBe("2");
    expect(sc(plan, LONGHORN_LOCAL_CLASS).parameters.numberOfReplicas).toBe("1");
  });

  it("VM disks follow their VM where compute nodes hold disks, not where storage is separate", () => {
    expect(sc(planOf(shippedConfig("prod-medium")), LONGHORN_VM_CLASS).parameters.dataLocality).toBe("best-effort");
    expect(sc(planOf(shippedConfig("prod-large")), LONGHORN_VM_CLASS).parameters.dataLocality).toBe("disabled");
  });

  it("a VolumeSnapshotClass for Longhorn, and the snapshot-controller image of the pinned release", () => {
    const plan = planOf(shippedConfig("prod-medium"));
    const vsc = object(plan, "VolumeSnapshotClass", "longhorn-snapshot");
    expect(vsc.driver).toBe("driver.longhorn.io");
    expect(vsc.deletionPolicy).toBe("Delete");
    const deploy = object(plan, "Deployment", "snapshot-controller");
    expect(deploy.spec.template.spec.containers[0].image).toBe(imageRef(SNAPSHOT_CONTROLLER_IMAGE));
    for (const name of SNAPSHOT_CRDS) {
      const u = findUnit(plan, name);
      expect(u?.kind === "RemoteManifest" && u.urls.every((url) => url.includes(`/${SNAPSHOT_CONTROLLER_IMAGE.tag}/`))).toBe(true);
    }
  });

  it("the lab keeps kind's default class; production makes Longhorn's the default", () => {
    expect((release(planOf(labWithBackends()), "longhorn").values as any).persistence.defaultClass).toBe(false);
    expect((release(planOf(shippedConfig("prod-small")), "longhorn").values as any).persistence.defaultClass).toBe(true);
  });
});

describe("Longhorn's string settings", () => {
  it("our settings parse as Longhorn parses them", () => {
    for (const stack of PRODUCTION) {
      const d = (release(planOf(stack), "longhorn").values as any).defaultSettings;
      const tolerations = parseLonghornTolerations(d.taintToleration);
      expect(tolerations.length).toBeGreaterThan(0);
      for (const t of tolerations) {
        expect(t.operator).toBe("Exists");
        expect(t.effect).toBe("NoSchedule");
        expect(t.key).not.toContain(LONGHORN_RESERVED_TOLERATION_SUBSTRING);
      }
      expect(parseLonghornNodeSelector(d.systemManagedComponentsNodeSelector)).toEqual({ "kubernetes.io/os": "linux" });
    }
  });

  it("the parser reads Longhorn's documented examples", () => {
    expect(parseLonghornTolerations("key1=value1:NoSchedule; key2:NoExecute")).toEqual([
      { key: "key1", value: "value1", operator: "Equal", effect: "NoSchedule" },
      { key: "key2", operator: "Exists", effect: "NoExecute" },
    ]);
    expect(parseLonghornTolerations("")).toEqual([]);
    expect(() => parseLonghornTolerations("key1:NoSchedule:x")).toThrow(/missing key\/value and effect pair/);
    expect(() => parseLonghornTolerations("key1:Never")).toThrow(/invalid effect/);
    expect(parseLonghornNodeSelector("label-key1:label-value1; label-key2:")).toEqual({ "label-key1": "label-value1", "label-key2": "" });
    expect(() => parseLonghornNodeSelector("a=b")).toThrow(/separator/);
  });

  const labelKey = fc
    .tuple(fc.constantFrom("", "node-role.openkeel.io/", "example.org/"), fc.stringMatching(/^[a-z0-9]([-a-z0-9_.]{0,20}[a-z0-9])?$/))
    .map(([p, n]) => p + n);

  it("tolerations round-trip through Longhorn's format", () => {
    const toleration = fc
      .record({
        key: labelKey,
        operator: fc.constantFrom("Exists" as const, "Equal" as const),
        value: fc.stringMatching(/^[a-z0-9]{0,10}$/),
        effect: fc.constantFrom("NoSchedule" as const, "NoExecute" as const, "PreferNoSchedule" as const),
      })
      .map((t) => (t.operator === "Exists" ? { key: t.key, operator: t.operator, effect: t.effect } : t));
    fc.assert(
      fc.property(fc.array(toleration, { minLength: 1, maxLength: 6 }), (ts) => {
        expect(parseLonghornTolerations(formatLonghornTolerations(ts))).toEqual(ts);
      }),
    );
  });

  it("node selectors round-trip through Longhorn's format", () => {
    fc.assert(
      fc.property(fc.dictionary(labelKey, fc.stringMatching(/^([a-z0-9][-a-z0-9_.]{0,10})?$/), { maxKeys: 5 }), (sel) => {
        expect(parseLonghornNodeSelector(formatLonghornNodeSelector(sel))).toEqual(sel);
      }),
    );
  });

  it("every role taint key is a valid Longhorn toleration key", () => {
    const all = ROLES.map((r) => ({ ...roleTaint(r), operator: "Exists" as const }));
    const parsed = parseLonghornTolerations(formatLonghornTolerations(all));
    expect(parsed.map((t) => t.key)).toEqual(ROLES.map((r) => roleTaint(r).key));
    expect(parsed.every((t) => t.key!.startsWith(DEFAULT_ROLE_PREFIX))).toBe(true);
  });
});

describe("Talos specifics", () => {
  it("Longhorn's data path is the Talos user volume; the lab keeps Longhorn's default", () => {
    expect((release(planOf(shippedConfig("prod-medium")), "longhorn").values as any).defaultSettings.defaultDataPath).toBe("/var/mnt/longhorn");
    expect((release(planOf(labWithBackends()), "longhorn").values as any).defaultSettings.defaultDataPath).toBe("/var/lib/longhorn");
  });

  it("Kube-OVN: OVS/OVN directories Talos can write, no module management, no /usr/local/bin mount", () => {
    const v = release(planOf(shippedConfig("prod-medium")), "kube-ovn").values as any;
    expect(v).toMatchObject({
      OPENVSWITCH_DIR: "/var/lib/openvswitch",
      OVN_DIR: "/var/lib/ovn",
      DISABLE_MODULES_MANAGEMENT: true,
      cni_conf: { MOUNT_LOCAL_BIN_DIR: false },
    });
  });

  it("Multus: the pinned thick image, and the netns path of each environment", () => {
    const netns = (plan: Plan) => {
      const ds = object(plan, "DaemonSet", "kube-multus-ds");
      const images = [...ds.spec.template.spec.containers, ...ds.spec.template.spec.initContainers].map((c: any) => c.image);
      expect(new Set(images)).toEqual(new Set([imageRef(MULTUS_IMAGE)]));
      expect(MULTUS_IMAGE.tag).toMatch(/^v\d+\.\d+\.\d+-thick$/);
      return ds.spec.template.spec.volumes.find((v: any) => v.name === "host-run-netns").hostPath.path;
    };
    expect(netns(planOf(shippedConfig("prod-small")))).toBe("/var/run/netns/");
    expect(netns(planOf(shippedConfig("lab")))).toBe("/run/netns/");
  });
});

describe("openkeel:platform settings", () => {
  const configError = (stack: string, mutate: (r: any) => void) => configProblems(stack, mutate).map(formatProblem).join("\n");
  const checkCodes = (cfg: ReturnType<typeof shippedConfig>, level: "error" | "warning") =>
    planStack(cfg)
      .problems.filter((c) => c.level === level)
      .map((c) => c.code);

  it("unknown keys are errors, with their path", () => {
    expect(configError("prod-medium", (r) => (r.platform = { longhorn: { replicas: 2 } }))).toMatch(
      /openkeel:platform\.longhorn\.replicas: unknown key\. Fix: /,
    );
    expect(configError("prod-medium", (r) => (r.platform = { kubeovn: {} }))).toMatch(/openkeel:platform\.kubeovn: unknown key/);
  });

  it("wrong types and values say what is expected", () => {
    expect(configError("lab", (r) => (r.platform = { realBackends: "yes" }))).toMatch(/openkeel:platform\.realBackends: must be boolean/);
    expect(configError("prod-medium", (r) => (r.platform = { medik8s: { maxUnhealthy: { network: "150%" } } }))).toMatch(
      /openkeel:platform\.medik8s\.maxUnhealthy\.network: .*percentage/,
    );
    expect(configError("prod-medium", (r) => (r.platform = { medik8s: { unhealthyDuration: "5 minutes" } }))).toMatch(
      /openkeel:platform\.medik8s\.unhealthyDuration: .*duration/,
    );
  });

  it("realBackends in production and production-only keys in the lab are errors", () => {
    expect(
      checkCodes(
        mutatedConfig("prod-small", (r) => (r.platform = { realBackends: true })),
        "error",
      ),
    ).toEqual(["platform-key-environment"]);
    expect(
      checkCodes(
        mutatedConfig("lab", (r) => (r.platform = { medik8s: {} })),
        "error",
      ),
    ).toEqual(["platform-key-environment"]);
    expect(
      checkCodes(
        mutatedConfig("lab", (r) => (r.platform = { kubeOvn: { masterNodes: ["x"] } })),
        "error",
      ),
    ).toEqual(["platform-key-environment"]);
  });

  it("Kube-OVN master nodes: controlPlane nodes of the inventory, each once, an odd number", () => {
    const masters = (names: string[]) => mutatedConfig("prod-large", (r) => (r.platform = { kubeOvn: { masterNodes: names } }));
    expect(checkCodes(masters(["ok-cp-1", "ok-cp-3", "ok-cp-5"]), "error")).toEqual([]);
    expect(checkCodes(masters(["ok-cp-1", "cmp-a-01", "ok-cp-5"]), "error")).toEqual(["kube-ovn-master-nodes"]);
    expect(checkCodes(masters(["ok-cp-1", "nope", "ok-cp-5"]), "error")).toEqual(["kube-ovn-master-nodes"]);
    expect(checkCodes(masters(["ok-cp-1", "ok-cp-1", "ok-cp-5"]), "error")).toEqual(["kube-ovn-master-nodes"]);
    expect(checkCodes(masters(["ok-cp-1", "ok-cp-3"]), "error")).toEqual(["kube-ovn-master-nodes"]);
  });

  it("more volume replicas than storage nodes is an error", () => {
    const cfg = mutatedConfig("prod-medium", (r) => (r.platform = { longhorn: { volumeReplicas: 4 } }));
    const check = planStack(cfg).problems.find((c) => c.code === "longhorn-volume-replicas");
    expect(check?.level).toBe("error");
    expect(check?.fix).toMatch(/at most 3/);
  });

  it("controlPlane nodes need the Talos Longhorn disk even without storage nodes (their D5 volumes live on it)", () => {
    const problems = configProblems("prod-medium", (r) => {
      r.nodes.forEach((n: any) => (n.roles = n.roles.filter((x: string) => x !== "storage")));
      delete r.talos.longhornDisk;
    });
    expect(problems.map((p) => p.path)).toEqual(["openkeel:talos.longhornDisk"]);
    expect(problems[0].message).toMatch(/controlPlane nodes their Galera, RabbitMQ and OVN central volumes/);
  });

  it("Medik8s settings reach the NodeHealthChecks", () => {
    const plan = planOf(
      mutatedConfig("prod-large", (r) => (r.platform = { medik8s: { unhealthyDuration: "2m", maxUnhealthy: { network: "34%", storage: 2 } } })),
    );
    const nhc = (name: string) => object(plan, "NodeHealthCheck", name).spec;
    // one check per zone in large, each with the role's maxUnhealthy (issue 39); the network nodes,
    // one per zone, share one check that fences up to half of them whatever the setting (issue 45)
    expect(nhc("openkeel-network").maxUnhealthy).toBe("50%");
    expect(nhc("openkeel-storage-zone-b").maxUnhealthy).toBe(2);
    expect(nhc("openkeel-control-plane").maxUnhealthy).toBe(1);
    expect(nhc("openkeel-storage-zone-c").unhealthyConditions.map((c: any) => c.duration)).toEqual(["2m", "2m"]);
    expect(nhc("openkeel-storage-zone-c").stormCooldownDuration).toBe("2m");
  });
});

describe("Pulumi program: objects operators create are patched, never created", () => {
  it("SNR's own config gets only our DaemonSet tolerations, as a server-side-apply patch", async () => {
    const run = await runProgram("prod-medium", pulumiConfigOf(shippedRaw("prod-medium")), program);
    const patches = run.ofType("kubernetes:self-node-remediation.medik8s.io/v1alpha1:SelfNodeRemediationConfigPatch");
    expect(patches.map((p) => p.inputs.metadata.name)).toEqual(["self-node-remediation-config"]);
    expect(run.ofType("kubernetes:self-node-remediation.medik8s.io/v1alpha1:SelfNodeRemediationConfig")).toEqual([]);
    const annotations = patches[0].inputs.metadata.annotations;
    expect(annotations["pulumi.com/patchFieldManager"]).toBe("openkeel-platform");
    expect(annotations["openkeel.io/apply-as"]).toBeUndefined();
    expect(Object.keys(patches[0].inputs.spec)).toEqual(["customDsTolerations"]);
    // and the template it works with is a plain object of ours
    expect(run.ofType("kubernetes:self-node-remediation.medik8s.io/v1alpha1:SelfNodeRemediationTemplate")).toHaveLength(1);
  });
});

describe("upgrade from the last release: objects its Helm releases held, taken over by units", () => {
  it("the priority classes keep Helm's hands off (resource-policy keep) and take its fields (patchForce), as the engine gets them", async () => {
    const run = await runProgram("prod-medium", pulumiConfigOf(shippedRaw("prod-medium")), program);
    const classes = run.ofType("kubernetes:scheduling.k8s.io/v1:PriorityClass");
    expect(classes.map((c) => c.inputs.metadata.name).sort()).toEqual(["openkeel-control", "openkeel-infra-critical", "openkeel-vm"]);
    for (const c of classes) expect(c.inputs.metadata.annotations).toEqual({ "helm.sh/resource-policy": "keep", "pulumi.com/patchForce": "true" });
  });

  it("cert-manager-crds applies every CRD of cert-manager.crds.yaml with force, and nothing else", () => {
    const unit = findUnit(planOf("lab"), "cert-manager-crds");
    expect(unit?.kind === "RemoteManifest" && [...(unit.forceConflicts ?? [])].sort()).toEqual(
      KINDS.certManager.map((k) => `CustomResourceDefinition ${k.plural}.${k.group}`).sort(),
    );
  });
});

describe("docs/platform.md", () => {
  it("lists every pin of every platform component with its version", async () => {
    const fs = await import("node:fs");
    const path = await import("node:path");
    const { ENVIRONMENTS } = await import("../../../environments/registry");
    const doc = fs.readFileSync(path.join(__dirname, "../../../docs/platform.md"), "utf8");
    const components = [...new Set(Object.values(ENVIRONMENTS).flatMap((e) => e.platform))];
    expect(components.length).toBeGreaterThanOrEqual(10);
    for (const c of components) {
      for (const pin of c.pins) expect(doc, `${c.name}: ${JSON.stringify(pin)}`).toContain("version" in pin ? pin.version : imageRef(pin));
    }
  });
});
