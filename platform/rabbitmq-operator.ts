// RabbitMQ cluster operator: the release's `cluster-operator.yml` (CRD, `rabbitmq-system`
// namespace, operator Deployment). Upstream ships no chart and the manifest takes no values, so
// the operator is not pinned to the control plane: it lands on an untainted node, which is a
// controlPlane node in the medium and large topologies (every other role is tainted there).
import type { RemoteManifestUnit } from "../plan/plan";
import type { Affinity } from "../placement/chart-helper";
import { requiredAntiAffinityKeys } from "../placement/scheduling";
import { CONTROL_PLANE, num, obj, platformComponent, podScheduling, unplaced, type ObjectReader } from "../placement/workloads";
import { after, type PlatformComponent } from "./component";
import { pinnedManifestUnit } from "./context";
import { RABBITMQ_CLUSTER_OPERATOR } from "./versions";

function rabbitmqOperatorUnit(dependsOn: string[]): RemoteManifestUnit {
  // It holds the RabbitmqCluster CRD.
  return pinnedManifestUnit("rabbitmq-cluster-operator", "openkeel:platform:RabbitmqClusterOperator", RABBITMQ_CLUSTER_OPERATOR, {
    protect: true,
    dependsOn,
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

export const rabbitmqOperator: PlatformComponent = {
  name: "RabbitMQ cluster operator",
  pins: [RABBITMQ_CLUSTER_OPERATOR],
  units: (_ctx, { podNetwork }) => ({ "crds-operators": [rabbitmqOperatorUnit(after(podNetwork))] }),
  readers: {
    units: { "openkeel:platform:RabbitmqClusterOperator": unplaced("upstream manifest: no values set where the operator runs") },
    objects: { RabbitmqCluster: readRabbitmqCluster },
  },
};
