// Phase `node-roles`: one Node patch per inventory node with its role labels (D1 keys of the
// stack's profile), its zone and its extra labels. Applied with the administrator's credentials,
// because production keys (node-restriction.kubernetes.io/*) cannot come from a kubelet.
import type { NodeConfig } from "./config";
import type { K8sObject, ManifestsUnit } from "./plan";
import type { LabelProfile } from "./roles";
import { appliedNodeLabels } from "./topology";

/** Labels a platform component needs on some nodes (e.g. Longhorn's create-default-disk). */
export type NodeLabelContributor = (node: NodeConfig) => Record<string, string>;

export function nodePatch(node: NodeConfig, profile: LabelProfile, contributors: NodeLabelContributor[] = []): K8sObject {
  const labels: Record<string, string> = {};
  for (const contribute of contributors) Object.assign(labels, contribute(node));
  // The inventory's own labels win over contributed ones: the operator wrote them.
  Object.assign(labels, appliedNodeLabels(node, profile));
  return { apiVersion: "v1", kind: "Node", metadata: { name: node.name, labels } };
}

export function nodeRolesUnit(nodes: NodeConfig[], profile: LabelProfile, contributors: NodeLabelContributor[] = []): ManifestsUnit {
  return {
    kind: "Manifests",
    name: "node-roles",
    type: "openkeel:nodes:NodeRoles",
    objects: nodes.map((n) => nodePatch(n, profile, contributors)),
  };
}
