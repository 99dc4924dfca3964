// The placement reader of the OpenKeel releases: every component a release's values place, with the
// scheduling the chart helper renders for it (§ 5.2, placement/chart-helper.ts) from the role
// definitions the values pass in `global.nodeRoles`, and its design row (./design.ts).
import { HOSTNAME_LABEL } from "../config/roles";
import { resolvePlacement, type Placement, type RoleDefinitions } from "../placement/chart-helper";
import { requiredAntiAffinityKeys } from "../placement/scheduling";
import { isObj, num, obj, type Component, type Obj, type Readers, type UnitReader } from "../placement/workloads";
import { openkeelDesign } from "./design";
import { SCHEDULING_FIELDS } from "./placement-value";

interface PlacementValue extends Placement {
  enabled?: boolean;
  replicas?: number;
}

const PLACEMENT_KEYS: readonly string[] = [...SCHEDULING_FIELDS, "enabled"];
/** One component's placement value, as opposed to a map of them (`placement.<component>`). */
const isPlacementValue = (v: unknown): v is PlacementValue => isObj(v) && Object.keys(v).some((k) => PLACEMENT_KEYS.includes(k));

/** `placement.<component>` maps and `<component>.placement` values of one release (§ 5.1). */
function placementEntries(values: Obj): [string, PlacementValue, Obj][] {
  const out: [string, PlacementValue, Obj][] = [];
  const visit = (parent: Obj, depth: number) => {
    for (const [key, v] of Object.entries(parent)) {
      if (key === "global" || !isObj(v)) continue;
      if (key === "placement") {
        if (!isPlacementValue(v)) for (const [k, p] of Object.entries(v)) if (isObj(p)) out.push([k, p as PlacementValue, {}]);
      } else if (isObj(v.placement) && isPlacementValue(v.placement)) out.push([key, v.placement, v]);
      else if (depth < 1) visit(v, depth + 1);
    }
  };
  visit(values, 0);
  return out;
}

function replicasOf(values: Obj, key: string, p: PlacementValue, holder: Obj): number | undefined {
  return num(p.replicas) ?? num(holder.replicas) ?? num(obj(values.replicas)[key]) ?? num(obj(values[key]).replicas);
}

function isEnabled(p: PlacementValue, holder: Obj): boolean {
  return p.enabled !== false && holder.enabled !== false;
}

const readRelease: UnitReader = (u) => {
  if (u.kind !== "HelmRelease") return [];
  const values = u.values as Obj;
  // No global.nodeRoles (a lab whose nodes carry no role): role names render nothing (§ 5.2).
  const roles = obj(obj(obj(values.global).nodeRoles).roles) as RoleDefinitions;
  const out: Component[] = [];
  for (const [key, p, holder] of placementEntries(values)) {
    if (!isEnabled(p, holder)) continue;
    const design = openkeelDesign(u.chart.chart, key);
    const scheduling = resolvePlacement(p, { roles, defaultRole: "controlPlane" });
    const anti = [
      ...(p.antiAffinity === "required" ? [HOSTNAME_LABEL] : []),
      ...requiredAntiAffinityKeys(scheduling.affinity),
    ];
    const replicas = design.kind === "DaemonSet" ? undefined : replicasOf(values, key, p, holder);
    out.push({
      name: `${u.name}/${key}`,
      source: "openkeel",
      unit: u.name,
      kind: design.kind,
      ...(replicas !== undefined ? { replicas } : {}),
      scheduling: { nodeSelector: scheduling.nodeSelector, affinity: scheduling.affinity, tolerations: scheduling.tolerations },
      ...(anti.length > 0 ? { requiredAntiAffinity: [...new Set(anti)] } : {}),
      designRoles: design.roles,
      ...(design.confinedTo ? { confinedTo: design.confinedTo } : {}),
      ...(design.forbiddenRoles ? { forbiddenRoles: design.forbiddenRoles } : {}),
    });
  }
  return out;
};

export const OPENKEEL_READERS: Readers = {
  units: { "openkeel:openkeel:Release": readRelease, "openkeel:openkeel:Infrastructure": readRelease },
};
