// Talos machine configuration of production nodes, from the same inventory as the Plan: one patch
// per role combination (with the machine type: Talos treats control-plane and worker machines
// differently), one small patch per node, one Image Factory schematic per role combination.
// Pure data; render/rendered.ts writes it under rendered/<stack>/talos/.
//
// Facts: ../shared/design/PEERS-TALOS-KIND-FACTS.md Part B (field reference, how nodeLabels and
// taints are written, extensions, watchdog, schema) and PLATFORM-FACTS.md § 1 (Longhorn on Talos).
import type { z } from "zod";
import type { LoadedConfig, NodeConfig } from "../config/schema";
import { installerImage, schematicId, type Schematic } from "./image-factory";
import { nodeSelfLabels } from "./node-labels";
import { hostNetworkDocuments } from "./talos-network";
import { clusterImages, kubeletImage } from "./talos-kubernetes";
import type { NodeConfigFile, NodeLevelConfig } from "../plan/plan";
import { TALOS_MACHINES_FILE, type TalosMachine, type TalosMachinesFile } from "../render/rendered";
import { K8S_CONTROL_PLANE_LABEL, ROLES, roleSlug, type LabelProfile, type Role, type Taint } from "../config/roles";
import { HUGEPAGE_SIZES, userVolumePath, type InstallDiskSelector, type TalosConfig, type TalosDeclaration, type userVolumeSchema } from "../config/talos";
import { ovsNics } from "../config/host-network";
import { networkOf, type NetworkConfig } from "../config/network";
import { nodeTaints, type Topology } from "../topology/topology";
import { LONGHORN_DISK_ROLES, TALOS_DATA_PATH, VOLUME_CONSUMER_ROLES } from "../platform/longhorn-names";
import { LONGHORN_TALOS, longhornDisks } from "../platform/longhorn-talos";
import { watchdogModuleOf } from "../platform/medik8s-talos";
import { KUBERNETES_VERSION, TALOS_IMAGE_FACTORY, TALOS_VERSION } from "../platform/versions";
import { metallbSettings } from "../platform/metallb-settings";

export type MachineType = "controlplane" | "worker";

/** Where Talos mounts the `longhorn` user volume: Longhorn's defaultDataPath on Talos. */
export const LONGHORN_DATA_PATH = TALOS_DATA_PATH;

/** Extensions a node needs to attach Longhorn volumes (iscsiadm, util-linux in the host namespace). */
export const LONGHORN_EXTENSIONS = ["siderolabs/iscsi-tools", "siderolabs/util-linux-tools"] as const;
/** The Kata runtime of Zun's containers (RuntimeClass handlers `kata`, `kata-qemu`). */
export const KATA_EXTENSION = "siderolabs/kata-containers";
/** Kube-OVN's datapath: built into the Talos kernel (=y), listed so the dependency is explicit. */
const OVS_MODULE = "openvswitch";

export function machineType(node: NodeConfig): MachineType {
  return node.kubernetesControlPlane ? "controlplane" : "worker";
}

/** A node's roles in the canonical order of ROLES. */
function orderedRoles(node: NodeConfig): Role[] {
  return ROLES.filter((r) => node.roles.includes(r));
}

/** `worker-compute+storage`, `controlplane-control-plane`, `controlplane` (no OpenKeel role). */
export function groupName(type: MachineType, roles: Role[]): string {
  return roles.length === 0 ? type : `${type}-${roles.map(roleSlug).join("+")}`;
}

export interface TalosGroup {
  name: string;
  machineType: MachineType;
  roles: Role[];
  nodes: NodeConfig[];
}

/** The role combinations present in the inventory, each with its machine type and nodes; sorted. */
export function talosGroups(nodes: NodeConfig[]): TalosGroup[] {
  const groups = new Map<string, TalosGroup>();
  for (const node of nodes) {
    const type = machineType(node);
    const roles = orderedRoles(node);
    const name = groupName(type, roles);
    const g = groups.get(name) ?? { name, machineType: type, roles, nodes: [] };
    g.nodes.push(node);
    groups.set(name, g);
  }
  return [...groups.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Whether pods with Longhorn volumes can run on the group's nodes: a role that mounts volumes, or
 * an untainted role (generic pods, some with volumes, land there). Not the control-plane-only
 * nodes of the large topology: they keep the upstream control-plane taint.
 */
function attachesLonghornVolumes(group: Pick<TalosGroup, "roles">, topo: Pick<Topology, "taintedRoles">): boolean {
  return group.roles.some((r) => VOLUME_CONSUMER_ROLES.includes(r) || !topo.taintedRoles.includes(r));
}

/** Kernel arguments of a group's schematic: hugepages (and the extra arguments) on compute. */
function kernelArgs(group: Pick<TalosGroup, "roles">, talos: TalosConfig): string[] {
  const compute = talos.compute;
  if (!group.roles.includes("compute") || compute === undefined) return [];
  const args: string[] = [];
  if (compute.hugepages) {
    const size = HUGEPAGE_SIZES[compute.hugepages.pageSize];
    args.push(`default_hugepagesz=${size}`, `hugepagesz=${size}`, `hugepages=${compute.hugepages.count}`);
  }
  return [...args, ...compute.extraKernelArgs];
}

/** The Image Factory schematic of a role combination. */
export function groupSchematic(group: Pick<TalosGroup, "roles">, topo: Pick<Topology, "taintedRoles">, talos: TalosConfig): Schematic {
  const extensions: string[] = [];
  if (attachesLonghornVolumes(group, topo)) extensions.push(...LONGHORN_EXTENSIONS);
  if (group.roles.includes("containers")) extensions.push(KATA_EXTENSION);
  extensions.sort();
  const args = kernelArgs(group, talos);
  return {
    customization: {
      ...(args.length > 0 ? { extraKernelArgs: args } : {}),
      ...(extensions.length > 0 ? { systemExtensions: { officialExtensions: extensions } } : {}),
    },
  };
}

/** Talos `machine.nodeTaints` value: `value:Effect` (an empty value stays empty). */
function talosTaintValue(t: Taint): string {
  return `${t.value ?? ""}:${t.effect}`;
}

/**
 * The taints of a group's nodes other than the upstream control-plane taint, which Talos manages
 * itself from cluster.allowSchedulingOnControlPlanes.
 */
function groupTaints(group: TalosGroup, topo: Pick<Topology, "taintedRoles">): Taint[] {
  return nodeTaints(group.nodes[0], topo).filter((t) => t.key !== K8S_CONTROL_PLANE_LABEL);
}

/**
 * A Kubernetes control-plane node that carries OpenKeel roles must take their pods, so it drops
 * the upstream control-plane taint (topology.nodeTaints says the same).
 */
function allowsSchedulingOnControlPlane(group: Pick<TalosGroup, "machineType" | "roles">): boolean {
  return group.machineType === "controlplane" && group.roles.length > 0;
}

/**
 * The v1alpha1 patch of a role combination (and, where Longhorn has disks, its user volume):
 * - taints: workers register with them (kubelet registerWithTaints); a worker may not change its
 *   taints afterwards, and machine.nodeTaints on a worker would fail the node's whole label and
 *   taint write. Control-plane nodes use machine.nodeTaints (written with an admin identity).
 * - compute: static CPU manager, single-NUMA topology manager, reserved CPUs and systemReserved.
 * - storage and controlPlane (Longhorn disk nodes): the `longhorn` user volume (/var/mnt/longhorn)
 *   and a shared kubelet mount of it; storage nodes also the capacity disk, when the stack has one.
 * - every node: the watchdog module for Medik8s SNR, openvswitch, no Talos CNI (Kube-OVN).
 */
export function groupPatch(group: TalosGroup, topo: Pick<Topology, "taintedRoles">, talos: TalosConfig, network?: NetworkConfig): Record<string, unknown>[] {
  const taints = groupTaints(group, topo);
  const worker = group.machineType === "worker";
  const compute = group.roles.includes("compute") ? talos.compute : undefined;
  // the nodes that get a Longhorn disk (platform/longhorn.ts LONGHORN_DISK_ROLES)
  const storage = group.roles.some((r) => LONGHORN_DISK_ROLES.includes(r));
  if (group.roles.includes("compute") && compute === undefined) {
    throw new Error(`talos group ${group.name}: compute nodes without openkeel:talos.compute (the config schema requires it)`);
  }
  if (storage && longhornDisks(talos).longhornDisk === undefined) {
    throw new Error(`talos group ${group.name}: Longhorn disk nodes without openkeel:talos.longhornDisk (the config schema requires it)`);
  }

  const extraConfig: Record<string, unknown> = {};
  if (compute) {
    Object.assign(extraConfig, {
      cpuManagerPolicy: "static",
      topologyManagerPolicy: "single-numa-node",
      reservedSystemCPUs: compute.reservedSystemCPUs,
      systemReserved: {
        memory: compute.systemReserved.memory,
        "ephemeral-storage": compute.systemReserved["ephemeral-storage"],
        pid: String(compute.systemReserved.pid),
      },
    });
  }
  if (worker && taints.length > 0) {
    extraConfig.registerWithTaints = taints.map((t) => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect }));
  }

  const volumes = groupVolumes(group, talos);
  const kubelet: Record<string, unknown> = { image: kubeletImage() };
  if (Object.keys(extraConfig).length > 0) kubelet.extraConfig = extraConfig;
  if (volumes.length > 0) {
    kubelet.extraMounts = volumes.map(({ path }) => ({ destination: path, type: "bind", source: path, options: ["bind", "rshared", "rw"] }));
  }

  const machine: Record<string, unknown> = {
    install: { image: installerImage(schematicId(groupSchematic(group, topo, talos))) },
    kernel: { modules: [{ name: watchdogModuleOf(talos) }, { name: OVS_MODULE }] },
    kubelet,
  };
  if (!worker && taints.length > 0) {
    machine.nodeTaints = Object.fromEntries(taints.map((t) => [t.key, talosTaintValue(t)]));
  }

  // The pod and service ranges Kube-OVN is given (platform/kube-ovn.ts): the API server allocates
  // Service addresses from the same range Kube-OVN routes.
  const ranges = network ? { podSubnets: [network.podCIDR], serviceSubnets: [network.serviceCIDR] } : {};
  const cluster: Record<string, unknown> = { ...clusterImages(group.machineType), network: { cni: { name: "none" }, ...ranges } };
  if (allowsSchedulingOnControlPlane(group)) cluster.allowSchedulingOnControlPlanes = true;

  return [{ machine, cluster }, ...siteDocuments(talos), ...volumes.map(({ name, disk }) => userVolume(name, disk))];
}

/**
 * What every machine of the site shares, so that nothing comes from Talos' internet defaults
 * (1.1.1.1, 8.8.8.8, time.cloudflare.com: pkg/machinery/constants/constants.go:960-966 at
 * v1.13.9): its resolvers, its time servers, and the mirrors of every registry it pulls from. The
 * mirrors also carry Talos' installer: the install pulls it with the machine's registry
 * configuration (internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_sequencer_tasks.go:1545-1556,
 * crires.RegistryBuilder).
 */
function siteDocuments(talos: TalosConfig): Record<string, unknown>[] {
  const docs: Record<string, unknown>[] = [];
  if (talos.nameservers) docs.push({ apiVersion: "v1alpha1", kind: "ResolverConfig", nameservers: talos.nameservers.map((address) => ({ address })) });
  if (talos.timeServers) docs.push({ apiVersion: "v1alpha1", kind: "TimeSyncConfig", ntp: { servers: [...talos.timeServers] } });
  for (const [name, m] of Object.entries(talos.registries?.mirrors ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    docs.push({
      apiVersion: "v1alpha1",
      kind: "RegistryMirrorConfig",
      name,
      endpoints: m.endpoints.map((url) => ({ url, ...(m.overridePath !== undefined ? { overridePath: m.overridePath } : {}) })),
      ...(m.skipFallback !== undefined ? { skipFallback: m.skipFallback } : {}),
    });
  }
  return docs;
}

/** The install disk selector of a node: its own, else the stack's (the config rules require one of them in production). */
export function nodeInstallDisk(node: Pick<NodeConfig, "installDisk">, talos: Pick<TalosConfig, "installDisk">): InstallDiskSelector | undefined {
  const { name: _refused, ...selector } = node.installDisk ?? talos.installDisk ?? {};
  return Object.keys(selector).length > 0 ? (selector as InstallDiskSelector) : undefined;
}

type UserVolumeDisk = z.output<typeof userVolumeSchema>;

/** The user volumes the components declare (a Longhorn disk, its capacity disk). */
const DECLARED_VOLUMES: NonNullable<TalosDeclaration["volumes"]> = LONGHORN_TALOS.volumes;

/** The user volumes a node's Talos patch gives it, each with the stack key that chose its disk. */
export function nodeVolumes(node: Pick<NodeConfig, "roles">, talos: TalosConfig): { name: string; disk: UserVolumeDisk; key: string }[] {
  return groupVolumes(node, talos).map(({ name, disk, key }) => ({ name, disk, key }));
}

/**
 * The disks of a group, as Talos user volumes mounted at /var/mnt/<name>, as Longhorn declares them
 * (platform/longhorn-talos.ts): the `longhorn` volume on every disk node, and on storage nodes the
 * capacity disk of Swift's HDD tier when the stack has one (platform/longhorn.ts tags the two).
 */
function groupVolumes(group: Pick<TalosGroup, "roles">, talos: TalosConfig): { name: string; path: string; disk: UserVolumeDisk; key: string }[] {
  return DECLARED_VOLUMES.flatMap(({ key, name, roles }) => {
    const disk = talos[key] as UserVolumeDisk | undefined;
    return disk !== undefined && group.roles.some((r) => roles.includes(r)) ? [{ name, path: userVolumePath(name), disk, key }] : [];
  });
}

function userVolume(name: string, disk: UserVolumeDisk): Record<string, unknown> {
  return {
    apiVersion: "v1alpha1",
    kind: "UserVolumeConfig",
    name,
    provisioning: {
      diskSelector: { match: disk.diskSelector },
      minSize: disk.minSize,
      ...(disk.maxSize !== undefined ? { maxSize: disk.maxSize } : {}),
      ...(disk.grow !== undefined ? { grow: disk.grow } : {}),
    },
    filesystem: { type: "xfs" },
  };
}

/** A node address as a single-address subnet, for kubelet nodeIP.validSubnets. */
function hostSubnet(ip: string): string {
  return ip.includes(":") ? `${ip}/128` : `${ip}/32`;
}

/**
 * The patch of one node: its hostname (the Node name the node-roles phase patches), the inventory
 * IP as the kubelet's node IP (Kube-OVN's MASTER_NODES uses it), the labels it may assert itself
 * (zone, own-prefix labels; never a role label of the hardened profile), and its host network's
 * links with its own address (./talos-network.ts).
 */
function nodePatch(
  node: NodeConfig,
  profile: LabelProfile,
  cfg: Pick<LoadedConfig, "hostNetworks" | "network" | "platform"> & { talos: TalosConfig },
): Record<string, unknown>[] {
  const kubelet: Record<string, unknown> = {};
  if (node.internalIP !== undefined) kubelet.nodeIP = { validSubnets: [hostSubnet(node.internalIP)] };
  // A dotted name is an FQDN to Talos: without this the Node would be named after its first label.
  if (node.name.includes(".")) kubelet.registerWithFQDN = true;
  const machine: Record<string, unknown> = {};
  const installDisk = nodeInstallDisk(node, cfg.talos);
  // the machine's own disk (its serial, its boot device's bus path): never gen config's /dev/sda
  if (installDisk) machine.install = { diskSelector: installDisk };
  if (Object.keys(kubelet).length > 0) machine.kubelet = kubelet;
  const labels = nodeSelfLabels(node, profile);
  if (Object.keys(labels).length > 0) machine.nodeLabels = labels;
  const docs: Record<string, unknown>[] = [];
  if (Object.keys(machine).length > 0) docs.push({ machine });
  docs.push({ apiVersion: "v1alpha1", kind: "HostnameConfig", auto: "off", hostname: node.name });
  const network = node.hostNetwork === undefined ? undefined : cfg.hostNetworks?.[node.hostNetwork];
  const metallb = metallbSettings(cfg.platform);
  const vip = metallb?.vipNetwork ? { ...metallb.vipNetwork, interfaces: metallb.interfaces } : undefined;
  if (network) docs.push(...hostNetworkDocuments(node, network, cfg.network?.nodeSubnet, vip));
  return docs;
}

const dir = "talos";

/** Every Talos file of a production stack. */
export function talosNodeConfig(cfg: LoadedConfig, topo: Topology): NodeLevelConfig {
  const talos = cfg.talos;
  if (talos === undefined) throw new Error(`stack ${cfg.stack}: Talos machines without openkeel:talos (its environment's config rules require it)`);
  const files: NodeConfigFile[] = [];
  const machines: Record<string, TalosMachine> = {};
  for (const group of talosGroups(cfg.nodes)) {
    const schematic = groupSchematic(group, topo, talos);
    const id = schematicId(schematic);
    const names = group.nodes.map((n) => n.name).join(", ");
    const rolesText = group.roles.length ? `roles ${group.roles.join(", ")}` : "no OpenKeel role";
    files.push({
      path: `${dir}/patches/${group.name}.yaml`,
      comment:
        `Talos machine-config patch: ${group.machineType} machines with ${rolesText}.\n` +
        `Nodes: ${names}.\n` +
        `Apply on the ${group.machineType}.yaml of \`talosctl gen config\`, then the node's own patch (talos/machines.yaml).`,
      documents: groupPatch(group, topo, talos, networkOf(cfg)),
    });
    files.push({
      path: `${dir}/schematics/${group.name}.yaml`,
      comment:
        `Image Factory schematic: ${group.machineType} machines with ${rolesText} (${names}).\n` +
        `ID ${id}: curl -X POST --data-binary @<this file> https://${TALOS_IMAGE_FACTORY}/schematics returns it.\n` +
        `Installer: ${installerImage(id)}`,
      documents: [schematic as unknown as Record<string, unknown>],
    });
    for (const node of group.nodes) {
      files.push({
        path: `${dir}/nodes/${node.name}.yaml`,
        comment: `Talos machine-config patch of node ${node.name}: hostname, node IP, self-asserted labels${node.hostNetwork ? `, host network ${node.hostNetwork}` : ""}. Apply after patches/${group.name}.yaml.`,
        documents: nodePatch(node, topo.profile, { ...cfg, talos }),
      });
      const ovs = node.hostNetwork === undefined ? [] : (cfg.hostNetworks?.[node.hostNetwork]?.ovs ?? []);
      machines[node.name] = {
        machineType: group.machineType,
        roles: group.roles,
        group: group.name,
        patches: [`patches/${group.name}.yaml`, `nodes/${node.name}.yaml`],
        schematic: `schematics/${group.name}.yaml`,
        schematicId: id,
        installerImage: installerImage(id),
        ...(node.machine !== undefined ? { machine: node.machine } : {}),
        // Open vSwitch's, not Talos': no document above names them (config/host-network.ts)
        ...(ovs.length > 0 ? { ovs: ovs.map((p) => ({ name: p.name, nics: ovsNics(p) })) } : {}),
      };
    }
  }
  files.push({
    path: TALOS_MACHINES_FILE,
    comment:
      "Per node: the Talos machine type, the patches to apply in order (paths relative to this folder),\n" +
      "the Image Factory schematic and the installer image it yields; the Kubernetes version the patches' images carry\n" +
      "(talosctl gen config --kubernetes-version). Not a Talos document.",
    documents: [
      {
        talosVersion: TALOS_VERSION,
        kubernetesVersion: KUBERNETES_VERSION,
        imageFactory: `https://${TALOS_IMAGE_FACTORY}`,
        machines,
      } satisfies TalosMachinesFile,
    ],
  });
  return { files: files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)) };
}
