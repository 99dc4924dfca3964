// Phase `node-roles`: one Node patch per inventory node with its role labels (D1 keys of the
// stack's profile), its zone, its extra labels and what platform components need on it. Applied with the administrator's credentials,
// because production keys (node-restriction.kubernetes.io/*) cannot come from a kubelet.
import type { NodeConfig } from "../config/schema";
import { type K8sObject, manifestsUnit, type ManifestsUnit } from "./plan";
import type { LabelProfile } from "../config/roles";
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
  const metadata: K8sObject["metadata"] = { name: node.name, labels };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  return { apiVersion: "v1", kind: "Node", metadata };
}

export function nodeRolesUnit(nodes: NodeConfig[], profile: LabelProfile, contributors: NodeMetadataContributor[] = []): ManifestsUnit {
  return manifestsUnit("node-roles", "openkeel:nodes:NodeRoles", nodes.map((n) => nodePatch(n, profile, contributors)));
}
