// `openkeel:hostNetworks`: the links of the nodes' hosts, declared once per kind of machine and
// named by each node (`openkeel:nodes[].hostNetwork`): bonds and their members, VLANs, MTUs, and
// the link that carries the node's internal address. The Talos patches render them
// (nodes/talos-network.ts); every interface the cluster names (attachment masters, MetalLB's
// interfaces, the external NIC of the OVN chassis) is judged against them by the host contract
// (placement/host.ts). A name here is a Linux interface name: what Talos creates and the kernel shows.
import { z } from "zod";
import { interfaceNameSchema } from "./network";
import { contains, parseAddress, parseCidr } from "./cidr";

/** Talos' BondConfig `bondMode` (pkg/machinery config schema v1.13: network.BondConfigV1Alpha1). */
export const BOND_MODES = ["balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb"] as const;
/** Talos' BondConfig `xmitHashPolicy`. */
const XMIT_HASH_POLICIES = ["layer2", "layer3+4", "layer2+3", "encap2+3", "encap3+4"] as const;

/** Linux takes 68 (IPv4's minimum) up to what the NIC supports; 9216 is the common jumbo ceiling. */
const mtuSchema = z
  .number()
  .int()
  .min(68, { message: "is below 68, the smallest MTU IPv4 allows. Fix: write 1500, or 9000 for jumbo frames" })
  .max(9216, { message: "is above 9216, more than switches and NICs carry. Fix: write 1500, or 9000 for jumbo frames" });

const plainLinkSchema = z.strictObject({
  /** A NIC the machine has, by its kernel name (e.g. enp1s0f0). */
  name: interfaceNameSchema,
  mtu: mtuSchema.optional(),
});

const bondSchema = z.strictObject({
  name: interfaceNameSchema,
  /** The NICs it bonds, by their kernel names. */
  members: z.array(interfaceNameSchema).min(1),
  mode: z.enum(BOND_MODES),
  /** How 802.3ad and balance-xor spread flows over the members. */
  xmitHashPolicy: z.enum(XMIT_HASH_POLICIES).optional(),
  mtu: mtuSchema.optional(),
  /**
   * Link monitoring, in milliseconds: how often a member's carrier is checked, and how long a
   * member waits after it comes up or goes down. Without them the kernel monitors nothing (miimon
   * 0) and Talos warns for 802.3ad (siderolabs/talos@v1.13.9 pkg/machinery/config/types/network/
   * bond.go:372-389); updelay and downdelay are multiples of miimon (the kernel rounds them down).
   */
  miimon: z.number().int().min(1).max(10000).default(100),
  updelay: z.number().int().min(0).max(100000).default(200),
  downdelay: z.number().int().min(0).max(100000).default(200),
});

const vlanSchema = z.strictObject({
  /** @default `<parent>.<id>` */
  name: interfaceNameSchema.optional(),
  /** A link or bond of the same host network. */
  parent: interfaceNameSchema,
  id: z.number().int().min(1).max(4094, { message: "is not a VLAN ID (1 to 4094). Fix: write the switch's VLAN number" }),
  mtu: mtuSchema.optional(),
});

const nodeAddressSchema = z.strictObject({
  /** The link, bond or VLAN that carries the node's internalIP. */
  link: interfaceNameSchema,
  /** static: the node's internalIP, with the prefix of openkeel:network.nodeSubnet; dhcp: a DHCPv4 client on the link. */
  method: z.enum(["static", "dhcp"]),
  /** The default route's gateway of a static address, in the node subnet. */
  gateway: z.string().optional(),
});

export type HostNetworkVlan = z.infer<typeof vlanSchema>;

/** A VLAN's interface name: its own, or `<parent>.<id>` as iproute2 names it. */
export function vlanName(v: Pick<HostNetworkVlan, "name" | "parent" | "id">): string {
  return v.name ?? `${v.parent}.${v.id}`;
}

/** One kind of machine's links. */
export const hostNetworkSchema = z
  .strictObject({
    links: z.array(plainLinkSchema).default([]),
    bonds: z.array(bondSchema).default([]),
    vlans: z.array(vlanSchema).default([]),
    nodeAddress: nodeAddressSchema,
  })
  .superRefine((n, ctx) => hostNetworkRules(n, ctx));

export type HostNetwork = z.infer<typeof hostNetworkSchema>;

type Issue = { path: (string | number)[]; message: string };

/** The interfaces a host network creates or names, each with where it is declared. */
function declaredLinks(n: HostNetwork): { name: string; path: (string | number)[]; mtu?: number | undefined }[] {
  return [
    ...n.links.map((l, i) => ({ name: l.name, path: ["links", i, "name"], mtu: l.mtu })),
    ...n.bonds.map((b, i) => ({ name: b.name, path: ["bonds", i, "name"], mtu: b.mtu })),
    ...n.vlans.map((v, i) => ({ name: vlanName(v), path: ["vlans", i, v.name === undefined ? "id" : "name"], mtu: v.mtu })),
  ];
}

/** Every interface name a node with this host network has: its links, bonds, bond members and VLANs. */
export function hostInterfaces(n: HostNetwork): string[] {
  return [...new Set([...declaredLinks(n).map((l) => l.name), ...n.bonds.flatMap((b) => b.members)])].sort();
}

function hostNetworkRules(n: HostNetwork, ctx: z.RefinementCtx): void {
  for (const issue of hostNetworkIssues(n)) ctx.addIssue({ code: "custom", ...issue });
}

/** Names once each, members in one bond, VLAN parents declared and no wider than them, the address on a declared link. */
export function hostNetworkIssues(n: HostNetwork): Issue[] {
  const issues: Issue[] = [];
  const links = declaredLinks(n);
  const byName = new Map<string, (typeof links)[number]>();
  for (const l of links) {
    if (byName.has(l.name))
      issues.push({ path: l.path, message: `declares interface '${l.name}' a second time. Fix: give each link, bond and VLAN its own name` });
    else byName.set(l.name, l);
  }
  const memberOf = new Map<string, string>();
  n.bonds.forEach((b, i) =>
    b.members.forEach((m, j) => {
      const at = ["bonds", i, "members", j];
      if (memberOf.has(m)) issues.push({ path: at, message: `is already a member of ${memberOf.get(m)}. Fix: give each NIC to one bond only` });
      else if (byName.has(m) && !n.links.some((l) => l.name === m))
        issues.push({ path: at, message: `is a bond or VLAN of this host network, not a NIC. Fix: list the NICs the bond takes, e.g. enp1s0f0` });
      memberOf.set(m, b.name);
    }),
  );
  n.links.forEach((l, i) => {
    if (memberOf.has(l.name))
      issues.push({
        path: ["links", i, "name"],
        message: `is a member of ${memberOf.get(l.name)}, which owns it. Fix: remove it from links (set the MTU on the bond)`,
      });
  });
  n.vlans.forEach((v, i) => {
    const parent = byName.get(v.parent);
    if (parent === undefined || n.vlans.some((o) => vlanName(o) === v.parent)) {
      issues.push({
        path: ["vlans", i, "parent"],
        message: `is not a link or bond of this host network. Fix: declare '${v.parent}' under links or bonds, or name one that is (${[...n.links, ...n.bonds].map((l) => l.name).join(", ") || "none declared"})`,
      });
    } else if ((v.mtu ?? 1500) > (parent.mtu ?? 1500)) {
      issues.push({
        path: ["vlans", i, "mtu"],
        message: `is ${v.mtu}, above its parent ${v.parent}'s MTU of ${parent.mtu ?? 1500}. Fix: raise ${v.parent}'s mtu to at least ${v.mtu}`,
      });
    }
  });
  if (!byName.has(n.nodeAddress.link)) {
    issues.push({
      path: ["nodeAddress", "link"],
      message: `is not a link, bond or VLAN of this host network. Fix: name the one that carries the node's internal address (${links.map((l) => l.name).join(", ") || "declare it first"})`,
    });
  }
  const gw = n.nodeAddress.gateway;
  if (n.nodeAddress.method === "dhcp" && gw !== undefined) {
    issues.push({
      path: ["nodeAddress", "gateway"],
      message: "is set for a DHCP address, whose gateway comes from the DHCP server. Fix: remove it, or use method: static",
    });
  } else if (n.nodeAddress.method === "static" && gw === undefined) {
    issues.push({
      path: ["nodeAddress", "gateway"],
      message: "is required for a static address: the node needs its default route. Fix: write the node subnet's router, e.g. gateway: 10.30.0.1",
    });
  } else if (gw !== undefined && parseAddress(gw)?.family !== 4) {
    issues.push({ path: ["nodeAddress", "gateway"], message: "is not an IPv4 address. Fix: write the node subnet's router, e.g. 10.30.0.1" });
  }
  return issues;
}

/** The parts of the stack config the production rules read (structural: no import cycle). */
interface StackShape {
  hostNetworks?: Record<string, HostNetwork> | undefined;
  network?: { nodeSubnet?: string | undefined } | undefined;
  nodes: readonly { hostNetwork?: string | undefined }[];
}

/**
 * A static node address takes its prefix length from openkeel:network.nodeSubnet, and its
 * gateway must be in that subnet: the rules of an environment that renders host networks (Talos).
 */
export function staticAddressIssues(cfg: StackShape): Issue[] {
  const issues: Issue[] = [];
  const subnet = cfg.network?.nodeSubnet === undefined ? undefined : parseCidr(cfg.network.nodeSubnet);
  for (const [name, n] of Object.entries(cfg.hostNetworks ?? {})) {
    if (n.nodeAddress.method !== "static" || !cfg.nodes.some((node) => node.hostNetwork === name)) continue;
    const at = ["hostNetworks", name, "nodeAddress"];
    if (cfg.network?.nodeSubnet === undefined) {
      issues.push({
        path: at,
        message:
          "is static, and openkeel:network.nodeSubnet, whose prefix length the address takes, is not set. Fix: set openkeel:network.nodeSubnet, or use method: dhcp",
      });
    } else if (subnet && n.nodeAddress.gateway !== undefined) {
      const gw = parseAddress(n.nodeAddress.gateway);
      if (gw?.family === 4 && !contains(subnet, gw)) {
        issues.push({
          path: [...at, "gateway"],
          message: `is outside the node subnet ${cfg.network.nodeSubnet}, so the node could not reach it. Fix: write the router of ${cfg.network.nodeSubnet}`,
        });
      }
    }
  }
  return issues;
}
