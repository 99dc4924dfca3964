// Longhorn (Helm): disks and replicas only on storage nodes; the system-managed components
// (instance managers, engines, CSI plugin) wherever a pod may mount a volume (§ 2.3).
import type { NodeConfig } from "../config/schema";
import type { NodeMetadataContributor } from "../plan/node-roles";
import type { HelmReleaseUnit, K8sObject } from "../plan/plan";
import type { Role, Toleration } from "../config/roles";
import { LONGHORN_CHART } from "./versions";
import {
  controlPlaneScheduling,
  namespace,
  RESERVED_TOLERATION,
  rolesTolerations,
  selectorAndTolerations,
  VOLUME_CONSUMER_ROLES,
  type PlatformContext,
} from "./context";

export const LONGHORN_NAMESPACE = "longhorn-system";
export const LONGHORN_DRIVER = "driver.longhorn.io";
export const CREATE_DEFAULT_DISK_LABEL = "node.longhorn.io/create-default-disk";
/** Talos ≥ 1.10 mounts the `longhorn` UserVolumeConfig (components/talos.ts) here; elsewhere Longhorn's default. */
export const TALOS_DATA_PATH = "/var/mnt/longhorn";
export const DEFAULT_DATA_PATH = "/var/lib/longhorn";
/** Keeps system-managed pods off non-Linux nodes without restricting them to any role. */
export const SYSTEM_MANAGED_NODE_SELECTOR: Record<string, string> = { "kubernetes.io/os": "linux" };

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
export function volumeConsumerTolerations(): Toleration[] {
  return [...rolesTolerations(VOLUME_CONSUMER_ROLES), RESERVED_TOLERATION];
}

/**
 * Roles whose nodes get a Longhorn disk. Storage nodes hold the replicas of replicated volumes;
 * controlPlane nodes hold the single strict-local replica of their own Galera, RabbitMQ and OVN
 * central volumes (D5: `longhorn-local` keeps the replica on the pod's node, so that node needs a
 * disk — with disks on storage nodes only, those volumes could never be placed).
 */
export const LONGHORN_DISK_ROLES: readonly Role[] = ["storage", "controlPlane"];

/**
 * Longhorn node tag of the storage nodes. Classes of replicated volumes select it (StorageClass
 * `nodeSelector`, Longhorn node tags, not Kubernetes labels), so that VM disk replicas never fill
 * the control plane's disks.
 */
export const STORAGE_NODE_TAG = "storage";
export const DEFAULT_NODE_TAGS_ANNOTATION = "node.longhorn.io/default-node-tags";

/** Nodes that get a Longhorn default disk. */
export function longhornDiskNodes(ctx: PlatformContext): NodeConfig[] {
  return ctx.topo.nodes.filter((n) => n.roles.some((r) => LONGHORN_DISK_ROLES.includes(r)));
}

/** Nodes that hold replicas of replicated volumes: the storage nodes (Longhorn tag `storage`). */
export function longhornReplicaNodes(ctx: PlatformContext): NodeConfig[] {
  return ctx.topo.nodesByRole.storage;
}

export const longhornNodeMetadata: NodeMetadataContributor = (node) => {
  if (!node.roles.some((r) => LONGHORN_DISK_ROLES.includes(r))) return {};
  return {
    labels: { [CREATE_DEFAULT_DISK_LABEL]: "true" },
    // Read by Longhorn when it first registers the node: tags it for the replicated classes.
    ...(node.roles.includes("storage") ? { annotations: { [DEFAULT_NODE_TAGS_ANNOTATION]: JSON.stringify([STORAGE_NODE_TAG]) } } : {}),
  };
};

/** Replicas of the VM and volume disks: the override, else 3, never more than the disk nodes. */
export function volumeReplicas(ctx: PlatformContext): number {
  const override = ctx.platform.longhorn.volumeReplicas;
  if (override !== undefined) return override;
  return Math.max(1, Math.min(3, longhornReplicaNodes(ctx).length));
}

/** Hyperconverged compute nodes hold disks: a VM disk's replica can then follow the VM (§ 6.2). */
export function vmDataLocality(ctx: PlatformContext): "best-effort" | "disabled" {
  return ctx.topo.nodesByRole.compute.some((n) => n.roles.includes("storage")) ? "best-effort" : "disabled";
}

export function longhornNamespace(): K8sObject {
  return namespace(LONGHORN_NAMESPACE, "privileged");
}

export function longhornRelease(ctx: PlatformContext, dependsOn: string[]): HelmReleaseUnit {
  const controlPlane = selectorAndTolerations(controlPlaneScheduling(ctx));
  const replicas = volumeReplicas(ctx);
  return {
    kind: "HelmRelease",
    name: "longhorn",
    type: "openkeel:platform:Longhorn",
    release: "longhorn",
    namespace: LONGHORN_NAMESPACE,
    chart: { ...LONGHORN_CHART },
    protect: true,
    dependsOn,
    values: {
      defaultSettings: {
        createDefaultDiskLabeledNodes: true,
        defaultDataPath: ctx.talos ? TALOS_DATA_PATH : DEFAULT_DATA_PATH,
        defaultReplicaCount: replicas,
        taintToleration: formatLonghornTolerations(volumeConsumerTolerations()),
        systemManagedComponentsNodeSelector: formatLonghornNodeSelector(SYSTEM_MANAGED_NODE_SELECTOR),
      },
      persistence: {
        // The lab keeps kind's `standard` class as its default.
        defaultClass: ctx.talos,
        defaultClassReplicaCount: replicas,
        defaultDataLocality: vmDataLocality(ctx),
        // replicas of the default class on storage nodes only (Longhorn node tag)
        defaultNodeSelector: { enable: true, selector: STORAGE_NODE_TAG },
        reclaimPolicy: "Delete",
      },
      // The manager runs beside every instance manager: no selector, the same tolerations.
      longhornManager: { tolerations: volumeConsumerTolerations() },
      longhornDriver: controlPlane,
      longhornUI: controlPlane,
    },
  };
}
