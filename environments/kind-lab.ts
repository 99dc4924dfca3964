// The kind lab on a laptop (§ 6, lab): default label keys, roles optional, no Ironic. kind keeps
// its own CNI (Multus is added on top); KubeVirt (emulation), CDI, Longhorn and the snapshot stack
// only with openkeel:platform.realBackends, like the lab's install-backends step.
import type { LoadedConfig } from "../config/schema";
import type { NodeMetadataContributor } from "../plan/node-roles";
import type { K8sObject, Plan } from "../plan/plan";
import type { PlanCheck, Topology } from "../topology/topology";
import { cdiOperatorUnit, cdiUnit } from "../platform/cdi";
import { certManagerNamespace, certManagerRelease } from "../platform/cert-manager";
import { platformContext, pushUnits, type PlatformContext } from "../platform/context";
import { kubevirtOperatorUnit, kubevirtUnit } from "../platform/kubevirt";
import { longhornNodeMetadata, longhornNamespace, longhornRelease } from "../platform/longhorn";
import { mariadbOperatorCrdsRelease, mariadbOperatorNamespace, mariadbOperatorRelease } from "../platform/mariadb-operator";
import { multusUnit } from "../platform/multus";
import { PLATFORM_NAMESPACES_UNIT, platformNamespacesUnit } from "../platform/namespaces";
import { rabbitmqOperatorUnit } from "../platform/rabbitmq-operator";
import { snapshotControllerUnit, snapshotCrdUnits } from "../platform/snapshots";
import { storageClassesUnit, volumeSnapshotClassesUnit } from "../platform/storage-classes";
import { addOpenKeel } from "../openkeel";
import { basePlan } from "./common";

export function kindLabPlan(cfg: LoadedConfig, topo: Topology, warnings: PlanCheck[]): Plan {
  const ctx = platformContext(cfg, topo);
  const realBackends = cfg.platform.realBackends === true;
  const contributors: NodeMetadataContributor[] = realBackends ? [longhornNodeMetadata] : [];
  const plan = basePlan(cfg, topo, warnings, contributors);
  addPlatform(plan, ctx, realBackends);
  addOpenKeel(plan, cfg, topo);
  return plan;
}

function addPlatform(plan: Plan, ctx: PlatformContext, realBackends: boolean): void {
  const ns = PLATFORM_NAMESPACES_UNIT;
  const namespaces: K8sObject[] = [certManagerNamespace(), mariadbOperatorNamespace()];
  if (realBackends) namespaces.unshift(longhornNamespace());
  pushUnits(plan, "crds-operators", [
    platformNamespacesUnit(namespaces),
    multusUnit(ctx),
    certManagerRelease(ctx, [ns]),
    mariadbOperatorCrdsRelease([ns]),
    mariadbOperatorRelease(ctx, [ns, "mariadb-operator-crds"]),
    rabbitmqOperatorUnit(),
    ...(realBackends ? [...snapshotCrdUnits(), kubevirtOperatorUnit(), cdiOperatorUnit()] : []),
  ]);
  if (!realBackends) return;
  pushUnits(plan, "platform", [longhornRelease(ctx, []), snapshotControllerUnit(ctx), kubevirtUnit(ctx, { emulation: true }), cdiUnit(ctx)]);
  pushUnits(plan, "platform-config", [storageClassesUnit(ctx), volumeSnapshotClassesUnit()]);
}
