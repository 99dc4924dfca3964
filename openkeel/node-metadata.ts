// What the OpenKeel releases need on the nodes, written by the node-roles phase with the role
// labels: the OVN chassis label and the chassis' bridge mappings. The chassis DaemonSet tolerates
// every taint and reads only `chassis.nodeSelector` (§ 5.2 "What is implemented"), and a
// nodeSelector cannot say "compute OR network", so the nodes that must be chassis carry one label
// that says so. It reads its physnet bridge mappings from its own Node (§ 3.2), as an annotation,
// and, where the external NIC is a bond Open vSwitch owns, that bond's NICs and modes (OVS builds
// it: Talos may not manage a link OVS takes, config/host-network.ts).
import type { LoadedConfig, NodeConfig } from "../config/schema";
import { BRIDGE_MAPPINGS_ANNOTATION, chassisLabelKey, EXTERNAL_BOND_ANNOTATION, EXTERNAL_NIC_LABEL } from "../config/roles";
import type { OvsPort } from "../config/host-network";
import type { NodeMetadataContributor } from "../plan/node-roles";
import type { Topology } from "../topology/topology";
import { chassisRoles } from "../topology/services";

/** The external NIC's OVS bond of a node, as the chassis reads it: OVS's column names and values. */
export function externalBond(cfg: Pick<LoadedConfig, "hostNetworks">, node: NodeConfig): OvsPort | undefined {
  const nic = node.labels[EXTERNAL_NIC_LABEL];
  const port = node.hostNetwork === undefined ? undefined : cfg.hostNetworks?.[node.hostNetwork]?.ovs.find((p) => p.name === nic);
  return port?.members === undefined ? undefined : port;
}

function bondAnnotation(port: OvsPort): string {
  return JSON.stringify({
    name: port.name,
    interfaces: port.members,
    bond_mode: port.mode,
    lacp: port.lacp ?? "off",
    ...(port.mtu !== undefined ? { mtu_request: port.mtu } : {}),
  });
}

/** The chassis label on every node of a chassis role, its bridge mappings and external bond where the inventory has them. */
export function openkeelNodeMetadata(cfg: LoadedConfig, topo: Topology): NodeMetadataContributor {
  const roles = chassisRoles(cfg, topo);
  const label = chassisLabelKey(topo.profile);
  return (node: NodeConfig) => {
    const bond = externalBond(cfg, node);
    const annotations = {
      ...(node.bridgeMappings !== undefined ? { [BRIDGE_MAPPINGS_ANNOTATION]: node.bridgeMappings } : {}),
      ...(bond ? { [EXTERNAL_BOND_ANNOTATION]: bondAnnotation(bond) } : {}),
    };
    return {
      ...(node.roles.some((r) => roles.includes(r)) ? { labels: { [label]: "" } } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    };
  };
}
