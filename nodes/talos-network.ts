// A node's host network (openkeel:hostNetworks, config/host-network.ts) as Talos network
// documents: LinkConfig, BondConfig and VLANConfig, the node's internal address on its link (a
// static address with its default route, or a DHCPv4Config). Talos v1.13 configures links from
// these multi-document kinds (pkg/machinery config schema v1.13: network.*ConfigV1Alpha1); the
// legacy machine.network.interfaces is not written. Rendered in the node's own patch, since the
// static address is the node's.
import { parseCidr } from "../config/cidr";
import { vlanName, type HostNetwork } from "../config/host-network";
import type { NodeConfig } from "../config/schema";

type Doc = Record<string, unknown>;

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

/** The Talos documents of a node's host network, links first, then bonds, VLANs and DHCP. */
export function hostNetworkDocuments(node: Pick<NodeConfig, "name" | "internalIP">, network: HostNetwork, nodeSubnet: string | undefined): Doc[] {
  const at = (link: string) => addressing(link, node, network, nodeSubnet);
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
  return docs;
}
