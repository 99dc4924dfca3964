// The large-scale pieces of § 6.3 (issue 22 item 12): HorizontalPodAutoscalers for the public APIs
// with the bounds of openkeel:autoscaling, and Swift's capacity tier on the storage nodes' HDDs
// (a second Longhorn disk, tagged capacity, its own StorageClass) with Swift zones = Kubernetes zones.
import { describe, expect, it } from "vitest";
import { planStack } from "../../environments";
import { AUTOSCALING_UNIT, autoscaledComponents } from "../../openkeel/autoscaling";
import { LONGHORN_CAPACITY_CLASS } from "../../platform/longhorn-names";
import { findUnit, phase, type ManifestsUnit, type NodeConfigFile } from "../../plan/plan";
import { object, objectsOf, planOf, valuesOf } from "../helpers/plans";
import { configProblems, mutatedConfig, PRODUCTION_STACKS, shippedConfig } from "../helpers/stacks";

const errorsOf = (cfg: ReturnType<typeof shippedConfig>, code: string) => planStack(cfg).problems.filter((p) => p.code === code);

describe("HorizontalPodAutoscalers of the APIs (§ 6.3)", () => {
  it("prod-large: one per public API, on the Deployment the chart names <release>-<component>, with the stack's bounds", () => {
    const plan = planOf("prod-large");
    const hpas = objectsOf(plan, AUTOSCALING_UNIT) as any[];
    expect(hpas.map((h) => h.metadata.name)).toEqual(
      expect.arrayContaining(["openkeel-keystone-api", "openkeel-nova-api", "openkeel-nova-console-proxy", "openkeel-heat-api-cfn", "openkeel-swift-proxy"]),
    );
    const releases = phase(plan, "openkeel").units.filter((u) => u.kind === "HelmRelease");
    const expected = releases.flatMap((u) => autoscaledComponents(u.name.replace(/^openkeel-/, "") as never).map((c) => u.name + c));
    expect(hpas).toHaveLength(expected.length);
    for (const h of hpas) {
      expect(h.apiVersion).toBe("autoscaling/v2");
      expect(h.spec.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name: h.metadata.name });
      expect(h.spec).toMatchObject({ minReplicas: 3, maxReplicas: 6 });
      expect(h.spec.metrics).toEqual([{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } } }]);
    }
    expect(hpas.find((h) => h.metadata.name === "openkeel-ironic-api").metadata.namespace).toBe("openkeel-ironic");
    // waiting for their namespaces only: the API server accepts an HPA before its Deployment; each API starts at the floor (Helm restores it on upgrade)
    const unit = findUnit(plan, AUTOSCALING_UNIT)!;
    expect(unit.dependsOn).toEqual(["openkeel-namespace"]);
    expect(valuesOf(plan, "openkeel-skyline").api.replicas).toBe(3);
    expect(valuesOf(plan, "openkeel-heat").apiCfn.replicas).toBe(3);
    expect(valuesOf(plan, "openkeel-heat").engine.replicas).toBe(2);
  });

  it.each(PRODUCTION_STACKS.filter((s) => s !== "prod-large"))("%s: no autoscaling, the design's fixed replicas", (stack) => {
    const plan = planOf(stack);
    expect(findUnit(plan, AUTOSCALING_UNIT)).toBeUndefined();
    expect(valuesOf(plan, "openkeel-skyline").api.replicas).toBe(2);
  });

  it("bounds that contradict each other or the PodDisruptionBudgets are plan errors", () => {
    const bounds = (apis: object) => mutatedConfig("prod-large", (r) => (r.autoscaling = { apis }));
    const [inverted] = errorsOf(bounds({ minReplicas: 5, maxReplicas: 4 }), "autoscaling-bounds");
    expect(inverted).toMatchObject({
      level: "error",
      path: "openkeel:autoscaling.apis",
      message: "minReplicas 5 is above maxReplicas 4: no replica count satisfies both",
    });
    const [low] = errorsOf(bounds({ minReplicas: 2, maxReplicas: 6 }), "autoscaling-bounds");
    expect(low.path).toBe("openkeel:autoscaling.apis.minReplicas");
    expect(low.message).toMatch(/PodDisruptionBudgets keep 2 available/);
    const [typo] = configProblems("prod-large", (r) => (r.autoscaling = { apis: { minReplicas: 3, maxReplica: 6 } }));
    expect(typo.path).toMatch(/^openkeel:autoscaling\.apis/);
  });
});

describe("Swift's capacity tier on HDD, Swift zones = Kubernetes zones (§ 6.3)", () => {
  const talosFile = (path: string): NodeConfigFile => planOf("prod-large").nodeConfig!.files.find((f) => f.path === path)!;

  it("prod-large: a strict-local class on the disks tagged capacity, Swift's devices on it, the ring's zones from the zone label", () => {
    const plan = planOf("prod-large");
    const sc = object(plan, "StorageClass", LONGHORN_CAPACITY_CLASS);
    expect(sc.parameters).toMatchObject({ numberOfReplicas: "1", dataLocality: "strict-local", diskSelector: "capacity", fsType: "xfs" });
    expect(sc.volumeBindingMode).toBe("WaitForFirstConsumer");
    const swift = valuesOf(plan, "openkeel-swift");
    expect(swift.storage.devices.storageClassName).toBe(LONGHORN_CAPACITY_CLASS);
    expect(swift.ring).toEqual({ zoneLabel: "topology.kubernetes.io/zone" });
    // every other class stays on the fast disks
    for (const name of ["longhorn-vm", "longhorn-rwx"]) expect(object(plan, "StorageClass", name).parameters.diskSelector, name).toBe("fast");
    expect(valuesOf(plan, "longhorn").persistence.defaultDiskSelector).toEqual({ enable: true, selector: "fast" });
  });

  it("prod-large: storage nodes declare both disks to Longhorn, control-plane nodes keep their one default disk", () => {
    const plan = planOf("prod-large");
    const nodes = (findUnit(plan, "node-roles") as ManifestsUnit).objects;
    const sto = nodes.find((n) => n.metadata.name === "sto-1")!;
    expect(sto.metadata.labels!["node.longhorn.io/create-default-disk"]).toBe("config");
    expect(JSON.parse(sto.metadata.annotations!["node.longhorn.io/default-disks-config"])).toEqual([
      { name: "longhorn", path: "/var/mnt/longhorn", allowScheduling: true, tags: ["fast"] },
      { name: "longhorn-capacity", path: "/var/mnt/longhorn-capacity", allowScheduling: true, tags: ["capacity"] },
    ]);
    const cp = nodes.find((n) => n.metadata.name === "ok-cp-1")!;
    expect(cp.metadata.labels!["node.longhorn.io/create-default-disk"]).toBe("true");
    expect(cp.metadata.annotations?.["node.longhorn.io/default-disks-config"]).toBeUndefined();
    // Talos: the storage machines get the second user volume and its kubelet mount
    const storage = talosFile("talos/patches/worker-storage.yaml").documents;
    expect(storage.filter((d) => d.kind === "UserVolumeConfig").map((d) => [d.name, (d.provisioning as any).diskSelector.match])).toEqual([
      ["longhorn", "disk.transport == 'nvme' && !system_disk"],
      ["longhorn-capacity", "disk.rotational && !system_disk"],
    ]);
    expect(((storage[0].machine as any).kubelet.extraMounts as { destination: string }[]).map((m) => m.destination)).toEqual([
      "/var/mnt/longhorn",
      "/var/mnt/longhorn-capacity",
    ]);
    const control = talosFile("talos/patches/worker-control-plane.yaml").documents;
    expect(control.filter((d) => d.kind === "UserVolumeConfig").map((d) => d.name)).toEqual(["longhorn"]);
  });

  it("prod-medium: no capacity disk: Swift on D5's strict-local class, one default disk per node, no zones to map", () => {
    const plan = planOf("prod-medium");
    expect(valuesOf(plan, "openkeel-swift").storage.devices.storageClassName).toBe("longhorn-local");
    expect(valuesOf(plan, "openkeel-swift").ring).toBeUndefined();
    expect(objectsOf(plan, "storage-classes").map((o) => o.metadata.name)).not.toContain(LONGHORN_CAPACITY_CLASS);
    expect(object(plan, "StorageClass", "longhorn-vm").parameters.diskSelector).toBeUndefined();
  });

  it("a capacity disk without Swift, or without storage nodes, is refused", () => {
    const noSwift = mutatedConfig("prod-large", (r) => (r.services = { ...r.services, swift: { enabled: false } }));
    const [e] = errorsOf(noSwift, "swift-capacity");
    expect(e).toMatchObject({ level: "error", path: "openkeel:talos.capacityDisk" });
    const [p] = configProblems("prod-medium", (r) => {
      r.talos.capacityDisk = { diskSelector: "disk.rotational", minSize: "4TB" };
      for (const n of r.nodes) n.roles = n.roles.filter((x: string) => x !== "storage");
    });
    expect(p.path).toBe("openkeel:talos.capacityDisk");
    expect(p.message).toMatch(/no node has the storage role/);
  });
});
