// Labels a node asserts about itself: kind's `nodes[].labels` (kubelet --node-labels) and Talos'
// `machine.nodeLabels`. On a Talos worker, machined writes them with the kubelet's credentials, so
// NodeRestriction applies, and the write is one Update of every label: a single refused key and
// the node gets none of them (siderolabs/talos#8193). A kubelet given a refused key in
// --node-labels does not start at all (kubernetes-sigs/kind#3536).
//
// So every self-asserted label goes through selfAssertedLabels(), which refuses the keys a kubelet
// may not set. Role labels needing admin rights (D1: node-restriction.kubernetes.io/openkeel-*)
// come from the node-roles phase (a NodePatch applied with the administrator's credentials).
import type { NodeConfig } from "../config/schema";
import type { LabelProfile } from "../config/roles";
import { appliedNodeLabels } from "../topology/topology";
import { byCodePoint } from "../config/plain";

/** Keys of the kubernetes.io namespaces a kubelet may set on its own Node (NodeRestriction). */
const KUBELET_LABELS = new Set([
  "kubernetes.io/hostname",
  "kubernetes.io/arch",
  "kubernetes.io/os",
  "topology.kubernetes.io/zone",
  "topology.kubernetes.io/region",
]);
/** Namespaces (and their subdomains) a kubelet may set any key of. */
const KUBELET_NAMESPACES = ["kubelet.kubernetes.io", "node.kubernetes.io"];
/** Namespaces reserved to Kubernetes: outside the allowlist above, a kubelet may not set them. */
const RESERVED_NAMESPACES = ["kubernetes.io", "k8s.io"];
/** Never self-set, whatever else changes (the D1 hardened prefix lives here). */
const NODE_RESTRICTION_NAMESPACE = "node-restriction.kubernetes.io";

function inNamespace(namespace: string, domain: string): boolean {
  return namespace === domain || namespace.endsWith(`.${domain}`);
}

/** Whether NodeRestriction lets a kubelet set this label key on its own Node. */
export function kubeletMaySetLabel(key: string): boolean {
  const slash = key.indexOf("/");
  const namespace = slash < 0 ? "" : key.slice(0, slash);
  if (inNamespace(namespace, NODE_RESTRICTION_NAMESPACE)) return false;
  if (KUBELET_LABELS.has(key)) return true;
  if (KUBELET_NAMESPACES.some((d) => inNamespace(namespace, d))) return true;
  return !RESERVED_NAMESPACES.some((d) => inNamespace(namespace, d));
}

/** A label key that would make a node's whole self-labelling fail: a bug in the caller. */
export class ForbiddenSelfLabelError extends Error {
  constructor(
    readonly where: string,
    readonly keys: string[],
  ) {
    super(
      `${where}: ${keys.join(", ")} cannot be set by the node itself (NodeRestriction refuses ${keys.length > 1 ? "them" : "it"}, ` +
        "and one refused key drops every label of the node); such labels belong to the node-roles phase",
    );
    this.name = "ForbiddenSelfLabelError";
  }
}

/**
 * The one constructor of self-asserted labels (Talos machine.nodeLabels, kind nodes[].labels):
 * throws on any key a kubelet may not set, e.g. node-role.kubernetes.io/* or
 * node-restriction.kubernetes.io/*. Keys come out sorted.
 */
export function selfAssertedLabels(labels: Record<string, string>, where: string): Record<string, string> {
  const refused = Object.keys(labels)
    .filter((k) => !kubeletMaySetLabel(k))
    .sort();
  if (refused.length > 0) throw new ForbiddenSelfLabelError(where, refused);
  return Object.fromEntries(Object.entries(labels).sort(([a], [b]) => byCodePoint(a, b)));
}

/**
 * The labels a node asserts itself: those of its applied labels (roles, zone, extra labels) that
 * a kubelet may set. The node-roles phase applies all of them, these included, with the same
 * values, so the two writers never disagree; the node has these from its first registration on.
 */
export function nodeSelfLabels(node: NodeConfig, profile: LabelProfile): Record<string, string> {
  const applied = appliedNodeLabels(node, profile);
  const own = Object.fromEntries(Object.entries(applied).filter(([k]) => kubeletMaySetLabel(k)));
  return selfAssertedLabels(own, `node ${node.name}`);
}
