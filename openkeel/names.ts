// Names the OpenKeel releases share with other phases of the Plan.
import { SERVICES, type ServiceName } from "../config/schema";

/** The type tokens of the infrastructure release and of each service's release. */
export const INFRASTRUCTURE_TYPE = "openkeel:openkeel:Infrastructure";
export const RELEASE_TYPE = "openkeel:openkeel:Release";

/** Namespace of every OpenKeel release. */
export const OPENKEEL_NAMESPACE = "openkeel";

/** D4: one secret shared by the Neutron metadata agent and the Nova metadata API (HMAC of X-Instance-ID). */
export const METADATA_PROXY_SECRET = "metadata-proxy-shared-secret";

/** A service's Helm release (and its chart's object prefix). */
export function releaseName(service: ServiceName): string {
  return `openkeel-${service}`;
}

/** The service whose release a unit is, or undefined (the infrastructure release, a platform unit). */
export function serviceOfRelease(unit: string): ServiceName | undefined {
  return SERVICES.find((s) => releaseName(s) === unit);
}
