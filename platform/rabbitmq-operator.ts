// RabbitMQ cluster operator: the release's `cluster-operator.yml` (CRD, `rabbitmq-system`
// namespace, operator Deployment, and its webhooks' certificate from a cert-manager Issuer and
// Certificates: it waits for cert-manager). Upstream ships no chart and the manifest takes no
// values, so the operator is not pinned to the control plane: it lands on an untainted node, which
// is a controlPlane node in the medium and large topologies (every other role is tainted there).
import type { RemoteManifestUnit } from "../plan/plan";
import type { Affinity } from "../placement/chart-helper";
import { requiredAntiAffinityKeys } from "../placement/scheduling";
import { CONTROL_PLANE, num, obj, platformComponent, podScheduling, type ObjectReader, type UpstreamWorkload } from "../placement/workloads";
import { certManager } from "./cert-manager";
import { after, upstreamReader, type PlatformComponent, type UpstreamManifest } from "./component";
import { pinnedManifestUnit } from "./context";
import { RABBITMQ_CLUSTER_OPERATOR } from "./versions";

/** The namespace both RabbitMQ operators' manifests create and run in. */
export const RABBITMQ_SYSTEM_NAMESPACE = "rabbitmq-system";

/**
 * Both RabbitMQ manifests hold this Namespace, with a different app.kubernetes.io/name label:
 * under server-side apply the second writer is refused (found by npm run e2e with the real
 * manifests). Each unit applies it with force, so that neither fails when the other wrote last.
 */
export const RABBITMQ_SYSTEM_FORCED = [`Namespace ${RABBITMQ_SYSTEM_NAMESPACE}`];

function rabbitmqOperatorUnit(dependsOn: string[]): RemoteManifestUnit {
  // It holds the RabbitmqCluster CRD.
  return pinnedManifestUnit("rabbitmq-cluster-operator", "openkeel:platform:RabbitmqClusterOperator", RABBITMQ_CLUSTER_OPERATOR, {
    protect: true,
    dependsOn,
    forceConflicts: RABBITMQ_SYSTEM_FORCED,
  });
}

/** A RabbitmqCluster: affinity and tolerations at the top, the node selector through override.statefulSet (§ 2.1). */
export const readRabbitmqCluster: ObjectReader = (u, o) => {
  const spec = obj(o.spec);
  const tpl = obj(obj(obj(obj(obj(spec.override).statefulSet).spec).template).spec);
  const affinity = spec.affinity as Affinity | undefined;
  return [
    platformComponent(u, `${o.metadata.name}/rabbitmq`, "StatefulSet", podScheduling({ ...spec, nodeSelector: tpl.nodeSelector }), CONTROL_PLANE, {
      replicas: num(spec.replicas) ?? 1,
      confinedTo: "controlPlane",
      requiredAntiAffinity: requiredAntiAffinityKeys(affinity),
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

const UPSTREAM: UpstreamManifest = { pin: RABBITMQ_CLUSTER_OPERATOR, workloads: [rabbitmqOperatorWorkload("rabbitmq-cluster-operator")] };

export const rabbitmqOperator: PlatformComponent = {
  name: "RabbitMQ cluster operator",
  pins: [RABBITMQ_CLUSTER_OPERATOR],
  upstream: [UPSTREAM],
  units: (_ctx, { podNetwork, unitsOf }) => ({ "crds-operators": [rabbitmqOperatorUnit(after(podNetwork, ...unitsOf(certManager)))] }),
  readers: {
    units: { "openkeel:platform:RabbitmqClusterOperator": upstreamReader(UPSTREAM) },
    objects: { RabbitmqCluster: readRabbitmqCluster },
  },
};
