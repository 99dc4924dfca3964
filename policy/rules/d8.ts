// D8: the public ingress data plane runs on the network nodes and on the control plane nodes:
// a node affinity with two nodeSelectorTerms (OR), both present.
import { chartOf, chartValues, type Finding, get, isObject, resourceRule, type ResourceView } from "./common";
import { INFRA_CHART } from "./charts";
import { covers, describePlacement, effectivePlacement } from "./placement";

function ingressFindings(r: ResourceView): Finding[] {
  if (chartOf(r) !== INFRA_CHART) return [];
  const values = isObject(r.props.values) ? r.props.values : {};
  const p = effectivePlacement(get(chartValues(r, INFRA_CHART), ["ingress", "placement"]), values);
  if (covers(p, ["controlPlane", "network"])) return [];
  return [
    {
      message: `${r.name}: the public ingress (ingress.placement) lands on ${describePlacement(p)}`,
      fix: "set ingress.placement.roles: [controlPlane, network] (D8: one nodeSelectorTerm per role, OR)",
    },
  ];
}

export const d8PublicIngress = resourceRule(
  "D8",
  "d8-public-ingress",
  "the public ingress reaches control-plane OR network nodes, both terms present",
  ingressFindings,
);
