// MariaDB operator (Galera, D5): its CRDs chart first, then the operator chart, on the control
// plane (§ 2.3).
import type { HelmReleaseUnit, K8sObject } from "../plan/plan";
import { controlPlaneScheduling, namespace, selectorAndTolerations, type PlatformContext } from "./context";
import { MARIADB_OPERATOR_CHART, MARIADB_OPERATOR_CRDS_CHART } from "./versions";

export const MARIADB_OPERATOR_NAMESPACE = "mariadb-operator";

export function mariadbOperatorNamespace(): K8sObject {
  return namespace(MARIADB_OPERATOR_NAMESPACE, "baseline");
}

export function mariadbOperatorCrdsRelease(dependsOn: string[]): HelmReleaseUnit {
  return {
    kind: "HelmRelease",
    name: "mariadb-operator-crds",
    type: "openkeel:platform:MariadbOperatorCrds",
    release: "mariadb-operator-crds",
    namespace: MARIADB_OPERATOR_NAMESPACE,
    chart: { ...MARIADB_OPERATOR_CRDS_CHART },
    // The CRDs own every MariaDB (Galera) object.
    protect: true,
    dependsOn,
    values: {},
  };
}

export function mariadbOperatorRelease(ctx: PlatformContext, dependsOn: string[]): HelmReleaseUnit {
  const placement = selectorAndTolerations(controlPlaneScheduling(ctx));
  return {
    kind: "HelmRelease",
    name: "mariadb-operator",
    type: "openkeel:platform:MariadbOperator",
    release: "mariadb-operator",
    namespace: MARIADB_OPERATOR_NAMESPACE,
    chart: { ...MARIADB_OPERATOR_CHART },
    dependsOn,
    values: {
      ...placement,
      webhook: { ...placement },
      certController: { ...placement },
    },
  };
}
