// The units of the OpenKeel phases: openkeel-infra (namespace + openkeel-chart) after the platform,
// then openkeel (one release per service). Values that break the values contract are the stack's
// problems, one per key, naming the stack file, the service and the values key path.
import type { LoadedConfig } from "../config/schema";
import type { HelmReleaseUnit, Unit } from "../plan/plan";
import { formatPath, type Problem } from "../config/problems";
import { namespace, type StackContext } from "../platform/context";
import { autoscalingUnits } from "./autoscaling";
import { checkValues } from "./contract";
import {
  infrastructureContract,
  infrastructurePostRender,
  infrastructureUnit,
  infrastructureValues,
  namespaceUnit,
  rabbitmqBudgetUnit,
} from "./infrastructure";
import { ingressServiceUnits } from "./ingress";
import { releaseName } from "./names";
import { serviceUnits } from "./releases";
import { OPENKEEL_SERVICES } from "./services";

/** The namespaces of the services that run in one of their own (Ironic's), with their pod-security level. */
function ownNamespaces(ctx: StackContext) {
  return OPENKEEL_SERVICES.flatMap((s) => (s.namespace && ctx.serviceOn(s.name) ? [namespace(s.namespace.name, s.namespace.podSecurity)] : []));
}

/** The units of the openkeel-infra phase the services bring (Ironic's egress policy and provisioning network). */
function serviceInfrastructureUnits(ctx: StackContext): Unit[] {
  return OPENKEEL_SERVICES.flatMap((s) => (s.infrastructureUnits && ctx.serviceOn(s.name) ? s.infrastructureUnits(ctx) : []));
}

function infrastructure(ctx: StackContext): Unit[] {
  const { cfg } = ctx;
  const values = infrastructureValues(ctx);
  const issues = checkValues(infrastructureContract(ctx.profile), values);
  // the stack has no override for this release: anything wrong here is this repository's bug
  if (issues.length > 0) {
    throw new Error(`values contract, release openkeel-chart: ${issues.map((i) => `${formatPath(i.path, "(top level)")}: ${i.message}`).join("; ")}`);
  }
  const released = infrastructurePostRender(ctx, values);
  return [
    namespaceUnit(ownNamespaces(ctx)),
    infrastructureUnit(cfg, released.values, released.patches),
    rabbitmqBudgetUnit(),
    ...serviceInfrastructureUnits(ctx),
    ...ingressServiceUnits(ctx),
  ];
}

/** Each service's checks of the releases' final values, against each other's (its `releaseChecks`). */
function releaseProblems(cfg: LoadedConfig, releases: readonly HelmReleaseUnit[]): Problem[] {
  const valuesOf = (service: string) => releases.find((x) => x.name === releaseName(service))?.values;
  return OPENKEEL_SERVICES.flatMap((s) => s.releaseChecks?.(cfg, valuesOf) ?? []);
}

/** The units of the OpenKeel phases; what the stack's values break of the contract comes back as problems. */
export function openkeelUnits(ctx: StackContext): { units: Record<"openkeel-infra" | "openkeel", Unit[]>; problems: Problem[] } {
  const infra = infrastructure(ctx);
  const services = serviceUnits(ctx);
  return {
    units: { "openkeel-infra": infra, openkeel: [...services.units, ...autoscalingUnits(ctx, services.releases)] },
    problems: [...services.problems, ...releaseProblems(ctx.cfg, services.releases)],
  };
}
