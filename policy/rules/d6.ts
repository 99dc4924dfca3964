// D6: Placement inventories subtract the live requests of the non-VM pods of each compute node:
// the nova compute agent's dynamic reservation is on (§ 4.2).
import { chartOf, chartValues, type Finding, resourceRule, type ResourceView, valuesPath, walk } from "./common";
import { NOVA_CHART } from "./charts";

/** The switch Nova's release writes (openkeel/services/nova.ts: computeAgent.dynamicReservation): what the fix names. */
const DYNAMIC_RESERVATION_SWITCH = "computeAgent.dynamicReservation.enabled";

/** Every switch of the compute agent's reservation: `…reserv…{dynamic|enabled}: bool` or `…reserv…mode: dynamic`. */
function reservationSwitches(r: ResourceView): { path: string[]; on: boolean }[] {
  const out: { path: string[]; on: boolean }[] = [];
  walk(chartValues(r, NOVA_CHART), (path, value) => {
    if (!path.some((p) => /reserv/i.test(p))) return;
    const key = path[path.length - 1] ?? "";
    if (/^(dynamic|enabled|dynamicReservation|dynamic_reservation)$/i.test(key) && typeof value === "boolean") out.push({ path, on: value });
    else if (/^mode$/i.test(key) && typeof value === "string") out.push({ path, on: value === "dynamic" });
  });
  return out;
}

function dynamicReservationFindings(r: ResourceView): Finding[] {
  if (chartOf(r) !== NOVA_CHART) return [];
  const switches = reservationSwitches(r);
  if (switches.length === 0) {
    return [{ message: `${r.name}: the compute agent's dynamic reservation is not set`, fix: `set ${DYNAMIC_RESERVATION_SWITCH}: true (D6, § 4.2)` }];
  }
  return switches
    .filter((s) => !s.on)
    .map((s) => ({
      message: `${r.name}: values.${valuesPath(s.path)} turns the dynamic reservation off`,
      fix: "turn it on (D6): Nova must not sell the CPU and memory the node's infrastructure pods request",
    }));
}

export const d6DynamicReservation = resourceRule(
  "D6",
  "d6-dynamic-reservation",
  "the nova compute agent's dynamic reservation is on, so Placement never sells what the node's infrastructure pods use",
  dynamicReservationFindings,
);
