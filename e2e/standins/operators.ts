// E2E STAND-IN for mariadb-operator and the RabbitMQ cluster operator (never used outside
// `npm run e2e`): the StatefulSet each operator builds from its CR, with the pod scheduling the
// operator gives it, so that the real scheduler places Galera and RabbitMQ from the CRs the
// infrastructure release applied — after its post-render patches. Written from the operators'
// code, not from this repository's placement model (platform/mariadb-operator.ts and
// platform/rabbitmq-operator.ts model the same semantics on their own), so that the e2e can
// disagree with it:
//   mariadb-operator 26.6.0: nodeSelector, tolerations, affinity (`antiAffinityEnabled` → the
//     required host term on app.kubernetes.io/instance, only when the rest of affinity is empty:
//     api/v1alpha1 AffinityConfig.SetDefaults), priorityClassName, topologySpreadConstraints;
//     pod labels app.kubernetes.io/name=mariadb, app.kubernetes.io/instance=<CR>;
//   cluster-operator v2.22.3: spec.affinity and spec.tolerations as they are, the default zone
//     spread (ScheduleAnyway), then override.statefulSet.spec.template.spec over the pod spec
//     (a strategic merge: maps merge, scalars replace); pod labels app.kubernetes.io/name=<CR>,
//     app.kubernetes.io/component=rabbitmq, app.kubernetes.io/part-of=rabbitmq.
type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : {});

/** What the e2e reads to group the pods under the report's component `<release>/<member>` (a label value has no `/`). */
export const E2E_RELEASE_LABEL = "e2e.openkeel.io/release";
export const E2E_COMPONENT_LABEL = "e2e.openkeel.io/component";
const CONTRACT_CHART_LABEL = "e2e.openkeel.io/contract-chart";

export interface OperatorCr {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Obj;
}

/** The release a CR of the infrastructure release belongs to (its name is `<release>-<member>`). */
function releaseOf(cr: OperatorCr, member: string): string {
  return cr.metadata.name.slice(0, cr.metadata.name.length - member.length - 1);
}

function statefulSet(cr: OperatorCr, member: string, podLabels: Record<string, string>, podSpec: Obj, storageClass: unknown, standsFor: string): Obj {
  const labels = { ...podLabels, [CONTRACT_CHART_LABEL]: "openkeel-chart", [E2E_RELEASE_LABEL]: releaseOf(cr, member), [E2E_COMPONENT_LABEL]: member };
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: {
      name: cr.metadata.name,
      namespace: cr.metadata.namespace,
      labels,
      annotations: {
        "e2e.openkeel.io/stand-in": standsFor,
        ...(typeof storageClass === "string" ? { "e2e.openkeel.io/storage-class": storageClass } : {}),
      },
    },
    spec: {
      replicas: typeof cr.spec?.replicas === "number" ? cr.spec.replicas : 1,
      serviceName: cr.metadata.name,
      podManagementPolicy: "Parallel",
      selector: { matchLabels: podLabels },
      template: {
        metadata: { labels },
        spec: {
          ...podSpec,
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 1,
          containers: [{ name: member, image: "registry.k8s.io/pause:3.10.1", imagePullPolicy: "IfNotPresent" }],
        },
      },
    },
  };
}

/** The Galera StatefulSet mariadb-operator builds from a MariaDB CR. */
export function galeraStatefulSet(cr: OperatorCr): Obj {
  const spec = obj(cr.spec);
  const { antiAffinityEnabled, ...affinity } = obj(spec.affinity);
  const byFlag =
    antiAffinityEnabled === true && Object.keys(affinity).length === 0
      ? {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              {
                labelSelector: { matchExpressions: [{ key: "app.kubernetes.io/instance", operator: "In", values: [cr.metadata.name] }] },
                topologyKey: "kubernetes.io/hostname",
              },
            ],
          },
        }
      : affinity;
  const podSpec: Obj = {
    ...(spec.nodeSelector ? { nodeSelector: spec.nodeSelector } : {}),
    ...(spec.tolerations ? { tolerations: spec.tolerations } : {}),
    ...(Object.keys(byFlag).length > 0 ? { affinity: byFlag } : {}),
    ...(spec.priorityClassName ? { priorityClassName: spec.priorityClassName } : {}),
    ...(spec.topologySpreadConstraints ? { topologySpreadConstraints: spec.topologySpreadConstraints } : {}),
  };
  const labels = { "app.kubernetes.io/name": "mariadb", "app.kubernetes.io/instance": cr.metadata.name };
  return statefulSet(cr, "mariadb", labels, podSpec, obj(spec.storage).storageClassName, "the StatefulSet mariadb-operator builds from the MariaDB CR");
}

/** The RabbitMQ StatefulSet the cluster operator builds from a RabbitmqCluster. */
export function rabbitmqStatefulSet(cr: OperatorCr): Obj {
  const spec = obj(cr.spec);
  const labels = { "app.kubernetes.io/name": cr.metadata.name, "app.kubernetes.io/component": "rabbitmq", "app.kubernetes.io/part-of": "rabbitmq" };
  const base: Obj = {
    ...(spec.affinity ? { affinity: spec.affinity } : {}),
    ...(spec.tolerations ? { tolerations: spec.tolerations } : {}),
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: "topology.kubernetes.io/zone",
        whenUnsatisfiable: "ScheduleAnyway",
        labelSelector: { matchLabels: { "app.kubernetes.io/name": cr.metadata.name } },
      },
    ],
  };
  const { containers: _containers, ...override } = obj(obj(obj(obj(obj(spec.override).statefulSet).spec).template).spec);
  const merged: Obj = { ...base };
  for (const [k, v] of Object.entries(override)) merged[k] = typeof v === "object" && v !== null && !Array.isArray(v) ? { ...obj(base[k]), ...obj(v) } : v;
  return statefulSet(
    cr,
    "rabbitmq",
    labels,
    merged,
    obj(spec.persistence).storageClassName,
    "the StatefulSet the RabbitMQ cluster operator builds from the RabbitmqCluster",
  );
}
