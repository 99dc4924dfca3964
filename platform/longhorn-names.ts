// Longhorn's names and formats, which its release, its placement reader and its part in a node's
// life share (./longhorn.ts, ./longhorn-placement.ts, ./longhorn-lifecycle.ts): its namespace,
// driver, units and their types, the node labels it reads, the roles of its volumes and disks, and
// its setting strings (taint-toleration, node selector, node drain policy).
import { RESERVED_TOLERATION, type Role, type Toleration } from "../config/roles";
import { rolesTolerations } from "./context";

export const LONGHORN_NODE_EVICTION_TYPE = "openkeel:platform:LonghornNodeEviction";

export const LONGHORN_STORAGE_NETWORK_TYPE = "openkeel:platform:LonghornStorageNetwork";

export const LONGHORN_NAMESPACE = "longhorn-system";

export const LONGHORN_DRIVER = "driver.longhorn.io";

export const LONGHORN_UNIT = "longhorn";

/** The type token of Longhorn's release (what else says a stack installs Longhorn). */
export const LONGHORN_TYPE = "openkeel:platform:Longhorn";

export const STORAGE_CLASSES_UNIT = "storage-classes";

/** D5's strict-local class: the volumes of the members that replicate their own data. */
export const LONGHORN_LOCAL_CLASS = "longhorn-local";

/** § 6.3's capacity class on HDD, strict-local too (platform/longhorn.ts longhornCapacityClass). */
export const LONGHORN_CAPACITY_CLASS = "longhorn-capacity";

/** The classes whose volumes keep their one replica on their pod's node, which no eviction moves. */
export const STRICT_LOCAL_CLASSES = [LONGHORN_LOCAL_CLASS, LONGHORN_CAPACITY_CLASS] as const;

/** D5: one replica, kept on the node of the pod that uses it (the parameters that make a class strict-local). */
export const STRICT_LOCAL_PARAMETERS = { numberOfReplicas: "1", dataLocality: "strict-local" } as const;

export const CREATE_DEFAULT_DISK_LABEL = "node.longhorn.io/create-default-disk";

/** Talos ≥ 1.10 mounts the `longhorn` UserVolumeConfig (nodes/talos.ts) here; elsewhere Longhorn's default. */
export const TALOS_DATA_PATH = "/var/mnt/longhorn";

export const DEFAULT_DATA_PATH = "/var/lib/longhorn";

/** Keeps system-managed pods off non-Linux nodes without restricting them to any role. */
export const SYSTEM_MANAGED_NODE_SELECTOR: Record<string, string> = { "kubernetes.io/os": "linux" };

/**
 * Roles whose nodes run pods with Longhorn volumes: Galera, RabbitMQ and OVN central
 * (controlPlane), VM disks (compute), object storage and the replicas (storage), Zun volumes (containers),
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
 * needs every volume detached), the Masakari reserved-host taint, and the node agents' tolerations
 * (StackContext.agentTolerations).
 */
export function volumeConsumerTolerations(agentTolerations: readonly Toleration[]): Toleration[] {
  return [...rolesTolerations(VOLUME_CONSUMER_ROLES), RESERVED_TOLERATION, ...agentTolerations];
}

/**
 * When a drain may take down the instance manager of a node that holds the last healthy replica of
 * a volume (Longhorn setting node-drain-policy; longhorn-manager types/setting.go, default
 * block-if-contains-last-replica; controller/instance_manager_controller.go
 * canDeleteInstanceManagerPDB). Every strict-local volume of D5 (openkeel/storage.ts) is such a
 * last replica, so under the default no control-plane or storage node's
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
export const DEFAULT_NODE_DRAIN_POLICY = "block-if-contains-last-replica";

/**
 * Roles whose nodes get a Longhorn disk. Storage nodes hold the replicas of replicated volumes;
 * controlPlane nodes hold the single strict-local replica of their own Galera, RabbitMQ and OVN
 * central volumes (D5: `longhorn-local` keeps the replica on the pod's node, so that node needs a
 * disk — with disks on storage nodes only, those volumes could never be placed).
 */
export const LONGHORN_DISK_ROLES: readonly Role[] = ["controlPlane", "storage"];

export const SHARE_MANAGER_NODE_SELECTOR = "shareManagerNodeSelector";

/** Longhorn's own record of a node (nodes.longhorn.io), named as the Kubernetes node. */
export const LONGHORN_NODE = { apiVersion: "longhorn.io/v1beta2", kind: "Node" } as const;

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
