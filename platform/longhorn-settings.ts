// Longhorn's block of `openkeel:platform` (stacks/README.md), declared to the stack loader by its
// descriptor (platform/longhorn.ts) and read back by its module.
import { z } from "zod";
import { attachmentNetworkSchema } from "../config/network";
import type { PlatformConfig, SettingsDeclaration } from "../config/platform";
import { settingsOf } from "./component";

const schema = z
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
  .prefault({});

export const LONGHORN_SETTINGS = {
  key: "longhorn",
  schema,
  attachmentNetworks: [{ key: "storageNetwork", what: "Longhorn's storage network" }],
} as const satisfies SettingsDeclaration;

export const longhornSettings = (platform: PlatformConfig) => settingsOf(platform, LONGHORN_SETTINGS);
