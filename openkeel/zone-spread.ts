// Anti-affinity of the OpenKeel service components as post-render patches of their release: the
// host term (one OVN central member per node, one Swift storage member per storage node) and the
// zone term (§ 6.3: one OVN central member per zone in large). § 5.2 "What is implemented": the
// helper renders nodeSelector, tolerations and priorityClassName, "spread and affinity stay in each
// template", and the only template the table gives an anti-affinity is the Ironic conductor's
// (required, on the host). So no chart reads `placement.<component>.antiAffinity` or
// `zoneAntiAffinity`: the terms reach the pod template through the release's post-renderer
// (plan/post-render.ts), and the placement reader (./workloads.ts) and the policy pack (D2: OVN
// central, through the release's post-render record) judge the patched template. Neither key stays
// in the values: no chart reads them.
import { HOSTNAME_LABEL, ZONE_LABEL } from "../config/roles";
import type { PlacementValue } from "../config/placement";
import type { PostRenderPatch } from "../plan/post-render";
import { arr, obj, type Obj } from "../placement/workloads";
import { isSelfPlaced } from "./components";
import { workloadObjectName, workloadSelector } from "./names";
import { releaseService } from "./registry";

/**
 * Whether a component's template renders the required host anti-affinity itself, whatever the
 * values say (§ 5.2: the Ironic conductor StatefulSet, "with required anti-affinity on the host"):
 * its descriptor says so (`templateHostAntiAffinity`).
 */
export function templateRendersHostAntiAffinity(release: string, component: string): boolean {
  const spec = releaseService(release)?.components[component];
  return spec !== undefined && !isSelfPlaced(spec) && spec.templateHostAntiAffinity === true;
}

/**
 * The pod anti-affinity of a component: the host term of `antiAffinity` (the one its template renders,
 * or the one no template renders) and the zone term of `zoneAntiAffinity`, beside the raw terms of
 * `affinity`, since a merge patch replaces a list.
 */
function antiAffinityTerms(p: PlacementValue, selector: Record<string, string>, zoneKey: string): Obj {
  const raw = obj(obj(p.affinity).podAntiAffinity);
  const term = (topologyKey: string) => ({ labelSelector: { matchLabels: selector }, topologyKey });
  // a raw podAntiAffinity of the stack replaces the host term, as the helper's precedence has it (§ 5.1)
  const host = Object.keys(raw).length === 0 && p.antiAffinity ? { [p.antiAffinity]: term(HOSTNAME_LABEL) } : {};
  const required = [...arr(raw.requiredDuringSchedulingIgnoredDuringExecution), ...(host.required ? [host.required] : [])];
  const preferred = [
    ...arr(raw.preferredDuringSchedulingIgnoredDuringExecution),
    ...(host.preferred ? [{ weight: 100, podAffinityTerm: host.preferred }] : []),
  ];
  if (p.zoneAntiAffinity === "required") required.push(term(zoneKey));
  else if (p.zoneAntiAffinity !== undefined) preferred.push({ weight: 100, podAffinityTerm: term(zoneKey) });
  return {
    ...(required.length > 0 ? { requiredDuringSchedulingIgnoredDuringExecution: required } : {}),
    ...(preferred.length > 0 ? { preferredDuringSchedulingIgnoredDuringExecution: preferred } : {}),
  };
}

function why(release: string, component: string, p: PlacementValue, zoneKey: string): string {
  const host = p.antiAffinity !== undefined && !templateRendersHostAntiAffinity(release, component);
  const terms = [
    ...(host ? [`${p.antiAffinity} anti-affinity on ${HOSTNAME_LABEL}`] : []),
    ...(p.zoneAntiAffinity ? [`${p.zoneAntiAffinity} anti-affinity on ${zoneKey} (§ 6.3)`] : []),
  ];
  const keys = [...(host ? ["antiAffinity"] : []), ...(p.zoneAntiAffinity ? ["zoneAntiAffinity"] : [])];
  return `${component} with ${terms.join(" and ")}; the chart reads no ${keys.join(" or ")} (§ 5.2)`;
}

/**
 * The release's values without `placement.<component>.antiAffinity` and `zoneAntiAffinity`, which
 * no chart reads, and a patch per component with an anti-affinity its template does not render, on
 * its workload (`kinds`: the kind the chart renders each component as). `placed`: the values the
 * placements are read from, when `values` no longer hold those of the components § 5.2 does not
 * list (./unlisted.ts).
 */
export function antiAffinityPostRender(
  release: string,
  values: Obj,
  kinds: Readonly<Record<string, string>>,
  placed: Obj = values,
): { values: Obj; patches: PostRenderPatch[] } {
  const placement = obj(values.placement);
  const zoneKey = String(obj(obj(values.global).placementDefaults).zoneKey ?? ZONE_LABEL);
  const patches: PostRenderPatch[] = [];
  // a component the chart does not have keeps its keys, for the values contract to name it
  const stripped: Obj = Object.fromEntries(
    Object.entries(placement).map(([component, raw]) => {
      if (kinds[component] === undefined) return [component, raw];
      const { antiAffinity: _host, zoneAntiAffinity: _zone, ...rest } = obj(raw) as PlacementValue;
      return [component, rest];
    }),
  );
  for (const [component, raw] of Object.entries(obj(placed.placement))) {
    const p = obj(raw) as PlacementValue;
    const kind = kinds[component];
    const hostByPatch = p.antiAffinity !== undefined && !templateRendersHostAntiAffinity(release, component);
    if ((p.zoneAntiAffinity === undefined && !hostByPatch) || kind === undefined) continue;
    patches.push({
      target: { kind, name: workloadObjectName(release, component) },
      why: why(release, component, p, zoneKey),
      patch: { spec: { template: { spec: { affinity: { podAntiAffinity: antiAffinityTerms(p, workloadSelector(release, component), zoneKey) } } } } },
    });
  }
  return !("placement" in values) ? { values, patches } : { values: { ...values, placement: stripped }, patches };
}
