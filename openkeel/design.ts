// The design's § 2 rows of the OpenKeel components (§ 2.1, § 2.2, § 5.1): what kind each one is,
// the roles it runs on and where it must never run. A service component's row is its descriptor's
// (./components.ts `design`, written from the design, not from its placement); the infrastructure
// chart's are here. The placement checks hold what the releases render against them.
import { CONTROL_PLANE } from "../placement/workloads";
import { CONTROL_PLANE_DEPLOYMENT, designOf, type DesignRow } from "./components";
import { INFRASTRUCTURE_CHART } from "./names";
import { chartService } from "./registry";

/** The infrastructure chart's (§ 2.1, D8): the quorum members on the control plane, the public ingress on the control plane and network nodes. */
const INFRASTRUCTURE_DESIGN: Readonly<Record<string, DesignRow>> = {
  mariadb: { kind: "StatefulSet", roles: CONTROL_PLANE, confinedTo: "controlPlane" },
  rabbitmq: { kind: "StatefulSet", roles: CONTROL_PLANE, confinedTo: "controlPlane" },
  ingress: { kind: "DaemonSet", roles: ["controlPlane", "network"] },
};

/**
 * § 5.2 "What is implemented": the charts whose descriptor says `apiJob` render their API's Jobs,
 * placed as the API is. The database migration is the one every such chart runs: a component of
 * its own, `<release>/db-sync`, run once on the control plane.
 */
export const API_JOB = "db-sync";
export const API_JOB_DESIGN: DesignRow = { kind: "Pods", roles: CONTROL_PLANE };

/** Whether a chart renders its API's Jobs (its service's `apiJob`). */
export function rendersApiJob(chart: string): boolean {
  return chartService(chart)?.apiJob === true;
}

/** A component's row, by chart and placement key; a key no descriptor lists is a Deployment on the control plane (§ 5.2). */
export function openkeelDesign(chart: string, key: string): DesignRow {
  if (chart === INFRASTRUCTURE_CHART) return INFRASTRUCTURE_DESIGN[key] ?? CONTROL_PLANE_DEPLOYMENT;
  const spec = chartService(chart)?.components[key];
  return spec ? designOf(spec) : CONTROL_PLANE_DEPLOYMENT;
}
