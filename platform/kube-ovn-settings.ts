// Kube-OVN's block of `openkeel:platform` (stacks/README.md), declared to the stack loader by its
// descriptor (platform/kube-ovn.ts) and read back by its module.
import { z } from "zod";
import type { PlatformConfig, SettingsDeclaration } from "../config/platform";
import { settingsOf } from "./component";

const schema = z
  .strictObject({
    /** Node names that run Kube-OVN's ovn-central (RAFT): controlPlane nodes, an odd number. */
    masterNodes: z.array(z.string().min(1)).min(1).optional(),
  })
  .prefault({});

export const KUBE_OVN_SETTINGS = { key: "kubeOvn", schema } as const satisfies SettingsDeclaration;

export const kubeOvnSettings = (platform: PlatformConfig) => settingsOf(platform, KUBE_OVN_SETTINGS);
