// A node's host network (openkeel:hostNetworks, config/host-network.ts) as Talos network
// documents: LinkConfig, BondConfig and VLANConfig, the node's internal address on its link (a
// static address with its default route, or a DHCPv4Config). Talos v1.13 configures links from
// these multi-document kinds (pkg/machinery config schema v1.13: network.*ConfigV1Alpha1); the
// legacy machine.network.interfaces is not written. Rendered in the node's own patch, since the
// static address is the node's.
import { parseCidr } from "../config/cidr";
import { vipLink, vlanName, type HostNetwork } from "../config/host-network";
import type { NodeConfig } from "../config/schema";

type Doc = Record<string, unknown>;

/**
 * The routing table and rule priority of the VIP's replies. A reply from a MetalLB VIP has the VIP
 * as its source, and without a rule it leaves through the node's default route on another link
 * (metallb/metallb#319): uRPF and stateful firewalls drop it. The rule sends every packet from the
 * VIP network to this table, whose routes leave through the VIP's own VLAN (Talos v1.13
 * RoutingRuleConfig; a route's `table` in its LinkConfig/VLANConfig).
 */
export const VIP_ROUTE_TABLE = "180";
export const VIP_RULE_PRIORITY = "1000";

/** The VIP network and the interfaces it is announced from (openkeel:platform.metallb). */
export interface VipRoute {
  cidr: string;
  gateway: string;
  interfaces: readonly string[];
}

/** What the node's address adds to the link that carries it: the address and the default route, or nothing (DHCP). */
function addressing(link: string, node: Pick<NodeConfig, "name" | "internalIP">, network: HostNetwork, nodeSubnet: string | undefined): Doc {
  const a = network.nodeAddress;
  if (a.link !== link || a.method !== "static") return {};
  const prefix = nodeSubnet === undefined ? undefined : parseCidr(nodeSubnet)?.prefix;
  // the environment's config rules require both for a static address
  if (node.internalIP === undefined || prefix === undefined)
    throw new Error(`node ${node.name}: a static address without internalIP or nodeSubnet passed the config rules`);
  return { addresses: [{ address: `${node.internalIP}/${prefix}` }], routes: [{ gateway: a.gateway }] };
}

const mtu = (value: number | undefined): Doc => (value === undefined ? {} : { mtu: value });

/** The VIP table's routes on its link: the VIP network on the link, and its router as the table's default. */
function vipRoutes(link: string, vip: VipRoute | undefined, via: string | undefined): Doc {
  if (!vip || link !== via) return {};
  return {
    routes: [
      { destination: vip.cidr, table: VIP_ROUTE_TABLE },
      { gateway: vip.gateway, table: VIP_ROUTE_TABLE },
    ],
  };
}

/** The Talos documents of a node's host network, links first, then bonds, VLANs, DHCP and the VIP's routing rule. */
export function hostNetworkDocuments(
  node: Pick<NodeConfig, "name" | "internalIP">,
  network: HostNetwork,
  nodeSubnet: string | undefined,
  vip?: VipRoute,
): Doc[] {
  const via = vip ? vipLink(network, vip) : undefined;
  const at = (link: string) => ({ ...addressing(link, node, network, nodeSubnet), ...vipRoutes(link, vip, via) });
  const docs: Doc[] = [
    ...network.links.map((l) => ({ apiVersion: "v1alpha1", kind: "LinkConfig", name: l.name, ...mtu(l.mtu), ...at(l.name) })),
    ...network.bonds.map((b) => ({
      apiVersion: "v1alpha1",
      kind: "BondConfig",
      name: b.name,
      links: [...b.members],
      bondMode: b.mode,
      ...(b.xmitHashPolicy !== undefined ? { xmitHashPolicy: b.xmitHashPolicy } : {}),
      miimon: b.miimon,
      updelay: b.updelay,
      downdelay: b.downdelay,
      ...mtu(b.mtu),
      ...at(b.name),
    })),
    ...network.vlans.map((v) => ({
      apiVersion: "v1alpha1",
      kind: "VLANConfig",
      name: vlanName(v),
      parent: v.parent,
      vlanID: v.id,
      ...mtu(v.mtu),
      ...at(vlanName(v)),
    })),
  ];
  if (network.nodeAddress.method === "dhcp") docs.push({ apiVersion: "v1alpha1", kind: "DHCPv4Config", name: network.nodeAddress.link });
  if (vip && via) docs.push({ apiVersion: "v1alpha1", kind: "RoutingRuleConfig", name: VIP_RULE_PRIORITY, src: vip.cidr, table: VIP_ROUTE_TABLE });
  return docs;
}
