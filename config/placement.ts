// A component's `placement` value (§ 5.1), written once: a role or roles, the design's anti-affinity,
// extraTolerations, the raw fields that win over the role (§ 5.1 precedence), and `enabled` for the
// optional node agents (metadataAgent, bgpAgent, …). Two places hold values to it: the stack file's
// `openkeel:services.<service>.placement.<component>` (./schema.ts) and the values contract of every
// OpenKeel release (openkeel/contract.ts), which judges the final values, stack overrides included.
import { z } from "zod";
import { ROLES } from "./roles";
import { affinitySchema, nodeSelectorSchema, tolerationSchema, topologySpreadConstraintSchema } from "./k8s";

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

const roleFields = {
  role: z.enum(ROLES).optional(),
  roles: z.array(z.enum(ROLES)).min(1).optional(),
};

/**
 * The design's anti-affinity, set by the services' descriptors (one quorum member per node, § 2.1). On the zone
 * key (`global.placementDefaults.zoneKey`) beside the host one: one member per zone (§ 6.3, the
 * large topology's quorum members), our contract for the chart (docs/openkeel-values.md).
 */
const designFields = {
  antiAffinity: z.enum(["required", "preferred"]).optional(),
  zoneAntiAffinity: z.enum(["required", "preferred"]).optional(),
};

const rawFields = {
  extraTolerations: z.array(tolerationSchema).optional(),
  nodeSelector: nodeSelectorSchema.optional(),
  tolerations: z.array(tolerationSchema).optional(),
  affinity: affinitySchema.optional(),
  topologySpreadConstraints: z.array(topologySpreadConstraintSchema).optional(),
  priorityClassName: z.string().min(1).optional(),
};

/**
 * The raw fields as a stack file writes them: their shape only. The values contract checks them
 * field by field once merged into the release's values, where it can say at which level a field
 * belongs (a nodeSelectorTerms one level too high) rather than only that a key is unknown.
 */
const stackRawFields = {
  extraTolerations: z.array(z.record(z.string(), z.unknown())).optional(),
  nodeSelector: z.record(z.string(), z.string()).optional(),
  tolerations: z.array(z.record(z.string(), z.unknown())).optional(),
  affinity: z.record(z.string(), z.unknown()).optional(),
  topologySpreadConstraints: z.array(z.record(z.string(), z.unknown())).optional(),
  priorityClassName: z.string().optional(),
};

/** role and roles at once: the chart reads only one of them. */
function oneRoleField(p: { role?: unknown; roles?: unknown }, ctx: z.RefinementCtx): void {
  if (p.role !== undefined && p.roles !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["roles"],
      message:
        "role and roles are both set, and the chart would use only one. Fix: keep roles: [a, b] for several roles, or role: for one (in raw values, roles: null drops a default role list)",
    });
  }
}

/** A stack's `placement.<component>`: roles and raw fields (anti-affinity is the design's, ./schema.ts). */
export const stackPlacementSchema = z.strictObject({ ...roleFields, ...stackRawFields }).superRefine(oneRoleField);
export type StackPlacement = z.infer<typeof stackPlacementSchema>;

const valueFields = { ...roleFields, ...designFields, ...rawFields };
const placementValue = z.strictObject(valueFields).superRefine(oneRoleField);
/** An optional component's placement says whether it runs. */
const switchablePlacementValue = z.strictObject({ ...valueFields, enabled: z.boolean() }).superRefine(oneRoleField);

/** The contract of a placement value in a release's values; `switchable`: the component's `enabled` is part of it. */
export function placementValueSchema(switchable: boolean) {
  return switchable ? switchablePlacementValue : placementValue;
}

/** A placement value as the charts read it, and as the chart helper renders it (placement/chart-helper.ts). */
export type PlacementValue = z.infer<typeof placementValue> & { enabled?: boolean };
