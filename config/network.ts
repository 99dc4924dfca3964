// `openkeel:network`: the address ranges of a production cluster. The node subnet the nodes'
// internal addresses live in, and the pod, service and join ranges of Kube-OVN, which Talos' API
// server (service range) must share. Defaults are Kube-OVN's chart defaults (kubeovn/kube-ovn
// charts/kube-ovn/values.yaml, `ipv4.*`: read at v1.15.8, the keys the v1 chart of v1.16 keeps);
// the address checks are in topology/addresses.ts.
import { z } from "zod";
import { parseCidr } from "./cidr";

/** Kube-OVN's `ipv4.POD_CIDR`, `ipv4.SVC_CIDR` and `ipv4.JOIN_CIDR` defaults. */
export const KUBE_OVN_DEFAULTS = { podCIDR: "10.16.0.0/16", serviceCIDR: "10.96.0.0/12", joinCIDR: "100.64.0.0/16" } as const;

const ipv4Cidr = z.string().superRefine((s, ctx) => {
  const c = parseCidr(s);
  if (!c) {
    ctx.addIssue({
      code: "custom",
      message: "is not a CIDR range (an address with its prefix length and no host bits set). Fix: write it like 10.20.0.0/24",
    });
  } else if (c.family !== 4) {
    ctx.addIssue({
      code: "custom",
      message: "is an IPv6 range, and the cluster is IPv4 only here (Kube-OVN's NET_STACK: ipv4). Fix: write an IPv4 range such as 10.20.0.0/24",
    });
  }
});

export const networkConfigSchema = z.strictObject({
  /** Where the nodes' internal addresses are: every internalIP must be in it. */
  nodeSubnet: ipv4Cidr.optional(),
  podCIDR: ipv4Cidr.default(KUBE_OVN_DEFAULTS.podCIDR),
  serviceCIDR: ipv4Cidr.default(KUBE_OVN_DEFAULTS.serviceCIDR),
  /** Kube-OVN's join network between the nodes and the pod network. */
  joinCIDR: ipv4Cidr.default(KUBE_OVN_DEFAULTS.joinCIDR),
});

export type NetworkConfig = z.infer<typeof networkConfigSchema>;

/** The stack's ranges, with Kube-OVN's defaults when it sets none. */
export function networkOf(cfg: { network?: NetworkConfig }): NetworkConfig {
  return cfg.network ?? { ...KUBE_OVN_DEFAULTS };
}
