// MariaDB operator (Galera, D5): its CRDs chart first, then the operator chart, on the control
// plane (§ 2.3). The placement report reads its charts' values, and a MariaDB CR the way the
// operator turns it into the Galera StatefulSet.
import { helmReleaseUnit, type HelmReleaseUnit, type K8sObject } from "../plan/plan";
import { HOSTNAME_LABEL } from "../config/roles";
import type { Affinity } from "../placement/chart-helper";
import { disruptionsAllowed, requiredAntiAffinityKeys } from "../placement/scheduling";
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
  type PodTemplate,
} from "../placement/workloads";
import type { PlatformComponent } from "./component";
import { contentAt, controlPlaneScheduling, namespace, selectorAndTolerations, type Contents, type CustomKinds, type StackContext } from "./context";
import { fact } from "../plan/needs";
import { MARIADB_OPERATOR_CHART, MARIADB_OPERATOR_CRDS_CHART } from "./versions";
import { PRIORITY_CLASSES } from "./priority-classes";

const MARIADB_OPERATOR_TYPE = "openkeel:platform:MariadbOperator";
const MARIADB_OPERATOR_CRDS_TYPE = "openkeel:platform:MariadbOperatorCrds";

const MARIADB_OPERATOR_NAMESPACE = "mariadb-operator";

function mariadbOperatorNamespace(): K8sObject {
  return namespace(MARIADB_OPERATOR_NAMESPACE, "baseline");
}

/** The CRDs chart: the k8s.mariadb.com kinds (the MariaDB of openkeel-chart among them), nothing else. */
const CRDS_CONTENT = { offers: [fact.api("k8s.mariadb.com", "MariaDB")] };
const CRDS_CONTENTS: Contents = { "26.6.0": CRDS_CONTENT, "26.3.0": CRDS_CONTENT };

function mariadbOperatorCrdsRelease(): HelmReleaseUnit {
  // The CRDs own every MariaDB (Galera) object.
  return helmReleaseUnit(
    "mariadb-operator-crds",
    MARIADB_OPERATOR_CRDS_TYPE,
    MARIADB_OPERATOR_NAMESPACE,
    MARIADB_OPERATOR_CRDS_CHART,
    {},
    {
      protect: true,
      ...contentAt(CRDS_CONTENTS, MARIADB_OPERATOR_CRDS_CHART.version, "the mariadb-operator-crds chart"),
    },
  );
}

/**
 * The operator chart: its webhook admits the k8s.mariadb.com kinds (failurePolicy Fail); its pods run
 * on the pod network, the webhook's with the certificate its cert-controller writes at run time.
 */
const CHART_CONTENT = {
  offers: [fact.admission("k8s.mariadb.com", "mariadbs")],
  uses: [fact.podNetwork, ...["mariadb-operator-webhook-ca", "mariadb-operator-webhook-cert"].map((s) => fact.secret(MARIADB_OPERATOR_NAMESPACE, s))],
};
const CHART_CONTENTS: Contents = { "26.6.0": CHART_CONTENT, "26.3.0": CHART_CONTENT };

function mariadbOperatorRelease(ctx: StackContext): HelmReleaseUnit {
  // § 2: operators' controllers; the chart has a key per Deployment (templates/{operator,webhook,cert-controller}/deployment.yaml)
  const placement = { ...selectorAndTolerations(controlPlaneScheduling(ctx)), priorityClassName: PRIORITY_CLASSES.control };
  const values = { ...placement, webhook: { ...placement }, certController: { ...placement } };
  return helmReleaseUnit("mariadb-operator", MARIADB_OPERATOR_TYPE, MARIADB_OPERATOR_NAMESPACE, MARIADB_OPERATOR_CHART, values, {
    ...contentAt(CHART_CONTENTS, MARIADB_OPERATOR_CHART.version, "the mariadb-operator chart"),
    waitsFor: [
      {
        unit: "mariadb-operator-crds",
        why: "its controller watches MariaDBs and every other k8s.mariadb.com kind, whose CRDs only the CRDs chart holds: without them it does not start",
      },
    ],
  });
}

/**
 * The labels mariadb-operator 26.6.0 gives the Galera pods of a MariaDB CR, and selects them by
 * (its StatefulSet's selector, its PodDisruptionBudget's): pkg/builder/labels/labels.go
 * WithMariaDBSelectorLabels (app.kubernetes.io/name=mariadb, app.kubernetes.io/instance=<CR>), set
 * on the pod template by pkg/builder/pod_builder.go mariadbPodTemplate (lines 215-220).
 */
export function galeraPodLabels(cr: string): Record<string, string> {
  return { "app.kubernetes.io/name": "mariadb", "app.kubernetes.io/instance": cr };
}

/**
 * The Galera pod the operator builds from a MariaDB CR (pkg/builder/pod_builder.go
 * mariadbPodTemplate, 26.6.0, lines 240-258): nodeSelector, tolerations, priorityClassName,
 * topologySpreadConstraints and affinity as the CR has them. `affinity.antiAffinityEnabled` becomes
 * the required host term on the instance label when the CR writes no podAntiAffinity of its own
 * (api/v1alpha1/base_types.go AffinityConfig.SetDefaults, lines 418-437, called from the pod
 * template's defaults, mariadb_types.go line 594); it is immutable (`webhook:"inmutable"`).
 */
export function galeraPod(cr: K8sObject): PodTemplate {
  const spec = obj(cr.spec);
  const { antiAffinityEnabled, ...affinity } = obj(spec.affinity);
  const byFlag =
    antiAffinityEnabled === true && affinity.podAntiAffinity === undefined
      ? {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              {
                labelSelector: { matchExpressions: [{ key: "app.kubernetes.io/instance", operator: "In", values: [cr.metadata.name] }] },
                topologyKey: HOSTNAME_LABEL,
              },
            ],
          },
        }
      : {};
  const pod: Obj = { ...affinity, ...byFlag };
  const fields = ["nodeSelector", "tolerations", "priorityClassName", "topologySpreadConstraints"].filter((k) => spec[k] !== undefined);
  return {
    labels: galeraPodLabels(cr.metadata.name),
    spec: { ...Object.fromEntries(fields.map((k) => [k, spec[k]])), ...(Object.keys(pod).length > 0 ? { affinity: pod } : {}) },
  };
}

/**
 * How many Galera pods the operator's PodDisruptionBudget lets a drain evict while all are
 * healthy: the CR's `spec.podDisruptionBudget`; without one, an HA MariaDB (Galera or replication
 * on) gets `minAvailable: 50%` and any other none (internal/controller/mariadb_controller.go
 * reconcilePodDisruptionBudget and reconcileHighAvailabilityPDB, 26.6.0, lines 490-635).
 */
export function galeraDisruptionsAllowed(cr: K8sObject): number {
  const spec = obj(cr.spec);
  const replicas = num(spec.replicas) ?? 1;
  const ha = obj(spec.galera).enabled === true || obj(spec.replication).enabled === true;
  const pdb = spec.podDisruptionBudget === undefined ? (ha ? { minAvailable: "50%" } : undefined) : obj(spec.podDisruptionBudget);
  return pdb === undefined ? replicas : disruptionsAllowed(pdb, replicas);
}

/** A MariaDB CR: the Galera StatefulSet's pods as the operator builds them (galeraPod). */
export const readMariaDB: ObjectReader = (u, o) => {
  const pod = galeraPod(o);
  return [
    platformComponent(u, `${o.metadata.name}/galera`, "StatefulSet", podScheduling(pod.spec), CONTROL_PLANE, {
      replicas: num(obj(o.spec).replicas) ?? 1,
      confinedTo: "controlPlane",
      requiredAntiAffinity: requiredAntiAffinityKeys(pod.spec.affinity as Affinity | undefined),
    }),
  ];
};

/**
 * A MariaDB CR (the one openkeel-chart renders): the Galera pods the operator builds from it, with
 * the budget it writes over them, and the fields its webhook refuses to change: 26.6.0 tags
 * `priorityClassName` and `affinity.antiAffinityEnabled` of the MariaDB spec `webhook:"inmutable"`
 * (api/v1alpha1 base_types.go). The CR is rendered by a chart and amended by the release's
 * post-render patches (plan/post-render.ts): a changed patch of such a field is a replacement of
 * the CR, which the release's upgrade cannot do (review/operator-findings.ts).
 */
const CUSTOM_KINDS: CustomKinds = {
  "k8s.mariadb.com/MariaDB": {
    pods: { builder: "mariadb-operator", labels: galeraPodLabels, of: galeraPod, disruptionsAllowed: galeraDisruptionsAllowed },
    immutable: {
      fields: ["spec.priorityClassName", "spec.affinity.antiAffinityEnabled"],
      reason: "mariadb-operator's webhook marks the field immutable; only a new CR takes it",
    },
  },
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
  docs: [
    {
      component: "MariaDB operator",
      version: "charts `mariadb-operator-crds` then `mariadb-operator` 26.6.0",
      installedAs: "Helm (`https://mariadb-operator.github.io/mariadb-operator`)",
      phase: "crds-operators",
      where: "control plane",
      stacks: "all",
    },
  ],
  // § 2.3: the platform's operators on the control plane
  design: [{ workloads: /mariadb-operator\/(mariadb-operator|webhook|certController)$/, reach: ["controlPlane"] }],
  pins: [MARIADB_OPERATOR_CRDS_CHART, MARIADB_OPERATOR_CHART],
  charts: MARIADB_OPERATOR_CHARTS,
  artifacts: { "mariadb-operator-crds": CRDS_CONTENTS, "mariadb-operator": CHART_CONTENTS },
  customKinds: CUSTOM_KINDS,
  namespaces: () => [mariadbOperatorNamespace()],
  units: (ctx) => ({ "crds-operators": [mariadbOperatorCrdsRelease(), mariadbOperatorRelease(ctx)] }),
  readers: {
    units: {
      [MARIADB_OPERATOR_CRDS_TYPE]: unplaced("CRDs only"),
      [MARIADB_OPERATOR_TYPE]: (u) => (u.kind === "HelmRelease" ? chartOperatorComponents(u, ["webhook", "certController"], operatorFacts) : []),
    },
    objects: { MariaDB: readMariaDB },
  },
};
