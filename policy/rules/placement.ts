// Where a component of an OpenKeel chart lands, read from its values the way the chart helper
// `openkeel.placement` renders it (§ 5.1, § 5.2): the role labels come from `global.nodeRoles`
// (no `global.nodeRoles` → the helper renders no selector at all), raw fields win over roles.
//
// An independent copy on purpose: the pack judges what the engine hands it (a release's values)
// without the code that wrote them, so a bug in placement/chart-helper.ts cannot hide itself from
// the pack. test/policy/oracles.test.ts proves the two readings agree.
import { roleOfLabelKey, ROLES, roleTaint, type Role } from "../../config/roles";
import { get, isObject, type Tree } from "./common";

export interface EffectivePlacement {
  /** Node-selection alternatives (OR); each lists the roles a node must carry (AND). Empty: anywhere. */
  terms: Set<Role>[];
  /** Label keys that select on something else than a role (zone, hostname…), for messages. */
  otherKeys: string[];
  tolerationKeys: string[];
  requiredHostAntiAffinity: boolean;
  /** The chart has no role definitions, so role names render nothing. */
  rolesUndefined: boolean;
}

/** `global.nodeRoles.roles.<role>.label` of a release's values. */
function roleLabels(values: Tree): Partial<Record<Role, string>> {
  const roles = get(values, ["global", "nodeRoles", "roles"]);
  const out: Partial<Record<Role, string>> = {};
  if (!isObject(roles)) return out;
  for (const role of ROLES) {
    const label = get(roles, [role, "label"]);
    if (typeof label === "string" && label !== "") out[role] = label;
  }
  return out;
}

function roleTaintKey(values: Tree, role: Role): string | undefined {
  const key = get(values, ["global", "nodeRoles", "roles", role, "taint", "key"]);
  return typeof key === "string" ? key : undefined;
}

function asRoles(v: unknown): Role[] {
  const list = Array.isArray(v) ? v : typeof v === "string" ? [v] : [];
  return list.filter((x): x is Role => (ROLES as readonly string[]).includes(x as string));
}

function keysToRoles(keys: string[], labels: Partial<Record<Role, string>>, other: Set<string>): Set<Role> {
  const roles = new Set<Role>();
  for (const key of keys) {
    const byValues = (Object.entries(labels) as [Role, string][]).find(([, l]) => l === key)?.[0];
    const role = byValues ?? roleOfLabelKey(key)?.role;
    if (role) roles.add(role);
    else other.add(key);
  }
  return roles;
}

function selectingKeys(term: unknown): string[] {
  const exprs = get(term, ["matchExpressions"]);
  if (!Array.isArray(exprs)) return [];
  return exprs.filter((e) => isObject(e) && typeof e.key === "string" && (e.operator === "Exists" || e.operator === "In")).map((e) => e.key as string);
}

/**
 * The placement of one component. `placement` is the component's `placement` value; `values` the
 * release's values (for `global.nodeRoles`); `defaultRole` the chart's default for the component.
 */
export function effectivePlacement(placement: unknown, values: Tree, defaultRole?: Role): EffectivePlacement {
  const p: Tree = isObject(placement) ? placement : {};
  const labels = roleLabels(values);
  const rolesUndefined = Object.keys(labels).length === 0;
  const roles = asRoles(p.roles).length > 0 ? asRoles(p.roles) : asRoles(p.role).length > 0 ? asRoles(p.role) : defaultRole ? [defaultRole] : [];
  const other = new Set<string>();

  let selector: string[] = [];
  if (isObject(p.nodeSelector)) selector = Object.keys(p.nodeSelector);
  else if (roles.length === 1 && labels[roles[0]]) selector = [labels[roles[0]]!];

  let termKeys: string[][] = [];
  const rawTerms = get(p.affinity, ["nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"]);
  if (isObject(p.affinity)) {
    if (Array.isArray(rawTerms)) termKeys = rawTerms.map(selectingKeys);
  } else if (roles.length > 1) {
    termKeys = roles.filter((r) => labels[r]).map((r) => [labels[r]!]);
  }

  let terms: Set<Role>[];
  if (termKeys.length > 0) terms = termKeys.map((keys) => keysToRoles([...keys, ...selector], labels, other));
  else if (selector.length > 0) terms = [keysToRoles(selector, labels, other)];
  else terms = [];

  const tolerations = Array.isArray(p.tolerations)
    ? p.tolerations
    : roles.map((r) => ({ key: roleTaintKey(values, r) ?? (rolesUndefined ? undefined : roleTaint(r).key) }));
  const extra = Array.isArray(p.extraTolerations) ? p.extraTolerations : [];
  const tolerationKeys = [...tolerations, ...extra]
    .map((t: unknown) => (isObject(t) && typeof t.key === "string" ? t.key : undefined))
    .filter((k): k is string => k !== undefined);

  const rawAnti = get(p.affinity, ["podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"]);
  // no chart reads `antiAffinity` (§ 5.2): only a pod spec's own term counts (a release's post-render patch)
  const requiredHostAntiAffinity = Array.isArray(rawAnti) && rawAnti.some((t) => isObject(t) && t.topologyKey === "kubernetes.io/hostname");

  return { terms, otherKeys: [...other].sort(), tolerationKeys, requiredHostAntiAffinity, rolesUndefined };
}

/** Runs only on nodes of `role`: every alternative requires it. */
export function onlyOn(p: EffectivePlacement, role: Role): boolean {
  return p.terms.length > 0 && p.terms.every((t) => t.has(role));
}

/**
 * Reaches each `required` role through an alternative of its own (`roles: [a, b]` renders one
 * nodeSelectorTerm per role, OR), and every alternative requires one of the `allowed` roles.
 */
export function covers(p: EffectivePlacement, required: Role[], allowed: Role[] = required): boolean {
  if (p.terms.length === 0) return false;
  const everyTermAllowed = p.terms.every((t) => allowed.some((r) => t.has(r)));
  const eachReachable = required.every((r) => p.terms.some((t) => t.has(r) && [...t].every((x) => x === r)));
  return everyTermAllowed && eachReachable;
}

export function describePlacement(p: EffectivePlacement): string {
  if (p.rolesUndefined && p.terms.length === 0) return "no node selection (the values define no global.nodeRoles, so role names render nothing)";
  if (p.terms.length === 0) return "no node selection (any node)";
  return p.terms.map((t) => (t.size === 0 ? "any node" : [...t].join(" AND "))).join(" OR ");
}
