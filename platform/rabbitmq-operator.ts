// RabbitMQ cluster operator: the release's `cluster-operator.yml` (CRD, `rabbitmq-system`
// namespace, operator Deployment). Upstream ships no chart and the manifest takes no values, so
// the operator is not pinned to the control plane: it lands on an untainted node, which is a
// controlPlane node in the medium and large topologies (every other role is tainted there).
import type { RemoteManifestUnit } from "../components/plan";
import { RABBITMQ_CLUSTER_OPERATOR } from "./versions";

export function rabbitmqOperatorUnit(dependsOn: string[] = []): RemoteManifestUnit {
  return {
    kind: "RemoteManifest",
    name: "rabbitmq-cluster-operator",
    type: "openkeel:platform:RabbitmqClusterOperator",
    url: RABBITMQ_CLUSTER_OPERATOR.url,
    version: RABBITMQ_CLUSTER_OPERATOR.version,
    // Holds the RabbitmqCluster CRD.
    protect: true,
    ...(dependsOn.length ? { dependsOn } : {}),
  };
}
