// The placement rules of the OpenKeel chart helper `openkeel.placement` (§ 5.1, § 5.2), written once:
// what a chart renders for a component from its `placement` value and the role definitions of
// `global.nodeRoles`. OpenKeel releases are read through it (openkeel/workloads.ts) and platform
// components place their pods with it, so both follow the same rules. The policy pack keeps its
// own reading on purpose (policy/rules/placement.ts); test/policy/oracles.test.ts proves they agree.
import type { PlacementValue } from "../config/placement";
import { roleDefinitions, type LabelProfile, type Role, type RoleDefinition, type Taint, type Toleration } from "../config/roles";

export interface NodeSelectorRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt";
  values?: string[] | undefined;
}
export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[] | undefined;
  matchFields?: NodeSelectorRequirement[] | undefined;
}
export interface Affinity {
  nodeAffinity?:
    | {
        requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] } | undefined;
        preferredDuringSchedulingIgnoredDuringExecution?: unknown[] | undefined;
      }
    | undefined;
  podAffinity?: Record<string, unknown> | undefined;
  podAntiAffinity?: Record<string, unknown> | undefined;
}

/** Pod scheduling fields as Kubernetes reads them (an absent field and an undefined one are the same). */
export interface Scheduling {
  nodeSelector?: Record<string, string> | undefined;
  affinity?: Affinity | undefined;
  tolerations: Toleration[];
  topologySpreadConstraints?: Record<string, unknown>[] | undefined;
  priorityClassName?: string | undefined;
}

/** Role definitions as a release's values may pass them: any of them may be missing or partial. */
export type RoleDefinitions = Partial<Record<Role, Partial<RoleDefinition>>>;

export interface PlacementContext {
  /** The role definitions the chart reads (`global.nodeRoles.roles`). */
  roles?: RoleDefinitions;
  /** Or those of a label profile, when the caller renders for one (platform components). */
  profile?: LabelProfile;
  /** The chart's default role, used when the placement names none. */
  defaultRole?: Role;
  priorityClassName?: string;
}

/** The roles a placement selects: `roles`, else `role`, else the default role. */
export function placementRoles(p: PlacementValue | undefined, defaultRole?: Role): Role[] {
  if (p?.roles && p.roles.length > 0) return [...p.roles];
  if (p?.role) return [p.role];
  return defaultRole ? [defaultRole] : [];
}

/** A toleration's identity as Kubernetes reads it (an absent operator is Equal). */
export function tolerationId(t: Toleration): string {
  return JSON.stringify([t.key ?? "", t.operator ?? "Equal", t.value ?? "", t.effect ?? "", t.tolerationSeconds ?? ""]);
}

function uniqueTolerations(list: Toleration[]): Toleration[] {
  const seen = new Set<string>();
  return list.filter((t) => {
    const id = tolerationId(t);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

const tolerate = (taint: Partial<Taint>): Toleration => ({ key: taint.key, operator: "Exists", effect: taint.effect });

/**
 * What the helper renders. Precedence, highest first: the component's raw fields, then its role(s),
 * then the chart's default role. A role renders its label as a nodeSelector (one role) or one
 * nodeSelectorTerm each (`roles: [a, b]`, ORed), and always its taint's toleration, whether taints
 * are on or not, so tainting nodes later needs no redeploy. A role the definitions lack (no
 * `global.nodeRoles` at all: a chart installed alone) renders nothing.
 */
export function resolvePlacement(p: PlacementValue | undefined, ctx: PlacementContext): Scheduling {
  const defs: RoleDefinitions = ctx.roles ?? (ctx.profile ? roleDefinitions(ctx.profile) : {});
  const roles = placementRoles(p, ctx.defaultRole);
  const labels = roles.map((r) => defs[r]?.label).filter((l): l is string => typeof l === "string" && l !== "");
  const out: Scheduling = { tolerations: [] };

  if (p?.nodeSelector) out.nodeSelector = { ...p.nodeSelector };
  else if (roles.length === 1 && labels.length === 1) out.nodeSelector = { [labels[0]]: "" };

  if (p?.affinity) out.affinity = p.affinity;
  else if (roles.length > 1 && labels.length > 0) {
    out.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: labels.map((key) => ({ matchExpressions: [{ key, operator: "Exists" }] })),
        },
      },
    };
  }

  const base = p?.tolerations ?? roles.flatMap((r) => (defs[r]?.taint ? [tolerate(defs[r]!.taint!)] : []));
  out.tolerations = uniqueTolerations([...base, ...(p?.extraTolerations ?? [])]);

  if (p?.topologySpreadConstraints) out.topologySpreadConstraints = p.topologySpreadConstraints;
  const priority = p?.priorityClassName ?? ctx.priorityClassName;
  if (priority !== undefined) out.priorityClassName = priority;
  return out;
}
