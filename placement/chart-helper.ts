// The placement engine: what the `openkeel.placement` chart helper (§ 5.2) renders for a component,
// computed here too, so that platform components get the same scheduling and reports can reason
// about OpenKeel components without running Helm.
import { HOSTNAME_LABEL, roleLabelKey, roleToleration, type LabelProfile, type Role, type Toleration } from "../config/roles";

export interface NodeSelectorRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt";
  values?: string[];
}
export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}
export interface Affinity {
  nodeAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] };
    preferredDuringSchedulingIgnoredDuringExecution?: unknown[];
  };
  podAffinity?: Record<string, unknown>;
  podAntiAffinity?: Record<string, unknown>;
}

/** A component's `placement` value (§ 5.1): a role or roles, plus raw fields that win. */
export interface Placement {
  role?: Role;
  roles?: Role[];
  extraTolerations?: Toleration[];
  antiAffinity?: "required" | "preferred";
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  affinity?: Affinity;
  topologySpreadConstraints?: Record<string, unknown>[];
  priorityClassName?: string;
}

/** Pod scheduling fields as Kubernetes reads them. */
export interface Scheduling {
  nodeSelector?: Record<string, string>;
  affinity?: Affinity;
  tolerations: Toleration[];
  topologySpreadConstraints?: Record<string, unknown>[];
  priorityClassName?: string;
}

export interface PlacementContext {
  profile: LabelProfile;
  /** The chart's default role, used when the placement names none. */
  defaultRole?: Role;
  priorityClassName?: string;
}

/** The roles a placement selects: `roles`, else `role`, else the default role. */
export function placementRoles(p: Placement | undefined, defaultRole?: Role): Role[] {
  if (p?.roles && p.roles.length > 0) return [...p.roles];
  if (p?.role) return [p.role];
  return defaultRole ? [defaultRole] : [];
}

/** One nodeSelectorTerm per role: Kubernetes ORs the terms (§ 5.1, `roles: [a, b]`). */
export function rolesNodeAffinity(roles: Role[], profile: LabelProfile): Affinity {
  return {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: roles.map((r) => ({ matchExpressions: [{ key: roleLabelKey(r, profile), operator: "Exists" }] })),
      },
    },
  };
}

export function requiredHostAntiAffinity(matchLabels: Record<string, string>): Affinity {
  return {
    podAntiAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels }, topologyKey: HOSTNAME_LABEL }],
    },
  };
}

function tolerationId(t: Toleration): string {
  return JSON.stringify([t.key ?? "", t.operator ?? "Equal", t.value ?? "", t.effect ?? "", t.tolerationSeconds ?? ""]);
}

export function uniqueTolerations(list: Toleration[]): Toleration[] {
  const seen = new Set<string>();
  return list.filter((t) => {
    const id = tolerationId(t);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/**
 * Resolve a placement the way the chart helper does. Precedence, highest first: the component's
 * raw fields, then its role(s), then the chart's default role. The role tolerations are always
 * rendered, whether taints are on or not, so tainting nodes later needs no redeploy.
 */
export function resolvePlacement(p: Placement | undefined, ctx: PlacementContext): Scheduling {
  const roles = placementRoles(p, ctx.defaultRole);
  const out: Scheduling = { tolerations: [] };

  if (p?.nodeSelector) out.nodeSelector = { ...p.nodeSelector };
  else if (roles.length === 1) out.nodeSelector = { [roleLabelKey(roles[0], ctx.profile)]: "" };

  if (p?.affinity) out.affinity = p.affinity;
  else if (roles.length > 1) out.affinity = rolesNodeAffinity(roles, ctx.profile);

  const base = p?.tolerations ?? roles.map(roleToleration);
  out.tolerations = uniqueTolerations([...base, ...(p?.extraTolerations ?? [])]);

  if (p?.topologySpreadConstraints) out.topologySpreadConstraints = p.topologySpreadConstraints;
  const priority = p?.priorityClassName ?? ctx.priorityClassName;
  if (priority !== undefined) out.priorityClassName = priority;
  return out;
}
