// Phase `node-roles`: one Node patch per inventory node with its role labels (D1 keys of the
// stack's profile), its zone, its extra labels and what platform components need on it. Applied with the administrator's credentials,
// because production keys (node-restriction.kubernetes.io/*) cannot come from a kubelet.
// A node that is not active (config/lifecycle.ts) is also cordoned here: `spec.unschedulable:
// true`, the field `kubectl cordon` and the Node Maintenance Operator set (k8s.io/kubectl
// pkg/drain/cordon.go, CordonHelper; NMO calls drain.RunCordonOrUncordon). The patch is a
// server-side apply with its own field manager (components/plan-unit.ts): going back to active
// drops the field from the apply, which removes it, and the node is schedulable again.
import type { NodeConfig } from "../config/schema";
import { type K8sObject, manifestsUnit, type ManifestsUnit } from "./plan";
import type { LabelProfile } from "../config/roles";
import { hasTrait, NODE_STATE_LABEL } from "../config/lifecycle";
import { appliedNodeLabels } from "../topology/topology";

/** Labels and annotations a platform component needs on some nodes (e.g. Longhorn's disks and tags). */
interface NodeMetadata {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export type NodeMetadataContributor = (node: NodeConfig) => NodeMetadata;

function nodePatch(node: NodeConfig, profile: LabelProfile, contributors: NodeMetadataContributor[] = []): K8sObject {
  const labels: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  for (const contribute of contributors) {
    const m = contribute(node);
    Object.assign(labels, m.labels);
    Object.assign(annotations, m.annotations);
  }
  // The inventory's own labels win over contributed ones: the operator wrote them.
  Object.assign(labels, appliedNodeLabels(node, profile));
  // what our NodeHealthChecks leave out (platform/medik8s.ts); no label while active
  if (hasTrait(node.state, "cordons")) labels[NODE_STATE_LABEL] = node.state;
  const metadata: K8sObject["metadata"] = { name: node.name, labels };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  return { apiVersion: "v1", kind: "Node", metadata, ...(hasTrait(node.state, "cordons") ? { spec: { unschedulable: true } } : {}) };
}

export function nodeRolesUnit(nodes: NodeConfig[], profile: LabelProfile, contributors: NodeMetadataContributor[] = []): ManifestsUnit {
  return manifestsUnit(
    "node-roles",
    "openkeel:nodes:NodeRoles",
    nodes.map((n) => nodePatch(n, profile, contributors)),
  );
}
