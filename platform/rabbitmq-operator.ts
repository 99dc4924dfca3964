// RabbitMQ cluster operator: the release's `cluster-operator.yml` (CRD, `rabbitmq-system`
// namespace, operator Deployment). Upstream ships no chart and the manifest takes no values, so
// the operator is not pinned to the control plane: it lands on an untainted node, which is a
// controlPlane node in the medium and large topologies (every other role is tainted there).
import type { RemoteManifestUnit } from "../plan/plan";
import { remoteManifestUnit } from "./context";
import { RABBITMQ_CLUSTER_OPERATOR } from "./versions";

export function rabbitmqOperatorUnit(dependsOn: string[] = []): RemoteManifestUnit {
  // It holds the RabbitmqCluster CRD.
  return remoteManifestUnit("rabbitmq-cluster-operator", "openkeel:platform:RabbitmqClusterOperator", RABBITMQ_CLUSTER_OPERATOR, {
    protect: true,
    dependsOn,
  });
}
