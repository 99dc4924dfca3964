// MariaDB operator (Galera, D5): its CRDs chart first, then the operator chart, on the control
// plane (§ 2.3). The placement report reads its charts' values, and a MariaDB CR the way the
// operator turns it into the Galera StatefulSet.
import { helmReleaseUnit, type HelmReleaseUnit, type K8sObject } from "../plan/plan";
import { HOSTNAME_LABEL } from "../config/roles";
import type { Affinity } from "../placement/chart-helper";
import { requiredAntiAffinityKeys } from "../placement/scheduling";
import {
  chartOperatorComponents,
  CONTROL_PLANE,
  num,
  obj,
  platformComponent,
  podScheduling,
  priorityOf,
  unplaced,
  type ChartWorkloads,
  type Component,
  type Obj,
  type ObjectReader,
} from "../placement/workloads";
import { after, type PlatformComponent } from "./component";
import { controlPlaneScheduling, namespace, selectorAndTolerations, type StackContext } from "./context";
import { MARIADB_OPERATOR_CHART, MARIADB_OPERATOR_CRDS_CHART } from "./versions";
import { PRIORITY_CLASSES } from "./priority-classes";

const MARIADB_OPERATOR_NAMESPACE = "mariadb-operator";

function mariadbOperatorNamespace(): K8sObject {
  return namespace(MARIADB_OPERATOR_NAMESPACE, "baseline");
}

function mariadbOperatorCrdsRelease(dependsOn: string[]): HelmReleaseUnit {
  // The CRDs own every MariaDB (Galera) object.
  return helmReleaseUnit(
    "mariadb-operator-crds",
    "openkeel:platform:MariadbOperatorCrds",
    MARIADB_OPERATOR_NAMESPACE,
    MARIADB_OPERATOR_CRDS_CHART,
    {},
    { protect: true, dependsOn },
  );
}

function mariadbOperatorRelease(ctx: StackContext, dependsOn: string[]): HelmReleaseUnit {
  // § 2: operators' controllers; the chart has a key per Deployment (templates/{operator,webhook,cert-controller}/deployment.yaml)
  const placement = { ...selectorAndTolerations(controlPlaneScheduling(ctx)), priorityClassName: PRIORITY_CLASSES.control };
  const values = { ...placement, webhook: { ...placement }, certController: { ...placement } };
  return helmReleaseUnit("mariadb-operator", "openkeel:platform:MariadbOperator", MARIADB_OPERATOR_NAMESPACE, MARIADB_OPERATOR_CHART, values, { dependsOn });
}

/**
 * A MariaDB CR: the operator's StatefulSet takes its nodeSelector, tolerations and affinity (§ 5.2).
 * `affinity.antiAffinityEnabled` becomes the required host anti-affinity only when the rest of
 * `affinity` is empty (api/v1alpha1 AffinityConfig.SetDefaults: `reflect.ValueOf(a.Affinity).IsZero()`):
 * beside a nodeAffinity or another term it is silently nothing.
 */
export const readMariaDB: ObjectReader = (u, o) => {
  const spec = obj(o.spec);
  const aff = obj(spec.affinity);
  const { antiAffinityEnabled, ...affinity } = aff;
  const hostByFlag = antiAffinityEnabled === true && Object.keys(affinity).length === 0;
  return [
    platformComponent(u, `${o.metadata.name}/galera`, "StatefulSet", podScheduling({ ...spec, affinity }), CONTROL_PLANE, {
      replicas: num(spec.replicas) ?? 1,
      confinedTo: "controlPlane",
      requiredAntiAffinity: [...new Set([...(hostByFlag ? [HOSTNAME_LABEL] : []), ...requiredAntiAffinityKeys(affinity as Affinity)])],
    }),
  ];
};

/**
 * What the chart makes of each Deployment's own values (templates/{operator,webhook,cert-controller}/
 * deployment.yaml at 26.6.0): `ha.replicas` (3 by default) when `ha.enabled`, else no replicas
 * field (one pod); its own `priorityClassName`.
 */
function operatorFacts(own: Obj): Partial<Component> {
  const ha = obj(own.ha);
  return { replicas: ha.enabled === true ? (num(ha.replicas) ?? 3) : 1, ...priorityOf(own.priorityClassName) };
}

/** The workloads of the two charts at their pins (release `mariadb-operator`: the chart names them after it); the CRDs chart has none. */
const MARIADB_OPERATOR_CHARTS: Record<string, ChartWorkloads> = {
  [MARIADB_OPERATOR_CRDS_CHART.chart]: { rendered: {} },
  [MARIADB_OPERATOR_CHART.chart]: {
    rendered: {
      "Deployment mariadb-operator": "mariadb-operator",
      "Deployment mariadb-operator-webhook": "webhook",
      "Deployment mariadb-operator-cert-controller": "certController",
    },
  },
};

export const mariadbOperator: PlatformComponent = {
  name: "MariaDB operator",
  pins: [MARIADB_OPERATOR_CRDS_CHART, MARIADB_OPERATOR_CHART],
  charts: MARIADB_OPERATOR_CHARTS,
  namespaces: () => [mariadbOperatorNamespace()],
  units: (ctx, { namespaces, priorityClasses, podNetwork }) => {
    const crds = mariadbOperatorCrdsRelease(after(namespaces));
    return { "crds-operators": [crds, mariadbOperatorRelease(ctx, after(priorityClasses, namespaces, podNetwork, crds))] };
  },
  readers: {
    units: {
      "openkeel:platform:MariadbOperatorCrds": unplaced("CRDs only"),
      "openkeel:platform:MariadbOperator": (u) => (u.kind === "HelmRelease" ? chartOperatorComponents(u, ["webhook", "certController"], operatorFacts) : []),
    },
    objects: { MariaDB: readMariaDB },
  },
};
