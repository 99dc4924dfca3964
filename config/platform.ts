// The `openkeel:platform` key: the lab's `realBackends`, and one block per platform component that
// has settings. Each block's schema is its component's own (the `settings` of its descriptor,
// platform/<module>.ts), handed to the loader beside the services' declarations (config/load.ts), so
// this layer names no component. Settings that depend on the rest of the stack (the environment,
// the inventory) are checked by the components themselves (their descriptors' checks), as plan
// checks. Here: the shapes several components' settings share.
import { z } from "zod";

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

/** A platform component's block of `openkeel:platform`, as its module declares it to the loader. */
export interface SettingsDeclaration {
  /** Its key of `openkeel:platform`, e.g. `longhorn`. */
  key: string;
  /**
   * The block's schema: `.prefault({})` where every key has a default, `.optional()` where the
   * block being there means something (a pool to announce).
   */
  schema: z.ZodType;
  /**
   * Its keys that are secondary networks of pods (attachmentNetworkSchema, config/network.ts), with
   * what each is: the address checks hold them apart from the cluster's ranges (topology/addresses.ts).
   * @default none
   */
  attachmentNetworks?: readonly { key: string; what: string }[];
}

/** What the layers below platform/ read of the declarations, which the loaded config carries. */
export type SettingsNeeds = Pick<SettingsDeclaration, "key" | "attachmentNetworks">;

export function settingsCatalog(declarations: readonly SettingsDeclaration[]): SettingsNeeds[] {
  return declarations.map((d) => ({ key: d.key, ...(d.attachmentNetworks ? { attachmentNetworks: d.attachmentNetworks } : {}) }));
}

/** `openkeel:platform`: realBackends, and a block per declared component; any other key is refused. */
export function platformConfigSchema(declarations: readonly SettingsDeclaration[]) {
  return z
    .strictObject({
      /** kind lab only: install KubeVirt (emulation), CDI, Longhorn and the snapshot stack. */
      realBackends: z.boolean().optional(),
      ...Object.fromEntries(declarations.map((d) => [d.key, d.schema])),
    })
    .prefault({});
}

/** `openkeel:platform` as loaded: each block is what its component's schema gave (its module reads it: settingsOf, platform/component.ts). */
export type PlatformConfig = { realBackends?: boolean | undefined } & { readonly [key: string]: unknown };
