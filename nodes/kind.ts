// The kind cluster of the lab, from the same inventory: `kind create cluster --config
// rendered/lab/kind/cluster.yaml`, then `pulumi up -s lab`. Facts: PEERS-TALOS-KIND-FACTS.md Part C.
//
// kind names its nodes itself (<cluster>-control-plane, <cluster>-control-plane2, …,
// <cluster>-worker, <cluster>-worker2, …, counted per role in config order), and the node-roles
// phase patches Nodes by name, so the inventory must use those names; the cluster name comes from
// the first control-plane node. kind keeps its own CNI in the lab (kindnet; Multus on top).
import type { ClusterConfig } from "../config/cluster";
import type { LoadedConfig, NodeConfig } from "../config/schema";
import { toYaml } from "../render/render";
import { nodeSelfLabels } from "./node-labels";
import { allUnits, type NodeLevelConfig, type Plan } from "../plan/plan";
import type { HostNeed, HostProvision } from "../plan/host";
import { K8S_CONTROL_PLANE_LABEL, type Taint } from "../config/roles";
import type { Check } from "../config/problems";
import { nodeTaints, type Topology } from "../topology/topology";
import { HOST_FACTS } from "../platform/host-facts";
import { imageRef, KIND_NODE_IMAGE, KIND_VERSION } from "../platform/versions";
// the public APIs' NodePorts (their services' descriptors, openkeel/services/), published on the laptop's loopback only
import { LAB_NODE_PORTS } from "../openkeel/endpoints";
import { labIdentityPort } from "../openkeel/registry";
import { LONGHORN_TYPE } from "../platform/longhorn-names";

export const KIND_API_VERSION = "kind.x-k8s.io/v1alpha4";
export const KIND_CONFIG_PATH = "kind/cluster.yaml";
const LAB_LISTEN_ADDRESS = "127.0.0.1";
const CONTROL_PLANE_SUFFIX = "-control-plane";

type KindRole = "control-plane" | "worker";

function kindRole(node: NodeConfig): KindRole {
  return node.kubernetesControlPlane ? "control-plane" : "worker";
}

/** The cluster name kind needs so that its first control-plane node has this inventory name. */
function kindClusterName(nodes: NodeConfig[]): string | undefined {
  const first = nodes.find((n) => n.kubernetesControlPlane);
  if (!first || !first.name.endsWith(CONTROL_PLANE_SUFFIX) || first.name.length === CONTROL_PLANE_SUFFIX.length) return undefined;
  return first.name.slice(0, -CONTROL_PLANE_SUFFIX.length);
}

/**
 * The cluster a lab stack binds to: its openkeel:cluster, else the context `kind create cluster`
 * writes for it, `kind-<cluster>` (kubernetes-sigs/kind pkg/cluster/internal/kubeconfig/internal/kubeconfig, KINDClusterKey: "kind-" + name).
 */
export function kindClusterBinding(cfg: LoadedConfig): ClusterConfig {
  if (cfg.cluster) return cfg.cluster;
  const cluster = kindClusterName(cfg.nodes);
  if (cluster === undefined) throw new Error(`stack ${cfg.stack}: no kind cluster name (the kind-node-name check should have stopped the plan)`);
  return { context: `kind-${cluster}` };
}

/** The name kind gives each inventory node, in inventory order (kind's per-role counter). */
export function kindNodeNames(cluster: string, nodes: NodeConfig[]): string[] {
  const count: Partial<Record<KindRole, number>> = {};
  return nodes.map((n) => {
    const role = kindRole(n);
    const k = (count[role] ?? 0) + 1;
    count[role] = k;
    return `${cluster}-${role}${k === 1 ? "" : k}`;
  });
}

/** The lab's rules for kind: a control-plane node, kind's node names, taints kind can apply. */
export function kindChecks(cfg: LoadedConfig, topo: Pick<Topology, "taintedRoles">): Check[] {
  const checks: Check[] = [];
  const cpIndex = cfg.nodes.findIndex((n) => n.kubernetesControlPlane);
  if (cpIndex < 0) {
    checks.push({
      level: "error",
      code: "kind-control-plane",
      message: "no lab node is a Kubernetes control-plane node, and a kind cluster needs one",
      fix: "set kubernetesControlPlane: true on the first node (named <cluster>-control-plane)",
      path: "openkeel:nodes",
    });
    return checks;
  }
  const cluster = kindClusterName(cfg.nodes);
  if (cluster === undefined) {
    checks.push({
      level: "error",
      code: "kind-node-name",
      message: `node '${cfg.nodes[cpIndex].name}' is the first control-plane node, which kind names <cluster>-control-plane`,
      fix: "rename it to <cluster>-control-plane (e.g. openkeel-lab-control-plane); the kind cluster takes the <cluster> part as its name",
      path: `openkeel:nodes[${cpIndex}].name`,
    });
    return checks;
  }
  kindNodeNames(cluster, cfg.nodes).forEach((expected, i) => {
    if (cfg.nodes[i].name !== expected) {
      checks.push({
        level: "error",
        code: "kind-node-name",
        message: `node '${cfg.nodes[i].name}' will be named '${expected}' by kind (cluster '${cluster}'), so its role labels would go nowhere`,
        fix: `rename it to '${expected}' (kind counts control-plane and worker nodes separately, in inventory order)`,
        path: `openkeel:nodes[${i}].name`,
      });
    }
  });
  // kind registers control-plane nodes with the upstream taint and removes it in a single-node
  // cluster; the first control-plane node's registration is beyond a JoinConfiguration patch, so
  // any other wish is left to kubectl.
  const kindTaints: Taint[] = cfg.nodes.length === 1 ? [] : [{ key: K8S_CONTROL_PLANE_LABEL, effect: "NoSchedule" }];
  const id = (t: Taint) => `${t.key}=${t.value ?? ""}:${t.effect}`;
  cfg.nodes.forEach((node, i) => {
    if (!node.kubernetesControlPlane) return;
    const wanted = nodeTaints(node, topo);
    const remove = kindTaints.filter((t) => !wanted.some((w) => id(w) === id(t)));
    const add = wanted.filter((w) => !kindTaints.some((t) => id(t) === id(w)));
    if (remove.length === 0 && add.length === 0) return;
    const list = (ts: Taint[]) => (ts.length ? ts.map((t) => `${t.key}:${t.effect}`).join(", ") : "no taint");
    checks.push({
      level: "warning",
      code: "kind-control-plane-taints",
      message: `kind registers control-plane node '${node.name}' with ${list(kindTaints)}; its roles call for ${list(wanted)}`,
      fix: `after kind create cluster, run kubectl taint nodes ${node.name} ${[...remove.map((t) => `${t.key}:${t.effect}-`), ...add.map((t) => id(t))].join(
        " ",
      )}`,
      path: `openkeel:nodes[${i}]`,
    });
  });
  return checks;
}

/** One extraPortMappings entry per NodePort (kind has no port ranges, kind#2920). */
function nodePortMappings(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let port = LAB_NODE_PORTS.first; port <= LAB_NODE_PORTS.last; port++) {
    out.push({ containerPort: port, hostPort: port, listenAddress: LAB_LISTEN_ADDRESS, protocol: "TCP" });
  }
  return out;
}

/**
 * The kind Cluster document. Labels are the node's self-asserted ones (the kubelet applies them
 * with --node-labels and refuses node-role.kubernetes.io/* or node-restriction.kubernetes.io/*).
 * Worker taints are registration taints through a JoinConfiguration patch (same field in kubeadm
 * v1beta3 and v1beta4). The NodePorts are published from the first control-plane node: a NodePort
 * answers on every node, and a host port can be published once.
 */
export function kindClusterConfig(cfg: LoadedConfig, topo: Topology): Record<string, unknown> {
  const cluster = kindClusterName(cfg.nodes);
  if (cluster === undefined) throw new Error(`stack ${cfg.stack}: no kind cluster name (the kind-node-name check should have stopped the plan)`);
  const first = cfg.nodes.find((n) => n.kubernetesControlPlane);
  const nodes = cfg.nodes.map((node) => {
    const labels = nodeSelfLabels(node, topo.profile);
    const taints = nodeTaints(node, topo);
    const out: Record<string, unknown> = { role: kindRole(node), image: imageRef(KIND_NODE_IMAGE) };
    if (Object.keys(labels).length > 0) out.labels = labels;
    if (!node.kubernetesControlPlane && taints.length > 0) {
      out.kubeadmConfigPatches = [toYaml({ kind: "JoinConfiguration", nodeRegistration: { taints } })];
    }
    if (node === first) out.extraPortMappings = nodePortMappings();
    return out;
  });
  return { kind: "Cluster", apiVersion: KIND_API_VERSION, name: cluster, nodes };
}

/**
 * kind's own pod network, kindnet, writes 10-kindnet.conflist (ptp, host-local, portmap:
 * kubernetes-sigs/kind@v0.32.0 images/kindnetd/cmd/kindnetd/cni.go:81-114), which every pod runs.
 */
export const KINDNET_POD_NEEDS: HostNeed[] = ["ptp", "host-local", "portmap"].map((plugin) => ({
  kind: "cniPlugin",
  anyOf: [plugin],
  why: "kind's pod network: kindnet's CNI configuration runs it for every pod",
  fix: "use kind's node image of the pin (KIND_NODE_IMAGE), which has it",
}));

/** The node image has no open-iscsi, which Longhorn's v1 engine runs on the host: the lab installs it into each node. */
const OPEN_ISCSI = ["iscsiadm", "iscsid"];
const installsLonghorn = (plan: Pick<Plan, "phases">) => allUnits(plan).some((u) => u.type === LONGHORN_TYPE);

/** With the real backends, open-iscsi in each kind node before `pulumi up` (Longhorn's host tools). */
function nodePreparation(cfg: LoadedConfig, cluster: string | undefined): string {
  if (cfg.platform.realBackends !== true || cluster === undefined) return "";
  const names = kindNodeNames(cluster, cfg.nodes).join(" ");
  return `Before pulumi up, open-iscsi in each node (Longhorn's v1 engine runs iscsiadm there; the node image has none):\n  for n in ${names}; do docker exec $n sh -c 'apt-get update && apt-get install -y open-iscsi && systemctl enable --now iscsid'; done\n`;
}

export function kindNodeConfig(cfg: LoadedConfig, topo: Topology): NodeLevelConfig {
  const cluster = kindClusterName(cfg.nodes);
  return {
    files: [
      {
        path: KIND_CONFIG_PATH,
        comment:
          `kind cluster of stack ${cfg.stack} (kind ${KIND_VERSION}; node image pinned in platform/versions.ts):\n` +
          `  kind create cluster --config rendered/${cfg.stack}/${KIND_CONFIG_PATH}\n` +
          nodePreparation(cfg, cluster) +
          `  pulumi up -s ${cfg.stack}\n` +
          `NodePorts ${LAB_NODE_PORTS.first}-${LAB_NODE_PORTS.last} are published on ${LAB_LISTEN_ADDRESS} (kubectl context kind-${cluster}):\n` +
          `  openstack --os-auth-url https://${LAB_LISTEN_ADDRESS}:${labIdentityPort()}/v3 … (every API's port: docs/openkeel-values.md).`,
        documents: [kindClusterConfig(cfg, topo)],
      },
    ],
  };
}

/**
 * What the host of each kind node has, for the host contract (placement/host.ts): the node image's
 * CNI plugins (HOST_FACTS of platform/host-facts.ts), the one interface Docker gives the container, the
 * container's own filesystem for any host path, and the laptop's kernel, which every kind node
 * shares (a module the lab needs is loaded there: docs/operating.md, the lab's quick start). No
 * /dev/kvm (the lab's KubeVirt emulates), no Talos extension, no host tool beyond the image's.
 */
export function kindHostProvisions(plan: Plan): Map<string, HostProvision[]> {
  const image = HOST_FACTS.kindNode;
  const host: HostProvision[] = [
    ...image.provides.map((c) => ({ ...c, by: image.by })),
    { kind: "interface", name: "eth0", by: "kind (the node container's interface on Docker's kind network)" },
    { kind: "mount", name: "*", by: "the kind node container's filesystem" },
    { kind: "kernelModule", name: "*", by: "the laptop's kernel, which kind nodes share" },
    // a privileged container sees the laptop's /dev (kind's docker provider runs nodes --privileged)
    ...["/dev/net/tun", "/dev/vhost-net"].map((name) => ({ kind: "device" as const, name, by: "the laptop's /dev (kind nodes are privileged containers)" })),
    ...(installsLonghorn(plan)
      ? OPEN_ISCSI.map((name) => ({ kind: "hostTool" as const, name, by: `open-iscsi, from the node preparation step of ${KIND_CONFIG_PATH}` }))
      : []),
  ];
  return new Map(plan.nodes.map((n) => [n.name, [...host]]));
}
