// Names the OpenKeel releases share with other phases of the Plan, and the names their charts give
// the objects they render: what a service's module (./services/) may build from its own name.
/** The type tokens of the infrastructure release and of each service's release. */
export const INFRASTRUCTURE_TYPE = "openkeel:openkeel:Infrastructure";
export const RELEASE_TYPE = "openkeel:openkeel:Release";

/** The infrastructure chart (Galera, RabbitMQ, the public ingress), of the OpenKeel charts' release line. */
export const INFRASTRUCTURE_CHART = "openkeel-chart";

/** Namespace of every OpenKeel release (but a service's that has its own). */
export const OPENKEEL_NAMESPACE = "openkeel";

/** D4: one secret shared by the Neutron metadata agent and the Nova metadata API (HMAC of X-Instance-ID). */
export const METADATA_PROXY_SECRET = "metadata-proxy-shared-secret";

/** A service's Helm release (and its chart's object prefix). */
export function releaseName(service: string): string {
  return `openkeel-${service}`;
}

/** The workload object a service chart renders for a component: `<release>-<component in kebab case>`. */
export function workloadObjectName(release: string, component: string): string {
  return `${release}-${component.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase()}`;
}

/** The pod labels the chart selects a component's pods by (app.kubernetes.io/instance and name). */
export function workloadSelector(release: string, component: string): Record<string, string> {
  return { "app.kubernetes.io/instance": release, "app.kubernetes.io/name": workloadObjectName(release, component) };
}

/**
 * Every label the chart puts on a component's pods: its selector's, the component's own key and
 * part-of openkeel (the contract charts' `openkeel.workload`, e2e/charts/_shared/_openkeel.tpl:
 * the labels the OpenKeel charts render, whose real templates are not public).
 */
export function workloadPodLabels(release: string, component: string): Record<string, string> {
  return { ...workloadSelector(release, component), "app.kubernetes.io/component": component, "app.kubernetes.io/part-of": "openkeel" };
}
