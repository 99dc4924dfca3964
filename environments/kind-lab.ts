// The kind lab on a laptop (§ 6, lab): default label keys, roles optional, no Ironic. kind keeps
// its own CNI (Multus is added on top); KubeVirt (emulation), CDI, Longhorn and the snapshot stack
// only with openkeel:platform.realBackends, like the lab's install-backends step.
import { kindChecks, kindClusterBinding, kindNodeConfig } from "../nodes/kind";
import { cdi } from "../platform/cdi";
import { certManager } from "../platform/cert-manager";
import { kubevirt } from "../platform/kubevirt";
import { longhorn } from "../platform/longhorn";
import { mariadbOperator } from "../platform/mariadb-operator";
import { multus } from "../platform/multus";
import { nodeFeatureDiscovery } from "../platform/node-feature-discovery";
import { rabbitmqOperator } from "../platform/rabbitmq-operator";
import { rabbitmqTopologyOperator } from "../platform/rabbitmq-topology-operator";
import { snapshots } from "../platform/snapshots";
import type { Environment, ProvidedStorageClass } from "./environment";
import { LONGHORN_LOCAL_CLASS } from "../platform/longhorn";

const REAL_BACKENDS = [longhorn, snapshots, kubevirt, cdi];

/**
 * kind's default class: the node image installs rancher.io/local-path-provisioner as `standard`
 * (WaitForFirstConsumer), a directory on the pod's node: strictly local, one copy, like D5 asks.
 */
const KIND_STANDARD_CLASS: ProvidedStorageClass = {
  name: "standard",
  provisioner: "rancher.io/local-path",
  source: "kubernetes-sigs/kind pkg/build/nodeimage/const_storage.go",
};

export const kindLab: Environment = {
  checks: kindChecks,
  // The lab's RabbitMQ is the production chart's: its vhosts, users and permissions are the
  // topology operator's objects there too (nothing in the lab creates them otherwise).
  platform: [longhorn, multus, certManager, mariadbOperator, rabbitmqOperator, rabbitmqTopologyOperator, snapshots, kubevirt, cdi, nodeFeatureDiscovery],
  installs: (cfg, component) => cfg.platform.realBackends === true || !REAL_BACKENDS.includes(component),
  // Longhorn's strict-local class when the real backends install it; kind's own class otherwise.
  storage: (cfg) => ({
    strictLocalClass: cfg.platform.realBackends === true ? LONGHORN_LOCAL_CLASS : KIND_STANDARD_CLASS.name,
    provided: [KIND_STANDARD_CLASS],
  }),
  cluster: kindClusterBinding,
  nodeConfig: kindNodeConfig,
};
