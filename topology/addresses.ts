// The nodes' internal addresses against each other and against the cluster's ranges (issue 14,
// item 17): a duplicated address, or one inside the pod, service or join range, or outside the node
// subnet, gives a cluster that cannot work; and the ranges must not overlap each other.
import { contains, overlaps, parseAddress, parseCidr, reservedAddresses, type Cidr } from "../config/cidr";
import { attachmentNetworksOf, NETWORK_DEFAULTS, networkOf } from "../config/network";
import type { Check } from "../config/problems";
import type { Config } from "../config/schema";
import type { Topology } from "./topology";

const RANGES = [
  ["podCIDR", "the pod range"],
  ["serviceCIDR", "the service range"],
  ["joinCIDR", "the join range"],
] as const;

/** § 1.3, § 1.4: a secondary network needs nodes on the data centre's networks, and Kube-OVN for its addresses. */
export function attachmentEnvironmentChecks(cfg: Config, topo: Pick<Topology, "environment">): Check[] {
  if (topo.environment.physicalNetworks) return [];
  return attachmentNetworksOf(cfg).map((a) => ({
    level: "error",
    code: "attachment-network-environment",
    message: `${a.what} is set, but this environment's nodes are not on the data centre's networks (its cluster networking is its own): there is no ${a.network.interface} to attach pods to, and no IPAM of secondary networks to hand out the addresses`,
    fix: "remove it; secondary networks are for production stacks",
    path: a.key,
  }));
}

/** The checks of the nodes' addresses; against the cluster's ranges where the nodes sit on the data centre's networks. */
export function addressChecks(cfg: Config, topo: Pick<Topology, "environment">): Check[] {
  const checks: Check[] = [];
  const error = (code: string, message: string, fix: string, path: string) => checks.push({ level: "error", code, message, fix, path });
  const ranged = topo.environment.physicalNetworks;
  const net = networkOf(cfg);
  const ranges = RANGES.map(([key, what]) => ({ key, what, cidr: parseCidr(net[key])! }));
  const nodeSubnet = net.nodeSubnet !== undefined ? parseCidr(net.nodeSubnet) : undefined;

  const attachments = attachmentNetworksOf(cfg);
  if (ranged) {
    const all: { path: string; what: string; cidr: Cidr }[] = [
      ...(nodeSubnet ? [{ path: "openkeel:network.nodeSubnet", what: "the node subnet", cidr: nodeSubnet }] : []),
      ...ranges.map((r) => ({ ...r, path: `openkeel:network.${r.key}` })),
      // § 1.3, § 1.4: a secondary network is a network of its own, apart from the cluster's ranges
      ...attachments.map((a) => ({ path: `${a.key}.cidr`, what: a.what, cidr: parseCidr(a.network.cidr)! })),
    ];
    all.forEach((a, i) => {
      for (const b of all.slice(i + 1)) {
        if (overlaps(a.cidr, b.cidr)) {
          error(
            "network-overlap",
            `${a.what} ${a.cidr.text} and ${b.what} ${b.cidr.text} overlap: packets for one would be routed to the other`,
            `choose ranges that do not overlap (the defaults: pod ${NETWORK_DEFAULTS.podCIDR}, service ${NETWORK_DEFAULTS.serviceCIDR}, join ${NETWORK_DEFAULTS.joinCIDR})`,
            b.path,
          );
        }
      }
    });
    if (!nodeSubnet) {
      checks.push({
        level: "warning",
        code: "node-subnet-missing",
        message: "no node subnet: the nodes' addresses are only checked against each other and the pod, service and join ranges",
        fix: "set openkeel:network.nodeSubnet to the range of the nodes' internal addresses, e.g. 10.20.0.0/24",
        path: "openkeel:network.nodeSubnet",
      });
    }
  }

  const seen = new Map<bigint, number>();
  cfg.nodes.forEach((node, i) => {
    if (node.internalIP === undefined) return;
    const path = `openkeel:nodes[${i}].internalIP`;
    const addr = parseAddress(node.internalIP)!;
    const key = (BigInt(addr.family) << 128n) | addr.value;
    const first = seen.get(key);
    if (first !== undefined) {
      error(
        "duplicate-address",
        `node '${node.name}' has the address ${node.internalIP} of node '${cfg.nodes[first].name}' (nodes[${first}])`,
        "give every node its own internal address",
        path,
      );
    } else seen.set(key, i);
    if (!ranged) return;
    for (const r of ranges) {
      if (contains(r.cidr, addr)) {
        error(
          "node-address",
          `node '${node.name}': ${node.internalIP} is inside ${r.what} ${r.cidr.text}, which the cluster routes to ${r.key === "serviceCIDR" ? "Services" : "pods"}: the node would be unreachable`,
          `use the node's address in the node subnet, or move openkeel:network.${r.key} away from the nodes' addresses`,
          path,
        );
      }
    }
    if (nodeSubnet && !contains(nodeSubnet, addr)) {
      error(
        "node-address",
        `node '${node.name}': ${node.internalIP} is outside the node subnet ${nodeSubnet.text}`,
        `correct the address, or openkeel:network.nodeSubnet if the nodes live in a wider range`,
        path,
      );
    } else if (nodeSubnet && reservedAddresses(nodeSubnet).includes(addr.value)) {
      error(
        "node-address",
        `node '${node.name}': ${node.internalIP} is the ${addr.value === nodeSubnet.value ? "network" : "broadcast"} address of the node subnet ${nodeSubnet.text}, which no host can have`,
        "use a host address of the subnet",
        path,
      );
    }
  });
  return checks;
}
