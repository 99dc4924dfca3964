// The components § 5.2 "What is implemented" does not list as placed by the chart helper (issue
// 22, item 2): Neutron's worker, metadata and BGP agents, Nova's scheduler, Swift, Heat,
// Designate, Manila, EC2 API, Zun, and the infrastructure chart's public ingress. Their charts read
// no `placement.<component>` (the table is all they implement), so they render them with no
// nodeSelector, no tolerations and no priorityClassName: what a chart that reads no key renders.
// The role placement the design gives them (§ 2.2, § 5.1, D4, D8) reaches their pod templates as
// a post-render patch of their release instead (plan/post-render.ts), derived here, once, from the
// same placement value the service's descriptor builds; the placement reader (./workloads.ts) models them from
// the patched template alone. docs/design-decisions.md names what each would be without its patch.
import type { PlacementValue } from "../config/placement";
import type { PostRenderPatch } from "../plan/post-render";
import { placementRoles, resolvePlacement, type RoleDefinitions } from "../placement/chart-helper";
import { isSelfPlaced, type Unlisted } from "./components";
import { obj, type Obj } from "../placement/workloads";
import { INFRASTRUCTURE_CHART, workloadObjectName } from "./names";
import { OPENKEEL_SERVICES } from "./services";

/** The infrastructure chart's public ingress (D8): § 5.2 lists only the quorum members' CRs for it. */
export const INGRESS_UNLISTED: Unlisted = { priority: "control" };

/** By chart: the components its templates render that § 5.2's table does not list (their descriptors' `unlisted`). */
export const UNLISTED_COMPONENTS: Readonly<Record<string, Readonly<Record<string, Unlisted>>>> = {
  [INFRASTRUCTURE_CHART]: { ingress: INGRESS_UNLISTED },
  ...Object.fromEntries(
    OPENKEEL_SERVICES.flatMap((service) => {
      const own = Object.entries(service.components).flatMap(([k, c]) => (!isSelfPlaced(c) && c.unlisted ? [[k, c.unlisted] as const] : []));
      return own.length > 0 ? [[service.chart, Object.fromEntries(own)]] : [];
    }),
  ),
};

export function unlistedComponents(chart: string): string[] {
  return Object.keys(UNLISTED_COMPONENTS[chart] ?? {});
}

export function isUnlisted(chart: string, component: string): boolean {
  return UNLISTED_COMPONENTS[chart]?.[component] !== undefined;
}

/**
 * The patch that gives an unlisted component the scheduling its placement value renders through
 * the helper's rules (placement/chart-helper.ts, with the release's `global.nodeRoles` and
 * priority classes): nodeSelector or node affinity, tolerations, spread, priorityClassName. None
 * when that is nothing (no role definitions and no priority: what the chart renders already).
 */
export function unlistedPlacementPatch(
  chart: string,
  release: string,
  component: string,
  kind: string,
  p: PlacementValue,
  global: Obj,
): PostRenderPatch | undefined {
  const unlisted = UNLISTED_COMPONENTS[chart]?.[component];
  if (unlisted === undefined) throw new Error(`unlisted placement: ${chart} ${component} is placed by its chart (§ 5.2), not by a patch`);
  const roles = obj(obj(global.nodeRoles).roles) as RoleDefinitions;
  const priority = unlisted.priority === "none" ? undefined : obj(obj(global.placementDefaults).priorityClasses)[unlisted.priority];
  const s = resolvePlacement(p, { roles, defaultRole: "controlPlane", ...(typeof priority === "string" ? { priorityClassName: priority } : {}) });
  const spec: Obj = {
    ...(s.nodeSelector ? { nodeSelector: s.nodeSelector } : {}),
    ...(s.affinity ? { affinity: s.affinity } : {}),
    ...(s.tolerations.length > 0 ? { tolerations: s.tolerations } : {}),
    ...(s.topologySpreadConstraints ? { topologySpreadConstraints: s.topologySpreadConstraints } : {}),
    ...(s.priorityClassName ? { priorityClassName: s.priorityClassName } : {}),
  };
  if (Object.keys(spec).length === 0) return undefined;
  const fields = `${placementRoles(p, "controlPlane").join(" or ")}: ${Object.keys(spec).join(", ")}`;
  return {
    target: { kind, name: workloadObjectName(release, component) },
    why: `§ 5.2 does not list ${component} among the components ${chart} places: the chart reads no placement for it, so its role placement (${fields}) is this patch`,
    patch: { spec: { template: { spec } } },
  };
}

/**
 * Whether the chart renders an unlisted component: an optional one (`switch`) follows
 * `<component>.enabled`, the only switch its chart reads, and its chart's default without it.
 */
export function unlistedRendered(u: Unlisted, block: unknown): boolean {
  const on = obj(block).enabled;
  return u.switch === undefined || (typeof on === "boolean" ? on : u.switch === "on");
}

/**
 * A release's values without the `placement.<component>` or `<component>.placement` (the ingress)
 * its chart does not read, and the patch of each unlisted component the chart renders, from that
 * placement. `kinds`: the kind the chart renders each component as.
 */
export function unlistedPostRender(
  chart: string,
  release: string,
  values: Obj,
  kinds: Readonly<Record<string, string>>,
): { values: Obj; patches: PostRenderPatch[] } {
  const placement = obj(values.placement);
  const own = UNLISTED_COMPONENTS[chart] ?? {};
  const patches: PostRenderPatch[] = [];
  for (const [component, u] of Object.entries(own)) {
    const raw = placement[component] ?? obj(values[component]).placement;
    const kind = kinds[component];
    if (raw === undefined || kind === undefined || !unlistedRendered(u, values[component])) continue;
    const patch = unlistedPlacementPatch(chart, release, component, kind, obj(raw) as PlacementValue, obj(values.global));
    if (patch) patches.push(patch);
  }
  const kept = Object.fromEntries(Object.entries(placement).filter(([component]) => own[component] === undefined));
  // in their order: a release keeps the layout of its rendered values
  const out = Object.entries(values).flatMap(([k, v]): [string, unknown][] => {
    if (k === "placement") return Object.keys(kept).length > 0 ? [[k, kept]] : [];
    if (own[k] === undefined || obj(v).placement === undefined) return [[k, v]];
    const { placement: _unread, ...rest } = obj(v);
    return Object.keys(rest).length > 0 ? [[k, rest]] : [];
  });
  return { values: Object.fromEntries(out), patches };
}
