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

/**
 * Open vSwitch's bond modes (ovs-vswitchd.conf.db(5), Port table, bond_mode): balance-tcp needs
 * LACP; active-backup and balance-slb work without it.
 */
export const OVS_BOND_MODES = ["active-backup", "balance-slb", "balance-tcp"] as const;

/**
 * An interface that Open vSwitch takes (the OVN chassis adds it to its physnet bridge, § 3.2):
 * one NIC, or a bond that OVS builds from NICs (an OVS bond, not a kernel one). Talos is told
 * nothing of it: its link controller brings down and detaches any link it manages whose master it
 * did not set, and an OVS port's master is ovs-system (siderolabs/talos@v1.13.9
 * internal/app/machined/pkg/controllers/network/link_spec.go:706-758; the kernel refuses the
 * detach, siderolabs/talos#7845), while with link documents present it makes no link spec for a
 * NIC no document names (link_config.go:145-200).
 */
const ovsPortSchema = z.strictObject({
  /** The port's name in OVS: the NIC's kernel name, or the bond's name (what the external-nic label names). */
  name: interfaceNameSchema,
  /** The NICs OVS bonds into this port; none: the port is the NIC `name` itself. */
  members: z
    .array(interfaceNameSchema)
    .min(2, {
      message: "lists fewer than 2 NICs, and an OVS bond needs two or more. Fix: list both NICs, or drop members to give OVS the one NIC named by name",
    })
    .optional(),
  /** How OVS spreads flows over the members (Port bond_mode); balance-tcp needs lacp. */
  mode: z.enum(OVS_BOND_MODES).optional(),
  /** LACP towards the switch (Port lacp); balance-tcp needs active or passive. */
  lacp: z.enum(["active", "passive", "off"]).optional(),
  /** OVS's mtu_request for the port's NICs; unset: OVS leaves the NICs' own. */
  mtu: mtuSchema.optional(),
});
export type OvsPort = z.infer<typeof ovsPortSchema>;

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
    /** Interfaces Open vSwitch takes, which Talos must leave alone (the OVN chassis' external NIC, § 3.2). */
    ovs: z.array(ovsPortSchema).default([]),
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

/** The NICs OVS takes: each port's members, or the port's NIC itself. */
export const ovsNics = (port: OvsPort): string[] => port.members ?? [port.name];

/** Linux interface names are at most 15 characters (IFNAMSIZ 16 with its NUL): the kernel refuses a longer one. */
export const MAX_INTERFACE_NAME = 15;

/**
 * A link's MTU as the kernel gives it: its own, else a VLAN's parent's (a VLAN link is created with
 * its lower device's MTU, linux net/8021q/vlan_netlink.c vlan_newlink), else 1500.
 */
export function effectiveMtu(n: HostNetwork, name: string, seen = new Set<string>()): number {
  const own = [...n.links, ...n.bonds].find((l) => l.name === name)?.mtu;
  if (own !== undefined) return own;
  const vlan = n.vlans.find((v) => vlanName(v) === name);
  if (vlan === undefined || seen.has(name)) return 1500;
  return vlan.mtu ?? effectiveMtu(n, vlan.parent, seen.add(name));
}

/** `bond0.41` promises VLAN 41 of bond0: the parent and id its name says, if it says any. */
export function vlanPromise(name: string): { parent: string; id: number } | undefined {
  const m = /^(.+)\.(\d{1,4})$/.exec(name);
  return m ? { parent: m[1], id: Number(m[2]) } : undefined;
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
    } else if (v.mtu !== undefined && v.mtu > effectiveMtu(n, v.parent)) {
      issues.push({
        path: ["vlans", i, "mtu"],
        message: `is ${v.mtu}, above its parent ${v.parent}'s MTU of ${effectiveMtu(n, v.parent)}. Fix: raise ${v.parent}'s mtu to at least ${v.mtu}, or leave the VLAN's mtu unset to inherit the parent's`,
      });
    }
    issues.push(...vlanNameIssues(v, i));
  });
  issues.push(...ovsIssues(n, byName));
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

/** A VLAN's name fits the kernel's limit and keeps the promise it makes (`bond0.41` is VLAN 41 of bond0). */
function vlanNameIssues(v: HostNetworkVlan, i: number): Issue[] {
  const name = vlanName(v);
  if (name.length > MAX_INTERFACE_NAME) {
    return [
      {
        path: ["vlans", i, v.name === undefined ? "id" : "name"],
        message: `makes the interface '${name}', ${name.length} characters, and Linux names an interface in at most ${MAX_INTERFACE_NAME} (IFNAMSIZ): the kernel refuses the link. Fix: give the VLAN a shorter name, e.g. name: ${v.parent.slice(0, 8)}.${v.id}`,
      },
    ];
  }
  const promise = v.name === undefined ? undefined : vlanPromise(v.name);
  if (promise && (promise.parent !== v.parent || promise.id !== v.id)) {
    return [
      {
        path: ["vlans", i, promise.id !== v.id ? "id" : "parent"],
        message: `is VLAN ${v.id} of ${v.parent}, and its name '${v.name}' says VLAN ${promise.id} of ${promise.parent}: whatever names '${v.name}' (an attachment, the interfaces that announce the ingress VIP, the runbook's switch ports) expects the other VLAN. Fix: tag it ${promise.id} on ${promise.parent} as its name says, or rename it ${v.parent}.${v.id}`,
      },
    ];
  }
  return [];
}

/**
 * What OVS takes is Talos' nowhere: not a link, bond, bond member or VLAN parent of the host
 * network, and never the link of the node's address and default route (OVS would move it into its
 * bridge, and the node would lose its address, its default route and its Geneve tunnels).
 */
function ovsIssues(n: HostNetwork, declared: ReadonlyMap<string, unknown>): Issue[] {
  const issues: Issue[] = [];
  const talosNames = new Set([...declared.keys(), ...n.bonds.flatMap((b) => b.members)]);
  const seen = new Set<string>();
  n.ovs.forEach((port, i) => {
    if (port.name === n.nodeAddress.link) {
      issues.push({
        path: ["ovs", i, "name"],
        message: `is the link of the node's address and default route (nodeAddress.link): OVS would take it into its bridge and the node would lose its address, its default route and its Geneve tunnels. Fix: give OVS the NICs of the external networks only, never the node's own link`,
      });
    }
    for (const [j, nic] of [port.name, ...(port.members ?? [])].entries()) {
      const at = j === 0 ? ["ovs", i, "name"] : ["ovs", i, "members", j - 1];
      if (seen.has(nic)) issues.push({ path: at, message: `is given to OVS twice. Fix: name each NIC in one OVS port only` });
      seen.add(nic);
      if (talosNames.has(nic) && !(j === 0 && port.name === n.nodeAddress.link))
        issues.push({
          path: at,
          message: `is also declared to Talos (links, bonds or a bond's members): Talos' link controller brings down and detaches a link it manages whose master it did not set, and OVS makes ovs-system its master (siderolabs/talos@v1.13.9 link_spec.go:706-758, #7845). Fix: declare '${nic}' under ovs only, and remove it from links and bonds`,
        });
    }
    if (port.members === undefined && (port.mode !== undefined || port.lacp !== undefined))
      issues.push({
        path: ["ovs", i],
        message: `sets a bond mode or LACP on a port of one NIC. Fix: list the bond's NICs under members, or remove mode and lacp`,
      });
    if (port.members !== undefined && port.mode === undefined)
      issues.push({
        path: ["ovs", i, "mode"],
        message: `is required for an OVS bond. Fix: write mode: balance-tcp with lacp: active where the switch runs LACP, else active-backup`,
      });
    if (port.mode === "balance-tcp" && (port.lacp ?? "off") === "off")
      issues.push({
        path: ["ovs", i, "lacp"],
        message: `is off, and OVS's balance-tcp needs LACP (ovs-vswitchd.conf.db(5), Port bond_mode). Fix: write lacp: active (the switch's ports in an LACP group), or mode: active-backup`,
      });
  });
  n.vlans.forEach((v, i) => {
    if (seen.has(v.parent))
      issues.push({
        path: ["vlans", i, "parent"],
        message: `is an interface OVS takes (ovs): a kernel VLAN on an OVS port receives nothing, and Talos would manage the port. Fix: put the VLAN on a link or bond Talos owns`,
      });
  });
  return issues;
}

/** The link of a host network that carries the VIP's replies: the first MetalLB interface it declares, unless it is the node's own link. */
export function vipLink(network: HostNetwork, vip: { interfaces: readonly string[] }): string | undefined {
  const names = new Set([...network.links.map((l) => l.name), ...network.bonds.map((b) => b.name), ...network.vlans.map(vlanName)]);
  const link = vip.interfaces.find((i) => names.has(i));
  return link === network.nodeAddress.link ? undefined : link;
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
