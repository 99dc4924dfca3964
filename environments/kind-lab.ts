// The kind lab on a laptop (§ 6, lab): default label keys, roles optional, no Ironic. kind keeps
// its own CNI (Multus is added on top); KubeVirt (emulation), CDI, Longhorn and the snapshot stack
// only with openkeel:platform.realBackends, like the lab's install-backends step.
import { KINDNET_POD_NEEDS, kindChecks, kindClusterBinding, kindHostProvisions, kindNodeConfig } from "../nodes/kind";
import { cdi } from "../platform/cdi";
import { certManager } from "../platform/cert-manager";
import { kubevirt } from "../platform/kubevirt";
import { longhorn, LONGHORN_RWX_CLASS } from "../platform/longhorn";
import { LONGHORN_LOCAL_CLASS } from "../platform/longhorn-names";
import { mariadbOperator } from "../platform/mariadb-operator";
import { multus } from "../platform/multus";
import { nodeFeatureDiscovery } from "../platform/node-feature-discovery";
import { rabbitmqOperator } from "../platform/rabbitmq-operator";
import { rabbitmqTopologyOperator } from "../platform/rabbitmq-topology-operator";
import { snapshots } from "../platform/snapshots";
import type { ConfigIssue } from "../config/problems";
import type { LoadedConfig } from "../config/schema";
import type { ProvidedStorageClass } from "../platform/context";
import type { Environment } from "./environment";

const REAL_BACKENDS = [longhorn, snapshots, kubevirt, cdi];

/**
 * kind's default class: the node image installs rancher.io/local-path-provisioner as `standard`
 * (WaitForFirstConsumer), a directory on the pod's node: strictly local, one copy, like D5 asks.
 */
const KIND_STANDARD_CLASS: ProvidedStorageClass = {
  name: "standard",
  provisioner: "rancher.io/local-path",
  source: "kubernetes-sigs/kind pkg/build/nodeimage/const_storage.go",
  isDefault: true,
};

/** Keys of a production cluster, and topologies of one, which a kind lab has no use for. */
function labConfigIssues(cfg: LoadedConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (cfg.talos !== undefined) {
    issues.push({
      path: ["talos"],
      message:
        "configures Talos machines, and the kind-lab environment has none (its nodes are kindest/node containers, configured by rendered/lab/kind/cluster.yaml). Fix: remove openkeel:talos from the lab stack",
    });
  }
  if (cfg.network !== undefined) {
    issues.push({
      path: ["network"],
      message: "sets the ranges of a production cluster; kind chooses the lab's own (its networking defaults). Fix: remove openkeel:network from the lab stack",
    });
  }
  if (cfg.hostNetworks !== undefined) {
    issues.push({
      path: ["hostNetworks"],
      message:
        "declares the links of physical hosts; a kind node is a container with the one interface Docker gives it (eth0). Fix: remove openkeel:hostNetworks from the lab stack",
    });
  }
  cfg.nodes.forEach((node, i) => {
    if (node.hostNetwork !== undefined) {
      issues.push({
        path: ["nodes", i, "hostNetwork"],
        message: "names a host network, and a kind node is a container with Docker's eth0. Fix: remove hostNetwork from the lab's nodes",
      });
    }
  });
  if (cfg.topology !== "lab") {
    issues.push({
      path: ["topology"],
      message: `topology '${cfg.topology}' is a production topology. Fix: use topology: lab with environment kind-lab, or environment: talos-production`,
    });
  }
  return issues;
}

export const kindLab: Environment = {
  traits: {
    // D1: the default keys are kept for labs
    labelProfile: "default",
    // § 5.2: roles are optional in a lab
    cloudInventory: false,
    // kindest/node containers on the laptop's Docker network
    physicalNetworks: false,
    // no Medik8s in its platform list: a drained state only cordons
    // kind's kubeadminit action, in a cluster without a worker
    untaintsLoneControlPlane: true,
    // the kind config publishes NodePorts on the laptop's loopback (openkeel/endpoints.ts)
    publicApis: "nodePorts",
    nodeOs: "kindest-node",
    hardwareVirtualization: false,
  },
  configIssues: labConfigIssues,
  checks: kindChecks,
  // The lab's RabbitMQ is the production chart's: its vhosts, users and permissions are the
  // topology operator's objects there too (nothing in the lab creates them otherwise).
  platform: [longhorn, multus, certManager, mariadbOperator, rabbitmqOperator, rabbitmqTopologyOperator, snapshots, kubevirt, cdi, nodeFeatureDiscovery],
  installs: (cfg, component) => cfg.platform.realBackends === true || !REAL_BACKENDS.includes(component),
  // Longhorn's strict-local class when the real backends install it; kind's own class otherwise.
  storage: (cfg) => ({
    strictLocalClass: cfg.platform.realBackends === true ? LONGHORN_LOCAL_CLASS : KIND_STANDARD_CLASS.name,
    provided: [KIND_STANDARD_CLASS],
    // kind's local-path class is strictly local too, but not Longhorn's: D5 binds production
    strictLocalEnforced: false,
    // RWX shares need Longhorn's share managers: only with the real backends
    ...(cfg.platform.realBackends === true ? { sharedClass: LONGHORN_RWX_CLASS } : {}),
  }),
  cluster: kindClusterBinding,
  nodeConfig: kindNodeConfig,
  hostProvisions: kindHostProvisions,
  host: () => ({ podNeeds: KINDNET_POD_NEEDS }),
};
