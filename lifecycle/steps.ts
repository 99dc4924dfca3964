// The steps outside Kubernetes a change needs, node by node and in order, read from the two renders
// of a stack: the Talos configuration (talos/machines.yaml and the patches each node gets, in
// order), the role-label Node objects and the inventory of index.yaml. `pulumi up` changes labels
// and workloads; it does not install a Talos image, apply a machine config, move Longhorn replicas
// or change the taints a kubelet registered with. Those are these steps.
//
// Facts they rest on:
// - `talosctl upgrade` installs a new image (a new schematic: extensions, kernel arguments) and
//   reboots; it cordons and drains the node itself first (siderolabs/talos
//   internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_sequencer.go, Upgrade: CordonAndDrainNode);
// - a machine-config change is `talosctl apply-config` (Talos reboots when the change needs it);
//   a machine type (worker, controlplane) is not converted in place — a machine of one type given
//   the other's config is unusable until reset (siderolabs/talos#12096) — so the node is reset and
//   installed again;
// - a worker's taints come from `registerWithTaints`, read once when the kubelet registers
//   (docs/node-configuration.md): on a registered node they change with `kubectl taint` only;
// - Longhorn moves a node's replicas away when the node asks for eviction: `spec.evictionRequested`
//   and `spec.allowScheduling` of nodes.longhorn.io (longhorn/longhorn-manager
//   k8s/pkg/apis/longhorn/v1beta2/node.go);
// - node affinity and selectors count when a pod is scheduled only: pods of a role a node loses
//   keep running there until the node is drained (DaemonSet pods excepted: their controller
//   removes them);
// - a node's state (config/lifecycle.ts, docs/node-lifecycle.md) is applied by `pulumi up`: the
//   cordon, a NodeMaintenance (production: NMO drains the node, and uncordons it when the request
//   is deleted: medik8s/node-maintenance-operator stopNodeMaintenanceImp), the Longhorn eviction of
//   a retiring storage node. What stays manual: Nova's service, waiting for the drain and the
//   eviction, the members of the strict-local quorums (D5: a new empty PVC elsewhere, § 2.1), the
//   Kube-OVN RAFT member of a retired master (Kube-OVN docs, ops/kubectl-ko "DB Nodes Offline":
//   kubectl ko nb|sb kick <server id>), and the cordon NMO lifts when maintenance ends in cordoned.
import { parse, parseAllDocuments } from "yaml";
import { isDeepStrictEqual } from "node:util";
import { diff, formatPath } from "./ydiff";

export type Tree = Map<string, string>;

interface NodeStep {
  /** Before `pulumi up` (the cluster must be ready for the new labels) or after it. */
  when: "before" | "after";
  what: string;
  command: string;
  why: string;
}

export interface NodeSteps {
  node: string;
  change: "added" | "removed" | "changed";
  roles: { before?: string[]; after?: string[] };
  /** The node's state on each side, when it changes. */
  state?: { before: string; after: string };
  steps: NodeStep[];
}

interface Machine {
  machineType?: string;
  patches: string[];
  schematic?: string;
  schematicId?: string;
  installerImage?: string;
}

interface NodeView {
  roles: string[];
  state: string;
  kubernetesControlPlane: boolean;
  /** A Talos (production) stack: NMO drains; the lab only cordons. */
  production: boolean;
  /** Carries kube-ovn/role=master: a member of Kube-OVN's own RAFT cluster. */
  kubeOvnMaster: boolean;
  machine?: Machine;
  /** The documents the node's patches hold, in order (comments and file names aside). */
  config?: unknown[];
  address?: string;
  longhornDisk: boolean;
  /** `key=value:Effect` of registerWithTaints (workers). */
  registerTaints: string[];
}

const LONGHORN_DISK_LABEL = "node.longhorn.io/create-default-disk";
const KUBE_OVN_MASTER_LABEL = "kube-ovn/role";

function yamlOf(tree: Tree, file: string): unknown {
  const text = tree.get(file);
  return text === undefined ? undefined : parse(text);
}

function docsOf(tree: Tree, file: string): unknown[] {
  const text = tree.get(file);
  return text === undefined ? [] : parseAllDocuments(text).map((d) => d.toJS());
}

function isMap(v: unknown): v is Record<string, any> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function taintId(t: { key?: unknown; value?: unknown; effect?: unknown }): string {
  return `${String(t.key)}=${t.value === undefined ? "" : String(t.value)}:${String(t.effect)}`;
}

/** Every node of one render, by name. */
function viewOf(tree: Tree): Map<string, NodeView> {
  const out = new Map<string, NodeView>();
  const index = (yamlOf(tree, "index.yaml") ?? {}) as {
    environment?: string;
    nodes?: { name: string; roles?: string[]; state?: string; kubernetesControlPlane?: boolean }[];
  };
  const machines = ((yamlOf(tree, "talos/machines.yaml") as { machines?: Record<string, Machine> } | undefined)?.machines ?? {}) as Record<string, Machine>;
  const nodeObjects = new Map<string, Record<string, any>>();
  for (const [file, text] of tree) {
    if (!file.startsWith("objects/")) continue;
    for (const doc of parseAllDocuments(text)) {
      const o = doc.toJS() as Record<string, any> | null;
      if (o?.apiVersion === "v1" && o.kind === "Node" && typeof o.metadata?.name === "string") nodeObjects.set(o.metadata.name, o);
    }
  }
  for (const n of index.nodes ?? []) {
    const machine = machines[n.name];
    const config = machine ? machine.patches.flatMap((p) => docsOf(tree, `talos/${p}`)) : undefined;
    // later patches win: the node's own patch comes after its group's
    const last = (has: (d: Record<string, any>) => unknown) => [...(config ?? [])].reverse().find((d) => isMap(d) && has(d)) as Record<string, any> | undefined;
    const taints = (last((d) => d.machine?.kubelet?.extraConfig?.registerWithTaints)?.machine.kubelet.extraConfig.registerWithTaints ?? []) as Record<
      string,
      unknown
    >[];
    const cidr = last((d) => d.machine?.kubelet?.nodeIP?.validSubnets)?.machine.kubelet.nodeIP.validSubnets[0];
    out.set(n.name, {
      roles: n.roles ?? [],
      state: n.state ?? "active",
      kubernetesControlPlane: n.kubernetesControlPlane === true,
      production: index.environment === "talos-production",
      kubeOvnMaster: nodeObjects.get(n.name)?.metadata?.labels?.[KUBE_OVN_MASTER_LABEL] === "master",
      ...(machine ? { machine, config } : {}),
      ...(typeof cidr === "string" ? { address: cidr.replace(/\/\d+$/, "") } : {}),
      longhornDisk: nodeObjects.get(n.name)?.metadata?.labels?.[LONGHORN_DISK_LABEL] === "true",
      registerTaints: taints.map(taintId).sort(),
    });
  }
  return out;
}

const list = (xs: string[]) => (xs.length ? xs.join(", ") : "none");

/** The fields that differ between two machine configs, shortened for a one-line reason. */
function configFields(before: unknown[], after: unknown[]): string {
  const fields = diff(before, after).map((c) => formatPath(c.path.slice(1)));
  const unique = [...new Set(fields)];
  return unique.length > 4 ? `${unique.slice(0, 4).join(", ")} and ${unique.length - 4} more` : unique.join(", ");
}

function evict(node: string, why: string): NodeStep {
  return {
    when: "before",
    what: "Longhorn eviction",
    command: `kubectl -n longhorn-system patch nodes.longhorn.io ${node} --type merge -p '{"spec":{"allowScheduling":false,"evictionRequested":true}}'`,
    why: `${why}; wait until Longhorn shows no replica on it before going on`,
  };
}

function drain(node: string, why: string): NodeStep {
  return { when: "before", what: "drain", command: `kubectl drain ${node} --ignore-daemonsets --delete-emptydir-data`, why };
}

const DRAINED = ["maintenance", "retiring"];

function waitForDrain(name: string, h: NodeView): NodeStep {
  return h.production
    ? {
        when: "after",
        what: "wait for the drain",
        command: `kubectl wait nodemaintenance/${name} --for=jsonpath='{.status.phase}'=Succeeded --timeout=2h`,
        why: "pulumi up asks the Node Maintenance Operator to drain it (NodeMaintenance); VMs live-migrate, PodDisruptionBudgets pace the rest",
      }
    : {
        when: "after",
        what: "drain",
        command: `kubectl drain ${name} --ignore-daemonsets --delete-emptydir-data`,
        why: "the lab has no Node Maintenance Operator: pulumi up only cordons it",
      };
}

/** The manual steps of a change of state, in order; the cordon, NodeMaintenance and eviction are pulumi up's. */
function stateSteps(name: string, b: NodeView, h: NodeView): NodeStep[] {
  const from = b.state;
  const to = h.state;
  if (from === to) return [];
  const steps: NodeStep[] = [];
  const compute = h.roles.includes("compute");
  const drainedBefore = DRAINED.includes(from);
  const drainedAfter = DRAINED.includes(to);
  const retires = to === "retiring" && from !== "retiring";
  if (drainedAfter && !drainedBefore && compute) {
    steps.push({
      when: "before",
      what: "disable Nova",
      command: `openstack compute service set --disable --disable-reason ${to} ${name} nova-compute`,
      why: "no new VM lands on it; a Masakari segment host also goes on maintenance (openstack segment host update --on_maintenance True, § 5.5)",
    });
  }
  if (retires && h.roles.includes("storage")) {
    steps.push({
      when: "after",
      what: "wait for the Longhorn eviction",
      command: `kubectl -n longhorn-system get replicas.longhorn.io -o jsonpath='{range .items[?(@.spec.nodeID=="${name}")]}{.metadata.name}{"\\n"}{end}'`,
      why: "pulumi up asks Longhorn to evict its replicas (evictionRequested); go on once this lists nothing",
    });
  }
  // from maintenance, the node is drained already
  if (drainedAfter && !drainedBefore) steps.push(waitForDrain(name, h));
  const members = [
    ...(h.roles.includes("controlPlane") ? ["Galera, RabbitMQ and OVN central"] : []),
    ...(h.roles.includes("storage") ? ["Swift storage"] : []),
  ];
  if (retires && members.length > 0) {
    steps.push({
      when: "after",
      what: "move the strict-local members",
      command: `kubectl -n longhorn-system get volumes.longhorn.io -o jsonpath='{range .items[?(@.status.currentNodeID=="${name}")]}{.status.kubernetesStatus.namespace}/{.status.kubernetesStatus.pvcName}{"\\n"}{end}'; then kubectl delete pvc (and its Pending pod) for each ${members.join(" or ")} member listed`,
      why: "their strict-local volumes (D5) cannot follow them: a new empty PVC on another node of the role, and the member re-syncs from the others (§ 2.1)",
    });
  }
  if (retires && b.kubeOvnMaster && !h.kubeOvnMaster) {
    steps.push({
      when: "after",
      what: "leave Kube-OVN's RAFT",
      command: `kubectl ko nb status; kubectl ko sb status; then kubectl ko nb kick <its server id>; kubectl ko sb kick <its server id>`,
      why: "it is no longer a Kube-OVN master; its old NB and SB members stay in the RAFT clusters until kicked",
    });
  }
  // a retirement called off (to active, cordoned or maintenance)
  if (from === "retiring" && to !== "retiring" && b.roles.includes("storage")) {
    steps.push({
      when: "after",
      what: "Longhorn scheduling",
      command: `kubectl -n longhorn-system patch nodes.longhorn.io ${name} --type merge -p '{"spec":{"allowScheduling":true}}'`,
      why: "pulumi up withdraws the eviction request by giving back the two fields it forced, which leaves allowScheduling unset (false)",
    });
  }
  if (drainedBefore && !drainedAfter) {
    if (to === "cordoned" && h.production) {
      steps.push({
        when: "after",
        what: "cordon again",
        command: `kubectl cordon ${name}`,
        why: "NMO uncordons the node when pulumi up deletes its NodeMaintenance",
      });
    }
    if (to === "active" && compute) {
      steps.push({
        when: "after",
        what: "enable Nova",
        command: `openstack compute service set --enable ${name} nova-compute`,
        why: "it takes VMs again (and clear on_maintenance of a segment host)",
      });
    }
  }
  return steps;
}

function stepsOfChanged(name: string, b: NodeView, h: NodeView): NodeStep[] {
  const steps: NodeStep[] = [...stateSteps(name, b, h)];
  const lost = b.roles.filter((r) => !h.roles.includes(r));
  const addr = h.address ?? b.address ?? name;
  if (b.longhornDisk && !h.longhornDisk) steps.push(evict(name, "it no longer holds a Longhorn disk, and the replicas on it would be lost with it"));
  if (lost.length) steps.push(drain(name, `it loses the ${lost.join(", ")} role(s): those pods keep running there until evicted`));
  if (b.machine && h.machine && b.machine.machineType !== h.machine.machineType) {
    steps.push({
      when: "before",
      what: "reinstall",
      command: `talosctl reset --graceful --nodes ${addr}, then install it as a ${h.machine.machineType} with its new configuration (talos/machines.yaml)`,
      why: `its Talos machine type changes (${b.machine.machineType} → ${h.machine.machineType}), which Talos does not convert in place`,
    });
    // installed afresh, it registers with its new taints
    return steps;
  }
  if (b.config && h.config && !isDeepStrictEqual(b.config, h.config)) {
    steps.push({
      when: "before",
      what: "apply-config",
      command: `talosctl apply-config --nodes ${addr} --file <its machine config: ${h.machine!.patches.join(" + ")}>`,
      why: `its machine config changes: ${configFields(b.config, h.config)}`,
    });
  }
  if (b.machine && h.machine && b.machine.schematicId !== h.machine.schematicId) {
    steps.push({
      when: "before",
      what: "upgrade",
      command: `talosctl upgrade --nodes ${addr} --image ${h.machine.installerImage}`,
      why: `new schematic ${h.machine.schematic} (${h.machine.schematicId?.slice(0, 12)}): extensions and kernel arguments live in the image; Talos cordons and drains the node, then reboots`,
    });
  }
  steps.push(...taintSteps(name, b, h));
  if (lost.length && h.roles.length > 0) {
    steps.push({ when: "after", what: "uncordon", command: `kubectl uncordon ${name}`, why: "it was drained for the role change and has its new labels now" });
  }
  return steps;
}

function taintSteps(name: string, b: NodeView, h: NodeView): NodeStep[] {
  if (!b.machine || !h.machine || h.machine.machineType !== "worker") return [];
  const removed = b.registerTaints.filter((t) => !h.registerTaints.includes(t));
  const added = h.registerTaints.filter((t) => !b.registerTaints.includes(t));
  if (removed.length + added.length === 0) return [];
  const args = [...removed.map((t) => `${t.replace(/=[^:]*:/, ":")}-`), ...added];
  return [
    {
      when: "before",
      what: "taints",
      command: `kubectl taint nodes ${name} ${args.join(" ")}`,
      why: `a registered kubelet keeps the taints it registered with (registerWithTaints): ${[
        ...removed.map((t) => `−${t}`),
        ...added.map((t) => `+${t}`),
      ].join(", ")}`,
    },
  ];
}

function stepsOfAdded(name: string, h: NodeView): NodeStep[] {
  if (!h.machine) return [];
  const addr = h.address ?? name;
  return [
    {
      when: "before",
      what: "install",
      command: `boot it from the image of ${h.machine.schematic} (installer ${h.machine.installerImage}), then talosctl apply-config --insecure --nodes ${addr} --file <its machine config: ${h.machine.patches.join(" + ")}>`,
      why: "a new node: it must have joined the cluster (registered with its taints) before `pulumi up` labels it",
    },
  ];
}

function stepsOfRemoved(name: string, b: NodeView): NodeStep[] {
  const steps: NodeStep[] = [];
  const addr = b.address ?? name;
  // a retiring node was evicted and drained while it was retiring
  if (b.state !== "retiring") {
    if (b.longhornDisk) steps.push(evict(name, "it holds a Longhorn disk, and the replicas on it would be lost with it"));
    steps.push(drain(name, "it leaves the inventory: its pods must run elsewhere first"));
  }
  if (b.roles.includes("compute")) {
    steps.push({
      when: "before",
      what: "delete the Nova service",
      command: `openstack compute service delete <id of nova-compute on ${name}>`,
      why: "Nova refuses while the resource provider has allocations: every VM has left it first (§ 5.5)",
    });
  }
  if (b.machine) {
    const etcd = b.machine.machineType === "controlplane" ? ", after leaving etcd" : "";
    steps.push({ when: "after", what: "reset", command: `talosctl reset --graceful --nodes ${addr}`, why: `wipes it${etcd}` });
  }
  steps.push({
    when: "after",
    what: "delete",
    command: `kubectl delete node ${name}`,
    why: "`pulumi up` only takes its role labels back; the Node object stays until deleted",
  });
  if (b.longhornDisk) {
    steps.push({
      when: "after",
      what: "forget it in Longhorn",
      command: `kubectl -n longhorn-system delete nodes.longhorn.io ${name}`,
      why: "Longhorn keeps its node object (and the eviction request pulumi up withdraws) until deleted",
    });
  }
  return steps;
}

/** Per node whose steps are not empty or whose state changes, in inventory order (the head's, then nodes only the base has). */
export function nodeSteps(base: Tree, head: Tree): NodeSteps[] {
  const b = viewOf(base);
  const h = viewOf(head);
  const names = [...h.keys(), ...[...b.keys()].filter((n) => !h.has(n))];
  const out: NodeSteps[] = [];
  for (const name of names) {
    const x = b.get(name);
    const y = h.get(name);
    const change = !x ? "added" : !y ? "removed" : "changed";
    const steps = !x ? stepsOfAdded(name, y!) : !y ? stepsOfRemoved(name, x) : stepsOfChanged(name, x, y);
    const state = x && y && x.state !== y.state ? { before: x.state, after: y.state } : undefined;
    if (steps.length === 0 && !state) continue;
    out.push({ node: name, change, roles: { ...(x ? { before: x.roles } : {}), ...(y ? { after: y.roles } : {}) }, ...(state ? { state } : {}), steps });
  }
  return out;
}

/** `compute, storage → network`, `new: compute, storage`, `was: network`. */
export function rolesChange(s: NodeSteps): string {
  if (s.change === "added") return `new: ${list(s.roles.after ?? [])}`;
  if (s.change === "removed") return `removed, was: ${list(s.roles.before ?? [])}`;
  const before = list(s.roles.before ?? []);
  const after = list(s.roles.after ?? []);
  return before === after ? before : `${before} → ${after}`;
}
