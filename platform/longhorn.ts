// Longhorn (Helm): disks and replicas only on storage nodes; the system-managed components
// (instance managers, engines, CSI plugin) wherever a pod may mount a volume (§ 2.3). And its
// StorageClasses: `longhorn-local` is D5 (one replica, strict-local, for the services that
// replicate their own data: Galera, RabbitMQ quorum queues, OVN central RAFT, Swift);
// `longhorn-vm` holds VM root disks and Cinder volumes with the topology's replica count,
// migratable where KubeVirt can live-migrate; `longhorn-snapshot` takes CSI snapshots.
import type { Check } from "../config/problems";
import { hasTrait, NODE_AGENT_TOLERATIONS } from "../config/lifecycle";
import { RESERVED_TOLERATION, roleLabelKey, type LabelProfile, type Role, type Toleration } from "../config/roles";
import type { Config, NodeConfig } from "../config/schema";
import { CAPACITY_VOLUME_NAME, LONGHORN_VOLUME_NAME } from "../config/talos";
import { serviceEnabled } from "../topology/services";
import { stateChange, type NodeLifecycle, type NodeTransition, type NodeView, type SlottedStep } from "../lifecycle/contributor";
import type { NodeMetadataContributor } from "../plan/node-roles";
import { APPLY_AS_PATCH_ANNOTATION, helmReleaseUnit, type HelmReleaseUnit, type K8sObject, type ManifestsUnit, manifestsUnit } from "../plan/plan";
import {
  CONTROL_PLANE,
  unplaced,
  isObj,
  num,
  obj,
  platformComponent,
  podScheduling,
  priorityOf,
  type ChartWorkloads,
  type Component,
  type Obj,
  type ObjectReader,
  type UnitReader,
} from "../placement/workloads";
import type { PodScheduling } from "../placement/scheduling";
import type { Topology } from "../topology/topology";
import type { PlatformComponent } from "./component";
import { contentAt, controlPlaneScheduling, namespace, rolesTolerations, selectorAndTolerations, type Contents, type StackContext } from "./context";
import { fact } from "../plan/needs";
import { attachmentNetworkObjects, type AttachmentNetworkRef } from "./kube-ovn";
import { longhornConstraint, longhornFacts } from "./longhorn-feasibility";
import { LONGHORN_CHART } from "./versions";
import type { ComponentNeed, HostContract } from "../plan/host";

const LONGHORN_NODE_EVICTION_TYPE = "openkeel:platform:LonghornNodeEviction";
const LONGHORN_STORAGE_NETWORK_TYPE = "openkeel:platform:LonghornStorageNetwork";

export const LONGHORN_NAMESPACE = "longhorn-system";
export const LONGHORN_DRIVER = "driver.longhorn.io";
const LONGHORN_UNIT = "longhorn";
/** The type token of Longhorn's release (what else says a stack installs Longhorn). */
export const LONGHORN_TYPE = "openkeel:platform:Longhorn";
const STORAGE_CLASSES_UNIT = "storage-classes";
/** D5: one replica, kept on the node of the pod that uses it (the parameters that make a class strict-local). */
export const STRICT_LOCAL_PARAMETERS = { numberOfReplicas: "1", dataLocality: "strict-local" } as const;
const CREATE_DEFAULT_DISK_LABEL = "node.longhorn.io/create-default-disk";
/** Talos ≥ 1.10 mounts the `longhorn` UserVolumeConfig (nodes/talos.ts) here; elsewhere Longhorn's default. */
export const TALOS_DATA_PATH = "/var/mnt/longhorn";
const DEFAULT_DATA_PATH = "/var/lib/longhorn";
/** Keeps system-managed pods off non-Linux nodes without restricting them to any role. */
const SYSTEM_MANAGED_NODE_SELECTOR: Record<string, string> = { "kubernetes.io/os": "linux" };

/**
 * Roles whose nodes run pods with Longhorn volumes: Galera, RabbitMQ and OVN central
 * (controlPlane), VM disks (compute), Swift and the replicas (storage), Zun volumes (containers),
 * the Ironic image cache (provisioning). Network nodes run gateways, BGP and ingress: no volume,
 * although § 5.3's example taintToleration lists them.
 */
export const VOLUME_CONSUMER_ROLES: readonly Role[] = ["controlPlane", "compute", "storage", "containers", "provisioning"];

/** `key=value:Effect` (Equal) or `key:Effect` (Exists), joined by `;`: Longhorn's taint-toleration setting. */
export function formatLonghornTolerations(tolerations: Toleration[]): string {
  return tolerations
    .map((t) => {
      if (!t.key || !t.effect) throw new Error(`Longhorn cannot express a toleration without key and effect: ${JSON.stringify(t)}`);
      const pair = t.operator === "Exists" ? t.key : `${t.key}=${t.value ?? ""}`;
      return `${pair}:${t.effect}`;
    })
    .join(";");
}

/** `key:value` joined by `;`: Longhorn's system-managed-components-node-selector setting. */
export function formatLonghornNodeSelector(selector: Record<string, string>): string {
  return Object.entries(selector)
    .map(([k, v]) => `${k}:${v}`)
    .join(";");
}

/**
 * Tolerations of everything that must run where volumes are used: the taint of every role that
 * consumes volumes, whether it is tainted today or not (changing Longhorn's taint-toleration later
 * needs every volume detached), and the Masakari reserved-host taint.
 */
function volumeConsumerTolerations(): Toleration[] {
  return [...rolesTolerations(VOLUME_CONSUMER_ROLES), RESERVED_TOLERATION, ...NODE_AGENT_TOLERATIONS];
}

/**
 * When a drain may take down the instance manager of a node that holds the last healthy replica of
 * a volume (Longhorn setting node-drain-policy; longhorn-manager types/setting.go, default
 * block-if-contains-last-replica; controller/instance_manager_controller.go
 * canDeleteInstanceManagerPDB). Every strict-local volume of D5 (Galera, RabbitMQ, OVN central,
 * Swift devices) is such a last replica, so under the default no control-plane or storage node's
 * drain ever finishes; eviction cannot move them either (longhorn/longhorn#8753: strict-local and
 * the block-for-eviction policies are incompatible by design). This policy lets the drain finish
 * once the member's pod is evicted and its volume detached (its replica stopped), and still
 * blocks it while a replica runs with no healthy copy elsewhere: what Longhorn's maintenance
 * guide recommends for in-place maintenance (longhorn/website content/docs/1.12.1/maintenance/
 * maintenance.md, "Node Drain Policy Recommendations"). The data of a stopped replica stays on
 * the node: a retiring node's members re-sync elsewhere from a new PVC before it is removed
 * (docs/node-lifecycle.md).
 */
export const LONGHORN_NODE_DRAIN_POLICY = "allow-if-replica-is-stopped";
/** Longhorn's default policy, for a render that sets none. */
const DEFAULT_NODE_DRAIN_POLICY = "block-if-contains-last-replica";

/**
 * Roles whose nodes get a Longhorn disk. Storage nodes hold the replicas of replicated volumes;
 * controlPlane nodes hold the single strict-local replica of their own Galera, RabbitMQ and OVN
 * central volumes (D5: `longhorn-local` keeps the replica on the pod's node, so that node needs a
 * disk — with disks on storage nodes only, those volumes could never be placed).
 */
export const LONGHORN_DISK_ROLES: readonly Role[] = ["controlPlane", "storage"];

/**
 * Longhorn node tag of the storage nodes. Classes of replicated volumes select it (StorageClass
 * `nodeSelector`, Longhorn node tags, not Kubernetes labels), so that VM disk replicas never fill
 * the control plane's disks.
 */
const STORAGE_NODE_TAG = "storage";
const DEFAULT_NODE_TAGS_ANNOTATION = "node.longhorn.io/default-node-tags";

/** Nodes that hold replicas of replicated volumes: the storage nodes (Longhorn tag `storage`). */
function longhornReplicaNodes(ctx: StackContext): NodeConfig[] {
  return ctx.topo.nodesByRole.storage;
}

const DEFAULT_DISKS_CONFIG_ANNOTATION = "node.longhorn.io/default-disks-config";
/** Longhorn disk tags where storage nodes hold two disks: the fast one of every class, the HDD one of Swift's. */
const FAST_DISK_TAG = "fast";
const CAPACITY_DISK_TAG = "capacity";
/** Where Talos mounts the capacity disk (its user volume, nodes/talos.ts). */
export const TALOS_CAPACITY_PATH = `/var/mnt/${CAPACITY_VOLUME_NAME}`;

/** The stack gives its storage nodes a capacity disk (Swift's HDD tier, § 6.3). */
function hasCapacityDisk(ctx: Pick<StackContext, "cfg">): boolean {
  return ctx.cfg.talos?.capacityDisk !== undefined;
}

/**
 * The labels and annotations Longhorn reads when it first registers a node (Longhorn docs,
 * "Default Disk and Node Configuration"): a default disk on every disk node, the node tag of the
 * replicated classes on storage nodes; and where storage nodes also hold the capacity disk, both
 * disks by path with their tags (`create-default-disk: config` and `default-disks-config`), so
 * that only Swift's class uses the HDDs. Like every default-disk setting, Longhorn applies it once,
 * to a node with no disk yet.
 */
function longhornNodeMetadata(ctx: StackContext): NodeMetadataContributor {
  const twoDisks = hasCapacityDisk(ctx);
  return (node): ReturnType<NodeMetadataContributor> => {
    if (!node.roles.some((r) => LONGHORN_DISK_ROLES.includes(r))) return {};
    const storage = node.roles.includes("storage");
    if (!storage || !twoDisks) {
      return {
        labels: { [CREATE_DEFAULT_DISK_LABEL]: "true" },
        ...(storage ? { annotations: { [DEFAULT_NODE_TAGS_ANNOTATION]: JSON.stringify([STORAGE_NODE_TAG]) } } : {}),
      };
    }
    const disks = [
      { name: LONGHORN_VOLUME_NAME, path: TALOS_DATA_PATH, allowScheduling: true, tags: [FAST_DISK_TAG] },
      { name: CAPACITY_VOLUME_NAME, path: TALOS_CAPACITY_PATH, allowScheduling: true, tags: [CAPACITY_DISK_TAG] },
    ];
    return {
      labels: { [CREATE_DEFAULT_DISK_LABEL]: "config" },
      annotations: { [DEFAULT_NODE_TAGS_ANNOTATION]: JSON.stringify([STORAGE_NODE_TAG]), [DEFAULT_DISKS_CONFIG_ANNOTATION]: JSON.stringify(disks) },
    };
  };
}

/** Where storage nodes hold the capacity disk too, every class but Swift's stays on the fast one. */
function fastDisks(ctx: StackContext): Record<string, string> {
  return hasCapacityDisk(ctx) ? { diskSelector: FAST_DISK_TAG } : {};
}

/** Replicas of the VM and volume disks: the override, else 3, never more than the disk nodes. */
function volumeReplicas(ctx: StackContext): number {
  const override = ctx.platform.longhorn.volumeReplicas;
  if (override !== undefined) return override;
  return Math.max(1, Math.min(3, longhornReplicaNodes(ctx).length));
}

/** Hyperconverged compute nodes hold disks: a VM disk's replica can then follow the VM (§ 6.2). */
function vmDataLocality(ctx: StackContext): "best-effort" | "disabled" {
  return ctx.topo.nodesByRole.compute.some((n) => n.roles.includes("storage")) ? "best-effort" : "disabled";
}

function longhornNamespace(): K8sObject {
  return namespace(LONGHORN_NAMESPACE, "privileged");
}

const STORAGE_NETWORK_UNIT = "longhorn-storage-network";

/**
 * § 1.3, § 5.3: the storage network's attachment, `longhorn-system/storage-net` as the design
 * names it. Longhorn attaches its instance-manager and backing-image pods to it as `lhnet1`
 * (longhorn-manager types.StorageNetworkInterface) and moves replica traffic there.
 */
export function longhornStorageNetwork(ctx: Pick<StackContext, "platform">): AttachmentNetworkRef | undefined {
  const network = ctx.platform.longhorn.storageNetwork;
  return network ? { name: "storage-net", namespace: LONGHORN_NAMESPACE, subnet: "longhorn-storage-net", network } : undefined;
}

/** The storage network's NAD and Subnet, before the release whose setting names them. */
function storageNetworkUnits(ctx: StackContext): ManifestsUnit[] {
  const ref = longhornStorageNetwork(ctx);
  // no data: deleting it stops new instance managers, not volumes (test/integration/plan/data-safety.test.ts); Longhorn
  // treats the NAD as immutable all the same (storage-network.md: a change is a new NAD and a detach window)
  return ref ? [manifestsUnit(STORAGE_NETWORK_UNIT, LONGHORN_STORAGE_NETWORK_TYPE, attachmentNetworkObjects(ref))] : [];
}

/**
 * Whether each replica of a volume must sit in its own zone: where the storage nodes span at least
 * as many zones as a volume has replicas (large, § 6.3). Longhorn's replica-zone-soft-anti-affinity
 * (longhorn-manager v1.12.1 types/setting.go 1021–1030, default true) lets a replica share a zone
 * with another once no unused zone has a schedulable disk (scheduler/replica_scheduler.go 486–520),
 * and a replica rebuilt there stays there: after an outage a volume may hold two, or all, replicas
 * in one zone, and that zone's loss takes the volume. With the setting false a zone holds at most
 * one replica of a volume; while a zone is down its volumes run on the replicas of the others,
 * degraded, until it is back. Without zones Longhorn counts every node in one zone: it stays soft.
 */
function zoneSpreadReplicas(ctx: StackContext, replicas: number): boolean {
  const zones = new Set(longhornReplicaNodes(ctx).flatMap((n) => (n.zone !== undefined ? [n.zone] : [])));
  return replicas > 1 && zones.size >= replicas;
}

function longhornRelease(ctx: StackContext): HelmReleaseUnit {
  const controlPlane = selectorAndTolerations(controlPlaneScheduling(ctx));
  const replicas = volumeReplicas(ctx);
  const storageNetwork = longhornStorageNetwork(ctx);
  const values = {
    defaultSettings: {
      createDefaultDiskLabeledNodes: true,
      defaultDataPath: ctx.topo.environment.nodeOs === "talos" ? TALOS_DATA_PATH : DEFAULT_DATA_PATH,
      defaultReplicaCount: replicas,
      // changing it on a live cluster restarts the system-managed pods once every volume is detached (docs/platform.md)
      taintToleration: formatLonghornTolerations(volumeConsumerTolerations()),
      nodeDrainPolicy: LONGHORN_NODE_DRAIN_POLICY,
      // a zone's loss takes at most one replica of a volume (the failure domains, issue 39)
      ...(zoneSpreadReplicas(ctx, replicas) ? { replicaZoneSoftAntiAffinity: false } : {}),
      systemManagedComponentsNodeSelector: formatLonghornNodeSelector(SYSTEM_MANAGED_NODE_SELECTOR),
      // set at install: a change later waits for every volume to be detached (Longhorn 1.12 settings)
      ...(storageNetwork ? { storageNetwork: `${storageNetwork.namespace}/${storageNetwork.name}` } : {}),
    },
    persistence: {
      // A cluster with a default class of its own keeps it (the lab: kind's `standard`).
      defaultClass: !ctx.storage.provided.some((c) => c.isDefault),
      defaultClassReplicaCount: replicas,
      defaultDataLocality: vmDataLocality(ctx),
      // replicas of the default class on storage nodes only (Longhorn node tag)
      defaultNodeSelector: { enable: true, selector: STORAGE_NODE_TAG },
      ...(hasCapacityDisk(ctx) ? { defaultDiskSelector: { enable: true, selector: FAST_DISK_TAG } } : {}),
      reclaimPolicy: "Delete",
    },
    // The manager runs beside every instance manager: no selector, the same tolerations.
    longhornManager: { tolerations: volumeConsumerTolerations() },
    longhornDriver: controlPlane,
    longhornUI: controlPlane,
  };
  return helmReleaseUnit(LONGHORN_UNIT, LONGHORN_TYPE, LONGHORN_NAMESPACE, LONGHORN_CHART, values, {
    protect: true,
    ...contentAt(LONGHORN_CONTENTS, LONGHORN_CHART.version, "the longhorn chart"),
    offersAtRunTime: [
      {
        facts: ctx.topo.nodes.map((n) => fact.object("longhorn.io/Node", LONGHORN_NAMESPACE, n.name)),
        why: "longhorn-manager, a DaemonSet on every node that the release waits for, registers its node as nodes.longhorn.io/<node> when it starts (which the eviction patches amend)",
      },
    ],
  });
}

/**
 * The chart: the CRDs of Longhorn's kinds (nodes.longhorn.io, which the eviction patches amend),
 * its own priority class (longhorn-critical, the default of defaultSettings.priorityClass:
 * templates/priorityclass.yaml, value 1e9); its pods on the pod network.
 */
const LONGHORN_CONTENT = { offers: [fact.api("longhorn.io", "Node"), fact.priorityClass("longhorn-critical")], uses: [fact.podNetwork] };
const LONGHORN_CONTENTS: Contents = { "1.12.1": LONGHORN_CONTENT, "1.11.3": LONGHORN_CONTENT };

export const LONGHORN_LOCAL_CLASS = "longhorn-local";
export const LONGHORN_VM_CLASS = "longhorn-vm";
/** RWX filesystem volumes (Manila's shares, § 2.2): served by a share-manager pod each, on a storage node. */
export const LONGHORN_RWX_CLASS = "longhorn-rwx";
const LONGHORN_SNAPSHOT_CLASS = "longhorn-snapshot";

/** Live migration needs somewhere to go: two compute nodes at least. */
function liveMigrationPossible(ctx: StackContext): boolean {
  return ctx.topo.nodesByRole.compute.length >= 2;
}

function storageClass(name: string, parameters: Record<string, string>, volumeBindingMode: string): K8sObject {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name },
    provisioner: LONGHORN_DRIVER,
    allowVolumeExpansion: true,
    reclaimPolicy: "Delete",
    volumeBindingMode,
    parameters,
  };
}

function longhornLocalClass(): K8sObject {
  // WaitForFirstConsumer: the volume is created once its pod is scheduled, and strict-local keeps
  // its only replica on that pod's node (Longhorn forbids allowedTopologies with strict-local).
  return storageClass(LONGHORN_LOCAL_CLASS, { ...STRICT_LOCAL_PARAMETERS, staleReplicaTimeout: "30", fsType: "ext4" }, "WaitForFirstConsumer");
}

function longhornVmClass(ctx: StackContext): K8sObject {
  return storageClass(
    LONGHORN_VM_CLASS,
    {
      numberOfReplicas: String(volumeReplicas(ctx)),
      dataLocality: vmDataLocality(ctx),
      // RWX Block volumes that KubeVirt can attach on the migration target as well.
      migratable: String(liveMigrationPossible(ctx)),
      staleReplicaTimeout: "30",
      // Longhorn node tag: replicas on storage nodes, never on the control plane's local disks
      nodeSelector: STORAGE_NODE_TAG,
      ...fastDisks(ctx),
    },
    "Immediate",
  );
}

/**
 * Manila's shares (§ 2.2, § 2.3): RWX volumes, each served over NFS by a share-manager pod that
 * longhorn-manager creates. No chart key of 1.12.1 places those pods (the chart's
 * persistence.shareManagerNodeSelector came later: longhorn/longhorn#9324, PR #12970, merged on
 * master in 2026-04): longhorn-manager merges the class parameter `shareManagerNodeSelector` into
 * system-managed-components-node-selector (share_manager_controller.go createShareManagerPod;
 * research note L3), so this class keeps them on the storage nodes, whose taint the
 * taint-toleration setting already tolerates. A lab whose nodes carry no role has no label to select.
 */
function longhornRwxClass(ctx: StackContext): K8sObject {
  return storageClass(
    LONGHORN_RWX_CLASS,
    {
      numberOfReplicas: String(volumeReplicas(ctx)),
      dataLocality: "disabled",
      staleReplicaTimeout: "30",
      nodeSelector: STORAGE_NODE_TAG,
      ...fastDisks(ctx),
      ...(ctx.rolesPassed ? { [SHARE_MANAGER_NODE_SELECTOR]: formatLonghornNodeSelector(shareManagerSelector(ctx.profile)) } : {}),
    },
    "Immediate",
  );
}

const SHARE_MANAGER_NODE_SELECTOR = "shareManagerNodeSelector";
const shareManagerSelector = (profile: LabelProfile): Record<string, string> => ({ [roleLabelKey("storage", profile)]: "" });

export const LONGHORN_CAPACITY_CLASS = "longhorn-capacity";

/**
 * Swift's devices on the capacity disks (§ 6.3: "Swift capacity nodes, separate StorageClass on
 * HDD"): D5's one strict-local replica (Swift replicates objects itself, swift-csi-block.md § 1)
 * on the disks tagged `capacity`, formatted XFS (§ 1.3: XFS for Swift devices).
 */
function longhornCapacityClass(): K8sObject {
  return storageClass(
    LONGHORN_CAPACITY_CLASS,
    { ...STRICT_LOCAL_PARAMETERS, diskSelector: CAPACITY_DISK_TAG, staleReplicaTimeout: "30", fsType: "xfs" },
    "WaitForFirstConsumer",
  );
}

function storageClassesUnit(ctx: StackContext): ManifestsUnit {
  const classes = [longhornLocalClass(), longhornVmClass(ctx), longhornRwxClass(ctx), ...(hasCapacityDisk(ctx) ? [longhornCapacityClass()] : [])];
  return manifestsUnit(STORAGE_CLASSES_UNIT, "openkeel:platform:StorageClasses", classes, { protect: true });
}

/** In-cluster Longhorn snapshots (`type: snap`) for CSI VolumeSnapshots (Cinder, KubeVirt). */
function volumeSnapshotClassesUnit(): ManifestsUnit {
  const snapshotClass: K8sObject = {
    apiVersion: "snapshot.storage.k8s.io/v1",
    kind: "VolumeSnapshotClass",
    metadata: { name: LONGHORN_SNAPSHOT_CLASS },
    driver: LONGHORN_DRIVER,
    deletionPolicy: "Delete",
    parameters: { type: "snap" },
  };
  return manifestsUnit("volume-snapshot-classes", "openkeel:platform:VolumeSnapshotClasses", [snapshotClass]);
}

/** Longhorn's own record of a node (nodes.longhorn.io), named as the Kubernetes node. */
const LONGHORN_NODE = { apiVersion: "longhorn.io/v1beta2", kind: "Node" } as const;

/**
 * A retiring storage node asks Longhorn to move its replicas away: `spec.allowScheduling: false`
 * and `spec.evictionRequested: true` on its nodes.longhorn.io object (longhorn.io/v1beta2 Node, in
 * Longhorn's namespace, named as the Kubernetes node: longhorn/longhorn-manager
 * k8s/pkg/apis/longhorn/v1beta2/node.go; longhorn/longhorn
 * enhancements/20200727-add-replica-eviction-support-for-disks-and-nodes.md: eviction keeps each
 * volume's replica count by rebuilding elsewhere first). Longhorn creates that object when it
 * registers the node, so this repository only patches it (APPLY_AS_PATCH_ANNOTATION), forcing the
 * two fields away from longhorn-manager, which set them at creation. The strict-local volumes of
 * D5 are not moved by eviction: their members re-sync elsewhere (docs/node-lifecycle.md).
 */
function evictionUnits(ctx: StackContext): ManifestsUnit[] {
  const retiring = ctx.topo.nodesByRole.storage.filter((n) => hasTrait(n.state, "evictsData"));
  if (retiring.length === 0) return [];
  const objects: K8sObject[] = retiring.map((n) => ({
    ...LONGHORN_NODE,
    metadata: {
      name: n.name,
      namespace: LONGHORN_NAMESPACE,
      annotations: { [APPLY_AS_PATCH_ANNOTATION]: "patch", "pulumi.com/patchForce": "true" },
    },
    spec: { allowScheduling: false, evictionRequested: true },
  }));
  return [manifestsUnit("longhorn-node-eviction", LONGHORN_NODE_EVICTION_TYPE, objects)];
}

/**
 * Longhorn's string formats (longhorn-manager types/setting.go): tolerations `key=value:Effect`
 * (Equal) or `key:Effect` (Exists), `;`-separated; node selector `key:value;key2:value2`.
 */
export function parseLonghornTolerations(s: unknown): Toleration[] {
  if (typeof s !== "string") return [];
  return s
    .split(";")
    .map((x) => x.trim())
    .filter((x) => x.length > 0)
    .map((entry) => {
      const i = entry.lastIndexOf(":");
      const kv = i >= 0 ? entry.slice(0, i) : entry;
      const effect = (i >= 0 ? entry.slice(i + 1) : "") as Toleration["effect"] | "";
      const eq = kv.indexOf("=");
      const t: Toleration = eq >= 0 ? { key: kv.slice(0, eq), operator: "Equal", value: kv.slice(eq + 1) } : { key: kv, operator: "Exists" };
      if (effect) t.effect = effect;
      return t;
    });
}

export function parseLonghornNodeSelector(s: unknown): Record<string, string> {
  if (typeof s !== "string") return {};
  const out: Record<string, string> = {};
  for (const entry of s
    .split(";")
    .map((x) => x.trim())
    .filter((x) => x.length > 0)) {
    const i = entry.indexOf(":");
    out[(i >= 0 ? entry.slice(0, i) : entry).trim()] = i >= 0 ? entry.slice(i + 1).trim() : "";
  }
  return out;
}

/** Longhorn chart: a component's value replaces the global one when non-empty (`default`). */
function longhornPick(values: Obj, component: string, field: "nodeSelector" | "tolerations"): unknown {
  const own = obj(values[component])[field];
  const empty = own === undefined || own === null || (Array.isArray(own) ? own.length === 0 : isObj(own) && Object.keys(own).length === 0);
  return empty ? obj(values.global)[field] : own;
}

/**
 * The CSI sidecar Deployments longhorn-manager creates (app/driver.go deployCSIDriver, research note
 * L3), `csi.<x>ReplicaCount` replicas each (3 by default: csi/deployment.go). At 1.12.1 they take
 * the same system-managed-components-node-selector and taint-toleration as the CSI plugin
 * DaemonSet, which must run wherever a volume is mounted: § 2.3's "control plane (or storage)"
 * cannot be had without confining the plugin too (no VM disk would attach on a hypervisor), so
 * they run on any node that uses volumes (docs/design-decisions.md). Their design row stays § 2.3's.
 */
const CSI_SIDECARS = {
  attacher: "attacherReplicaCount",
  provisioner: "provisionerReplicaCount",
  resizer: "resizerReplicaCount",
  snapshotter: "snapshotterReplicaCount",
};
const DEFAULT_CSI_REPLICAS = 3;

function csiSidecars(u: Parameters<UnitReader>[0], values: Obj, systemManaged: PodScheduling): Component[] {
  return Object.entries(CSI_SIDECARS).map(([name, key]) =>
    platformComponent(u, `csi-${name}`, "Deployment", systemManaged, ["controlPlane", "storage"], {
      replicas: num(obj(values.csi)[key]) ?? DEFAULT_CSI_REPLICAS,
    }),
  );
}

/**
 * The share-manager pods of a Longhorn class that places them (`shareManagerNodeSelector`): the
 * system-managed selector with the class's merged in, the taint-toleration setting plus the
 * class's `shareManagerTolerations` (share_manager_controller.go createShareManagerPod). One pod per
 * RWX volume, on storage nodes (§ 2.3).
 */
const readStorageClass: ObjectReader = (u, o) => {
  const params = obj(o.parameters);
  if (o.provisioner !== LONGHORN_DRIVER || params[SHARE_MANAGER_NODE_SELECTOR] === undefined) return [];
  const scheduling: PodScheduling = {
    nodeSelector: { ...SYSTEM_MANAGED_NODE_SELECTOR, ...parseLonghornNodeSelector(params[SHARE_MANAGER_NODE_SELECTOR]) },
    tolerations: [...volumeConsumerTolerations(), ...parseLonghornTolerations(params.shareManagerTolerations)],
  };
  return [platformComponent(u, `${o.metadata.name}/share-manager`, "Pods", scheduling, ["storage"], { confinedTo: "storage" })];
};

/**
 * The chart's priority class (values.yaml at 1.12.1: `defaultSettings.priorityClass`, which
 * `longhornManager`, `longhornDriver` and `longhornUI.priorityClass` repeat by a YAML alias); the
 * release creates it (templates/priorityclass.yaml).
 */
const LONGHORN_PRIORITY_CLASS = "longhorn-critical";

const readRelease: UnitReader = (u) => {
  if (u.kind !== "HelmRelease") return [];
  const v = u.values as Obj;
  const settings = obj(v.defaultSettings);
  const user = (component: string): PodScheduling =>
    podScheduling({ nodeSelector: longhornPick(v, component, "nodeSelector"), tolerations: longhornPick(v, component, "tolerations") });
  // templates/{daemonset-sa,deployment-driver,deployment-ui}.yaml: `<component>.priorityClass`, when not empty
  const priority = (component: string) => priorityOf(obj(v[component]).priorityClass ?? LONGHORN_PRIORITY_CLASS);
  const manager = user("longhornManager");
  const systemManaged: PodScheduling = {
    nodeSelector: parseLonghornNodeSelector(settings.systemManagedComponentsNodeSelector),
    tolerations: parseLonghornTolerations(settings.taintToleration),
  };
  const managed = priorityOf(settings.priorityClass ?? LONGHORN_PRIORITY_CLASS);
  const diskLabelled = settings.createDefaultDiskLabeledNodes === true || settings.createDefaultDiskLabeledNodes === "true";
  return [
    platformComponent(u, "longhorn-manager", "DaemonSet", manager, VOLUME_CONSUMER_ROLES, priority("longhornManager")),
    // created by longhorn-manager with the priority-class setting (the chart's default-setting.yaml writes it)
    platformComponent(u, "longhorn-csi-plugin+instance-managers", "DaemonSet", systemManaged, VOLUME_CONSUMER_ROLES, managed),
    ...csiSidecars(u, v, systemManaged).map((c) => ({ ...c, ...managed })),
    // templates/deployment-driver.yaml: `replicas: 1`, fixed
    platformComponent(u, "longhorn-driver-deployer", "Deployment", user("longhornDriver"), CONTROL_PLANE, { replicas: 1, ...priority("longhornDriver") }),
    platformComponent(u, "longhorn-ui", "Deployment", user("longhornUI"), CONTROL_PLANE, {
      replicas: num(obj(v.longhornUI).replicas) ?? 2,
      ...priority("longhornUI"),
    }),
    // Helm hooks (templates/{preupgrade,postupgrade,uninstall}-job.yaml): the manager's nodeSelector
    // and tolerations; the manager's priority class, but for the pre-upgrade Job, which names none
    platformComponent(u, "longhorn-pre-upgrade", "Pods", manager, CONTROL_PLANE),
    platformComponent(u, "longhorn-post-upgrade+uninstall", "Pods", manager, CONTROL_PLANE, priority("longhornManager")),
    // Disks: a node gets a default disk when longhorn-manager runs there and, with
    // createDefaultDiskLabeledNodes, it carries node.longhorn.io/create-default-disk=true|config.
    // Storage nodes hold the replicas (§ 2.3); control-plane nodes the strict-local volumes of D5.
    platformComponent(u, "longhorn-default-disks", "LonghornDisks", manager, LONGHORN_DISK_ROLES, {
      ...(diskLabelled
        ? { nodeSelection: { matchExpressions: [{ key: CREATE_DEFAULT_DISK_LABEL, operator: "In", values: ["true", "config"] }] } }
        : { nodeSelection: {} }),
    }),
  ];
};

/** A capacity disk is Swift's: without Swift nothing would use it. */
function capacityChecks(cfg: Config, topo: Topology): Check[] {
  if (cfg.talos?.capacityDisk === undefined || serviceEnabled(cfg, topo, "swift")) return [];
  return [
    {
      level: "error",
      code: "swift-capacity",
      message: `the storage nodes get a capacity disk (Swift's HDD tier, StorageClass ${LONGHORN_CAPACITY_CLASS}), but Swift does not run in this stack, so nothing would use it`,
      fix: "remove openkeel:talos.capacityDisk, or run Swift (openkeel:services.swift.enabled: true)",
      path: "openkeel:talos.capacityDisk",
    },
  ];
}

/** Replicas beyond the storage nodes would leave every volume degraded; a capacity disk needs Swift. */
function checks(cfg: Config, topo: Topology): Check[] {
  const replicas = cfg.platform.longhorn.volumeReplicas;
  const storage = topo.nodesByRole.storage.length;
  if (replicas === undefined || replicas <= storage) return capacityChecks(cfg, topo);
  return [
    ...capacityChecks(cfg, topo),
    {
      level: "error",
      code: "longhorn-volume-replicas",
      message: `${replicas} volume replicas but ${storage} storage node(s): Longhorn places each replica of a volume on its own node, so volumes would stay degraded`,
      fix: `set openkeel:platform.longhorn.volumeReplicas to at most ${storage}, or give the storage role to more nodes`,
      path: "openkeel:platform.longhorn.volumeReplicas",
    },
  ];
}

/** A Longhorn disk node: its default disk (`true`), or its disks by path where it also holds a capacity disk (`config`). */
const hasDisk = (v: NodeView | undefined) => ["true", "config"].includes(v?.labels[CREATE_DEFAULT_DISK_LABEL] ?? "");
const evicting = (v: NodeView | undefined) => (v?.requests.length ?? 0) > 0;

function evict(node: string, why: string): SlottedStep {
  return {
    slot: "evacuate",
    when: "before",
    what: "Longhorn eviction",
    command: `kubectl -n ${LONGHORN_NAMESPACE} patch nodes.longhorn.io ${node} --type merge -p '{"spec":{"allowScheduling":false,"evictionRequested":true}}'`,
    why: `${why}; wait until Longhorn shows no replica on it before going on`,
  };
}

/** A retirement: waiting for the eviction pulumi up requested, moving the members whose strict-local volumes (D5) cannot follow. */
function retirementSteps(t: NodeTransition, b: NodeView, h: NodeView): SlottedStep[] {
  const steps: SlottedStep[] = [];
  if (!evicting(b) && evicting(h)) {
    steps.push({
      slot: "await-eviction",
      when: "after",
      what: "wait for the Longhorn eviction",
      command: `kubectl -n ${LONGHORN_NAMESPACE} get replicas.longhorn.io -o jsonpath='{range .items[?(@.spec.nodeID=="${t.node}")]}{.metadata.name}{"\\n"}{end}'`,
      why: "pulumi up asks Longhorn to evict its replicas (evictionRequested): it rebuilds each replicated one on another storage node, the strict-local ones went with their PVCs; go on once this lists nothing",
    });
  }
  const members = [
    ...(h.roles.includes("controlPlane") ? ["Galera, RabbitMQ and OVN central"] : []),
    ...(h.roles.includes("storage") ? ["Swift storage"] : []),
  ];
  if (hasTrait(stateChange(t)?.to, "evictsData") && hasDisk(b) && members.length > 0) {
    steps.push({
      slot: "move-members",
      when: "after",
      what: "move the strict-local members",
      // by the replicas on the node: a drained member's volume is detached, no volume names the node any more
      command: `kubectl -n ${LONGHORN_NAMESPACE} get replicas.longhorn.io -o jsonpath='{range .items[?(@.spec.nodeID=="${t.node}")]}{.spec.volumeName}{"\\n"}{end}'; kubectl get pv -o jsonpath='{range .items[?(@.spec.storageClassName=="${LONGHORN_LOCAL_CLASS}")]}{.metadata.name} {.spec.claimRef.namespace}/{.spec.claimRef.name}{"\\n"}{end}'; then, one at a time, kubectl delete pvc (and its Pending pod) of each ${members.join(" or ")} member whose volume is in both lists`,
      why: "their strict-local volumes (D5) cannot follow them: a new empty PVC on another node of the role, and the member re-syncs from the others (§ 2.1); wait until its quorum is healthy again before the next. Its replica goes with its PVC, which lets the eviction finish",
    });
  }
  return steps;
}

/**
 * What a node's life asks of Longhorn (docs/node-lifecycle.md): its eviction request (written by
 * evictionUnits) is waited for, and given back by hand when a retirement is called off; a node
 * that loses its disk or leaves is evicted first, and forgotten after.
 */
function longhornSteps(t: NodeTransition): SlottedStep[] {
  const { node, before: b, after: h } = t;
  if (b && h) {
    const steps = retirementSteps(t, b, h);
    if (evicting(b) && !evicting(h)) {
      steps.push({
        slot: "call-off",
        when: "after",
        what: "Longhorn scheduling",
        command: `kubectl -n ${LONGHORN_NAMESPACE} patch nodes.longhorn.io ${node} --type merge -p '{"spec":{"allowScheduling":true}}'`,
        why: "pulumi up withdraws the eviction request by giving back the two fields it forced, which leaves allowScheduling unset (false)",
      });
    }
    if (hasDisk(b) && !hasDisk(h)) steps.push(evict(node, "it no longer holds a Longhorn disk, and the replicas on it would be lost with it"));
    return steps;
  }
  if (!b || !hasDisk(b)) return [];
  return [
    // a retiring node was evicted while it was retiring
    ...(!hasTrait(b.state, "evictsData") ? [evict(node, "it holds a Longhorn disk, and the replicas on it would be lost with it")] : []),
    {
      slot: "forget",
      when: "after",
      what: "forget it in Longhorn",
      command: `kubectl -n ${LONGHORN_NAMESPACE} delete nodes.longhorn.io ${node}`,
      why: "Longhorn keeps its node object (and the eviction request pulumi up withdraws) until deleted",
    },
  ];
}

const longhornLifecycle: NodeLifecycle = {
  constraints: [longhornConstraint((plan) => longhornFacts(plan, LONGHORN_UNIT, STORAGE_CLASSES_UNIT, LONGHORN_DRIVER, DEFAULT_NODE_DRAIN_POLICY))],
  requestFor: (o) =>
    o.apiVersion === LONGHORN_NODE.apiVersion && o.kind === LONGHORN_NODE.kind && o.metadata.namespace === LONGHORN_NAMESPACE ? o.metadata.name : undefined,
  steps: longhornSteps,
};

/**
 * The host of every node that runs Longhorn's instance managers: iscsiadm for the v1 data engine's
 * iSCSI frontend (Longhorn runs it in the host's namespaces), and the storage network's attachment
 * where the stack has one; the nodes that get a default disk: the disk mounted at the data path.
 */
function longhornHost(ctx: StackContext): Partial<HostContract> {
  const network = longhornStorageNetwork(ctx);
  const instanceManagers: ComponentNeed[] = [
    ...["iscsiadm", "iscsid"].map((tool) => ({
      kind: "hostTool" as const,
      anyOf: [tool],
      // longhorn-manager@v1.12.1 vendor/github.com/longhorn/go-iscsi-helper/iscsi/initiator.go:30-40: iscsiadm in iscsid's namespaces
      why: "the v1 data engine attaches each volume as an iSCSI target, through iscsiadm run in the namespaces of the host's iscsid",
      fix: "give these nodes open-iscsi (on Talos: the siderolabs/iscsi-tools extension in their schematic)",
    })),
    ...(network
      ? [
          {
            attachment: { namespace: network.namespace, name: network.name },
            configPath: "openkeel:platform.longhorn.storageNetwork",
            why: "§ 1.3: Longhorn attaches its instance managers to the storage network as lhnet1",
          },
        ]
      : []),
  ];
  const dataPath = ctx.topo.environment.nodeOs === "talos" ? TALOS_DATA_PATH : DEFAULT_DATA_PATH;
  return {
    needs: [
      { component: `${LONGHORN_UNIT}/longhorn-csi-plugin+instance-managers`, needs: instanceManagers },
      {
        component: `${LONGHORN_UNIT}/longhorn-default-disks`,
        needs: [
          {
            kind: "mount",
            anyOf: [dataPath],
            why: `Longhorn's default disk is its defaultDataPath, ${dataPath}`,
            fix: "give these nodes the Longhorn disk (on Talos: openkeel:talos.longhornDisk, mounted as the longhorn user volume)",
          },
        ],
      },
    ],
  };
}

/** The workloads of the chart at LONGHORN_CHART (templates/*.yaml), by the component of readRelease that stands for each. */
const LONGHORN_CHART_WORKLOADS: ChartWorkloads = {
  rendered: {
    "DaemonSet longhorn-manager": "longhorn-manager",
    "Deployment longhorn-driver-deployer": "longhorn-driver-deployer",
    "Deployment longhorn-ui": "longhorn-ui",
    "Job longhorn-pre-upgrade": "longhorn-pre-upgrade",
    "Job longhorn-post-upgrade": "longhorn-post-upgrade+uninstall",
    "Job longhorn-uninstall": "longhorn-post-upgrade+uninstall",
  },
  notRendered: {
    "longhorn-csi-plugin+instance-managers":
      "longhorn-manager creates them at run time with the system-managed settings (the CSI plugin DaemonSet through longhorn-driver-deployer, an instance manager per node)",
    "csi-attacher": "a Deployment longhorn-driver-deployer creates (app/driver.go deployCSIDriver)",
    "csi-provisioner": "a Deployment longhorn-driver-deployer creates (app/driver.go deployCSIDriver)",
    "csi-resizer": "a Deployment longhorn-driver-deployer creates (app/driver.go deployCSIDriver)",
    "csi-snapshotter": "a Deployment longhorn-driver-deployer creates (app/driver.go deployCSIDriver)",
    "longhorn-default-disks": "Longhorn's disks on the nodes it selects, no pods",
  },
};

export const longhorn: PlatformComponent = {
  name: "Longhorn",
  pins: [LONGHORN_CHART],
  charts: { [LONGHORN_CHART.chart]: LONGHORN_CHART_WORKLOADS },
  artifacts: { longhorn: LONGHORN_CONTENTS },
  settings: "longhorn",
  namespaces: () => [longhornNamespace()],
  nodeMetadata: longhornNodeMetadata,
  lifecycle: longhornLifecycle,
  units: (ctx) => ({
    platform: [...storageNetworkUnits(ctx), longhornRelease(ctx)],
    "platform-config": [storageClassesUnit(ctx), volumeSnapshotClassesUnit(), ...evictionUnits(ctx)],
  }),
  readers: {
    units: {
      [LONGHORN_TYPE]: readRelease,
      [LONGHORN_NODE_EVICTION_TYPE]: unplaced("eviction requests to Longhorn: no pods"),
      [LONGHORN_STORAGE_NETWORK_TYPE]: unplaced("the storage network's attachment and Subnet: no pods"),
    },
    objects: { StorageClass: readStorageClass },
  },
  checks,
  host: longhornHost,
};
