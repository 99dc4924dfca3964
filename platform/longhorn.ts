// Longhorn (Helm): disks and replicas only on storage nodes; the system-managed components
// (instance managers, engines, CSI plugin) wherever a pod may mount a volume (§ 2.3). And its
// StorageClasses: `longhorn-local` is D5 (one replica, strict-local, for the services that
// replicate their own data: openkeel/storage.ts);
// `longhorn-vm` holds VM root disks and Cinder volumes with the topology's replica count,
// migratable where KubeVirt can live-migrate; `longhorn-snapshot` takes CSI snapshots.
import type { Check } from "../config/problems";
import { roleLabelKey, type LabelProfile } from "../config/roles";
import type { Config, NodeConfig } from "../config/schema";
import type { NodeMetadataContributor } from "../plan/node-roles";
import { helmReleaseUnit, type HelmReleaseUnit, type K8sObject, type ManifestsUnit, manifestsUnit } from "../plan/plan";
import { unplaced } from "../placement/workloads";
import { cloudRoleCheck } from "../topology/checks";
import type { Topology } from "../topology/topology";
import type { PlatformComponent } from "./component";
import { contentAt, controlPlaneScheduling, namespace, selectorAndTolerations, type Contents, type StackContext } from "./context";
import { fact } from "../plan/needs";
import { attachmentNetworkObjects, type AttachmentNetworkRef } from "./kube-ovn";
import { evictionUnits, longhornLifecycle } from "./longhorn-lifecycle";
import { LONGHORN_SETTINGS, longhornSettings } from "./longhorn-settings";
import { CAPACITY_VOLUME_NAME, LONGHORN_TALOS, LONGHORN_VOLUME_NAME } from "./longhorn-talos";
import { userVolumePath } from "../config/talos";
import {
  CREATE_DEFAULT_DISK_LABEL,
  DEFAULT_DATA_PATH,
  formatLonghornNodeSelector,
  formatLonghornTolerations,
  LONGHORN_CAPACITY_CLASS,
  LONGHORN_DISK_ROLES,
  LONGHORN_DRIVER,
  LONGHORN_LOCAL_CLASS,
  LONGHORN_NAMESPACE,
  LONGHORN_NODE_DRAIN_POLICY,
  LONGHORN_NODE_EVICTION_TYPE,
  LONGHORN_STORAGE_NETWORK_TYPE,
  LONGHORN_TYPE,
  LONGHORN_UNIT,
  SHARE_MANAGER_NODE_SELECTOR,
  STORAGE_CLASSES_UNIT,
  STRICT_LOCAL_PARAMETERS,
  SYSTEM_MANAGED_NODE_SELECTOR,
  TALOS_DATA_PATH,
  volumeConsumerTolerations,
} from "./longhorn-names";
import { LONGHORN_CHART_WORKLOADS, readRelease, readStorageClass } from "./longhorn-placement";
import { LONGHORN_CHART } from "./versions";
import type { ComponentNeed, HostContract } from "../plan/host";

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
/** Longhorn disk tags where storage nodes hold two disks: the fast one of every class, the HDD one of the capacity class. */
const FAST_DISK_TAG = "fast";
const CAPACITY_DISK_TAG = "capacity";
/** Where Talos mounts the capacity disk (its user volume, nodes/talos.ts). */
export const TALOS_CAPACITY_PATH = userVolumePath(CAPACITY_VOLUME_NAME);

/** The stack gives its storage nodes a capacity disk (the HDD capacity tier, § 6.3). */
function hasCapacityDisk(ctx: Pick<StackContext, "cfg">): boolean {
  return ctx.cfg.talos?.capacityDisk !== undefined;
}

/**
 * The labels and annotations Longhorn reads when it first registers a node (Longhorn docs,
 * "Default Disk and Node Configuration"): a default disk on every disk node, the node tag of the
 * replicated classes on storage nodes; and where storage nodes also hold the capacity disk, both
 * disks by path with their tags (`create-default-disk: config` and `default-disks-config`), so
 * that only the capacity class uses the HDDs. Like every default-disk setting, Longhorn applies it once,
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

/** Where storage nodes hold the capacity disk too, every class but the capacity class stays on the fast one. */
function fastDisks(ctx: StackContext): Record<string, string> {
  return hasCapacityDisk(ctx) ? { diskSelector: FAST_DISK_TAG } : {};
}

/** Replicas of the VM and volume disks: the override, else 3, never more than the disk nodes. */
function volumeReplicas(ctx: StackContext): number {
  const override = longhornSettings(ctx.platform).volumeReplicas;
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
  const network = longhornSettings(ctx.platform).storageNetwork;
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
      taintToleration: formatLonghornTolerations(volumeConsumerTolerations(ctx.agentTolerations)),
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
    longhornManager: { tolerations: volumeConsumerTolerations(ctx.agentTolerations) },
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

const shareManagerSelector = (profile: LabelProfile): Record<string, string> => ({ [roleLabelKey("storage", profile)]: "" });

/**
 * The capacity class, § 6.3's separate StorageClass on HDD: D5's one strict-local replica (its user
 * replicates its data itself) on the disks tagged `capacity`, formatted XFS (§ 1.3); the service
 * that uses it says why in its own module (openkeel/services/).
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

/** A cloud without storage nodes has no disk for a volume; replicas beyond the storage nodes would leave every volume degraded. */
function checks(cfg: Config, topo: Topology): Check[] {
  const none = cloudRoleCheck(topo, "storage", {
    level: "warning",
    code: "storage-recommended",
    message: "no storage node: Longhorn creates no default disks, so no volume can be scheduled",
    fix: "give the storage role to the nodes whose disks hold Longhorn replicas",
  });
  const replicas = longhornSettings(cfg.platform).volumeReplicas;
  const storage = topo.nodesByRole.storage.length;
  if (replicas === undefined || replicas <= storage) return none;
  return [
    ...none,
    {
      level: "error",
      code: "longhorn-volume-replicas",
      message: `${replicas} volume replicas but ${storage} storage node(s): Longhorn places each replica of a volume on its own node, so volumes would stay degraded`,
      fix: `set openkeel:platform.longhorn.volumeReplicas to at most ${storage}, or give the storage role to more nodes`,
      path: "openkeel:platform.longhorn.volumeReplicas",
    },
  ];
}

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

export const longhorn: PlatformComponent = {
  name: "Longhorn",
  docs: [
    {
      component: "Longhorn",
      version: "chart 1.12.1",
      installedAs: "Helm (`https://charts.longhorn.io`), namespace `longhorn-system` (privileged)",
      phase: "platform",
      where:
        "disks on storage and controlPlane nodes (`createDefaultDiskLabeledNodes` + `node.longhorn.io/create-default-disk=true` from the node-roles phase): the controlPlane disks hold the one strict-local replica of their own Galera, RabbitMQ and OVN central volumes (D5); replicas of replicated volumes only on storage nodes (Longhorn node tag `storage` from the annotation `node.longhorn.io/default-node-tags`, selected by `longhorn-vm` and the default class); manager, engines, instance managers and CSI plugin wherever volumes are used (tolerating controlPlane, compute, storage, containers, provisioning, `openkeel.io/reserved` and the taints of a disabled or draining node, `openkeel.io/compute-disabled` and `medik8s.io/drain`; the system-managed pods through the `taintToleration` setting, and changing that setting on a live cluster restarts them once every volume is detached, or within the hour); `nodeDrainPolicy: allow-if-replica-is-stopped` so that the drain of a node holding strict-local replicas can finish ([design decisions](design-decisions.md)); the CSI sidecar Deployments (attacher, provisioner, resizer, snapshotter, 3 each) with the CSI plugin: 1.12.1 gives them its selector and tolerations, so § 2.3's control plane cannot be had ([deviation](design-decisions.md)); driver deployer and UI on the control plane; RWX share managers (Manila) on storage nodes, through their class `longhorn-rwx`; with `openkeel:platform.longhorn.storageNetwork` (large), `storageNetwork: longhorn-system/storage-net`, the NAD and Subnet in the unit `longhorn-storage-network` before the release (Longhorn changes the setting only with every volume detached)",
      stacks: "production, lab ✱",
    },
    {
      component: "StorageClasses",
      version: "—",
      installedAs: "manifests",
      phase: "platform-config",
      where:
        "`longhorn-local` (D5: `numberOfReplicas: \"1\"`, `dataLocality: strict-local`, WaitForFirstConsumer) for Galera, RabbitMQ, OVN central, Swift; `longhorn-vm` (the topology's replica count, `migratable` with ≥ 2 compute nodes) for VM and Cinder disks; `longhorn-rwx` (replicated like `longhorn-vm`; `shareManagerNodeSelector` the storage role label, so the share-manager pod of each RWX volume, its NFS server, runs on a storage node) for Manila's shares (`share.storageClassName` of openkeel-manila); with a capacity disk (`openkeel:talos.capacityDisk`, large), `longhorn-capacity` (strict-local, one replica, `diskSelector: capacity`, XFS, WaitForFirstConsumer) for Swift's devices on the storage nodes' HDDs, while `longhorn-vm`, `longhorn-rwx` and the default class select the `fast` disks; Longhorn's own `longhorn` class is the default in production. The lab without ✱ creates no class: its strict-local volumes use kind's own `standard` (local-path provisioner, WaitForFirstConsumer), which the environment declares as provided (`environments/kind-lab.ts`)",
      stacks: "production, lab ✱",
    },
    {
      component: "VolumeSnapshotClass",
      version: "—",
      installedAs: "manifest",
      phase: "platform-config",
      where: "`longhorn-snapshot` (`driver.longhorn.io`, `type: snap`)",
      stacks: "production, lab ✱",
    },
    {
      component: "Longhorn eviction",
      version: "—",
      installedAs: "server-side-apply patches (unit `longhorn-node-eviction`, only while a storage node retires)",
      phase: "platform-config",
      where: "`nodes.longhorn.io/<node>`: `allowScheduling: false`, `evictionRequested: true`",
      stacks: "production, lab ✱",
    },
  ],
  design: [
    // Longhorn's hook Jobs take the manager's tolerations and no selector (issue 22, item 7)
    {
      workloads: /longhorn-(manager|csi-plugin\+instance-managers|pre-upgrade|post-upgrade\+uninstall)$/,
      reach: ["controlPlane", "compute", "storage", "containers", "provisioning"],
    },
    { workloads: /longhorn-(driver-deployer|ui)$/, reach: ["controlPlane"] },
    // § 2.3 puts the CSI sidecars on the control plane (or storage); at 1.12.1 longhorn-manager gives
    // them the CSI plugin's system-managed selector and taint toleration, which must reach every node
    // that mounts a volume (research note L3): a deviation (docs/design-decisions.md)
    { workloads: /longhorn\/csi-(attacher|provisioner|resizer|snapshotter)$/, reach: ["controlPlane", "compute", "storage", "containers", "provisioning"] },
    // § 2.3: the RWX share managers (Manila) on storage nodes
    { workloads: /longhorn-rwx\/share-manager$/, reach: ["storage"] },
    // § 2.3 says disks only on storage nodes, but D5 (§ 2.1) puts Galera, RabbitMQ and OVN central on
    // strict-local volumes, which live on their pod's node: control-plane nodes need a disk too
    { workloads: /longhorn-default-disks$/, reach: ["controlPlane", "storage"] },
  ],
  pins: [LONGHORN_CHART],
  charts: { [LONGHORN_CHART.chart]: LONGHORN_CHART_WORKLOADS },
  artifacts: { longhorn: LONGHORN_CONTENTS },
  settings: LONGHORN_SETTINGS,
  talos: LONGHORN_TALOS,
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
  priorityClasses: [
    {
      name: "longhorn-critical",
      value: 1_000_000_000,
      source:
        "longhorn/longhorn chart/templates/priorityclass.yaml (value 1e9, line 9 at 1.12.1), the default of defaultSettings.priorityClass (settings.md 1.12.1)",
    },
  ],
};
