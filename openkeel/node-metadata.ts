// What the OpenKeel releases need on the nodes, written by the node-roles phase with the role
// labels: the OVN chassis label and the chassis' bridge mappings. The chassis DaemonSet tolerates
// every taint and reads only `chassis.nodeSelector` (§ 5.2 "What is implemented"), and a
// nodeSelector cannot say "compute OR network", so the nodes that must be chassis carry one label
// that says so. It reads its physnet bridge mappings from its own Node (§ 3.2), as an annotation.
import type { LoadedConfig, NodeConfig } from "../config/schema";
import { BRIDGE_MAPPINGS_ANNOTATION, chassisLabelKey } from "../config/roles";
import type { NodeMetadataContributor } from "../plan/node-roles";
import type { Topology } from "../topology/topology";
import { chassisRoles } from "../topology/services";

/** The chassis label on every node of a chassis role, and its bridge mappings where the inventory has them. */
export function openkeelNodeMetadata(cfg: LoadedConfig, topo: Topology): NodeMetadataContributor {
  const roles = chassisRoles(cfg, topo);
  const label = chassisLabelKey(topo.profile);
  return (node: NodeConfig) => ({
    ...(node.roles.some((r) => roles.includes(r)) ? { labels: { [label]: "" } } : {}),
    ...(node.bridgeMappings !== undefined ? { annotations: { [BRIDGE_MAPPINGS_ANNOTATION]: node.bridgeMappings } } : {}),
  });
}
