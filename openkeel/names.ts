// Names the OpenKeel releases share with other phases of the Plan.
import type { ServiceName } from "../config/schema";

/** Namespace of every OpenKeel release. */
export const OPENKEEL_NAMESPACE = "openkeel";

/** D4: one secret shared by the Neutron metadata agent and the Nova metadata API (HMAC of X-Instance-ID). */
export const METADATA_PROXY_SECRET = "metadata-proxy-shared-secret";

/** A service's Helm release (and its chart's object prefix). */
export function releaseName(service: ServiceName): string {
  return `openkeel-${service}`;
}
