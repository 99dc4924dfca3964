// The steps outside Kubernetes a change needs, node by node and in order, read from the two renders
// of a stack (render/rendered.ts): the inventory of index.yaml, the role-label Node objects, the
// Talos configuration (talos/machines.yaml and the patches each node gets, in order) and the
// requests components write about nodes. `pulumi up` changes labels and workloads, and applies a
// node's state (config/lifecycle.ts: the cordon, and what components do about it); it does not
// install a Talos image, apply a machine config or change the taints a kubelet registered with.
// Those are the steps here; the components add theirs (./contributor.ts): Longhorn its eviction,
// Medik8s its NodeMaintenance, Kube-OVN its RAFT, Nova its compute service.
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
// - node affinity and selectors count when a pod is scheduled only: pods of a role a node loses
//   keep running there until the node is drained (DaemonSet pods excepted: their controller
//   removes them);
// - nothing drains a node in a drained state unless a component asks for it: without one (the
//   lab), the drain is a step by hand.
import { isDeepStrictEqual } from "node:util";
import { DEFAULT_STATE, hasTrait, isDrained } from "../config/lifecycle";
import { formatPath } from "../config/problems";
import type { K8sObject } from "../plan/plan";
import { diff, WHOLE_DOCUMENT } from "../render/diff";
import type { RenderedStack } from "../render/rendered";
import { STEP_SLOTS, stateChange, type NodeLifecycle, type NodeStep, type NodeTransition, type NodeView, type SlottedStep } from "./contributor";
import { isPlainObject } from "../config/plain";

export interface NodeSteps {
  node: string;
  change: "added" | "removed" | "changed";
  roles: { before?: string[]; after?: string[] };
  /** The node's state on each side, when it changes. */
  state?: { before: string; after: string };
  steps: NodeStep[];
}

/** A document of objects/ that is a Kubernetes object (the render writes nothing else there). */
function isObject(doc: unknown): doc is K8sObject {
  return (
    isPlainObject(doc) &&
    typeof doc.apiVersion === "string" &&
    typeof doc.kind === "string" &&
    isPlainObject(doc.metadata) &&
    typeof doc.metadata.name === "string"
  );
}

/** The value at a path of plain data, or undefined (a patch need not set it). */
function at(doc: unknown, ...path: string[]): unknown {
  let cur = doc;
  for (const k of path) cur = isPlainObject(cur) ? cur[k] : undefined;
  return cur;
}

function taintId(t: unknown): string {
  const value = at(t, "value");
  return `${String(at(t, "key"))}=${value === undefined ? "" : String(value)}:${String(at(t, "effect"))}`;
}

/** The Talos view of a node: its machine, its patches' documents in order, its address and registration taints. */
function talosView(render: RenderedStack, name: string): Pick<NodeView, "machine" | "config" | "address" | "registerTaints"> {
  const machine = render.talosMachines()[name];
  if (!machine) return { registerTaints: [] };
  const config = machine.patches.flatMap((p) => render.documents(`talos/${p}`));
  // later patches win: the node's own patch comes after its group's
  const last = (...path: string[]) => [...config].reverse().find((d) => at(d, ...path) !== undefined);
  const taints = at(last("machine", "kubelet", "extraConfig", "registerWithTaints"), "machine", "kubelet", "extraConfig", "registerWithTaints");
  const subnets = at(last("machine", "kubelet", "nodeIP", "validSubnets"), "machine", "kubelet", "nodeIP", "validSubnets");
  const cidr = Array.isArray(subnets) ? subnets[0] : undefined;
  return {
    machine,
    config,
    ...(typeof cidr === "string" ? { address: cidr.replace(/\/\d+$/, "") } : {}),
    registerTaints: (Array.isArray(taints) ? taints : []).map(taintId).sort(),
  };
}

/** Every node of one render, by name, as each contributor sees it (its own requests). */
function viewsOf(render: RenderedStack, lifecycles: readonly NodeLifecycle[]): Map<string, NodeView[]> {
  const labels = new Map<string, Record<string, string>>();
  const requests = lifecycles.map(() => new Map<string, K8sObject[]>());
  for (const file of render.files.keys()) {
    if (!file.startsWith("objects/")) continue;
    for (const o of render.documents(file)) {
      if (!isObject(o)) continue;
      if (o.apiVersion === "v1" && o.kind === "Node") labels.set(o.metadata.name, o.metadata.labels ?? {});
      lifecycles.forEach((l, i) => {
        const node = l.requestFor?.(o);
        if (node !== undefined) requests[i].set(node, [...(requests[i].get(node) ?? []), o]);
      });
    }
  }
  const out = new Map<string, NodeView[]>();
  for (const n of render.index.nodes) {
    const view: NodeView = {
      roles: n.roles,
      state: n.state ?? DEFAULT_STATE,
      kubernetesControlPlane: n.kubernetesControlPlane === true,
      labels: labels.get(n.name) ?? {},
      requests: [],
      ...talosView(render, n.name),
    };
    // index 0: the core's view; then one per contributor
    out.set(n.name, [view, ...requests.map((r) => ({ ...view, requests: r.get(n.name) ?? [] }))]);
  }
  return out;
}

/** The fields that differ between two machine configs, shortened for a one-line reason. */
function configFields(before: unknown[], after: unknown[]): string {
  const fields = diff(before, after).map((c) => formatPath(c.path.slice(1), WHOLE_DOCUMENT));
  const unique = [...new Set(fields)];
  return unique.length > 4 ? `${unique.slice(0, 4).join(", ")} and ${unique.length - 4} more` : unique.join(", ");
}

function drain(node: string, why: string): SlottedStep {
  return { slot: "drain", when: "before", what: "drain", command: `kubectl drain ${node} --ignore-daemonsets --delete-emptydir-data`, why };
}

/** Into a drained state: the drain is the operator's, unless a component asks for it (it contributes to the slot). */
function drainByHand(t: NodeTransition): SlottedStep[] {
  const s = stateChange(t);
  if (!s || !isDrained(s.to) || isDrained(s.from)) return [];
  return [
    {
      slot: "await-drain",
      when: "after",
      what: "drain",
      command: `kubectl drain ${t.node} --ignore-daemonsets --delete-emptydir-data`,
      why: "nothing here asks for its drain (the lab has no Node Maintenance Operator): pulumi up only cordons it",
    },
  ];
}

/** Its machine configuration and image: reinstall when its type changes, else apply-config and upgrade. */
function talosSteps(name: string, b: NodeView, h: NodeView): { steps: SlottedStep[]; reinstalled: boolean } {
  const addr = h.address ?? b.address ?? name;
  if (b.machine && h.machine && b.machine.machineType !== h.machine.machineType) {
    const why = `its Talos machine type changes (${b.machine.machineType} → ${h.machine.machineType}), which Talos does not convert in place`;
    const command = `talosctl reset --graceful --nodes ${addr}, then install it as a ${h.machine.machineType} with its new configuration (talos/machines.yaml)`;
    return { steps: [{ slot: "configure", when: "before", what: "reinstall", command, why }], reinstalled: true };
  }
  const steps: SlottedStep[] = [];
  if (b.config && h.config && h.machine && !isDeepStrictEqual(b.config, h.config)) {
    steps.push({
      slot: "configure",
      when: "before",
      what: "apply-config",
      command: `talosctl apply-config --nodes ${addr} --file <its machine config: ${h.machine.patches.join(" + ")}>`,
      why: `its machine config changes: ${configFields(b.config, h.config)}`,
    });
  }
  if (b.machine && h.machine && b.machine.schematicId !== h.machine.schematicId) {
    steps.push({
      slot: "configure",
      when: "before",
      what: "upgrade",
      command: `talosctl upgrade --nodes ${addr} --image ${h.machine.installerImage}`,
      why: `new schematic ${h.machine.schematic} (${h.machine.schematicId.slice(0, 12)}): extensions and kernel arguments live in the image; Talos cordons and drains the node, then reboots`,
    });
  }
  return { steps, reinstalled: false };
}

function taintSteps(name: string, b: NodeView, h: NodeView): SlottedStep[] {
  if (!b.machine || !h.machine || h.machine.machineType !== "worker") return [];
  const removed = b.registerTaints.filter((t) => !h.registerTaints.includes(t));
  const added = h.registerTaints.filter((t) => !b.registerTaints.includes(t));
  if (removed.length + added.length === 0) return [];
  const args = [...removed.map((t) => `${t.replace(/=[^:]*:/, ":")}-`), ...added];
  const change = [...removed.map((t) => `−${t}`), ...added.map((t) => `+${t}`)].join(", ");
  return [
    {
      slot: "configure",
      when: "before",
      what: "taints",
      command: `kubectl taint nodes ${name} ${args.join(" ")}`,
      why: `a registered kubelet keeps the taints it registered with (registerWithTaints): ${change}`,
    },
  ];
}

function stepsOfChanged(name: string, b: NodeView, h: NodeView): SlottedStep[] {
  const steps: SlottedStep[] = [];
  const lost = b.roles.filter((r) => !h.roles.includes(r));
  if (lost.length) steps.push(drain(name, `it loses the ${lost.join(", ")} role(s): those pods keep running there until evicted`));
  const talos = talosSteps(name, b, h);
  steps.push(...talos.steps);
  // installed afresh, it registers with its new taints and labels
  if (talos.reinstalled) return steps;
  steps.push(...taintSteps(name, b, h));
  if (lost.length && h.roles.length > 0) {
    steps.push({
      slot: "uncordon",
      when: "after",
      what: "uncordon",
      command: `kubectl uncordon ${name}`,
      why: "it was drained for the role change and has its new labels now",
    });
  }
  return steps;
}

function stepsOfAdded(name: string, h: NodeView): SlottedStep[] {
  if (!h.machine) return [];
  const addr = h.address ?? name;
  return [
    {
      slot: "configure",
      when: "before",
      what: "install",
      command: `boot it from the image of ${h.machine.schematic} (installer ${h.machine.installerImage}), then talosctl apply-config --insecure --nodes ${addr} --file <its machine config: ${h.machine.patches.join(" + ")}>`,
      why: "a new node: it must have joined the cluster (registered with its taints) before `pulumi up` labels it; the recipe: docs/node-configuration.md#applying-the-talos-configuration",
    },
  ];
}

function stepsOfRemoved(name: string, b: NodeView): SlottedStep[] {
  const steps: SlottedStep[] = [];
  // a retiring node was drained while it was retiring
  if (!hasTrait(b.state, "leavesInventory")) steps.push(drain(name, "it leaves the inventory: its pods must run elsewhere first"));
  if (b.machine) {
    const etcd = b.machine.machineType === "controlplane" ? ", after leaving etcd" : "";
    steps.push({ slot: "wipe", when: "after", what: "reset", command: `talosctl reset --graceful --nodes ${b.address ?? name}`, why: `wipes it${etcd}` });
  }
  steps.push({
    slot: "delete",
    when: "after",
    what: "delete",
    command: `kubectl delete node ${name}`,
    why: "`pulumi up` only takes its role labels back; the Node object stays until deleted",
  });
  return steps;
}

/** The core's steps and every contribution, in slot order; a fallback goes when a contribution fills its slot. */
function merged(own: SlottedStep[], fallbacks: SlottedStep[], contributed: SlottedStep[]): NodeStep[] {
  const filled = new Set(contributed.map((s) => s.slot));
  const all = [...own, ...fallbacks.filter((s) => !filled.has(s.slot)), ...contributed];
  const rank = (s: SlottedStep) => STEP_SLOTS.indexOf(s.slot);
  return all
    .map((s, i) => ({ s, i }))
    .sort((p, q) => rank(p.s) - rank(q.s) || p.i - q.i)
    .map(({ s: { slot: _slot, ...step } }) => step);
}

/**
 * Per node whose steps are not empty or whose state changes, in inventory order (the head's, then
 * nodes only the base has). `lifecycles`: what the components contribute (they decide from the
 * renders whether a step applies: an eviction only where one was requested), each also told what
 * all of them keep on nodes (their `holds`).
 */
export function nodeSteps(base: RenderedStack, head: RenderedStack, lifecycles: readonly NodeLifecycle[]): NodeSteps[] {
  const b = viewsOf(base, lifecycles);
  const h = viewsOf(head, lifecycles);
  const held = lifecycles.flatMap((l) => l.holds ?? []);
  const names = [...h.keys(), ...[...b.keys()].filter((n) => !h.has(n))];
  const out: NodeSteps[] = [];
  for (const name of names) {
    const x = b.get(name);
    const y = h.get(name);
    const own = !x ? stepsOfAdded(name, y![0]) : !y ? stepsOfRemoved(name, x[0]) : stepsOfChanged(name, x[0], y[0]);
    const contributed = lifecycles.flatMap((l, i) => l.steps({ node: name, before: x?.[i + 1], after: y?.[i + 1] }, held));
    const steps = merged(own, drainByHand({ node: name, before: x?.[0], after: y?.[0] }), contributed);
    const state = x && y && x[0].state !== y[0].state ? { before: x[0].state, after: y[0].state } : undefined;
    if (steps.length === 0 && !state) continue;
    const change = !x ? "added" : !y ? "removed" : "changed";
    out.push({ node: name, change, roles: { ...(x ? { before: x[0].roles } : {}), ...(y ? { after: y[0].roles } : {}) }, ...(state ? { state } : {}), steps });
  }
  return out;
}
