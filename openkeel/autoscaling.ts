// HorizontalPodAutoscalers of the public APIs (§ 6.3: "APIs scaled by HPA"), with the bounds of
// `openkeel:autoscaling.apis`. § 5.2 lists no autoscaling key of the charts, so this repository
// writes the HPAs itself (reviewable in rendered/, validated like every object) and points them at
// the Deployments the charts render, by name: `<release>-<component>` (the component key in kebab
// case, the name every chart gives its workloads: our contract for the charts, docs/openkeel-values.md).
// The release's `<component>.replicas` is the HPA's floor: Helm's three-way merge sets the
// Deployment back to it on every upgrade of the release, and the HPA scales it up again.
import type { HelmReleaseUnit, K8sObject, ManifestsUnit } from "../plan/plan";
import { manifestsUnit } from "../plan/plan";
import type { StackContext } from "../platform/context";
import { isAutoscaled } from "./components";
import { releaseService, serviceNamed, type ServiceName } from "./registry";
import type { OpenKeelService } from "./service";

export const AUTOSCALING_UNIT = "openkeel-autoscaling";

/** `consoleProxy` → `console-proxy`: how a chart names the workload of a component key. */
export function workloadName(release: string, component: string): string {
  return `${release}-${component.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** The autoscaled components of a service: its public APIs (Deployments). */
export function autoscaledComponents(service: ServiceName | OpenKeelService): string[] {
  const spec = typeof service === "string" ? serviceNamed(service) : service;
  return Object.entries(spec.components)
    .filter(([, c]) => isAutoscaled(c))
    .map(([name]) => name);
}

function hpa(release: HelmReleaseUnit, component: string, ctx: StackContext): K8sObject {
  const bounds = ctx.cfg.autoscaling!.apis;
  const name = workloadName(release.release, component);
  return {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: { name, namespace: release.namespace },
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name },
      minReplicas: bounds.minReplicas,
      maxReplicas: bounds.maxReplicas,
      metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: bounds.targetCPUUtilizationPercentage } } }],
    },
  };
}

/**
 * The HPAs of the releases' public APIs; none without `openkeel:autoscaling`. They wait for nothing
 * but their namespace: the API server accepts an HPA before its Deployment exists, and the HPA
 * controller scales the Deployment once there is one.
 */
export function autoscalingUnits(ctx: StackContext, releases: readonly HelmReleaseUnit[]): ManifestsUnit[] {
  if (!ctx.cfg.autoscaling) return [];
  const targets = releases.flatMap((unit) => {
    const service = releaseService(unit.name);
    return service ? autoscaledComponents(service).map((c) => ({ unit, c })) : [];
  });
  if (targets.length === 0) return [];
  const objects = targets.map(({ unit, c }) => hpa(unit, c, ctx));
  return [manifestsUnit(AUTOSCALING_UNIT, "openkeel:openkeel:Autoscaling", objects)];
}
