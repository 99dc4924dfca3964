// The `openkeel:platform` key: settings of the platform components (Longhorn, Kube-OVN, Medik8s,
// the lab's real backends). Its own schema, plugged into the stack config by config/schema.ts.
// Settings that depend on the rest of the stack (the environment, the inventory) are checked by
// the platform components themselves (their descriptors' checks in platform/), as plan checks.
import { z } from "zod";
import { parseAddress, parseCidr } from "./cidr";
import { attachmentNetworkSchema, interfaceNameSchema } from "./network";

/** Go durations as NodeHealthCheck accepts them, e.g. `300s`, `5m`, `1h30m`. */
export const GO_DURATION = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;

/** NodeHealthCheck `maxUnhealthy`: a number of nodes (≥ 1) or a percentage (1%–100%). */
const MAX_UNHEALTHY_FIX = "Fix: write a number of nodes such as 1, or a percentage such as 34%";
export const maxUnhealthySchema = z.union(
  [
    z
      .number()
      .int()
      .min(1, { message: `must be at least 1 (0 would block every remediation). ${MAX_UNHEALTHY_FIX}` }),
    z.string().regex(/^([1-9][0-9]?|100)%$/, { message: `is not a percentage between 1% and 100%. ${MAX_UNHEALTHY_FIX}` }),
  ],
  { error: `must be a number of nodes or a percentage. ${MAX_UNHEALTHY_FIX}` },
);

/** A MetalLB pool entry (IPAddressPool spec.addresses): an IPv4 CIDR, or a range `first-last`. */
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

export const DEFAULT_UNHEALTHY_DURATION = "300s";
export const DEFAULT_MAX_UNHEALTHY = 1;

export const platformConfigSchema = z
  .strictObject({
    /** kind lab only: install KubeVirt (emulation), CDI, Longhorn and the snapshot stack. */
    realBackends: z.boolean().optional(),
    longhorn: z
      .strictObject({
        /** Replicas of the VM and volume disks (class `longhorn-vm` and the chart's `longhorn`). */
        volumeReplicas: z.number().int().min(1).max(20).optional(),
        /**
         * § 1.3, § 5.3: the dedicated storage network, Longhorn's `storage-network` setting (replica
         * and engine traffic off the pod network). Set at install: changing it later needs every
         * volume detached (Longhorn 1.12 settings).
         */
        storageNetwork: attachmentNetworkSchema.optional(),
      })
      .prefault({}),
    kubeOvn: z
      .strictObject({
        /** Node names that run Kube-OVN's ovn-central (RAFT): controlPlane nodes, an odd number. */
        masterNodes: z.array(z.string().min(1)).min(1).optional(),
      })
      .prefault({}),
    /**
     * MetalLB (production): the public ingress VIP (D8). The pool's addresses, and the host
     * interfaces of the controlPlane and network nodes they are announced from (L2).
     */
    metallb: z
      .strictObject({
        addresses: z.array(poolAddresses).min(1),
        interfaces: z.array(interfaceNameSchema).min(1),
        /**
         * The VIP's own network (its prefix and its router): replies from a VIP leave through it
         * (a routing table and rule on every node with one of the interfaces), not through the
         * node's default route (metallb/metallb#319). Required in production where the
         * interfaces are not the nodes' own link (platform/metallb.ts).
         */
        vipNetwork: z
          .strictObject({
            cidr: z
              .string()
              .refine((s) => parseCidr(s)?.family === 4, { message: "is not an IPv4 range. Fix: write the VIP VLAN's prefix, e.g. 203.0.113.0/24" }),
            gateway: z
              .string()
              .refine((s) => parseAddress(s)?.family === 4, { message: "is not an IPv4 address. Fix: write the VIP VLAN's router, e.g. 203.0.113.1" }),
          })
          .optional(),
      })
      .optional(),
    medik8s: z
      .strictObject({
        /** How long Ready=False/Unknown must last before a node is remediated. */
        unhealthyDuration: z
          .string()
          .regex(GO_DURATION, { message: "is not a duration. Fix: write a Go duration such as 300s or 5m" })
          .default(DEFAULT_UNHEALTHY_DURATION),
        /** maxUnhealthy of the NodeHealthChecks of these roles (the control planes' is always 1). */
        maxUnhealthy: z
          .strictObject({
            network: maxUnhealthySchema.default(DEFAULT_MAX_UNHEALTHY),
            storage: maxUnhealthySchema.default(DEFAULT_MAX_UNHEALTHY),
            compute: maxUnhealthySchema.default(DEFAULT_MAX_UNHEALTHY),
            containers: maxUnhealthySchema.default(DEFAULT_MAX_UNHEALTHY),
            provisioning: maxUnhealthySchema.default(DEFAULT_MAX_UNHEALTHY),
          })
          .prefault({}),
      })
      .optional(),
  })
  .prefault({});

export type PlatformConfig = z.infer<typeof platformConfigSchema>;

/** The Medik8s settings of a stack that sets none: the schema's defaults. */
export const MEDIK8S_DEFAULTS: NonNullable<PlatformConfig["medik8s"]> = platformConfigSchema.unwrap().shape.medik8s.unwrap().parse({});
