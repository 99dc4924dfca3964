// The stack's inventory as Node objects, registered the way the nodes would register themselves:
// the labels a kubelet sets (hostname, os, arch), the labels the node configuration makes it assert
// (Talos machine.nodeLabels, kind nodes[].labels / kubeadm node-labels), what the bootstrapper adds
// on control-plane nodes (kubeadm and Talos: node-role.kubernetes.io/control-plane, plus its taint
// unless scheduling on control planes is allowed — kind untaints a lone control plane), the
// registration taints (Talos registerWithTaints / nodeTaints, kubeadm nodeRegistration.taints), and
// capacity. Everything is read from the rendered node configuration; role labels the node does not
// assert itself are left to the program's node-roles phase.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { readDocs, type RenderedStack } from "./rendered";

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
  internalIP?: string;
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

type Obj = Record<string, any>;

/** Talos: talos/machines.yaml names each node's machine type and patches, applied in order. */
function talosNodes(r: RenderedStack): NodeSpec[] {
  const machines = (parse(fs.readFileSync(path.join(r.dir, "talos", "machines.yaml"), "utf8")) as Obj).machines as Record<string, Obj>;
  return Object.entries(machines).map(([node, m]) => {
    let name = node;
    const labels: Record<string, string> = {};
    const taints: Taint[] = [];
    let allowOnControlPlanes = false;
    let internalIP: string | undefined;
    const provenance: string[] = [`machine type ${m.machineType}, patches ${m.patches.join(", ")}`];
    for (const rel of m.patches as string[]) {
      for (const doc of readDocs(path.join(r.dir, "talos", rel)) as Obj[]) {
        if (doc.kind === "HostnameConfig" && doc.hostname) name = doc.hostname;
        const machine = doc.machine ?? {};
        Object.assign(labels, machine.nodeLabels ?? {});
        for (const t of machine.kubelet?.extraConfig?.registerWithTaints ?? [])
          taints.push({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect });
        for (const [key, v] of Object.entries(machine.nodeTaints ?? {})) {
          const [value, effect] = String(v).split(":");
          taints.push({ key, ...(value ? { value } : {}), effect });
        }
        const subnet = machine.kubelet?.nodeIP?.validSubnets?.[0];
        if (typeof subnet === "string" && subnet.endsWith("/32")) internalIP = subnet.slice(0, -3);
        if (doc.cluster?.allowSchedulingOnControlPlanes === true) allowOnControlPlanes = true;
      }
    }
    if (m.machineType === "controlplane") {
      // Talos labels its control-plane nodes and taints them unless cluster.allowSchedulingOnControlPlanes
      labels[K8S_CONTROL_PLANE] = "";
      if (!allowOnControlPlanes) taints.push({ key: K8S_CONTROL_PLANE, effect: "NoSchedule" });
      provenance.push(`Talos control plane: ${K8S_CONTROL_PLANE} label${allowOnControlPlanes ? ", no taint (allowSchedulingOnControlPlanes)" : " and taint"}`);
    }
    return { name, labels: { ...labels, ...kubeletLabels(name) }, taints, internalIP, provenance };
  });
}

/** kind: nodes[] in order; kind names them <cluster>-control-plane[N] and <cluster>-worker[N]. */
function kindNodes(r: RenderedStack): NodeSpec[] {
  const cluster = readDocs(path.join(r.dir, "kind", "cluster.yaml"))[0] as Obj;
  const nodes = (cluster.nodes ?? [{ role: "control-plane" }]) as Obj[];
  const hasWorkers = nodes.some((n) => n.role === "worker");
  const count: Record<string, number> = {};
  return nodes.map((n) => {
    const role = n.role ?? "control-plane";
    count[role] = (count[role] ?? 0) + 1;
    const name = `${cluster.name ?? "kind"}-${role}${count[role] > 1 ? count[role] : ""}`;
    const labels: Record<string, string> = { ...(n.labels ?? {}) };
    let taints: Taint[] = [];
    const provenance = [`kind ${role} node #${count[role]} of ${cluster.name}`];
    if (role === "control-plane") {
      labels[K8S_CONTROL_PLANE] = "";
      labels["node.kubernetes.io/exclude-from-external-load-balancers"] = "";
      if (hasWorkers) taints.push({ key: K8S_CONTROL_PLANE, effect: "NoSchedule" });
      provenance.push(
        `kubeadm control plane: ${K8S_CONTROL_PLANE} label${hasWorkers ? " and taint" : "; kind removes the taint of a cluster without workers"}`,
      );
    }
    for (const patch of (n.kubeadmConfigPatches ?? []) as string[]) {
      const doc = parse(patch) as Obj;
      const reg = doc?.nodeRegistration;
      if (!reg) continue;
      if (Array.isArray(reg.taints)) taints = reg.taints.map((t: Obj) => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect }));
      const args = reg.kubeletExtraArgs;
      const nodeLabels = Array.isArray(args) ? args.find((a: Obj) => a.name === "node-labels")?.value : args?.["node-labels"];
      for (const kv of String(nodeLabels ?? "")
        .split(",")
        .filter(Boolean)) {
        const [k, v] = kv.split("=");
        labels[k] = v ?? "";
      }
      provenance.push(`kubeadm ${doc.kind} patch`);
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

export function nodeObject(s: NodeSpec): Obj {
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
        kubeletVersion: "v1.36.3",
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
