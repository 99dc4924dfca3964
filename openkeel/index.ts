// The units of the OpenKeel phases: openkeel-infra (namespace + openkeel-chart) after the platform,
// then openkeel (one release per service). Values that break the values contract are the stack's
// problems, one per key, naming the stack file, the service and the values key path.
import type { LoadedConfig } from "../config/schema";
import { isSecretRef, type HelmReleaseUnit, type Unit } from "../plan/plan";
import { formatPath, valueAt, type Problem } from "../config/problems";
import type { StackContext } from "../platform/context";
import { autoscalingUnits } from "./autoscaling";
import { checkValues } from "./contract";
import {
  infrastructureContract,
  infrastructurePostRender,
  infrastructureUnit,
  infrastructureValues,
  NAMESPACE_UNIT,
  namespaceUnit,
  rabbitmqBudgetUnit,
} from "./infrastructure";
import { ingressServiceUnits } from "./ingress";
import { ironicEgressUnit, ironicNamespace, ironicProvisioningUnit } from "./ironic";
import { releaseName, serviceUnits } from "./services";
import { kataRuntimeClassUnit, KATA_RUNTIME_CLASS_UNIT } from "./zun";

function infrastructure(ctx: StackContext): Unit[] {
  const { cfg } = ctx;
  const values = infrastructureValues(ctx);
  const issues = checkValues(infrastructureContract(ctx.profile), values);
  // the stack has no override for this release: anything wrong here is this repository's bug
  if (issues.length > 0) {
    throw new Error(`values contract, release openkeel-chart: ${issues.map((i) => `${formatPath(i.path, "(top level)")}: ${i.message}`).join("; ")}`);
  }
  // Ironic's own namespace, and its egress policy before any of its pods (§ 2.2)
  const ironic = ctx.serviceOn("ironic");
  const egress = ironic ? ironicEgressUnit(cfg) : undefined;
  if (egress) egress.dependsOn = [NAMESPACE_UNIT];
  const provisioning = ironic ? ironicProvisioningUnit(cfg) : undefined;
  if (provisioning) provisioning.dependsOn = [NAMESPACE_UNIT];
  const released = infrastructurePostRender(ctx, values);
  return [
    namespaceUnit(ironic ? [ironicNamespace()] : []),
    infrastructureUnit(cfg, released.values, released.patches),
    rabbitmqBudgetUnit(),
    ...(egress ? [egress] : []),
    ...(provisioning ? [provisioning] : []),
    ...ingressServiceUnits(ctx),
  ];
}

/** D4: the Neutron metadata agent signs with the secret Nova's metadata API checks. */
function metadataSecretProblems(cfg: LoadedConfig, releases: readonly HelmReleaseUnit[]): Problem[] {
  const valuesOf = (service: "nova" | "neutron") => releases.find((x) => x.name === releaseName(service))?.values;
  const nova = valueAt(valuesOf("nova"), ["metadata", "sharedSecret"]);
  const neutron = valueAt(valuesOf("neutron"), ["metadataAgent", "sharedSecret"]);
  // a literal or missing secret is the contract's to report
  if (!isSecretRef(nova) || !isSecretRef(neutron) || nova.secretRef === neutron.secretRef) return [];
  const overridden =
    valueAt(cfg.services.nova?.values, ["metadata", "sharedSecret"]) !== undefined ||
    valueAt(cfg.services.neutron?.values, ["metadataAgent", "sharedSecret"]) !== undefined;
  // the catalog gives both the one generated secret: a difference no override explains is a bug
  if (!overridden) throw new Error(`D4: the catalog gives Nova (${nova.secretRef}) and Neutron (${neutron.secretRef}) different metadata secrets`);
  return [
    {
      file: cfg.file,
      path: "openkeel:services",
      message: "Nova's metadata.sharedSecret and Neutron's metadataAgent.sharedSecret differ: every metadata request would fail its signature check (D4)",
      fix: "remove the override of either, so that both use the one generated secret",
    },
  ];
}

/** Zun's containers run with the kata RuntimeClass, which must exist before Zun starts them. */
function withKataRuntimeClass(units: HelmReleaseUnit[], ctx: StackContext): Unit[] {
  const zun = units.find((u) => u.name === releaseName("zun"));
  if (!zun) return units;
  zun.dependsOn = [...(zun.dependsOn ?? []), KATA_RUNTIME_CLASS_UNIT];
  return [kataRuntimeClassUnit(ctx), ...units];
}

/** The units of the OpenKeel phases; what the stack's values break of the contract comes back as problems. */
export function openkeelUnits(ctx: StackContext): { units: Record<"openkeel-infra" | "openkeel", Unit[]>; problems: Problem[] } {
  const infra = infrastructure(ctx);
  const services = serviceUnits(ctx);
  return {
    units: { "openkeel-infra": infra, openkeel: [...withKataRuntimeClass(services.units, ctx), ...autoscalingUnits(ctx, services.units)] },
    problems: [...services.problems, ...metadataSecretProblems(ctx.cfg, services.units)],
  };
}
