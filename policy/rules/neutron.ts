// Readers of the openkeel-neutron values that D2, D3 and D4 judge (§ 5.1).
import { chartValues, get, isObject, type ResourceView, type Tree } from "./common";
import { effectivePlacement, type EffectivePlacement } from "./placement";
import type { Role } from "../../config/roles";

export const NEUTRON_CHART = "openkeel-neutron";

export interface NeutronView {
  values: Tree;
  own: Tree;
  placement(component: string, defaultRole?: Role): EffectivePlacement;
  /** `placement.<c>.enabled`, else `<c>.enabled`. */
  enabled(component: string): unknown;
}

export function neutronView(r: ResourceView): NeutronView {
  const values = isObject(r.props.values) ? r.props.values : {};
  const own = chartValues(r, NEUTRON_CHART);
  return {
    values,
    own,
    placement: (component, defaultRole) => effectivePlacement(get(own, ["placement", component]), values, defaultRole),
    enabled: (component) => get(own, ["placement", component, "enabled"]) ?? get(own, [component, "enabled"]),
  };
}
