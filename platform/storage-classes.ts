// The StorageClasses and the VolumeSnapshotClass on Longhorn. `longhorn-local` is D5: one replica,
// strict-local, for the services that replicate their own data (Galera, RabbitMQ quorum queues,
// OVN central RAFT, Swift). `longhorn-vm` holds VM root disks and Cinder volumes with the
// topology's replica count, migratable where KubeVirt can live-migrate.
import type { K8sObject, ManifestsUnit } from "../plan/plan";
import { LONGHORN_DRIVER, STORAGE_NODE_TAG, vmDataLocality, volumeReplicas } from "./longhorn";
import type { PlatformContext } from "./context";

export const LONGHORN_LOCAL_CLASS = "longhorn-local";
export const LONGHORN_VM_CLASS = "longhorn-vm";
export const LONGHORN_SNAPSHOT_CLASS = "longhorn-snapshot";

/** Live migration needs somewhere to go: two compute nodes at least. */
export function liveMigrationPossible(ctx: PlatformContext): boolean {
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

export function longhornLocalClass(): K8sObject {
  // WaitForFirstConsumer: the volume is created once its pod is scheduled, and strict-local keeps
  // its only replica on that pod's node (Longhorn forbids allowedTopologies with strict-local).
  return storageClass(
    LONGHORN_LOCAL_CLASS,
    { numberOfReplicas: "1", dataLocality: "strict-local", staleReplicaTimeout: "30", fsType: "ext4" },
    "WaitForFirstConsumer",
  );
}

export function longhornVmClass(ctx: PlatformContext): K8sObject {
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
    },
    "Immediate",
  );
}

export function storageClassesUnit(ctx: PlatformContext): ManifestsUnit {
  return {
    kind: "Manifests",
    name: "storage-classes",
    type: "openkeel:platform:StorageClasses",
    protect: true,
    objects: [longhornLocalClass(), longhornVmClass(ctx)],
  };
}

/** In-cluster Longhorn snapshots (`type: snap`) for CSI VolumeSnapshots (Cinder, KubeVirt). */
export function volumeSnapshotClassesUnit(): ManifestsUnit {
  return {
    kind: "Manifests",
    name: "volume-snapshot-classes",
    type: "openkeel:platform:VolumeSnapshotClasses",
    objects: [
      {
        apiVersion: "snapshot.storage.k8s.io/v1",
        kind: "VolumeSnapshotClass",
        metadata: { name: LONGHORN_SNAPSHOT_CLASS },
        driver: LONGHORN_DRIVER,
        deletionPolicy: "Delete",
        parameters: { type: "snap" },
      },
    ],
  };
}
