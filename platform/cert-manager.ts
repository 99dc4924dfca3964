// cert-manager (Helm, CRDs from the chart and kept on uninstall), on the control plane (§ 2.1).
import { helmReleaseUnit, type HelmReleaseUnit, type K8sObject } from "../plan/plan";
import { chartOperatorComponents, CONTROL_PLANE, obj, platformComponent, podScheduling, type Obj } from "../placement/workloads";
import { after, type PlatformComponent } from "./component";
import { controlPlaneScheduling, namespace, selectorAndTolerations, type StackContext } from "./context";
import { CERT_MANAGER_CHART } from "./versions";
import { PRIORITY_CLASSES } from "./priority-classes";

const CERT_MANAGER_NAMESPACE = "cert-manager";

/** The chart's pods run as non-root with RuntimeDefault seccomp and no capabilities. */
function certManagerNamespace(): K8sObject {
  return namespace(CERT_MANAGER_NAMESPACE, "restricted");
}

function certManagerRelease(ctx: StackContext, dependsOn: string[]): HelmReleaseUnit {
  const placement = selectorAndTolerations(controlPlaneScheduling(ctx));
  const values = {
    crds: { enabled: true, keep: true },
    // § 2: operators' controllers; the chart's one key for all four pods (values.yaml global.priorityClassName)
    global: { priorityClassName: PRIORITY_CLASSES.control },
    ...placement,
    webhook: { ...placement },
    cainjector: { ...placement },
    startupapicheck: { ...placement },
  };
  // Its CRDs own every Certificate and Issuer.
  return helmReleaseUnit("cert-manager", "openkeel:platform:CertManager", CERT_MANAGER_NAMESPACE, CERT_MANAGER_CHART, values, { protect: true, dependsOn });
}

export const certManager: PlatformComponent = {
  name: "cert-manager",
  pins: [CERT_MANAGER_CHART],
  namespaces: () => [certManagerNamespace()],
  units: (ctx, { namespaces, priorityClasses, podNetwork }) => ({
    "crds-operators": [certManagerRelease(ctx, after(priorityClasses, namespaces, podNetwork))],
  }),
  readers: {
    units: {
      "openkeel:platform:CertManager": (u) =>
        u.kind === "HelmRelease"
          ? [
              ...chartOperatorComponents(u, ["webhook", "cainjector"]),
              // the post-install hook Job (templates/startupapicheck-job.yaml), placed by startupapicheck.*
              platformComponent(u, "startupapicheck", "Pods", podScheduling(obj((u.values as Obj).startupapicheck)), CONTROL_PLANE),
            ]
          : [],
    },
  },
};
