// `openkeel:network`: the address ranges of a production cluster. The node subnet the nodes'
// internal addresses live in, and the pod, service and join ranges of Kube-OVN, which Talos' API
// server (service range) must share. Defaults are Kube-OVN's chart defaults (kubeovn/kube-ovn
// charts/kube-ovn/values.yaml, `ipv4.*`: read at v1.15.8, the keys the v1 chart of v1.16 keeps);
// the address checks are in topology/addresses.ts.
import { z } from "zod";
import type { SettingsNeeds } from "./platform";
import type { ServiceNeeds } from "./services";
import { cidrFault, contains, parseAddress, parseCidr, reservedAddresses } from "./cidr";

/** Kube-OVN's `ipv4.POD_CIDR`, `ipv4.SVC_CIDR` and `ipv4.JOIN_CIDR` defaults. */
export const NETWORK_DEFAULTS = { podCIDR: "10.16.0.0/16", serviceCIDR: "10.96.0.0/12", joinCIDR: "100.64.0.0/16" } as const;

const ipv4Cidr = z.string().superRefine((s, ctx) => {
  const c = parseCidr(s);
  if (!c) {
    ctx.addIssue({
      code: "custom",
      message: "is not a CIDR range (an address with its prefix length and no host bits set). Fix: write it like 10.20.0.0/24",
    });
  } else if (c.family !== 4) {
    // Kube-OVN's chart installs an IPv4 pod network unless told otherwise, and we never tell it
    // (charts/kube-ovn/values.yaml:26 networking.NET_STACK: ipv4 @ chart v1.16.2)
    ctx.addIssue({
      code: "custom",
      message:
        "is an IPv6 range, and the cluster is IPv4 only here (the pod network is installed with NET_STACK: ipv4). Fix: write an IPv4 range such as 10.20.0.0/24",
    });
  }
});

export const networkConfigSchema = z.strictObject({
  /** Where the nodes' internal addresses are: every internalIP must be in it. */
  nodeSubnet: ipv4Cidr.optional(),
  podCIDR: ipv4Cidr.default(NETWORK_DEFAULTS.podCIDR),
  serviceCIDR: ipv4Cidr.default(NETWORK_DEFAULTS.serviceCIDR),
  /** Kube-OVN's join network between the nodes and the pod network. */
  joinCIDR: ipv4Cidr.default(NETWORK_DEFAULTS.joinCIDR),
});

export type NetworkConfig = z.infer<typeof networkConfigSchema>;

/** The stack's ranges, with Kube-OVN's defaults when it sets none. */
export function networkOf(cfg: { network?: NetworkConfig | undefined }): NetworkConfig {
  return cfg.network ?? { ...NETWORK_DEFAULTS };
}

/** A Linux interface name (IFNAMSIZ: 15 characters). */
export const interfaceNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,15}$/, { message: "is not a Linux interface name. Fix: write the NIC's name, e.g. bond0.30" });

/**
 * An address of `cidr` a pod may hold: inside it, neither its network nor its broadcast address.
 * What is wrong with `text` as one, or undefined.
 */
function hostAddressFault(text: string, cidr: string): string | undefined {
  const c = parseCidr(cidr);
  const a = parseAddress(text);
  if (!a || a.family !== 4) return `is not an IPv4 address. Fix: write one such as ${cidr.replace(/0\/\d+$/, "1")}`;
  if (!c) return undefined; // the cidr's own issue is reported at cidr
  if (!contains(c, a)) return `is outside the network's cidr ${cidr}. Fix: write an address of ${cidr}, or correct cidr`;
  if (reservedAddresses(c).includes(a.value))
    return `is the network or broadcast address of ${cidr}, which no host can have. Fix: write a host address of ${cidr}`;
  return undefined;
}

/** A network in CIDR notation, `10.50.0.0/24` or `fd00:50::/64`, without host bits. */
export const networkCidrSchema = z.string().superRefine((value, ctx) => {
  const fault = cidrFault(value);
  if (fault === "notation") {
    ctx.addIssue({ code: "custom", message: "is not a network in CIDR notation. Fix: write the network's address and prefix length, e.g. 10.50.0.0/24" });
  } else if (fault === "host-bits") {
    ctx.addIssue({
      code: "custom",
      message: "has host bits set past its prefix length, so it names an address, not a network. Fix: write the network address of that prefix",
    });
  }
});

/**
 * A secondary network of pods (§ 1.3 Longhorn's storage network, § 1.4 the bare-metal provisioning
 * VLAN): one host interface of the same name on every node whose pods attach, a macvlan (bridge)
 * or ipvlan (l2) child of it in each pod through a Multus NetworkAttachmentDefinition, and the
 * addresses from Kube-OVN's IPAM (a Subnet whose provider is the attachment), unique across nodes.
 */
export const attachmentNetworkSchema = z
  .strictObject({
    /** The network's range; Kube-OVN hands its pods addresses from it. */
    cidr: ipv4Cidr,
    /** The host NIC (or VLAN interface) on that network, e.g. `bond0.50`: Multus' `master`. */
    interface: interfaceNameSchema,
    /**
     * macvlan gives each pod a MAC of its own on the host's interface; ipvlan shares the NIC's MAC
     * (for switch ports that allow one MAC). The plugin must be on every node whose pods attach: the
     * host contract refuses one that is not (placement/host.ts). Kube-OVN installs macvlan on every
     * node, and Talos ships no ipvlan (siderolabs/talos#10549), so macvlan is the default.
     */
    type: z.enum(["ipvlan", "macvlan"]).default("macvlan"),
    /** The router of the network, never handed to a pod (Kube-OVN's Subnet gateway); default: its first address. */
    gateway: z.string().optional(),
    /** Addresses Kube-OVN must not hand out (hosts, switches on the network): `a.b.c.d` or `a.b.c.d..a.b.c.e`. */
    excludeIps: z.array(z.string()).optional(),
  })
  .superRefine((n, ctx) => {
    const at = (path: (string | number)[], message: string) => ctx.addIssue({ code: "custom", path, message });
    if (n.gateway !== undefined) {
      const fault = hostAddressFault(n.gateway, n.cidr);
      if (fault) at(["gateway"], fault);
    }
    (n.excludeIps ?? []).forEach((entry, i) => {
      const [first, last, more] = entry.split("..");
      const fault =
        more === undefined ? (hostAddressFault(first, n.cidr) ?? (last !== undefined ? hostAddressFault(last, n.cidr) : undefined)) : "has more than one '..'";
      if (fault) at(["excludeIps", i], fault.includes("Fix:") ? fault : `${fault}. Fix: write an address, or a range first..last, of ${n.cidr}`);
      else if (last !== undefined && parseAddress(first)!.value > parseAddress(last)!.value)
        at(["excludeIps", i], `starts after it ends. Fix: write the lower address first, e.g. ${last}..${first}`);
    });
  });

export type AttachmentNetwork = z.infer<typeof attachmentNetworkSchema>;

/**
 * The secondary networks a stack sets, with the key each is set at (the address checks,
 * topology/addresses.ts): those among the platform components' settings and the services' own keys
 * that their modules declare (`attachmentNetworks`, carried by the loaded config's catalogs), which
 * the loader has read with this schema: read back here as what they are.
 */
export function attachmentNetworksOf(cfg: {
  platform: Readonly<Record<string, unknown>>;
  platformCatalog: readonly SettingsNeeds[];
  services: Readonly<Record<string, { readonly [key: string]: unknown } | undefined>>;
  serviceCatalog: readonly Pick<ServiceNeeds, "name" | "attachmentNetworks">[];
}): { key: string; what: string; network: AttachmentNetwork }[] {
  const declared = (path: string, block: unknown, networks: readonly { key: string; what: string }[] | undefined) =>
    (networks ?? []).flatMap(({ key, what }) => {
      const network = (block as Readonly<Record<string, unknown>> | undefined)?.[key];
      return network !== undefined ? [{ key: `${path}.${key}`, what, network: attachmentNetworkSchema.parse(network) }] : [];
    });
  return [
    ...cfg.platformCatalog.flatMap((c) => declared(`openkeel:platform.${c.key}`, cfg.platform[c.key], c.attachmentNetworks)),
    ...cfg.serviceCatalog.flatMap((s) => declared(`openkeel:services.${s.name}`, cfg.services[s.name], s.attachmentNetworks)),
  ];
}
