// D7: the Ironic conductor runs on dedicated provisioning nodes, one per node, tolerating the
// provisioning taint; so there are no more conductors than provisioning nodes. One per node is the
// chart's own: § 5.2 "What is implemented" has the conductor StatefulSet's template render its
// required host anti-affinity, whatever the values say, so no value is judged for it.
import { roleLabelKey, roleTaint } from "../../config/roles";
import { chartOf, chartValues, describeValue, type Finding, get, isObject, NODE_PATCH_TYPE, resourceRule, type ResourceView, stackRule } from "./common";
import { IRONIC_CHART } from "./charts";
import { describePlacement, effectivePlacement, onlyOn } from "./placement";

/** The chart's default (§ 5.2: openkeel-ironic.conductor.replicas, 2 by default). */
const DEFAULT_CONDUCTOR_REPLICAS = 2;

function conductorReplicas(r: ResourceView): unknown {
  const own = chartValues(r, IRONIC_CHART);
  return get(own, ["conductor", "replicas"]) ?? get(own, ["replicas", "conductor"]) ?? DEFAULT_CONDUCTOR_REPLICAS;
}

function conductorFindings(r: ResourceView): Finding[] {
  if (chartOf(r) !== IRONIC_CHART) return [];
  const own = chartValues(r, IRONIC_CHART);
  const values = isObject(r.props.values) ? r.props.values : {};
  const p = effectivePlacement(get(own, ["placement", "conductor"]), values, "provisioning");
  const findings: Finding[] = [];
  if (!onlyOn(p, "provisioning")) {
    findings.push({
      message: `${r.name}: the conductor lands on ${describePlacement(p)}`,
      fix: "place it with role: provisioning (D7: BMC credentials and the provisioning VLAN stay on dedicated nodes)",
    });
  }
  const taint = roleTaint("provisioning").key;
  if (!p.tolerationKeys.includes(taint)) {
    findings.push({
      message: `${r.name}: the conductor does not tolerate ${taint} (provisioning nodes are always tainted)`,
      fix: `keep the role's toleration: remove the raw tolerations override or add {key: ${taint}, operator: Exists, effect: NoSchedule}`,
    });
  }
  return findings;
}

function provisioningNodes(resources: ResourceView[]): string[] {
  const keys = [roleLabelKey("provisioning", "hardened"), roleLabelKey("provisioning", "default")];
  return resources
    .filter((r) => r.type === NODE_PATCH_TYPE)
    .filter((r) => {
      const labels = get(r.props, ["metadata", "labels"]);
      return isObject(labels) && keys.some((k) => k in labels);
    })
    .map((r) => String(get(r.props, ["metadata", "name"]) ?? r.name));
}

function conductorCountFindings(resources: ResourceView[]): Finding[] {
  const nodes = provisioningNodes(resources);
  const findings: Finding[] = [];
  for (const r of resources) {
    if (chartOf(r) !== IRONIC_CHART) continue;
    const replicas = conductorReplicas(r);
    if (typeof replicas !== "number" || replicas > nodes.length) {
      findings.push({
        urn: r.urn,
        message: `${r.name}: ${describeValue(replicas)} conductor replicas but ${nodes.length} provisioning node(s)${nodes.length ? ` (${nodes.join(", ")})` : ""}: with required anti-affinity the extra conductors never schedule`,
        fix: `label more nodes with the provisioning role, or set openkeel:services.ironic.replicas.conductor to ${nodes.length}`,
      });
    }
  }
  return findings;
}

export const d7ConductorPlacement = resourceRule(
  "D7",
  "d7-ironic-conductor-placement",
  "the Ironic conductor runs only on provisioning nodes (one per node: its template's own anti-affinity, § 5.2), with the provisioning toleration",
  conductorFindings,
);

export const d7ConductorCount = stackRule(
  "D7",
  "d7-ironic-conductors-per-node",
  "no more Ironic conductor replicas than provisioning nodes",
  conductorCountFindings,
);
