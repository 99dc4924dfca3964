// Names the OpenKeel releases share with other phases of the Plan.
import { RESERVED_TAINT_KEY } from "../config/roles";
import type { Toleration } from "../config/roles";

/** Namespace of every OpenKeel release. */
export const OPENKEEL_NAMESPACE = "openkeel";

/**
 * D5: Longhorn with numberOfReplicas "1" and dataLocality strict-local, created in the platform
 * phase. Galera, RabbitMQ, OVN central and Swift replicate themselves: never stack Longhorn
 * replicas under them.
 */
export const LONGHORN_LOCAL = "longhorn-local";

/** D4: one secret shared by the Neutron metadata agent and the Nova metadata API (HMAC of X-Instance-ID). */
export const METADATA_PROXY_SECRET = "metadata-proxy-shared-secret";

/** Masakari reserved hosts (§ 5.6): only the compute agents tolerate them. */
export const RESERVED_TOLERATION: Toleration = { key: RESERVED_TAINT_KEY, operator: "Exists", effect: "NoSchedule" };
