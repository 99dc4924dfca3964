// The Pulumi layer on a Plan with every kind of unit: Helm releases, manifests (Nodes patched,
// core kinds typed, the rest generic), remote manifests, protected units, secrets.
import { describe, expect, it } from "vitest";
import * as pulumi from "@pulumi/pulumi";
import { deployGraph, deployPlan } from "../../../components/deploy";
import { DEPLOY_GRAPH_ENV } from "../../../plan/needs";
import { REGISTRATION_BATCH } from "../../../components/plan-unit";
import { phase, secretRef, type K8sObject, type Plan } from "../../../plan/plan";
import { dependsOnUnit, MOCK_SECRET_VALUE, runProgram } from "../../helpers/pulumi";
import { shippedPlan } from "../../helpers/plans";

const SECRET_SIG = "4dabf18193072939515e22adb298388d";

function planWithEveryUnitKind(): Plan {
  const plan = shippedPlan("prod-small").plan!;
  // Only the shipped node-roles phase: the units below stand for every kind, alone.
  for (const ph of plan.phases) if (ph.name !== "node-roles") ph.units = [];
  phase(plan, "crds-operators").units.push({
    kind: "RemoteManifest",
    name: "kubevirt-operator",
    type: "openkeel:platform:KubeVirtOperator",
    urls: ["https://github.com/kubevirt/kubevirt/releases/download/v1.9.0/kubevirt-operator.yaml"],
    version: "v1.9.0",
  });
  phase(plan, "crds-operators").units.push({
    kind: "RemoteManifest",
    name: "olm",
    type: "openkeel:platform:Olm",
    urls: [
      "https://github.com/operator-framework/operator-lifecycle-manager/releases/download/v0.38.0/crds.yaml",
      "https://github.com/operator-framework/operator-lifecycle-manager/releases/download/v0.38.0/olm.yaml",
    ],
    version: "v0.38.0",
  });
  phase(plan, "platform").units.push(
    {
      kind: "Manifests",
      name: "namespaces",
      type: "openkeel:platform:Namespaces",
      objects: [{ apiVersion: "v1", kind: "Namespace", metadata: { name: "longhorn-system" } }],
    },
    {
      kind: "HelmRelease",
      name: "longhorn",
      type: "openkeel:platform:Longhorn",
      release: "longhorn",
      namespace: "longhorn-system",
      chart: { repository: "https://charts.longhorn.io", chart: "longhorn", version: "1.12.1" },
      values: { persistence: { defaultClass: false } },
      postRender: [{ target: { kind: "DaemonSet", name: "longhorn-manager" }, why: "a test patch", patch: { metadata: { labels: { a: "b" } } } }],
      protect: true,
      dependsOn: ["namespaces"],
    },
  );
  phase(plan, "platform-config").units.push({
    kind: "Manifests",
    name: "storage-classes",
    type: "openkeel:platform:StorageClasses",
    protect: true,
    objects: [
      {
        apiVersion: "storage.k8s.io/v1",
        kind: "StorageClass",
        metadata: { name: "longhorn-local" },
        provisioner: "driver.longhorn.io",
        parameters: { numberOfReplicas: "1", dataLocality: "strict-local" },
      },
    ],
  });
  phase(plan, "openkeel").units.push({
    kind: "HelmRelease",
    name: "openkeel-neutron",
    type: "openkeel:openkeel:Release",
    release: "openkeel-neutron",
    namespace: "openkeel",
    chart: { repository: "oci://registry.example.org/openkeel/charts", chart: "openkeel-neutron", version: "0.4.0" },
    values: { metadataAgent: { sharedSecret: secretRef("metadata-proxy-shared-secret") } },
  });
  return plan;
}

describe("deployPlan", () => {
  it("maps each unit kind to its Pulumi resources, as children of the unit's component", async () => {
    const plan = planWithEveryUnitKind();
    const run = await runProgram("prod-small", {}, async () => {
      deployPlan(plan);
    });
    const longhorn = run.byName("longhorn");
    expect(longhorn.type).toBe("openkeel:platform:Longhorn");
    const release = run.ofType("kubernetes:helm.sh/v3:Release").find((r) => r.name === "longhorn")!;
    expect(release.parent).toBe(longhorn.urn);
    expect(release.inputs).toMatchObject({
      chart: "longhorn",
      version: "1.12.1",
      repositoryOpts: { repo: "https://charts.longhorn.io" },
      namespace: "longhorn-system",
      name: "longhorn",
      createNamespace: false,
    });
    const oci = run.ofType("kubernetes:helm.sh/v3:Release").find((r) => r.name === "openkeel-neutron")!;
    expect(oci.inputs.chart).toBe("oci://registry.example.org/openkeel/charts/openkeel-neutron");
    expect(oci.inputs.repositoryOpts).toBeUndefined();

    expect(run.ofType("kubernetes:core/v1:Namespace").map((r) => r.name)).toEqual(["namespaces:namespace:longhorn-system"]);
    const sc = run.ofType("kubernetes:storage.k8s.io/v1:StorageClass")[0];
    expect(sc.inputs.parameters).toEqual({ numberOfReplicas: "1", dataLocality: "strict-local" });
    const remote = run.ofType("kubernetes:yaml/v2:ConfigFile")[0];
    // several files of one release are one group: later files may use kinds earlier files define
    const group = run.ofType("kubernetes:yaml/v2:ConfigGroup")[0];
    expect(group.name).toBe("olm");
    expect(group.inputs.files).toEqual([
      "https://github.com/operator-framework/operator-lifecycle-manager/releases/download/v0.38.0/crds.yaml",
      "https://github.com/operator-framework/operator-lifecycle-manager/releases/download/v0.38.0/olm.yaml",
    ]);
    expect(remote.inputs.file).toBe("https://github.com/kubevirt/kubevirt/releases/download/v1.9.0/kubevirt-operator.yaml");
  });

  it("protects and retains what owns data, and nothing else", async () => {
    const run = await runProgram("prod-small", {}, async () => {
      deployPlan(planWithEveryUnitKind());
    });
    const protectedNames = run.resources
      .filter((r) => r.protect)
      .map((r) => r.name)
      .sort();
    expect(protectedNames).toEqual(["longhorn", "storage-classes:storageclass:longhorn-local"]);
    for (const r of run.resources.filter((x) => x.protect)) expect(r.retainOnDelete).toBe(true);
  });

  it("neither protects nor retains a protected release's post-render record: a changed patch replaces the ConfigMap, which protection refuses and retention turns into a field-manager conflict", async () => {
    const run = await runProgram("prod-small", {}, async () => {
      deployPlan(planWithEveryUnitKind());
    });
    const record = run.resources.find((r) => r.name === "longhorn:configmap:longhorn-system/longhorn-post-render");
    expect(record, run.resources.map((r) => r.name).join(", ")).toBeDefined();
    expect(record!.protect ?? false).toBe(false);
    expect(record!.retainOnDelete ?? false).toBe(false);
  });

  it("waits for the units its dependsOn names, and for no other: the phases are no barriers", async () => {
    const run = await runProgram("prod-small", {}, async () => {
      deployPlan(planWithEveryUnitKind());
    });
    const deps = run.byName("longhorn").dependencies;
    expect(dependsOnUnit(deps, "namespaces")).toBe(true);
    expect(dependsOnUnit(deps, "kubevirt-operator")).toBe(false);
    expect(dependsOnUnit(run.byName("openkeel-neutron").dependencies, "storage-classes")).toBe(false);
    expect(dependsOnUnit(run.byName("storage-classes").dependencies, "longhorn")).toBe(false);
    expect(dependsOnUnit(run.byName("kubevirt-operator").dependencies, "node-roles")).toBe(false);
  });

  it("with the bench's phase barriers (OPENKEEL_DEPLOY_GRAPH=phase-barriers), each unit also waits for the whole phase before it", async () => {
    const run = await runProgram("prod-small", {}, async () => {
      deployPlan(planWithEveryUnitKind(), undefined, deployGraph({ [DEPLOY_GRAPH_ENV]: "phase-barriers" }));
    });
    const deps = run.byName("longhorn").dependencies;
    expect(dependsOnUnit(deps, "namespaces")).toBe(true);
    expect(dependsOnUnit(deps, "kubevirt-operator")).toBe(true);
    expect(dependsOnUnit(run.byName("openkeel-neutron").dependencies, "storage-classes")).toBe(true);
    expect(dependsOnUnit(run.byName("storage-classes").dependencies, "longhorn")).toBe(true);
    expect(dependsOnUnit(run.byName("kubevirt-operator").dependencies, "node-roles")).toBe(true);
    expect(deployGraph({})).toBe("dependencies");
    expect(() => deployGraph({ [DEPLOY_GRAPH_ENV]: "phases" })).toThrow(/OPENKEEL_DEPLOY_GRAPH=phases: expected dependencies or phase-barriers/);
  });

  it("hands secrets to releases as Pulumi secrets only, generated once per stack", async () => {
    const run = await runProgram("prod-small", {}, async () => {
      deployPlan(planWithEveryUnitKind());
    });
    expect(run.ofType("random:index/randomPassword:RandomPassword").map((r) => r.name)).toEqual(["metadata-proxy-shared-secret"]);
    const neutron = run.ofType("kubernetes:helm.sh/v3:Release").find((r) => r.name === "openkeel-neutron")!;
    const shared = neutron.inputs.values.metadataAgent.sharedSecret;
    expect(shared[SECRET_SIG]).toBeDefined();
    expect(shared.value).toBe(MOCK_SECRET_VALUE);
    for (const r of run.resources) {
      const text = JSON.stringify(r.inputs);
      if (!text.includes(MOCK_SECRET_VALUE)) continue;
      // every occurrence sits inside a secret envelope
      expect(text.split(MOCK_SECRET_VALUE).length - 1).toBe(text.split(`"${SECRET_SIG}"`).length - 1);
    }
  });

  it("registers a unit larger than REGISTRATION_BATCH in batches, each once the one before is registered, and a unit that depends on it depends on every object", async () => {
    const plan = shippedPlan("prod-small").plan!;
    for (const ph of plan.phases) ph.units = [];
    const count = 2 * REGISTRATION_BATCH + 7;
    const objects: K8sObject[] = Array.from({ length: count }, (_, i) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `cm-${i}`, namespace: "n" },
    }));
    phase(plan, "platform").units.push({ kind: "Manifests", name: "many", type: "openkeel:platform:Many", objects });
    phase(plan, "platform-config").units.push({
      kind: "Manifests",
      name: "after",
      type: "openkeel:platform:After",
      dependsOn: ["many"],
      objects: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "after", namespace: "n" } }],
    });
    // registrations of the large unit sent to the monitor and not yet answered, at most
    let inFlight = 0;
    let most = 0;
    const run = await runProgram("prod-small", {}, async () => {
      const mon = pulumi.runtime.getMonitor() as unknown as { registerResource(req: { getName(): string }, reply: (...a: unknown[]) => void): void };
      const register = mon.registerResource.bind(mon);
      mon.registerResource = (req, reply) => {
        if (!req.getName().startsWith("many:")) return register(req, reply);
        most = Math.max(most, ++inFlight);
        return register(req, (...a) => {
          inFlight--;
          reply(...a);
        });
      };
      deployPlan(plan);
    });
    const many = run.resources.filter((r) => r.name.startsWith("many:"));
    expect(many.map((r) => r.name).sort()).toEqual(objects.map((o) => `many:configmap:n/${o.metadata.name}`).sort());
    expect(many.every((r) => r.parent === run.byName("many").urn)).toBe(true);
    expect(most).toBe(REGISTRATION_BATCH);
    // the component's outputs come once the last batch is created: registered, as any unit's
    expect(run.byName("many").outputs).toEqual({});
    const after = run.byName("after:configmap:n/after");
    for (const r of many) expect(run.byName("after").dependencies).toContain(r.urn);
    expect(after.parent).toBe(run.byName("after").urn);
  });
});
