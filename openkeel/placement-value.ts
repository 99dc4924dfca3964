// A component's `placement` value as the charts read it (§ 5.1): a role or roles, the design's
// antiAffinity and extraTolerations, the raw fields that win over the role (§ 5.1 precedence), and
// `enabled` for the optional node agents (metadataAgent, bgpAgent, …).
import { z } from "zod";
import type { PlacementOverrideConfig } from "../config/schema";
import type { Placement } from "../placement/chart-helper";
import { ROLES } from "../config/roles";
import { affinitySchema, nodeSelectorSchema, tolerationSchema, topologySpreadConstraintSchema } from "./k8s";

export interface PlacementValue extends Placement {
  enabled?: boolean;
  /**
   * Anti-affinity on the zone key (`global.placementDefaults.zoneKey`) beside the host one: one
   * member per zone (§ 6.3, the large topology's quorum members). Our contract for the chart, as
   * `antiAffinity` is the design's for the host (docs/openkeel-values.md).
   */
  zoneAntiAffinity?: "required" | "preferred";
}

/** Fields the chart helper turns into pod scheduling; they belong under placement.<component> only. */
export const SCHEDULING_FIELDS = [
  "role",
  "roles",
  "antiAffinity",
  "zoneAntiAffinity",
  "extraTolerations",
  "nodeSelector",
  "tolerations",
  "affinity",
  "topologySpreadConstraints",
  "priorityClassName",
] as const;

export function placementValueSchema(optional: boolean) {
  return z
    .strictObject({
      role: z.enum(ROLES).optional(),
      roles: z.array(z.enum(ROLES)).min(1).optional(),
      antiAffinity: z.enum(["required", "preferred"]).optional(),
      zoneAntiAffinity: z.enum(["required", "preferred"]).optional(),
      extraTolerations: z.array(tolerationSchema).optional(),
      nodeSelector: nodeSelectorSchema.optional(),
      tolerations: z.array(tolerationSchema).optional(),
      affinity: affinitySchema.optional(),
      topologySpreadConstraints: z.array(topologySpreadConstraintSchema).optional(),
      priorityClassName: z.string().min(1).optional(),
      ...(optional ? { enabled: z.boolean() } : {}),
    })
    .superRefine((p, ctx) => {
      if (p.role !== undefined && p.roles !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["roles"],
          message:
            "role and roles are both set, and the chart would use only one. Fix: keep one; to replace a default role list in raw values, set roles: null",
        });
      }
    });
}

/**
 * The stack's `placement.<component>` over the catalog default: a role or roles given by the stack
 * replaces the default role(s); every other field it sets is added (raw fields win in the chart).
 */
export function withStackPlacement(base: PlacementValue, over: PlacementOverrideConfig | undefined): PlacementValue {
  if (!over) return base;
  const out: Record<string, unknown> = { ...base };
  if (over.role !== undefined || over.roles !== undefined) {
    delete out.role;
    delete out.roles;
  }
  for (const [k, v] of Object.entries(over)) if (v !== undefined) out[k] = v;
  return out as PlacementValue;
}
