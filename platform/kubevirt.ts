// KubeVirt: the pinned operator manifest (CRDs, virt-operator, the privileged `kubevirt`
// namespace) and our own KubeVirt CR with the placement of § 4.4: infra (virt-api,
// virt-controller) on the control plane, virt-handler on compute nodes, reserved hosts included.
import type { ManifestsUnit, RemoteManifestUnit } from "../plan/plan";
import { resolvePlacement } from "../placement/chart-helper";
import { controlPlaneScheduling, remoteManifestUnit, RESERVED_TOLERATION, selectorAndTolerations, waitFor, type PlatformContext } from "./context";
import { KUBEVIRT_OPERATOR } from "./versions";

export const KUBEVIRT_NAMESPACE = "kubevirt";

export function kubevirtOperatorUnit(dependsOn: string[] = []): RemoteManifestUnit {
  // It holds the KubeVirt CRDs: deleting them deletes every VM.
  return remoteManifestUnit("kubevirt-operator", "openkeel:platform:KubeVirtOperator", KUBEVIRT_OPERATOR, { protect: true, dependsOn });
}

/** virt-handler (and so where VMIs may start): compute nodes, Masakari reserved hosts too (§ 5.6). */
export function virtHandlerPlacement(ctx: PlatformContext) {
  return selectorAndTolerations(resolvePlacement({ role: "compute", extraTolerations: [RESERVED_TOLERATION] }, { profile: ctx.profile }));
}

export function kubevirtUnit(ctx: PlatformContext, opts: { emulation: boolean }): ManifestsUnit {
  return {
    kind: "Manifests",
    name: "kubevirt",
    type: "openkeel:platform:KubeVirt",
    // Deleting the CR uninstalls KubeVirt.
    protect: true,
    objects: [
      {
        apiVersion: "kubevirt.io/v1",
        kind: "KubeVirt",
        metadata: {
          name: "kubevirt",
          namespace: KUBEVIRT_NAMESPACE,
          // Later phases (and the OpenKeel services) start once KubeVirt reports Available.
          annotations: waitFor("condition=Available", 1200),
        },
        spec: {
          infra: { nodePlacement: selectorAndTolerations(controlPlaneScheduling(ctx)) },
          workloads: { nodePlacement: virtHandlerPlacement(ctx) },
          configuration: {
            migrations: { parallelMigrationsPerCluster: 5, parallelOutboundMigrationsPerNode: 2 },
            evictionStrategy: "LiveMigrate",
            // kind nodes have no /dev/kvm.
            ...(opts.emulation ? { developerConfiguration: { useEmulation: true } } : {}),
          },
        },
      },
    ],
  };
}
