// Talos Linux production clusters (§ 6 small, medium, large): hardened label keys (D1), Kube-OVN
// as the CNI, every platform component.
import { talosNodeConfig } from "../nodes/talos";
import { machineFactsChecks } from "../nodes/facts-checks";
import { talosHostProvisions } from "../nodes/talos-host";
import { cdi } from "../platform/cdi";
import { certManager } from "../platform/cert-manager";
import { kubeOvn } from "../platform/kube-ovn";
import { kubevirt } from "../platform/kubevirt";
import { longhorn, LONGHORN_RWX_CLASS } from "../platform/longhorn";
import { LONGHORN_CAPACITY_CLASS, LONGHORN_LOCAL_CLASS } from "../platform/longhorn-names";
import { longhornDisks } from "../platform/longhorn-talos";
import { mariadbOperator } from "../platform/mariadb-operator";
import { medik8s } from "../platform/medik8s";
import { metallb } from "../platform/metallb";
import { multus } from "../platform/multus";
import { nodeFeatureDiscovery } from "../platform/node-feature-discovery";
import { rabbitmqOperator } from "../platform/rabbitmq-operator";
import { rabbitmqTopologyOperator } from "../platform/rabbitmq-topology-operator";
import { snapshots } from "../platform/snapshots";
import { registryMirrorIssues, talosBlockIssues } from "../config/talos";
import { TALOS_IMAGE_FACTORY } from "../platform/versions";
import { staticAddressIssues } from "../config/host-network";
import type { ConfigIssue } from "../config/problems";
import type { LoadedConfig } from "../config/schema";
import type { Environment } from "./environment";

/**
 * The registries a production node pulls from, which its registry mirrors must cover
 * (openkeel:talos.registries): Talos' installer from the Image Factory; Talos' kubelet and
 * Multus from ghcr.io; the control plane, CoreDNS, etcd, kubectl and the snapshot controller from
 * registry.k8s.io (siderolabs/talos@v1.13.9 pkg/machinery/constants/constants.go:374-443, and the
 * ImagePins of platform/versions.ts); the platform charts' and manifests' images from docker.io
 * and quay.io (Kube-OVN, Longhorn, RabbitMQ, MariaDB; cert-manager, KubeVirt, CDI, OLM, Medik8s,
 * MetalLB). Not a pin: a registry's name has no release.
 */
export const NODE_IMAGE_REGISTRIES = [TALOS_IMAGE_FACTORY, "ghcr.io", "registry.k8s.io", "docker.io", "quay.io"] as const;

const PLATFORM = [
  longhorn,
  kubeOvn,
  multus,
  snapshots,
  certManager,
  mariadbOperator,
  rabbitmqOperator,
  rabbitmqTopologyOperator,
  kubevirt,
  cdi,
  medik8s,
  nodeFeatureDiscovery,
  metallb,
];

/** What the installed components need of the Talos machines (openkeel:talos), with their rules. */
const TALOS_DECLARATIONS = PLATFORM.flatMap((c) => (c.talos ? [c.talos] : []));

/** What a production stack must say that a lab need not: D1's keys, its cluster, its nodes' addresses, its Talos machines. */
function productionConfigIssues(cfg: LoadedConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [
    ...talosBlockIssues(cfg, TALOS_DECLARATIONS),
    ...registryMirrorIssues(cfg, NODE_IMAGE_REGISTRIES),
    ...staticAddressIssues(cfg),
  ];
  if (cfg.labelProfile === "default") {
    issues.push({
      path: ["labelProfile"],
      message:
        "production stacks must use the hardened label keys (D1: node-restriction.kubernetes.io/openkeel-<role>); 'default' keys can be set by a node's own kubelet. Fix: remove labelProfile or set it to hardened",
    });
  }
  if (cfg.topology === "lab") {
    issues.push({ path: ["topology"], message: "topology 'lab' is for the kind-lab environment. Fix: use small, medium or large" });
  }
  if (cfg.cluster === undefined) {
    issues.push({
      path: ["cluster"],
      message:
        "is required in production: without it pulumi up would talk to whatever kubeconfig context is current. Fix: add openkeel:cluster with context: <the admin kubeconfig's context of this cluster> and apiServer: <its control-plane endpoint, e.g. https://10.30.0.10:6443> (stacks/README.md)",
    });
  } else if (cfg.cluster.apiServer === undefined) {
    issues.push({
      path: ["cluster", "apiServer"],
      message:
        "is required in production: it is what tells this cluster from another one reached by the same context name. Fix: write the control-plane endpoint the context points at, e.g. apiServer: https://10.30.0.10:6443",
    });
  }
  cfg.nodes.forEach((node, i) => {
    if (node.internalIP === undefined) {
      issues.push({
        path: ["nodes", i, "internalIP"],
        message: "is required in production (Kube-OVN's MASTER_NODES and the Talos patches need it). Fix: add the node's internal IP address",
      });
    }
  });
  return issues;
}

export const talosProduction: Environment = {
  traits: {
    // D1: hardened keys in production
    labelProfile: "hardened",
    cloudInventory: true,
    physicalNetworks: true,
    // Medik8s' Node Maintenance Operator drains them (platform/medik8s.ts)
    untaintsLoneControlPlane: false,
    // D8: the public ingress on the network and control-plane nodes
    publicApis: "ingress",
    nodeOs: "talos",
    hardwareVirtualization: true,
  },
  configIssues: productionConfigIssues,
  // a production cloud survives any one node (§ 6.1); large promises a zone too (§ 6.3)
  mustSurvive: (cfg) => (cfg.topology === "large" ? ["node", "zone"] : ["node"]),
  checks: (cfg) =>
    cfg.platform.realBackends === undefined
      ? machineFactsChecks(cfg)
      : [
          ...machineFactsChecks(cfg),
          {
            level: "error",
            code: "platform-key-environment",
            message: "realBackends only applies to the kind lab: production always installs KubeVirt, CDI, Longhorn and snapshots",
            fix: "remove openkeel:platform.realBackends from this stack",
            path: "openkeel:platform.realBackends",
          },
        ],
  platform: PLATFORM,
  podNetwork: kubeOvn,
  // Longhorn's D5 class; Talos provides no StorageClass of its own.
  storage: (cfg) => ({
    strictLocalClass: LONGHORN_LOCAL_CLASS,
    provided: [],
    strictLocalEnforced: true,
    sharedClass: LONGHORN_RWX_CLASS,
    // Swift's HDD tier, where the storage nodes have a capacity disk (§ 6.3)
    ...(cfg.talos && longhornDisks(cfg.talos).capacityDisk ? { capacityClass: LONGHORN_CAPACITY_CLASS } : {}),
  }),
  cluster: (cfg) => {
    // required by its config rules
    if (!cfg.cluster) throw new Error(`stack ${cfg.stack}: production config without openkeel:cluster passed its config rules`);
    return cfg.cluster;
  },
  nodeConfig: talosNodeConfig,
  hostProvisions: (plan, topo) => talosHostProvisions(plan, topo.environment.hardwareVirtualization),
};
