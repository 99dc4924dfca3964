// Kube-OVN, the production CNI (chart `kube-ovn`, v1 values). Its own ovn-central (RAFT) runs on
// the master nodes: MASTER_NODES lists their internal IPs explicitly, because the chart's Helm
// `lookup` finds nothing when the chart is rendered without a cluster, and the master label goes
// on exactly those nodes (ovn-central's nodeSelector; a pod on an unlisted node would crash with
// "host ip not in NODE_IPS").
import type { NodeConfig } from "../config/schema";
import type { NodeMetadataContributor } from "../plan/node-roles";
import type { HelmReleaseUnit } from "../plan/plan";
import type { PlatformContext } from "./context";
import { KUBE_OVN_CHART } from "./versions";

export const KUBE_OVN_MASTER_LABEL_KEY = "kube-ovn/role";
export const KUBE_OVN_MASTER_LABEL_VALUE = "master";
/** RAFT members by default (§ 3.1: "the OpenKeel control plane nodes (3, RAFT)"). */
export const DEFAULT_MASTER_COUNT = 3;

/**
 * The master nodes: the configured ones, else up to 3 controlPlane nodes taken one zone at a time
 * (inventory order within a zone), so that losing a zone keeps a RAFT majority when there are 3.
 */
export function kubeOvnMasterNodes(ctx: PlatformContext): NodeConfig[] {
  const names = ctx.platform.kubeOvn.masterNodes;
  if (names) return names.map((n) => ctx.cfg.nodes.find((node) => node.name === n)).filter((n): n is NodeConfig => n !== undefined);
  const byZone = new Map<string, NodeConfig[]>();
  for (const node of ctx.topo.nodesByRole.controlPlane) {
    const zone = node.zone ?? "";
    byZone.set(zone, [...(byZone.get(zone) ?? []), node]);
  }
  const queues = [...byZone.keys()].sort().map((z) => [...byZone.get(z)!]);
  const picked: NodeConfig[] = [];
  while (picked.length < DEFAULT_MASTER_COUNT && queues.some((q) => q.length > 0)) {
    for (const q of queues) {
      const next = q.shift();
      if (next && picked.length < DEFAULT_MASTER_COUNT) picked.push(next);
    }
  }
  return picked;
}

export function kubeOvnMasterLabels(ctx: PlatformContext): NodeMetadataContributor {
  const masters = new Set(kubeOvnMasterNodes(ctx).map((n) => n.name));
  return (node) => (masters.has(node.name) ? { labels: { [KUBE_OVN_MASTER_LABEL_KEY]: KUBE_OVN_MASTER_LABEL_VALUE } } : {});
}

export function kubeOvnRelease(ctx: PlatformContext): HelmReleaseUnit {
  const ips = kubeOvnMasterNodes(ctx).map((n) => n.internalIP);
  if (ips.some((ip) => ip === undefined)) throw new Error("Kube-OVN master nodes without internalIP: the config schema requires it in production");
  return {
    kind: "HelmRelease",
    name: "kube-ovn",
    type: "openkeel:platform:KubeOvn",
    release: "kube-ovn",
    namespace: "kube-system",
    chart: { ...KUBE_OVN_CHART },
    // The pod network and its CRDs (subnets, IPs): removing it cuts every pod off.
    protect: true,
    values: {
      namespace: "kube-system",
      MASTER_NODES: ips.join(","),
      MASTER_NODES_LABEL: `${KUBE_OVN_MASTER_LABEL_KEY}=${KUBE_OVN_MASTER_LABEL_VALUE}`,
      // Talos: writable host directories, and no modprobe (openvswitch and geneve are built in).
      OPENVSWITCH_DIR: "/var/lib/openvswitch",
      OVN_DIR: "/var/lib/ovn",
      DISABLE_MODULES_MANAGEMENT: true,
      cni_conf: { MOUNT_LOCAL_BIN_DIR: false },
    },
  };
}
