// MetalLB's block of `openkeel:platform` (stacks/README.md), declared to the stack loader by its
// descriptor (platform/metallb.ts) and read back by its module and the Talos machine configs
// (nodes/talos-network.ts: the VIP's return route).
import { z } from "zod";
import { parseAddress, parseCidr } from "../config/cidr";
import { interfaceNameSchema } from "../config/network";
import type { PlatformConfig, SettingsDeclaration } from "../config/platform";
import { settingsOf } from "./component";

/** A pool entry (IPAddressPool spec.addresses): an IPv4 CIDR, or a range `first-last`. */
const poolAddresses = z.string().refine(
  (s) => {
    const c = parseCidr(s);
    if (c) return c.family === 4;
    const [first, last, more] = s.split("-").map((x) => x.trim());
    const a = first !== undefined ? parseAddress(first) : undefined;
    const b = last !== undefined ? parseAddress(last) : undefined;
    return more === undefined && a?.family === 4 && b?.family === 4 && a.value <= b.value;
  },
  { message: "is not an IPv4 range. Fix: write a CIDR such as 10.30.0.240/28, or a range first-last such as 10.30.0.240-10.30.0.250" },
);

/**
 * Production: the public ingress VIP (D8). The pool's addresses, and the host interfaces of the
 * controlPlane and network nodes they are announced from (L2). No block: no MetalLB pool.
 */
const schema = z
  .strictObject({
    addresses: z.array(poolAddresses).min(1),
    interfaces: z.array(interfaceNameSchema).min(1),
    /**
     * The VIP's own network (its prefix and its router): replies from a VIP leave through it (a
     * routing table and rule on every node with one of the interfaces), not through the node's
     * default route (metallb/metallb#319). Required in production where the interfaces are not
     * the nodes' own link (platform/metallb.ts).
     */
    vipNetwork: z
      .strictObject({
        cidr: z.string().refine((s) => parseCidr(s)?.family === 4, { message: "is not an IPv4 range. Fix: write the VIP VLAN's prefix, e.g. 203.0.113.0/24" }),
        gateway: z
          .string()
          .refine((s) => parseAddress(s)?.family === 4, { message: "is not an IPv4 address. Fix: write the VIP VLAN's router, e.g. 203.0.113.1" }),
      })
      .optional(),
  })
  .optional();

export const METALLB_SETTINGS = { key: "metallb", schema } as const satisfies SettingsDeclaration;

export type MetallbSettings = NonNullable<z.output<typeof schema>>;

/** The stack's MetalLB block; undefined: no pool. */
export const metallbSettings = (platform: PlatformConfig): MetallbSettings | undefined => settingsOf(platform, METALLB_SETTINGS);
