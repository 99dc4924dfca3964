// What the OpenKeel releases need on the nodes, written by the node-roles phase with the role
// labels: the OVN chassis label. The chassis DaemonSet tolerates every taint and reads only
// `chassis.nodeSelector` (§ 5.2 "What is implemented"), and a nodeSelector cannot say "compute OR
// network", so the nodes that must be chassis carry one label that says so.
import type { LoadedConfig, NodeConfig } from "../config/schema";
import { chassisLabelKey, type Role } from "../config/roles";
import type { NodeMetadataContributor } from "../plan/node-roles";
import type { Topology } from "../topology/topology";
import { serviceEnabled } from "../topology/services";

/**
 * The roles whose nodes are OVN chassis (§ 1.2, § 3.1 mode B): hypervisors (their VMs' ports, and
 * distributed FIPs, D3), gateways (router gateways, SNAT), and containers nodes when Zun runs (the
 * containers' Neutron ports, § 2.2).
 */
function chassisRoles(cfg: LoadedConfig, topo: Topology): Role[] {
  return serviceEnabled(cfg, topo, "zun") ? ["compute", "network", "containers"] : ["compute", "network"];
}

/** The chassis label on every node of a chassis role. */
export function openkeelNodeMetadata(cfg: LoadedConfig, topo: Topology): NodeMetadataContributor {
  const roles = chassisRoles(cfg, topo);
  const label = chassisLabelKey(topo.profile);
  return (node: NodeConfig) => (node.roles.some((r) => roles.includes(r)) ? { labels: { [label]: "" } } : {});
}
