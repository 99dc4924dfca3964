// Talos patches and Image Factory schematics per topology: what each role combination gets, from
// the inventory and openkeel:talos; schematic IDs as the Image Factory computes them.
import { isError } from "../../config/problems";
import { describe, expect, it } from "vitest";
import type { LoadedConfig } from "../../config/schema";
import { canonicalSchematic, installerImage, schematicId } from "../../nodes/image-factory";
import type { NodeConfigFile } from "../../plan/plan";
import type { TalosMachine } from "../../render/rendered";
import { ROLES, roleTaint } from "../../config/roles";
import {
  groupName,
  groupPatch,
  groupSchematic,
  talosNodeConfig,
  LONGHORN_DATA_PATH,
  LONGHORN_EXTENSIONS,
  KATA_EXTENSION,
  machineType,
  talosGroups,
} from "../../nodes/talos";
import { planStack, resolveStack } from "../../environments";
import { TALOS_VERSION } from "../../platform/versions";
import { longhornDisks } from "../../platform/longhorn-talos";
import { mutatedConfig, PRODUCTION_STACKS, shippedConfig } from "../helpers/stacks";

const PRODUCTION = PRODUCTION_STACKS;

function filesOf(cfg: LoadedConfig): NodeConfigFile[] {
  // Node-level config does not depend on where pods land: only the errors of other checks matter here
  // (a test stack may taint roles that share nodes, which the placement checks refuse).
  const { plan, problems } = planStack(cfg);
  const errors = problems.filter((c) => isError(c) && !c.code?.startsWith("placement-"));
  expect(errors, JSON.stringify(errors)).toEqual([]);
  return plan ? plan.nodeConfig!.files : talosNodeConfig(cfg, resolveStack(cfg).topology).files;
}

function file(files: NodeConfigFile[], path: string): NodeConfigFile {
  const f = files.find((x) => x.path === path);
  expect(f, `${path} among ${files.map((x) => x.path).join(", ")}`).toBeDefined();
  return f!;
}

/** The v1alpha1 document of a patch (the one without `kind`). */
function v1alpha1(f: NodeConfigFile): any {
  const docs = f.documents.filter((d) => d.kind === undefined);
  expect(docs).toHaveLength(1);
  return docs[0];
}

function kindDocs(f: NodeConfigFile, kind: string): any[] {
  return f.documents.filter((d) => d.kind === kind);
}

function machines(files: NodeConfigFile[]): Record<string, TalosMachine> {
  return (file(files, "talos/machines.yaml").documents[0] as any).machines;
}

function groupPatchOf(files: NodeConfigFile[], group: string): NodeConfigFile {
  return file(files, `talos/patches/${group}.yaml`);
}

function schematicOf(files: NodeConfigFile[], group: string): any {
  return file(files, `talos/schematics/${group}.yaml`).documents[0];
}

describe.each(PRODUCTION)("Talos node configuration of %s", (stack) => {
  const cfg = shippedConfig(stack);
  const topo = resolveStack(cfg).topology;
  const files = filesOf(cfg);
  const byNode = machines(files);

  it("gives every node one role combination, one patch of its own, a schematic and an installer", () => {
    expect(Object.keys(byNode).sort()).toEqual(cfg.nodes.map((n) => n.name).sort());
    for (const node of cfg.nodes) {
      const m = byNode[node.name];
      const roles = ROLES.filter((r) => node.roles.includes(r));
      expect(m.machineType).toBe(node.kubernetesControlPlane ? "controlplane" : "worker");
      expect(m.roles).toEqual(roles);
      expect(m.group).toBe(groupName(machineType(node), roles));
      expect(m.patches).toEqual([`patches/${m.group}.yaml`, `nodes/${node.name}.yaml`]);
      for (const p of m.patches) file(files, `talos/${p}`);
      expect(m.schematicId).toBe(schematicId(schematicOf(files, m.group)));
      expect(m.installerImage).toBe(`factory.talos.dev/installer/${m.schematicId}:${TALOS_VERSION}`);
    }
  });

  it("writes one patch and one schematic per role combination present, and nothing else", () => {
    const groups = new Set(Object.values(byNode).map((m) => m.group));
    const patches = files.filter((f) => f.path.startsWith("talos/patches/")).map((f) => f.path);
    const schematics = files.filter((f) => f.path.startsWith("talos/schematics/")).map((f) => f.path);
    expect(patches.sort()).toEqual([...groups].map((g) => `talos/patches/${g}.yaml`).sort());
    expect(schematics.sort()).toEqual([...groups].map((g) => `talos/schematics/${g}.yaml`).sort());
    expect(files.every((f) => f.path.startsWith("talos/"))).toBe(true);
  });

  it("installs every machine from its role combination's schematic", () => {
    for (const m of Object.values(byNode)) {
      expect(v1alpha1(groupPatchOf(files, m.group)).machine.install.image).toBe(m.installerImage);
    }
  });

  it("loads the stack's watchdog module and openvswitch, and leaves the CNI to Kube-OVN, everywhere", () => {
    for (const m of Object.values(byNode)) {
      const doc = v1alpha1(groupPatchOf(files, m.group));
      expect(doc.machine.kernel.modules.map((x: any) => x.name)).toEqual([cfg.talos!.watchdogModule, "openvswitch"]);
      expect(doc.cluster.network.cni).toEqual({ name: "none" });
    }
  });

  it("taints workers at registration and never through machine.nodeTaints", () => {
    for (const m of Object.values(byNode)) {
      const doc = v1alpha1(groupPatchOf(files, m.group));
      const wanted = m.roles.filter((r) => topo.taintedRoles.includes(r)).map((r) => roleTaint(r).key);
      const registered = (doc.machine.kubelet?.extraConfig?.registerWithTaints ?? []).map((t: any) => t.key);
      if (m.machineType === "worker") {
        expect(doc.machine.nodeTaints, m.group).toBeUndefined();
        expect(registered.sort()).toEqual(wanted.sort());
        for (const t of doc.machine.kubelet?.extraConfig?.registerWithTaints ?? []) expect(t.effect).toBe("NoSchedule");
      } else {
        expect(registered).toEqual([]);
        expect(Object.keys(doc.machine.nodeTaints ?? {}).sort()).toEqual(wanted.sort());
      }
    }
  });

  it("lets control-plane machines that carry OpenKeel roles take workloads, and only those", () => {
    for (const m of Object.values(byNode)) {
      const doc = v1alpha1(groupPatchOf(files, m.group));
      const expected = m.machineType === "controlplane" && m.roles.length > 0;
      expect(doc.cluster.allowSchedulingOnControlPlanes === true, m.group).toBe(expected);
    }
  });

  it("gives compute machines the static CPU manager, single-NUMA topology and the host reservation of the config", () => {
    const c = cfg.talos!.compute!;
    for (const m of Object.values(byNode)) {
      const extra = v1alpha1(groupPatchOf(files, m.group)).machine.kubelet?.extraConfig ?? {};
      if (m.roles.includes("compute")) {
        expect(extra.cpuManagerPolicy).toBe("static");
        expect(extra.topologyManagerPolicy).toBe("single-numa-node");
        expect(extra.reservedSystemCPUs).toBe(c.reservedSystemCPUs);
        expect(extra.systemReserved).toEqual({
          memory: c.systemReserved.memory,
          "ephemeral-storage": c.systemReserved["ephemeral-storage"],
          pid: String(c.systemReserved.pid),
        });
      } else {
        expect(extra.cpuManagerPolicy, m.group).toBeUndefined();
        expect(extra.reservedSystemCPUs, m.group).toBeUndefined();
        expect(extra.systemReserved, m.group).toBeUndefined();
      }
    }
  });

  it("gives storage and controlPlane machines (Longhorn disk nodes) the Longhorn user volume and a shared kubelet mount of it", () => {
    const disk = longhornDisks(cfg.talos!).longhornDisk!;
    for (const m of Object.values(byNode)) {
      const patch = groupPatchOf(files, m.group);
      const volumes = kindDocs(patch, "UserVolumeConfig");
      const mounts = v1alpha1(patch).machine.kubelet?.extraMounts ?? [];
      if (m.roles.includes("storage") || m.roles.includes("controlPlane")) {
        // storage machines also get the capacity disk, Swift's HDD tier (test/openkeel/large-scale.test.ts)
        const capacity = m.roles.includes("storage") && cfg.talos!.capacityDisk !== undefined ? 1 : 0;
        expect(volumes, m.group).toHaveLength(1 + capacity);
        expect(volumes[0].name).toBe("longhorn");
        expect(volumes[0].provisioning.diskSelector.match).toBe(disk.diskSelector);
        expect(volumes[0].provisioning.minSize).toBe(disk.minSize);
        expect(mounts[0]).toEqual({ destination: LONGHORN_DATA_PATH, type: "bind", source: LONGHORN_DATA_PATH, options: ["bind", "rshared", "rw"] });
        expect(mounts).toHaveLength(1 + capacity);
      } else {
        expect(volumes, m.group).toEqual([]);
        expect(mounts, m.group).toEqual([]);
      }
    }
  });

  it("puts the Longhorn extensions on every machine that can mount a Longhorn volume, Kata on containers machines", () => {
    for (const m of Object.values(byNode)) {
      const ext: string[] = schematicOf(files, m.group).customization.systemExtensions?.officialExtensions ?? [];
      const mountsVolumes = m.roles.some((r) => r !== "network" || !topo.taintedRoles.includes(r));
      for (const e of LONGHORN_EXTENSIONS) expect(ext.includes(e), `${m.group} ${e}`).toBe(mountsVolumes);
      expect(ext.includes(KATA_EXTENSION), m.group).toBe(m.roles.includes("containers"));
    }
  });

  it("reserves hugepages through the schematic on compute machines, never through the machine config", () => {
    const hp = cfg.talos!.compute!.hugepages!;
    const size = hp.pageSize === "1Gi" ? "1G" : "2M";
    for (const m of Object.values(byNode)) {
      const args: string[] = schematicOf(files, m.group).customization.extraKernelArgs ?? [];
      if (m.roles.includes("compute")) {
        expect(args).toEqual(expect.arrayContaining([`hugepagesz=${size}`, `hugepages=${hp.count}`, `default_hugepagesz=${size}`]));
        for (const a of cfg.talos!.compute!.extraKernelArgs) expect(args).toContain(a);
      } else {
        expect(args, m.group).toEqual([]);
      }
      const install = v1alpha1(groupPatchOf(files, m.group)).machine.install;
      expect(Object.keys(install)).toEqual(["image"]);
    }
  });

  it("names each node after its inventory entry, pins its node IP and asserts only labels a kubelet may set", () => {
    for (const node of cfg.nodes) {
      const f = file(files, `talos/nodes/${node.name}.yaml`);
      expect(kindDocs(f, "HostnameConfig")).toEqual([{ apiVersion: "v1alpha1", kind: "HostnameConfig", auto: "off", hostname: node.name }]);
      const doc = v1alpha1(f);
      expect(doc.machine.kubelet.nodeIP.validSubnets).toEqual([`${node.internalIP}/32`]);
      const labels = doc.machine.nodeLabels ?? {};
      expect(Object.keys(labels).some((k) => k.includes("kubernetes.io/") && k !== "topology.kubernetes.io/zone")).toBe(false);
      if (node.zone) expect(labels["topology.kubernetes.io/zone"]).toBe(node.zone);
      for (const [k, v] of Object.entries(node.labels)) expect(labels[k]).toBe(v);
    }
  });
});

describe("Talos node configuration per topology", () => {
  const groupsOf = (stack: string) => talosGroups(shippedConfig(stack).nodes).map((g) => g.name);

  it("small: one hyperconverged control-plane combination", () => {
    expect(groupsOf("prod-small")).toEqual(["controlplane-control-plane+compute+network+storage+containers"]);
  });

  it("medium: control plane, compute+storage, network, provisioning", () => {
    expect(groupsOf("prod-medium")).toEqual(["controlplane-control-plane", "worker-compute+storage", "worker-network", "worker-provisioning"]);
  });

  it("large: the Kubernetes control plane alone, and one combination per dedicated role", () => {
    expect(groupsOf("prod-large")).toEqual([
      "controlplane",
      "worker-compute",
      "worker-control-plane",
      "worker-network",
      "worker-provisioning",
      "worker-storage",
    ]);
  });

  it("large: the Kubernetes control-plane-only machines keep Talos' control-plane taint and boot the plain image", () => {
    const files = filesOf(shippedConfig("prod-large"));
    const doc = v1alpha1(groupPatchOf(files, "controlplane"));
    expect(doc.cluster.allowSchedulingOnControlPlanes).toBeUndefined();
    expect(doc.machine.nodeTaints).toBeUndefined();
    expect(schematicOf(files, "controlplane")).toEqual({ customization: {} });
  });

  it("control-plane machines whose roles are tainted get machine.nodeTaints (admin identity), workers registerWithTaints", () => {
    const files = filesOf(mutatedConfig("prod-medium", (r) => (r.taints = true)));
    const cp = v1alpha1(groupPatchOf(files, "controlplane-control-plane"));
    expect(cp.machine.nodeTaints).toEqual({ "node-role.openkeel.io/control-plane": ":NoSchedule" });
    expect(cp.machine.kubelet?.extraConfig?.registerWithTaints).toBeUndefined();
    const cmp = v1alpha1(groupPatchOf(files, "worker-compute+storage"));
    expect(cmp.machine.kubelet.extraConfig.registerWithTaints).toEqual([
      { key: "node-role.openkeel.io/compute", effect: "NoSchedule" },
      { key: "node-role.openkeel.io/storage", effect: "NoSchedule" },
    ]);
  });

  it("without taints, no machine registers with any", () => {
    // provisioning nodes are always tainted (§ 1.4, D7): a stack without taints has none
    const files = filesOf(
      mutatedConfig("prod-medium", (r) => {
        r.taints = false;
        r.nodes = r.nodes.filter((n: { roles: string[] }) => !n.roles.includes("provisioning"));
        delete r.services.ironic; // no provisioning node: Ironic does not run
      }),
    );
    for (const f of files.filter((x) => x.path.startsWith("talos/patches/"))) {
      const doc = v1alpha1(f);
      expect(doc.machine.kubelet?.extraConfig?.registerWithTaints, f.path).toBeUndefined();
      expect(doc.machine.nodeTaints, f.path).toBeUndefined();
    }
  });

  it("an untainted network node may run pods with volumes, so it gets the Longhorn extensions", () => {
    const cfg = mutatedConfig("prod-medium", (r) => (r.taints = ["compute", "provisioning"]));
    const ext = groupSchematic({ roles: ["network"] }, resolveStack(cfg).topology, cfg.talos!).customization.systemExtensions;
    expect(ext?.officialExtensions).toEqual([...LONGHORN_EXTENSIONS].sort());
    const tainted = shippedConfig("prod-medium");
    expect(groupSchematic({ roles: ["network"] }, resolveStack(tainted).topology, tainted.talos!).customization).toEqual({});
  });

  it("a containers node added to medium gets Kata and the Longhorn extensions", () => {
    const files = filesOf(mutatedConfig("prod-medium", (r) => r.nodes.push({ name: "ctr-1", internalIP: "10.30.4.11", roles: ["containers"] })));
    const ext = schematicOf(files, "worker-containers").customization.systemExtensions.officialExtensions;
    expect(ext).toEqual([...LONGHORN_EXTENSIONS, KATA_EXTENSION].sort());
  });

  it("follows the config: another watchdog, reservation, page size and disk change the patches and schematics", () => {
    const cfg = mutatedConfig("prod-medium", (r) => {
      r.talos.watchdogModule = "sp5100_tco";
      r.talos.compute = { reservedSystemCPUs: "0,1,48,49", systemReserved: { memory: "16Gi", pid: 4096 }, hugepages: { pageSize: "2Mi", count: 8192 } };
      r.talos.longhornDisk = { diskSelector: "disk.serial == 'X1'", minSize: "2TB", maxSize: "90%" };
    });
    const files = filesOf(cfg);
    const patch = groupPatchOf(files, "worker-compute+storage");
    const doc = v1alpha1(patch);
    expect(doc.machine.kernel.modules[0]).toEqual({ name: "sp5100_tco" });
    expect(doc.machine.kubelet.extraConfig.reservedSystemCPUs).toBe("0,1,48,49");
    expect(doc.machine.kubelet.extraConfig.systemReserved).toEqual({ memory: "16Gi", "ephemeral-storage": "256Mi", pid: "4096" });
    expect(kindDocs(patch, "UserVolumeConfig")[0].provisioning).toEqual({
      diskSelector: { match: "disk.serial == 'X1'" },
      minSize: "2TB",
      maxSize: "90%",
    });
    expect(schematicOf(files, "worker-compute+storage").customization.extraKernelArgs).toEqual(["default_hugepagesz=2M", "hugepagesz=2M", "hugepages=8192"]);
  });

  it("without hugepages, compute schematics carry no kernel arguments", () => {
    const files = filesOf(mutatedConfig("prod-medium", (r) => delete r.talos.compute.hugepages));
    expect(schematicOf(files, "worker-compute+storage").customization.extraKernelArgs).toBeUndefined();
  });

  it("a dotted node name registers with its FQDN, an IPv6 node IP is a /128", () => {
    const files = filesOf(
      mutatedConfig("prod-medium", (r) => {
        // an IPv6 node in an IPv4 node subnet would be refused (openkeel:network), and a static
        // node address takes its prefix from that subnet
        delete r.network;
        for (const n of Object.values<{ nodeAddress: unknown }>(r.hostNetworks)) n.nodeAddress = { link: "bond0", method: "dhcp" };
        r.nodes.push({ name: "prov-2.dc1.example", internalIP: "fd00::12", roles: ["provisioning"], hostNetwork: "provisioning" });
      }),
    );
    const doc = v1alpha1(file(files, "talos/nodes/prov-2.dc1.example.yaml"));
    expect(doc.machine.kubelet).toEqual({ nodeIP: { validSubnets: ["fd00::12/128"] }, registerWithFQDN: true });
    expect(v1alpha1(file(files, "talos/nodes/prov-1.yaml")).machine.kubelet.registerWithFQDN).toBeUndefined();
  });
});

describe("Talos builder invariants (the config schema makes these unreachable from a stack file)", () => {
  const cfg = shippedConfig("prod-medium");
  const topo = resolveStack(cfg).topology;
  const group = (name: string) => talosGroups(cfg.nodes).find((g) => g.name === name)!;

  it("refuses compute or storage machines without their openkeel:talos block", () => {
    expect(() => groupPatch(group("worker-compute+storage"), topo, { ...cfg.talos!, compute: undefined })).toThrow(/talos\.compute/);
    expect(() => groupPatch(group("worker-compute+storage"), topo, { ...cfg.talos!, longhornDisk: undefined })).toThrow(/talos\.longhornDisk/);
    expect(() => talosNodeConfig({ ...cfg, talos: undefined }, topo)).toThrow(/without openkeel:talos/);
  });
});

describe("Image Factory schematic IDs", () => {
  // Vectors from siderolabs/image-factory pkg/schematic/schematic_test.go (TestID).
  it("match the factory's for the empty schematic and for kernel arguments", () => {
    expect(schematicId({ customization: {} })).toBe("376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba");
    expect(schematicId({ customization: { extraKernelArgs: ["noapic", "nolapic"] } })).toBe("9cba8e32753f91a16c1837ab8abf356af021706ef284aef07380780177d9a06c");
  });

  it("write extensions nested as yaml.v3 does, and differ when they differ", () => {
    const a = { customization: { systemExtensions: { officialExtensions: ["siderolabs/iscsi-tools"] } } };
    expect(canonicalSchematic(a)).toBe("customization:\n    systemExtensions:\n        officialExtensions:\n            - siderolabs/iscsi-tools\n");
    const b = { customization: { systemExtensions: { officialExtensions: ["siderolabs/iscsi-tools", "siderolabs/util-linux-tools"] } } };
    expect(schematicId(a)).not.toBe(schematicId(b));
  });

  it("refuse strings whose YAML quoting would make the offline ID differ from the factory's", () => {
    for (const bad of ["on", "1234", "a: b", "x y", "'q'"]) {
      expect(() => schematicId({ customization: { extraKernelArgs: [bad] } }), bad).toThrow(/plain YAML scalar/);
    }
    expect(() => schematicId({ customization: { systemExtensions: { officialExtensions: ["iscsi-tools"] } } })).toThrow(/publisher/);
  });

  it("name the installer of the pinned Talos release", () => {
    expect(installerImage("abc")).toBe(`factory.talos.dev/installer/abc:${TALOS_VERSION}`);
  });
});
