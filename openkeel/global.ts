// `global` of every OpenKeel release (§ 5.1): the role definitions (global.nodeRoles) and the
// placement defaults. Production passes the hardened label keys exactly as okadm does (§ 5.2, D1);
// a stack whose roles are optional (a lab) passes them only when its nodes carry roles (role labels are optional in a lab, and a
// chart installed without global.nodeRoles places nothing by role).
import { z } from "zod";
import { ROLES, roleLabelKey, roleTaint, ZONE_LABEL, type LabelProfile, type Role, type Taint } from "../config/roles";
import { roleLabelsInUse, type Topology } from "../topology/topology";
import { labelKey } from "../config/k8s";
import { PRIORITY_CLASSES } from "../platform/priority-classes";

interface RoleDefinition {
  label: string;
  taint: Taint;
}

interface NodeRolesValue {
  /** Some role taints its nodes; the charts tolerate their role either way (§ 5.2). */
  taints: boolean;
  roles: Record<Role, RoleDefinition>;
}

interface PlacementDefaultsValue {
  zoneKey: string;
  zoneSpread: "ScheduleAnyway" | "DoNotSchedule";
  hostSpread: "ScheduleAnyway" | "DoNotSchedule";
  priorityClasses: { infra: string; control: string; vm: string };
}

export interface GlobalValue {
  nodeRoles?: NodeRolesValue;
  placementDefaults: PlacementDefaultsValue;
}

function nodeRolesValue(topo: Topology): NodeRolesValue {
  const roles = Object.fromEntries(ROLES.map((r) => [r, { label: roleLabelKey(r, topo.profile), taint: roleTaint(r) }])) as Record<Role, RoleDefinition>;
  return { taints: topo.taintedRoles.length > 0, roles };
}

export function globalValue(topo: Topology): GlobalValue {
  return {
    ...(roleLabelsInUse(topo) ? { nodeRoles: nodeRolesValue(topo) } : {}),
    placementDefaults: {
      zoneKey: ZONE_LABEL,
      zoneSpread: "ScheduleAnyway",
      // The charts relax it to ScheduleAnyway when replicas exceed the nodes of the role (§ 2).
      hostSpread: "DoNotSchedule",
      priorityClasses: { ...PRIORITY_CLASSES },
    },
  };
}

const spread = z.enum(["ScheduleAnyway", "DoNotSchedule"]);

/**
 * The contract of `global`. Role labels must be the stack profile's keys: the node-roles phase
 * labels nodes with exactly those, so any other key would select no node at all (and in production
 * a default key is one a kubelet could set on itself, D1).
 */
export function globalSchema(profile: LabelProfile) {
  const roleDefinition = (role: Role) =>
    z.strictObject({
      label: labelKey.refine((k) => k === roleLabelKey(role, profile), {
        message: `is not the ${role} label of this stack's '${profile}' profile (${roleLabelKey(role, profile)}), which the node-roles phase puts on the nodes: the chart would select no node. Fix: remove the override, or change openkeel:labelProfile`,
      }),
      taint: z.strictObject({
        key: labelKey,
        value: z.string().optional(),
        effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]),
      }),
    });
  return z.strictObject({
    nodeRoles: z
      .strictObject({
        taints: z.boolean(),
        roles: z.strictObject(Object.fromEntries(ROLES.map((r) => [r, roleDefinition(r)])) as Record<Role, ReturnType<typeof roleDefinition>>),
      })
      .optional(),
    placementDefaults: z.strictObject({
      zoneKey: labelKey,
      zoneSpread: spread,
      hostSpread: spread,
      priorityClasses: z.strictObject({ infra: z.string().min(1), control: z.string().min(1), vm: z.string().min(1) }),
    }),
  });
}
