// The stack's inventory as Node objects, registered the way the nodes would register themselves:
// the labels a kubelet sets (hostname, os, arch), the labels the node configuration makes it assert
// (Talos machine.nodeLabels, kind nodes[].labels / kubeadm node-labels), what the bootstrapper adds
// on control-plane nodes (kubeadm and Talos: node-role.kubernetes.io/control-plane, plus its taint
// unless scheduling on control planes is allowed — kind untaints a lone control plane), the
// registration taints (Talos registerWithTaints / nodeTaints, kubeadm nodeRegistration.taints), and
// capacity. Everything is read from the rendered node configuration; role labels the node does not
// assert itself are left to the program's node-roles phase.
import { parse } from "yaml";
import type { RenderedStack } from "./rendered";
import { KUBERNETES_VERSION } from "../../platform/versions";

export const K8S_CONTROL_PLANE = "node-role.kubernetes.io/control-plane";

interface Taint {
  key: string;
  value?: string;
  effect: string;
}

export interface NodeSpec {
  name: string;
  labels: Record<string, string>;
  taints: Taint[];
  internalIP?: string | undefined;
  /** Where each label and taint came from, for the report. */
  provenance: string[];
}

const CAPACITY = { cpu: "64", memory: "256Gi", pods: "110", "ephemeral-storage": "1Ti" };

function kubeletLabels(name: string): Record<string, string> {
  return {
    "kubernetes.io/hostname": name,
    "kubernetes.io/os": "linux",
    "kubernetes.io/arch": "amd64",
    "beta.kubernetes.io/os": "linux",
    "beta.kubernetes.io/arch": "amd64",
  };
}

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
/** A map field of plain data (empty when absent). */
const map = (v: unknown, key: string): Record<string, unknown> => (isMap(v) && isMap(v[key]) ? v[key] : {});
const list = (v: unknown, key: string): unknown[] => (isMap(v) && Array.isArray(v[key]) ? v[key] : []);
const str = (v: unknown, key: string): string | undefined => (isMap(v) && typeof v[key] === "string" ? v[key] : undefined);

function taintOf(t: unknown): Taint {
  const value = str(t, "value");
  return { key: str(t, "key") ?? "", ...(value ? { value } : {}), effect: str(t, "effect") ?? "" };
}

/** What one Talos patch document says of the node: hostname, labels, taints, address, control-plane scheduling. */
function talosDocument(
  doc: unknown,
  spec: { name: string; labels: Record<string, string>; taints: Taint[]; internalIP?: string | undefined; allowOnControlPlanes: boolean },
): void {
  if (str(doc, "kind") === "HostnameConfig" && str(doc, "hostname")) spec.name = str(doc, "hostname")!;
  const machine = map(doc, "machine");
  for (const [k, v] of Object.entries(map(machine, "nodeLabels"))) spec.labels[k] = String(v);
  for (const t of list(map(map(machine, "kubelet"), "extraConfig"), "registerWithTaints")) spec.taints.push(taintOf(t));
  for (const [key, v] of Object.entries(map(machine, "nodeTaints"))) {
    const [value, effect] = String(v).split(":");
    spec.taints.push({ key, ...(value ? { value } : {}), effect });
  }
  const subnet = list(map(map(machine, "kubelet"), "nodeIP"), "validSubnets")[0];
  if (typeof subnet === "string" && subnet.endsWith("/32")) spec.internalIP = subnet.slice(0, -3);
  if (map(doc, "cluster").allowSchedulingOnControlPlanes === true) spec.allowOnControlPlanes = true;
}

/** Talos: talos/machines.yaml names each node's machine type and patches, applied in order. */
function talosNodes(r: RenderedStack): NodeSpec[] {
  return Object.entries(r.model.talosMachines()).map(([node, m]) => {
    const spec = {
      name: node,
      labels: {} as Record<string, string>,
      taints: [] as Taint[],
      internalIP: undefined as string | undefined,
      allowOnControlPlanes: false,
    };
    const provenance: string[] = [`machine type ${m.machineType}, patches ${m.patches.join(", ")}`];
    for (const rel of m.patches) for (const doc of r.model.documents(`talos/${rel}`)) talosDocument(doc, spec);
    const { name, labels, taints, internalIP, allowOnControlPlanes } = spec;
    if (m.machineType === "controlplane") {
      // Talos labels its control-plane nodes and taints them unless cluster.allowSchedulingOnControlPlanes
      labels[K8S_CONTROL_PLANE] = "";
      if (!allowOnControlPlanes) taints.push({ key: K8S_CONTROL_PLANE, effect: "NoSchedule" });
      provenance.push(`Talos control plane: ${K8S_CONTROL_PLANE} label${allowOnControlPlanes ? ", no taint (allowSchedulingOnControlPlanes)" : " and taint"}`);
    }
    return { name, labels: { ...labels, ...kubeletLabels(name) }, taints, internalIP, provenance };
  });
}

/** A kubeadm config patch of a kind node: its registration taints (they replace the default) and node labels. */
function kubeadmPatch(patch: string, labels: Record<string, string>): { taints?: Taint[]; kind?: string | undefined } | undefined {
  const doc: unknown = parse(patch);
  if (!isMap(doc) || !isMap(doc.nodeRegistration)) return undefined;
  const reg = doc.nodeRegistration;
  const args: unknown = reg.kubeletExtraArgs;
  const nodeLabels = Array.isArray(args)
    ? str(
        args.find((a: unknown) => str(a, "name") === "node-labels"),
        "value",
      )
    : map(reg, "kubeletExtraArgs")["node-labels"];
  for (const kv of String(nodeLabels ?? "")
    .split(",")
    .filter(Boolean)) {
    const [k, v] = kv.split("=");
    labels[k] = v ?? "";
  }
  return { ...(Array.isArray(reg.taints) ? { taints: reg.taints.map(taintOf) } : {}), kind: str(doc, "kind") };
}

/** kind: nodes[] in order; kind names them <cluster>-control-plane[N] and <cluster>-worker[N]. */
function kindNodes(r: RenderedStack): NodeSpec[] {
  const cluster = r.model.documents("kind/cluster.yaml")[0];
  const nodes = isMap(cluster) && Array.isArray(cluster.nodes) ? (cluster.nodes as unknown[]) : [{ role: "control-plane" }];
  const hasWorkers = nodes.some((n) => str(n, "role") === "worker");
  const clusterName = str(cluster, "name");
  const count: Record<string, number> = {};
  return nodes.map((n) => {
    const role = str(n, "role") ?? "control-plane";
    count[role] = (count[role] ?? 0) + 1;
    const name = `${clusterName ?? "kind"}-${role}${count[role] > 1 ? count[role] : ""}`;
    const labels: Record<string, string> = Object.fromEntries(Object.entries(map(n, "labels")).map(([k, v]) => [k, String(v)]));
    let taints: Taint[] = [];
    const provenance = [`kind ${role} node #${count[role]} of ${clusterName}`];
    if (role === "control-plane") {
      labels[K8S_CONTROL_PLANE] = "";
      labels["node.kubernetes.io/exclude-from-external-load-balancers"] = "";
      if (hasWorkers) taints.push({ key: K8S_CONTROL_PLANE, effect: "NoSchedule" });
      provenance.push(
        `kubeadm control plane: ${K8S_CONTROL_PLANE} label${hasWorkers ? " and taint" : "; kind removes the taint of a cluster without workers"}`,
      );
    }
    for (const patch of list(n, "kubeadmConfigPatches")) {
      const p = kubeadmPatch(String(patch), labels);
      if (!p) continue;
      if (p.taints) taints = p.taints;
      provenance.push(`kubeadm ${p.kind} patch`);
    }
    return { name, labels: { ...labels, ...kubeletLabels(name) }, taints, provenance };
  });
}

export function nodeSpecs(r: RenderedStack): NodeSpec[] {
  const specs = r.index.environment === "kind-lab" ? kindNodes(r) : talosNodes(r);
  const inventory = new Set(r.index.nodes.map((n) => n.name));
  const configured = new Set(specs.map((s) => s.name));
  const missing = [...inventory].filter((n) => !configured.has(n));
  if (missing.length > 0) throw new Error(`nodes of the inventory without rendered node configuration: ${missing.join(", ")}`);
  return specs.filter((s) => inventory.has(s.name));
}

export function nodeObject(s: NodeSpec): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: s.name,
      labels: s.labels,
      annotations: { "node.alpha.kubernetes.io/ttl": "0", "e2e.openkeel.io/registered-by": "npm run e2e (kwok keeps it Ready)" },
    },
    spec: s.taints.length > 0 ? { taints: s.taints } : {},
    status: {
      capacity: CAPACITY,
      allocatable: CAPACITY,
      addresses: [...(s.internalIP ? [{ type: "InternalIP", address: s.internalIP }] : []), { type: "Hostname", address: s.name }],
      nodeInfo: {
        architecture: "amd64",
        operatingSystem: "linux",
        kubeletVersion: `v${KUBERNETES_VERSION}`,
        containerRuntimeVersion: "kwok://",
        osImage: "e2e",
        kernelVersion: "e2e",
        kubeProxyVersion: "",
        bootID: "",
        machineID: "",
        systemUUID: "",
      },
    },
  };
}
