// Talos Linux production clusters (§ 6 small, medium, large): hardened label keys (D1), Kube-OVN
// as the CNI, every platform component.
import { talosNodeConfig } from "../nodes/talos";
import { cdi } from "../platform/cdi";
import { certManager } from "../platform/cert-manager";
import { kubeOvn } from "../platform/kube-ovn";
import { kubevirt } from "../platform/kubevirt";
import { longhorn } from "../platform/longhorn";
import { mariadbOperator } from "../platform/mariadb-operator";
import { medik8s } from "../platform/medik8s";
import { multus } from "../platform/multus";
import { nodeFeatureDiscovery } from "../platform/node-feature-discovery";
import { rabbitmqOperator } from "../platform/rabbitmq-operator";
import { rabbitmqTopologyOperator } from "../platform/rabbitmq-topology-operator";
import { snapshots } from "../platform/snapshots";
import type { Environment } from "./environment";
import { LONGHORN_LOCAL_CLASS } from "../platform/longhorn";

export const talosProduction: Environment = {
  checks: (cfg) =>
    cfg.platform.realBackends === undefined
      ? []
      : [
          {
            level: "error",
            code: "platform-key-environment",
            message: "realBackends only applies to the kind lab: production always installs KubeVirt, CDI, Longhorn and snapshots",
            fix: "remove openkeel:platform.realBackends from this stack",
            path: "openkeel:platform.realBackends",
          },
        ],
  platform: [
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
  ],
  podNetwork: kubeOvn,
  // Longhorn's D5 class; Talos provides no StorageClass of its own.
  storage: () => ({ strictLocalClass: LONGHORN_LOCAL_CLASS, provided: [] }),
  cluster: (cfg) => {
    // required by the schema in production
    if (!cfg.cluster) throw new Error(`stack ${cfg.stack}: production config without openkeel:cluster passed the schema`);
    return cfg.cluster;
  },
  nodeConfig: talosNodeConfig,
};
