// Talos Linux production clusters (§ 6 small, medium, large): hardened label keys (D1).
import type { LoadedConfig } from "../config/schema";
import type { Plan } from "../plan/plan";
import type { PlanCheck, Topology } from "../topology/topology";
import { cdiOperatorUnit, cdiUnit } from "../platform/cdi";
import { certManagerNamespace, certManagerRelease } from "../platform/cert-manager";
import { platformContext, pushUnits, type PlatformContext } from "../platform/context";
import { kubeOvnMasterLabels, kubeOvnRelease } from "../platform/kube-ovn";
import { kubevirtOperatorUnit, kubevirtUnit } from "../platform/kubevirt";
import { longhornNodeMetadata, longhornNamespace, longhornRelease } from "../platform/longhorn";
import { mariadbOperatorCrdsRelease, mariadbOperatorNamespace, mariadbOperatorRelease } from "../platform/mariadb-operator";
import { medik8sNamespace, medik8sOperatorsUnit, medik8sRemediationUnit, olmUnits } from "../platform/medik8s";
import { multusUnit } from "../platform/multus";
import { PLATFORM_NAMESPACES_UNIT, platformNamespacesUnit } from "../platform/namespaces";
import { rabbitmqOperatorUnit } from "../platform/rabbitmq-operator";
import { snapshotControllerUnit, snapshotCrdUnits } from "../platform/snapshots";
import { storageClassesUnit, volumeSnapshotClassesUnit } from "../platform/storage-classes";
import { addOpenKeel } from "../openkeel";
import { basePlan } from "./common";

export function talosProductionPlan(cfg: LoadedConfig, topo: Topology, warnings: PlanCheck[]): Plan {
  const ctx = platformContext(cfg, topo);
  const plan = basePlan(cfg, topo, warnings, [longhornNodeMetadata, kubeOvnMasterLabels(ctx)]);
  addPlatform(plan, ctx);
  addOpenKeel(plan, cfg, topo);
  return plan;
}

/** Kube-OVN first (no pod network before it), operators and CRDs, then the CRs and classes. */
function addPlatform(plan: Plan, ctx: PlatformContext): void {
  const ns = PLATFORM_NAMESPACES_UNIT;
  const cni = "kube-ovn";
  pushUnits(plan, "crds-operators", [
    platformNamespacesUnit([longhornNamespace(), certManagerNamespace(), mariadbOperatorNamespace(), medik8sNamespace()]),
    kubeOvnRelease(ctx),
    multusUnit(ctx, [cni]),
    ...snapshotCrdUnits(),
    certManagerRelease(ctx, [ns, cni]),
    mariadbOperatorCrdsRelease([ns]),
    mariadbOperatorRelease(ctx, [ns, cni, "mariadb-operator-crds"]),
    rabbitmqOperatorUnit([cni]),
    kubevirtOperatorUnit([cni]),
    cdiOperatorUnit([cni]),
    ...olmUnits([cni]),
    medik8sOperatorsUnit(ctx, [ns, "olm"]),
  ]);
  pushUnits(plan, "platform", [longhornRelease(ctx, []), snapshotControllerUnit(ctx), kubevirtUnit(ctx, { emulation: false }), cdiUnit(ctx)]);
  pushUnits(plan, "platform-config", [storageClassesUnit(ctx), volumeSnapshotClassesUnit(), medik8sRemediationUnit(ctx)]);
}
