// Medik8s' block of `openkeel:platform` (stacks/README.md), declared to the stack loader by its
// descriptor (platform/medik8s.ts) and read back by its modules.
import { z } from "zod";
import { GO_DURATION, maxUnhealthySchema, type PlatformConfig, type SettingsDeclaration } from "../config/platform";
import { settingsOf } from "./component";

const DEFAULT_UNHEALTHY_DURATION = "300s";
const DEFAULT_MAX_UNHEALTHY = 1;

const block = z.strictObject({
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
});

export const MEDIK8S_SETTINGS = { key: "medik8s", schema: block.optional() } as const satisfies SettingsDeclaration;

export type Medik8sSettings = z.output<typeof block>;

/** The Medik8s settings of a stack that sets none: the schema's defaults. */
export const MEDIK8S_DEFAULTS: Medik8sSettings = block.parse({});

/** The stack's Medik8s settings, its defaults where it sets none. */
export const medik8sSettings = (platform: PlatformConfig): Medik8sSettings => settingsOf(platform, MEDIK8S_SETTINGS) ?? MEDIK8S_DEFAULTS;
