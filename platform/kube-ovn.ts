// Kube-OVN, the production CNI (chart `kube-ovn`, v1 values). Its own ovn-central (RAFT) runs on
// the master nodes: MASTER_NODES lists their internal IPs explicitly, because the chart's Helm
// `lookup` finds nothing when the chart is rendered without a cluster, and the master label goes
// on exactly those nodes (ovn-central's nodeSelector; a pod on an unlisted node would crash with
// "host ip not in NODE_IPS"). kube-ovn-controller is not placed by that label in the chart
// (templates/controller-deploy.yaml: nodeSelector kubernetes.io/os only, every NoSchedule taint
// tolerated, a preferred node affinity only): a post-render patch adds the master label, so that
// it runs with ovn-central on the control plane (§ 2.3) rather than on any node.
import type { Check } from "../config/problems";
import { HOSTNAME_LABEL, type Toleration } from "../config/roles";
import type { Config, NodeConfig } from "../config/schema";
import { firstHostV4, parseCidr } from "../config/cidr";
import { networkOf, type AttachmentNetwork } from "../config/network";
import { stateChange, type NodeLifecycle } from "../lifecycle/contributor";
import { hasTrait } from "../config/lifecycle";
import type { NodeConstraint } from "../lifecycle/feasibility";
import { quorumLoss } from "../lifecycle/quorums";
import type { NodeMetadataContributor } from "../plan/node-roles";
import { findUnit, helmReleaseUnit, type HelmReleaseUnit, type K8sObject, type Plan } from "../plan/plan";
import { patchedObject, type PostRenderPatch } from "../plan/post-render";
import type { PodScheduling } from "../placement/scheduling";
import { CONTROL_PLANE, obj, platformComponent, podScheduling, type ChartWorkloads, type Obj, type UnitReader } from "../placement/workloads";
import type { Topology } from "../topology/topology";
import type { PlatformComponent } from "./component";
import type { HostFactsRow } from "./host-facts";
import { contentAt, type Contents, type StackContext } from "./context";
import { fact, NETWORKS_ANNOTATION } from "../plan/needs";
import { KUBE_OVN_CHART } from "./versions";
import { KUBE_OVN_SETTINGS, kubeOvnSettings } from "./kube-ovn-settings";
import type { HostContract } from "../plan/host";

const KUBE_OVN_TYPE = "openkeel:platform:KubeOvn";

export const KUBE_OVN_MASTER_LABEL_KEY = "kube-ovn/role";
const KUBE_OVN_MASTER_LABEL_VALUE = "master";
/** RAFT members by default (§ 3.1: "the OpenKeel control plane nodes (3, RAFT)"). */
const DEFAULT_MASTER_COUNT = 3;

/**
 * The master nodes: the configured ones, else up to 3 controlPlane nodes that are not retiring,
 * taken one zone at a time (inventory order within a zone), so that losing a zone keeps a RAFT
 * majority when there are 3.
 */
function kubeOvnMasterNodes(ctx: StackContext): NodeConfig[] {
  const names = kubeOvnSettings(ctx.platform).masterNodes;
  if (names) return names.map((n) => ctx.cfg.nodes.find((node) => node.name === n)).filter((n): n is NodeConfig => n !== undefined);
  const byZone = new Map<string, NodeConfig[]>();
  // a retiring node leaves the RAFT cluster before it leaves the inventory
  for (const node of ctx.topo.nodesByRole.controlPlane.filter((n) => !hasTrait(n.state, "leavesQuorums"))) {
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

function masterLabels(ctx: StackContext): NodeMetadataContributor {
  const masters = new Set(kubeOvnMasterNodes(ctx).map((n) => n.name));
  return (node) => (masters.has(node.name) ? { labels: { [KUBE_OVN_MASTER_LABEL_KEY]: KUBE_OVN_MASTER_LABEL_VALUE } } : {});
}

function kubeOvnRanges(ctx: StackContext): Record<string, string> {
  const net = networkOf(ctx.cfg);
  const pod = parseCidr(net.podCIDR);
  if (!pod) throw new Error(`openkeel:network.podCIDR ${net.podCIDR} passed the schema but is not a range`);
  return { POD_CIDR: net.podCIDR, POD_GATEWAY: firstHostV4(pod), SVC_CIDR: net.serviceCIDR, JOIN_CIDR: net.joinCIDR };
}

function kubeOvnRelease(ctx: StackContext): HelmReleaseUnit {
  const ips = kubeOvnMasterNodes(ctx).map((n) => n.internalIP);
  if (ips.some((ip) => ip === undefined)) throw new Error("Kube-OVN master nodes without internalIP: the config schema requires it in production");
  const values = {
    namespace: "kube-system",
    MASTER_NODES: ips.join(","),
    MASTER_NODES_LABEL: `${KUBE_OVN_MASTER_LABEL_KEY}=${KUBE_OVN_MASTER_LABEL_VALUE}`,
    // Talos: writable host directories, and no modprobe (openvswitch and geneve are built in).
    OPENVSWITCH_DIR: "/var/lib/openvswitch",
    OVN_DIR: "/var/lib/ovn",
    DISABLE_MODULES_MANAGEMENT: true,
    cni_conf: { MOUNT_LOCAL_BIN_DIR: false },
    // The stack's ranges (openkeel:network; Kube-OVN's own defaults when it sets none), which the
    // Talos patches give the API server too (nodes/talos.ts): the service range must be the same.
    ipv4: kubeOvnRanges(ctx),
  };
  // The pod network and its CRDs (subnets, IPs): removing it cuts every pod off.
  return helmReleaseUnit("kube-ovn", KUBE_OVN_TYPE, "kube-system", KUBE_OVN_CHART, values, {
    protect: true,
    postRender: [controllerPatch()],
    ...contentAt(KUBE_OVN_CONTENTS, KUBE_OVN_CHART.version, "the kube-ovn chart"),
    offersAtRunTime: [
      {
        facts: [fact.podNetwork],
        why: "its kube-ovn-cni DaemonSet installs Kube-OVN's CNI configuration and binaries on every node: the pod network every pod not on the host network gets its sandbox from",
      },
    ],
  });
}

/**
 * The chart with these values: the CRDs of the secondary networks' Subnets (longhorn-storage-network
 * and Ironic's provisioning network create them); on Linux nodes (ovn-central and the controller on
 * the master label's nodes: the controller's post-render patch, which the Plan reads); its pinger on
 * the pod network it makes.
 */
const KUBE_OVN_CONTENT = {
  offers: [fact.api("kubeovn.io", "Subnet")],
  uses: [fact.podNetwork, fact.nodeLabel("kubernetes.io/os")],
};
const KUBE_OVN_CONTENTS: Contents = { "v1.16.2": KUBE_OVN_CONTENT, "v1.15.24": KUBE_OVN_CONTENT };

/** Where kube-ovn-cni's daemon answers the `kube-ovn` IPAM plugin (pkg/daemon/config_linux.go defaultBindSocket at v1.16.2). */
export const KUBE_OVN_DAEMON_SOCKET = "/run/openvswitch/kube-ovn-daemon.sock";
/** The Multus pod annotation (k8snetworkplumbingwg multi-net-spec): the networks a pod attaches to. */
export const MULTUS_NETWORKS_ANNOTATION = NETWORKS_ANNOTATION;

/** One secondary network of pods: its NetworkAttachmentDefinition, and the Kube-OVN Subnet that gives it addresses. */
export interface AttachmentNetworkRef {
  /** The NetworkAttachmentDefinition's name and namespace (Longhorn's setting reads `<namespace>/<name>`). */
  name: string;
  namespace: string;
  /** The Subnet's name (cluster-scoped). */
  subnet: string;
  network: AttachmentNetwork;
}

/** Kube-OVN's provider of an attachment whose IPAM it is: `<nad>.<namespace>` (pkg/controller/pod.go, providerTypeIPAM). */
export function attachmentProvider(ref: Pick<AttachmentNetworkRef, "name" | "namespace">): string {
  return `${ref.name}.${ref.namespace}`;
}

/**
 * The NetworkAttachmentDefinition and the Subnet of a secondary network. Kube-OVN is the IPAM of
 * attachments that are not its own (v1.16.2: cmd/cni loadNetConf takes `server_socket` and
 * `provider` from `ipam`; the controller allocates from the Subnet whose `spec.provider` is
 * `<nad>.<namespace>`, cluster-wide, and keeps a StatefulSet pod's address across restarts), so no
 * second IPAM is installed. The daemon gives an attachment no gateway (only the default route's
 * interface gets one), so pods keep their default route on the pod network.
 */
export function attachmentNetworkObjects(ref: AttachmentNetworkRef): K8sObject[] {
  const n = ref.network;
  const cidr = parseCidr(n.cidr);
  if (!cidr) throw new Error(`attachment network ${ref.namespace}/${ref.name}: cidr ${n.cidr} passed the schema but is not a range`);
  const provider = attachmentProvider(ref);
  const config = {
    cniVersion: "0.3.1",
    name: ref.name,
    type: n.type,
    master: n.interface,
    // ipvlan l2: the NIC's MAC for every pod; macvlan bridge: pods on one host reach each other
    mode: n.type === "ipvlan" ? "l2" : "bridge",
    ipam: { type: "kube-ovn", server_socket: KUBE_OVN_DAEMON_SOCKET, provider },
  };
  return [
    {
      apiVersion: "k8s.cni.cncf.io/v1",
      kind: "NetworkAttachmentDefinition",
      metadata: { name: ref.name, namespace: ref.namespace },
      spec: { config: JSON.stringify(config) },
    },
    {
      apiVersion: "kubeovn.io/v1",
      kind: "Subnet",
      metadata: { name: ref.subnet },
      spec: {
        protocol: "IPv4",
        provider,
        cidrBlock: n.cidr,
        gateway: n.gateway ?? firstHostV4(cidr),
        ...(n.excludeIps ? { excludeIps: n.excludeIps } : {}),
      },
    },
  ];
}

/** The Multus annotation of a pod that attaches to `ref` as `iface`: the JSON form, which names the interface. */
export function multusNetworksAnnotation(refs: readonly { ref: AttachmentNetworkRef; iface: string }[]): string {
  return JSON.stringify(refs.map(({ ref, iface }) => ({ name: ref.name, namespace: ref.namespace, interface: iface })));
}

const CONTROLLER = "kube-ovn-controller";

/** § 2.3: the controller on the control plane, with ovn-central: the master label, which the chart gives central and monitor only. */
function controllerPatch(): PostRenderPatch {
  return {
    target: { kind: "Deployment", name: CONTROLLER },
    why: "§ 2.3: Kube-OVN's controller on the control plane; the chart selects kubernetes.io/os only and tolerates every NoSchedule taint (templates/controller-deploy.yaml)",
    patch: { spec: { template: { spec: { nodeSelector: { [KUBE_OVN_MASTER_LABEL_KEY]: KUBE_OVN_MASTER_LABEL_VALUE } } } } },
  };
}

const NO_SCHEDULE: Toleration = { operator: "Exists", effect: "NoSchedule" };
const NO_EXECUTE: Toleration = { operator: "Exists", effect: "NoExecute" };
const CRITICAL_ADDONS: Toleration = { key: "CriticalAddonsOnly", operator: "Exists" };
const LINUX = { "kubernetes.io/os": "linux" };

/** The controller's pod template as the chart renders it (templates/controller-deploy.yaml). */
function controllerDeployment(replicas: number | undefined): K8sObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: CONTROLLER, namespace: "kube-system" },
    spec: { replicas, template: { spec: { nodeSelector: { ...LINUX }, tolerations: [NO_SCHEDULE, CRITICAL_ADDONS], hostNetwork: true } } },
  };
}

/**
 * Kube-OVN v1 chart, per template (notes K8, ≥ v1.15 templates): ovn-central (central-deploy.yaml)
 * and kube-ovn-monitor (monitor-deploy.yaml) select MASTER_NODES_LABEL (`key=value`, or `key` for
 * an empty value) with required host anti-affinity; central tolerates NoSchedule and NoExecute,
 * monitor NoSchedule only; kube-ovn-controller as the chart renders it after the release's
 * post-render patch; the DaemonSets on every Linux node, every taint tolerated; the hook Jobs
 * (post-delete always, pre- and post-upgrade on an OVN version change) tolerate NoSchedule only.
 */
const readRelease: UnitReader = (u) => {
  if (u.kind !== "HelmRelease") return [];
  const v = u.values as Obj;
  const label = typeof v.MASTER_NODES_LABEL === "string" ? v.MASTER_NODES_LABEL : "kube-ovn/role=master";
  const [key, value] = label.split("=");
  const masters = typeof v.MASTER_NODES === "string" ? v.MASTER_NODES.split(",").filter((x) => x.trim().length > 0).length : undefined;
  const onMasters = { ...LINUX, [key]: value ?? "" };
  const central: PodScheduling = { nodeSelector: onMasters, tolerations: [NO_SCHEDULE, NO_EXECUTE, CRITICAL_ADDONS], hostNetwork: true };
  const monitor: PodScheduling = { nodeSelector: onMasters, tolerations: [NO_SCHEDULE, CRITICAL_ADDONS], hostNetwork: true };
  const ds: PodScheduling = { nodeSelector: { ...LINUX }, tolerations: [NO_SCHEDULE, NO_EXECUTE, CRITICAL_ADDONS], hostNetwork: true };
  const hooks: PodScheduling = { nodeSelector: { ...LINUX }, tolerations: [NO_SCHEDULE], hostNetwork: true };
  const controller = patchedObject(u.release, controllerDeployment(masters), u.kind === "HelmRelease" ? (u.postRender ?? []) : []);
  const replicas = masters !== undefined ? { replicas: masters } : {};
  // the templates name these classes themselves (central-deploy, controller-deploy, monitor-deploy: system-cluster-critical; the DaemonSets: system-node-critical); the hook Jobs none
  const cluster = { priorityClass: "system-cluster-critical" };
  return [
    platformComponent(u, "ovn-central", "Deployment", central, CONTROL_PLANE, { ...replicas, ...cluster, requiredAntiAffinity: [HOSTNAME_LABEL] }),
    platformComponent(u, CONTROLLER, "Deployment", podScheduling(obj(obj(obj(controller.spec).template).spec)), CONTROL_PLANE, {
      ...replicas,
      ...cluster,
      requiredAntiAffinity: [HOSTNAME_LABEL],
    }),
    platformComponent(u, "kube-ovn-monitor", "Deployment", monitor, CONTROL_PLANE, { replicas: 1, ...cluster, requiredAntiAffinity: [HOSTNAME_LABEL] }),
    platformComponent(u, "kube-ovn-cni+ovs-ovn+pinger", "DaemonSet", ds, "allNodes", { priorityClass: "system-node-critical" }),
    // Helm hooks: never post-rendered (Helm hands the post-renderer the manifests only); each Job's
    // pod keeps off a node running one of its own (templates/post-delete-hook.yaml:89,
    // pre-upgrade-ovs-ovn.yaml:86, upgrade-ovs-ovn.yaml:122 at v1.16.2)
    platformComponent(u, "post-delete-hook+upgrade-hooks", "Pods", hooks, "allNodes", { requiredAntiAffinity: [HOSTNAME_LABEL] }),
  ];
};

/** The configured master nodes: controlPlane nodes of the inventory, each once, an odd number (RAFT). */
function checks(cfg: Config, _topo: Topology): Check[] {
  const checks: Check[] = [];
  const masters = kubeOvnSettings(cfg.platform).masterNodes;
  if (masters) {
    masters.forEach((name, i) => {
      const node = cfg.nodes.find((n) => n.name === name);
      if (!node || !node.roles.includes("controlPlane")) {
        checks.push({
          level: "error",
          code: "kube-ovn-master-nodes",
          message: node ? `node '${name}' has no controlPlane role` : `no node named '${name}' in openkeel:nodes`,
          fix: "list controlPlane nodes of the inventory only (Kube-OVN's ovn-central runs with the OpenKeel control plane, § 2.3)",
          path: `openkeel:platform.kubeOvn.masterNodes[${i}]`,
        });
      }
      if (node && hasTrait(node.state, "leavesQuorums")) {
        checks.push({
          level: "error",
          code: "kube-ovn-master-nodes",
          message: `node '${name}' is retiring, and a retiring node leaves Kube-OVN's RAFT cluster before the inventory`,
          fix: "list another controlPlane node in its place (then kick the old member: docs/node-lifecycle.md), or remove the key to let the default pick non-retiring nodes",
          path: `openkeel:platform.kubeOvn.masterNodes[${i}]`,
        });
      }
      if (masters.indexOf(name) !== i) {
        checks.push({
          level: "error",
          code: "kube-ovn-master-nodes",
          message: `node '${name}' is listed twice`,
          fix: "list each master node once",
          path: `openkeel:platform.kubeOvn.masterNodes[${i}]`,
        });
      }
    });
    if (masters.length % 2 === 0) {
      checks.push({
        level: "error",
        code: "kube-ovn-master-nodes",
        message: `${masters.length} master nodes: an even RAFT cluster tolerates no more failures than one member less`,
        fix: `list an odd number of nodes (${DEFAULT_MASTER_COUNT} is the default), or remove the key`,
        path: "openkeel:platform.kubeOvn.masterNodes",
      });
    }
  }
  return checks;
}

/** The production CNI: its unit is the pod network every pod-running unit waits for. */
/**
 * A retiring master is no default master any more (its label goes to another controlPlane node),
 * but its NB and SB members stay in the RAFT clusters until kicked (Kube-OVN docs, ops/kubectl-ko,
 * "DB Nodes Offline").
 */
/** The master nodes of a Plan: the Node patches that carry the master label. */
function plannedMasters(plan: Plan): string[] {
  const u = findUnit(plan, "node-roles");
  const nodes = u?.kind === "Manifests" ? u.objects.filter((o) => o.kind === "Node") : [];
  return nodes.filter((o) => o.metadata.labels?.[KUBE_OVN_MASTER_LABEL_KEY] === KUBE_OVN_MASTER_LABEL_VALUE).map((o) => o.metadata.name);
}

/**
 * Kube-OVN's own ovn-central: one RAFT member per master node (MASTER_NODES). Without a majority the
 * pod network's control plane stops: existing flows keep forwarding, no new pod gets a port.
 */
const KUBE_OVN_CENTRAL: NodeConstraint = {
  key: "kube-ovn-central",
  facts: (plan) => {
    const masters = plannedMasters(plan);
    return masters.length > 0 ? { masters } : undefined;
  },
  loss: (loss, facts) => {
    const masters = new Set(Array.isArray(facts?.masters) ? (facts.masters as readonly string[]) : []);
    const holders = loss.all().filter((n) => masters.has(n.name));
    return quorumLoss(loss, {
      what: "Kube-OVN central",
      holders,
      members: holders.length,
      perZone: false,
      costs: "no new pod gets a network port (running pods keep their flows)",
      fix: "3 Kube-OVN masters (openkeel:platform.kubeOvn.masterNodes, or 3 controlPlane nodes: the default picks one per zone first)",
    });
  },
};

const kubeOvnLifecycle: NodeLifecycle = {
  constraints: [KUBE_OVN_CENTRAL],
  steps: (t) => {
    const master = (labels: Readonly<Record<string, string>> | undefined) => labels?.[KUBE_OVN_MASTER_LABEL_KEY] === KUBE_OVN_MASTER_LABEL_VALUE;
    if (!hasTrait(stateChange(t)?.to, "leavesQuorums") || !master(t.before?.labels) || master(t.after?.labels)) return [];
    return [
      {
        slot: "leave-clusters",
        when: "after",
        what: "leave Kube-OVN's RAFT",
        command: `kubectl ko nb status; kubectl ko sb status; then kubectl ko nb kick <its server id>; kubectl ko sb kick <its server id>`,
        why: "it is no longer a Kube-OVN master; its old NB and SB members stay in the RAFT clusters until kicked",
      },
    ];
  },
};

const CNI_AGENT = "kube-ovn/kube-ovn-cni+ovs-ovn+pinger";

/** What kube-ovn-cni's install step copies into /opt/cni/bin of every node it runs on (platform/host-facts.ts HostFactsRow). */
export const KUBE_OVN_CNI_FACTS = {
  pin: "KUBE_OVN_CHART",
  readAt: "v1.16.2",
  by: "Kube-OVN v1.16.2 (kube-ovn-cni's install-cni)",
  provides: ["kube-ovn", "loopback", "portmap", "macvlan"].map((name) => ({ kind: "cniPlugin" as const, name })),
  source:
    "kubeovn/kube-ovn@v1.16.2 dist/images/install-cni.sh:25-42; chart templates/ovncni-ds.yaml:64-82,259-261 (hostPath cni_conf.CNI_BIN_DIR, /opt/cni/bin)",
} as const satisfies HostFactsRow;

/**
 * ovs-ovn's datapath is the kernel's openvswitch module and its tunnels geneve (Talos builds both
 * in: DISABLE_MODULES_MANAGEMENT above); kube-ovn-cni's install step copies its CNI plugins into
 * /opt/cni/bin of every node it runs on (KUBE_OVN_CNI_FACTS, the descriptor's hostInstalls).
 */
function kubeOvnHost(): Partial<HostContract> {
  const module = (name: string, why: string) => ({
    kind: "kernelModule" as const,
    anyOf: [name],
    why,
    fix: `load the ${name} module on every node (Talos builds it in)`,
  });
  // every pod sandbox runs the plugins of its conflist (kubeovn/kube-ovn@v1.16.2 dist/images/01-kube-ovn.conflist: kube-ovn, portmap)
  const podNeed = (plugin: string) => ({
    kind: "cniPlugin" as const,
    anyOf: [plugin],
    why: "the pod network: Kube-OVN's CNI configuration (01-kube-ovn.conflist) runs it for every pod",
    fix: "run kube-ovn-cni on every node that takes pods (it tolerates every taint: a node selector or a node outside its DaemonSet is the cause)",
  });
  return {
    needs: [{ component: CNI_AGENT, needs: [module("openvswitch", "ovs-ovn's kernel datapath"), module("geneve", "the pod network's tunnels between nodes")] }],
    podNeeds: [podNeed("kube-ovn"), podNeed("portmap")],
  };
}

/**
 * The workloads of the chart at KUBE_OVN_CHART (templates/*.yaml), by the component of readRelease
 * that stands for each. The upgrade hooks render only on an upgrade: their templates test a `lookup`
 * of the live ovs-ovn DaemonSet, which finds nothing without a cluster.
 */
const KUBE_OVN_CHART_WORKLOADS: ChartWorkloads = {
  rendered: {
    "Deployment ovn-central": "ovn-central",
    [`Deployment ${CONTROLLER}`]: CONTROLLER,
    "Deployment kube-ovn-monitor": "kube-ovn-monitor",
    "DaemonSet kube-ovn-cni": "kube-ovn-cni+ovs-ovn+pinger",
    "DaemonSet ovs-ovn": "kube-ovn-cni+ovs-ovn+pinger",
    "DaemonSet kube-ovn-pinger": "kube-ovn-cni+ovs-ovn+pinger",
    "Job kube-ovn-post-delete-hook": "post-delete-hook+upgrade-hooks",
    "Job kube-ovn-pre-upgrade-hook": "post-delete-hook+upgrade-hooks",
    "Job kube-ovn-post-upgrade-hook": "post-delete-hook+upgrade-hooks",
  },
  liveOnly: {
    files: ["templates/pre-upgrade-ovs-ovn.yaml", "templates/upgrade-ovs-ovn.yaml"],
    gate: '{{- if include "kubeovn.ovn.versionCompatibility" . -}}',
    why: "kubeovn.ovn.versionCompatibility (templates/_helpers.tpl) looks the live ovs-ovn DaemonSet up and is empty unless its chart version differs: an upgrade",
  },
};

export const kubeOvn: PlatformComponent = {
  name: "Kube-OVN",
  docs: [
    {
      component: "Kube-OVN (the CNI)",
      version: "chart `kube-ovn` v1.16.2",
      installedAs: "Helm (`https://kubeovn.github.io/kube-ovn/`)",
      phase: "crds-operators, first",
      where:
        "DaemonSets everywhere; ovn-central and kube-ovn-monitor on the master nodes (`MASTER_NODES` = their internal IPs, label `kube-ovn/role=master`); kube-ovn-controller there by a post-render patch (the chart selects `kubernetes.io/os` only and tolerates every NoSchedule taint); the hook Jobs on any node; also the IPAM of the secondary networks (a Subnet per Multus attachment, `provider: <nad>.<namespace>`: Longhorn's storage network, Ironic's provisioning network, [design decisions](design-decisions.md))",
      stacks: "production (kind keeps its CNI)",
    },
  ],
  design: [
    { workloads: /kube-ovn\/(ovn-central|kube-ovn-controller|kube-ovn-monitor)$/, reach: { within: ["controlPlane"] } },
    // the chart's hook Jobs tolerate every NoSchedule taint and select nothing (issue 22, item 7)
    { workloads: /kube-ovn\/post-delete-hook\+upgrade-hooks$/, reach: "every node" },
    { workloads: /kube-ovn-cni\+ovs-ovn\+pinger$/, reach: "every node" },
  ],
  pins: [KUBE_OVN_CHART],
  charts: { [KUBE_OVN_CHART.chart]: KUBE_OVN_CHART_WORKLOADS },
  artifacts: { "kube-ovn": KUBE_OVN_CONTENTS },
  settings: KUBE_OVN_SETTINGS,
  nodeMetadata: masterLabels,
  lifecycle: kubeOvnLifecycle,
  units: (ctx) => ({ "crds-operators": [kubeOvnRelease(ctx)] }),
  readers: { units: { [KUBE_OVN_TYPE]: readRelease } },
  // its ovs-ovn runs on every node, the OpenKeel chassis' nodes too: Neutron's plan checks say so (§ 7 Q1, openkeel/services/neutron.ts)
  checks,
  host: kubeOvnHost,
  hostInstalls: [{ component: CNI_AGENT, facts: KUBE_OVN_CNI_FACTS }],
};
