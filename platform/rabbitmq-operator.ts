// RabbitMQ cluster operator: the release's `cluster-operator.yml` (CRD, `rabbitmq-system`
// namespace, operator Deployment, and its webhooks' certificate from a cert-manager Issuer and
// Certificates: it waits for cert-manager). Upstream ships no chart and the manifest takes no
// values, so the operator is not pinned to the control plane: it lands on an untainted node, which
// is a controlPlane node in the medium and large topologies (every other role is tainted there).
import type { K8sObject, RemoteManifestUnit } from "../plan/plan";
import { ZONE_LABEL } from "../config/roles";
import type { Affinity } from "../placement/chart-helper";
import { requiredAntiAffinityKeys } from "../placement/scheduling";
import {
  CONTROL_PLANE,
  num,
  obj,
  platformComponent,
  podScheduling,
  type Obj,
  type ObjectReader,
  type PodTemplate,
  type UpstreamWorkload,
} from "../placement/workloads";
import { upstreamReader, type PlatformComponent, type UpstreamManifest } from "./component";
import { pinnedManifestUnit, type Contents, type CustomKinds } from "./context";
import { fact } from "../plan/needs";
import { RABBITMQ_CLUSTER_OPERATOR } from "./versions";
import { isPlainObject } from "../config/plain";

const RABBITMQ_CLUSTER_OPERATOR_TYPE = "openkeel:platform:RabbitmqClusterOperator";

/** The namespace both RabbitMQ operators' manifests create and run in. */
export const RABBITMQ_SYSTEM_NAMESPACE = "rabbitmq-system";

/**
 * Both RabbitMQ manifests hold this Namespace, with a different app.kubernetes.io/name label:
 * under server-side apply the second writer is refused (found by npm run e2e with the real
 * manifests). Each unit applies it with force, so that neither fails when the other wrote last.
 */
export const RABBITMQ_SYSTEM_FORCED = [`Namespace ${RABBITMQ_SYSTEM_NAMESPACE}`];

/** Both RabbitMQ manifests hold an Issuer and Certificates of cert-manager, for their webhooks' serving certificates. */
export const RABBITMQ_CERTIFICATES = [fact.api("cert-manager.io", "Certificate"), fact.api("cert-manager.io", "Issuer")];

/** cluster-operator.yml: the RabbitmqCluster CRD and the webhooks that admit it, the operator on the pod network. */
const CONTENT = {
  offers: [fact.api("rabbitmq.com", "RabbitmqCluster"), fact.admission("rabbitmq.com", "rabbitmqclusters")],
  uses: [...RABBITMQ_CERTIFICATES, fact.podNetwork],
};
const CONTENTS: Contents = { "v2.22.3": CONTENT, "v2.22.2": CONTENT };

function rabbitmqOperatorUnit(): RemoteManifestUnit {
  // It holds the RabbitmqCluster CRD.
  return pinnedManifestUnit("rabbitmq-cluster-operator", RABBITMQ_CLUSTER_OPERATOR_TYPE, RABBITMQ_CLUSTER_OPERATOR, CONTENTS, {
    protect: true,
    forceConflicts: RABBITMQ_SYSTEM_FORCED,
  });
}

/**
 * The labels the RabbitMQ cluster operator v2.22.3 gives the pods of a RabbitmqCluster:
 * internal/metadata/label.go Label (app.kubernetes.io/name=<cluster>, component=rabbitmq,
 * part-of=rabbitmq), on the pod template of internal/resource/statefulset.go (line 652); its
 * StatefulSet selects them by app.kubernetes.io/name alone (LabelSelector, line 69).
 */
export function rabbitmqPodLabels(cluster: string): Record<string, string> {
  return { "app.kubernetes.io/name": cluster, "app.kubernetes.io/component": "rabbitmq", "app.kubernetes.io/part-of": "rabbitmq" };
}

/** The annotation that turns the operator's default zone spread off (api/v1beta1 DisableDefaultTopologySpreadAnnotation). */
const NO_DEFAULT_SPREAD = "rabbitmq.com/disable-default-topology-spread-constraints";

/**
 * A strategic merge of a pod spec override, as far as scheduling goes: maps merge key by key, a
 * list replaces (affinity terms, tolerations: no patch strategy), topologySpreadConstraints merge
 * by topologyKey (their patchMergeKey); containers are not modelled.
 */
function strategicMerge(base: Obj, patch: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (k === "containers") continue;
    if (k === "topologySpreadConstraints" && Array.isArray(v) && Array.isArray(base[k])) {
      const byKey = new Map((base[k] as Obj[]).map((c) => [c.topologyKey, c]));
      for (const c of v as Obj[]) byKey.set(c.topologyKey, { ...obj(byKey.get(c.topologyKey)), ...c });
      out[k] = [...byKey.values()];
    } else out[k] = isPlainObject(v) && isPlainObject(base[k]) ? strategicMerge(base[k], v) : v;
  }
  return out;
}

/**
 * The RabbitMQ pod the cluster operator v2.22.3 builds from a RabbitmqCluster
 * (internal/resource/statefulset.go): spec.affinity and spec.tolerations as they are, the default
 * zone spread on its pods (ScheduleAnyway, defaultTopologySpreadConstraints, lines 1245-1265)
 * unless the cluster's annotation turns it off, then `override.statefulSet.spec.template` over it
 * (applyStsOverride: the labels merged, the pod spec by a strategic merge patch, patchPodSpec).
 */
export function rabbitmqPod(cr: K8sObject): PodTemplate {
  const spec = obj(cr.spec);
  const name = cr.metadata.name;
  const noDefaultSpread = cr.metadata.annotations?.[NO_DEFAULT_SPREAD]?.trim() === "true";
  const base: Obj = {
    ...(spec.affinity !== undefined ? { affinity: spec.affinity } : {}),
    ...(spec.tolerations !== undefined ? { tolerations: spec.tolerations } : {}),
    topologySpreadConstraints: noDefaultSpread
      ? []
      : [{ maxSkew: 1, topologyKey: ZONE_LABEL, whenUnsatisfiable: "ScheduleAnyway", labelSelector: { matchLabels: { "app.kubernetes.io/name": name } } }],
  };
  const template = obj(obj(obj(obj(spec.override).statefulSet).spec).template);
  const labels = Object.fromEntries(Object.entries(obj(obj(template.metadata).labels)).map(([k, v]) => [k, String(v)]));
  return { labels: { ...rabbitmqPodLabels(name), ...labels }, spec: strategicMerge(base, obj(template.spec)) };
}

/** A RabbitmqCluster: its StatefulSet's pods as the operator builds them (rabbitmqPod). */
export const readRabbitmqCluster: ObjectReader = (u, o) => {
  const pod = rabbitmqPod(o);
  return [
    platformComponent(u, `${o.metadata.name}/rabbitmq`, "StatefulSet", podScheduling(pod.spec), CONTROL_PLANE, {
      replicas: num(obj(o.spec).replicas) ?? 1,
      confinedTo: "controlPlane",
      requiredAntiAffinity: requiredAntiAffinityKeys(pod.spec.affinity as Affinity | undefined),
    }),
  ];
};

/**
 * A RabbitMQ operator's Deployment as its release manifest ships it: one replica, no node
 * selector, no toleration, no affinity (any untainted node).
 */
export function rabbitmqOperatorWorkload(name: string): UpstreamWorkload {
  return {
    kind: "Deployment",
    namespace: RABBITMQ_SYSTEM_NAMESPACE,
    name,
    replicas: 1,
    scheduling: { nodeSelector: {}, tolerations: [] },
    designRoles: CONTROL_PLANE,
  };
}

/** A RabbitmqCluster (the one openkeel-chart renders): the pods the operator builds from it; it writes no PodDisruptionBudget over them. */
const CUSTOM_KINDS: CustomKinds = {
  "rabbitmq.com/RabbitmqCluster": { pods: { builder: "the RabbitMQ operator", labels: rabbitmqPodLabels, of: rabbitmqPod } },
};

const UPSTREAM: UpstreamManifest = { pin: RABBITMQ_CLUSTER_OPERATOR, workloads: [rabbitmqOperatorWorkload("rabbitmq-cluster-operator")] };

export const rabbitmqOperator: PlatformComponent = {
  name: "RabbitMQ cluster operator",
  docs: [
    {
      component: "RabbitMQ cluster operator",
      version: "v2.22.3",
      installedAs: "remote manifest `cluster-operator.yml` (its webhooks' certificate from cert-manager), after cert-manager",
      phase: "crds-operators",
      where: "an untainted node (see below)",
      stacks: "all",
    },
  ],
  // § 2.3: the platform's operators on the control plane
  design: [{ workloads: /rabbitmq-cluster-operator\/rabbitmq-cluster-operator$/, reach: ["controlPlane"] }],
  pins: [RABBITMQ_CLUSTER_OPERATOR],
  upstream: [UPSTREAM],
  artifacts: { "rabbitmq-cluster-operator": CONTENTS },
  customKinds: CUSTOM_KINDS,
  units: () => ({ "crds-operators": [rabbitmqOperatorUnit()] }),
  readers: {
    units: { [RABBITMQ_CLUSTER_OPERATOR_TYPE]: upstreamReader(UPSTREAM) },
    objects: { RabbitmqCluster: readRabbitmqCluster },
  },
};
