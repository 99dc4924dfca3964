// Zone anti-affinity of the OpenKeel service components (§ 6.3: one OVN central member per zone in
// large) as post-render patches of their release. No OpenKeel chart reads
// `placement.<component>.zoneAntiAffinity` (§ 5.2 "What is implemented": the helper renders
// nodeSelector, tolerations and priorityClassName; only the host anti-affinity of the Ironic
// conductor, and the contract charts' `antiAffinity`, are rendered by a chart), so the key leaves the
// values and the term reaches the pod template through the release's post-renderer
// (plan/post-render.ts); the placement reader (./workloads.ts) applies the same patch before it
// judges the component.
import { HOSTNAME_LABEL, ZONE_LABEL } from "../config/roles";
import type { PlacementValue } from "../config/placement";
import type { PostRenderPatch } from "../plan/post-render";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The workload object a service chart renders for a component: `<release>-<component in kebab case>`. */
export function workloadObjectName(release: string, component: string): string {
  return `${release}-${component.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase()}`;
}

/** The pod labels the chart selects a component's pods by (app.kubernetes.io/instance and name). */
export function workloadSelector(release: string, component: string): Record<string, string> {
  return { "app.kubernetes.io/instance": release, "app.kubernetes.io/name": workloadObjectName(release, component) };
}

/**
 * The pod anti-affinity of a component with its zone term: the host term the chart renders from
 * `antiAffinity` and the raw terms of `affinity` kept beside it, since a merge patch replaces a list.
 */
function antiAffinityWithZone(p: PlacementValue, selector: Record<string, string>, zoneKey: string): Obj {
  const raw = obj(obj(p.affinity).podAntiAffinity);
  const term = (topologyKey: string) => ({ labelSelector: { matchLabels: selector }, topologyKey });
  const kind = p.zoneAntiAffinity === "required" ? "requiredDuringSchedulingIgnoredDuringExecution" : "preferredDuringSchedulingIgnoredDuringExecution";
  // the helper renders `antiAffinity` only when the raw affinity has no podAntiAffinity of its own
  const host = Object.keys(raw).length === 0 && p.antiAffinity ? { [p.antiAffinity]: term(HOSTNAME_LABEL) } : {};
  const required = [...list(raw.requiredDuringSchedulingIgnoredDuringExecution), ...(host.required ? [host.required] : [])];
  const preferred = [
    ...list(raw.preferredDuringSchedulingIgnoredDuringExecution),
    ...(host.preferred ? [{ weight: 100, podAffinityTerm: host.preferred }] : []),
  ];
  if (kind === "requiredDuringSchedulingIgnoredDuringExecution") required.push(term(zoneKey));
  else preferred.push({ weight: 100, podAffinityTerm: term(zoneKey) });
  return {
    ...(required.length > 0 ? { requiredDuringSchedulingIgnoredDuringExecution: required } : {}),
    ...(preferred.length > 0 ? { preferredDuringSchedulingIgnoredDuringExecution: preferred } : {}),
  };
}

/**
 * The release's values without `placement.<component>.zoneAntiAffinity`, and a patch per component
 * that had one, on its workload (`kinds`: the kind the chart renders each component as).
 */
export function zoneSpreadPostRender(release: string, values: Obj, kinds: Readonly<Record<string, string>>): { values: Obj; patches: PostRenderPatch[] } {
  const placement = obj(values.placement);
  const zoneKey = String(obj(obj(values.global).placementDefaults).zoneKey ?? ZONE_LABEL);
  const patches: PostRenderPatch[] = [];
  const stripped: Obj = {};
  for (const [component, raw] of Object.entries(placement)) {
    const { zoneAntiAffinity, ...rest } = obj(raw) as PlacementValue;
    const kind = kinds[component];
    stripped[component] = raw;
    if (zoneAntiAffinity === undefined || kind === undefined) continue;
    stripped[component] = rest;
    const anti = antiAffinityWithZone(obj(raw) as PlacementValue, workloadSelector(release, component), zoneKey);
    patches.push({
      target: { kind, name: workloadObjectName(release, component) },
      why: `§ 6.3: ${component} with ${zoneAntiAffinity} anti-affinity on ${zoneKey}; the chart reads no zoneAntiAffinity (§ 5.2)`,
      patch: { spec: { template: { spec: { affinity: { podAntiAffinity: anti } } } } },
    });
  }
  return patches.length === 0 ? { values, patches } : { values: { ...values, placement: stripped }, patches };
}
