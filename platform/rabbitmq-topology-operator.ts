// RabbitMQ Messaging Topology Operator (§ 2.3; seed 004: "RabbitMQ operators → RabbitMQ:
// RabbitmqCluster, vhost, users, permissions"): the CRDs and controller of Vhost, User, Permission
// and the other topology objects, through which the services' vhosts, users and permissions are
// declared on the RabbitmqCluster. The release's `messaging-topology-operator-with-certmanager.yaml`
// (namespace rabbitmq-system, Deployment messaging-topology-operator, its webhook certificate from
// a cert-manager Issuer and Certificate): it waits for cert-manager, and for the cluster operator,
// without whose RabbitmqCluster CRD it does not start. Like the cluster operator's, the manifest
// takes no values, so its Deployment lands on an untainted node (docs/platform.md). Both manifests
// carry the rabbitmq-system Namespace, with different labels: both units apply it with force
// (RABBITMQ_SYSTEM_FORCED).
import type { RemoteManifestUnit } from "../plan/plan";
import { upstreamReader, type PlatformComponent, type UpstreamManifest } from "./component";
import { pinnedManifestUnit, type Contents } from "./context";
import { RABBITMQ_CERTIFICATES, RABBITMQ_SYSTEM_FORCED, rabbitmqOperatorWorkload } from "./rabbitmq-operator";
import { fact } from "../plan/needs";
import { RABBITMQ_MESSAGING_TOPOLOGY_OPERATOR } from "./versions";

const TYPE = "openkeel:platform:RabbitmqMessagingTopologyOperator";

/** The manifest: the topology kinds' CRDs and webhooks (no unit of this repository creates such objects yet), the operator on the pod network. */
const CONTENT = { uses: [...RABBITMQ_CERTIFICATES, fact.podNetwork] };
const CONTENTS: Contents = { "v1.19.2": CONTENT, "v1.19.1": CONTENT };

function topologyOperatorUnit(): RemoteManifestUnit {
  // Its CRDs hold every Vhost, User and Permission: deleting them deletes those objects.
  return pinnedManifestUnit("rabbitmq-messaging-topology-operator", TYPE, RABBITMQ_MESSAGING_TOPOLOGY_OPERATOR, CONTENTS, {
    protect: true,
    forceConflicts: RABBITMQ_SYSTEM_FORCED,
    waitsFor: [
      {
        unit: "rabbitmq-cluster-operator",
        why: "its controllers read the RabbitmqCluster each topology object names, and without that CRD (the cluster operator's manifest holds it) it does not start",
      },
    ],
  });
}

const UPSTREAM: UpstreamManifest = { pin: RABBITMQ_MESSAGING_TOPOLOGY_OPERATOR, workloads: [rabbitmqOperatorWorkload("messaging-topology-operator")] };

export const rabbitmqTopologyOperator: PlatformComponent = {
  name: "RabbitMQ messaging topology operator",
  docs: [
    {
      component: "RabbitMQ messaging topology operator",
      version: "v1.19.2",
      installedAs:
        "remote manifest `messaging-topology-operator-with-certmanager.yaml` (its webhook certificate from cert-manager), after cert-manager and the cluster operator (§ 2.3: the vhosts, users and permissions of the services)",
      phase: "crds-operators",
      where: "an untainted node (see below)",
      stacks: "all (the lab's RabbitMQ is the same chart's, whose users and vhosts nothing else creates)",
    },
  ],
  // § 2.3: the platform's operators on the control plane
  design: [{ workloads: /rabbitmq-messaging-topology-operator\/messaging-topology-operator$/, reach: ["controlPlane"] }],
  pins: [RABBITMQ_MESSAGING_TOPOLOGY_OPERATOR],
  upstream: [UPSTREAM],
  artifacts: { "rabbitmq-messaging-topology-operator": CONTENTS },
  units: () => ({ "crds-operators": [topologyOperatorUnit()] }),
  readers: { units: { [TYPE]: upstreamReader(UPSTREAM) } },
};
