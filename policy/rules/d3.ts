// D3: distributed floating IPs: every hypervisor NATs the FIPs of its own VMs, so the BGP agent,
// when the fabric speaks BGP, runs on network and compute nodes, reserved hypervisors included.
import { RESERVED_TAINT_KEY } from "../../config/roles";
import { chartOf, describeValue, type Finding, get, resourceRule, type ResourceView } from "./common";
import { neutronView, NEUTRON_CHART } from "./neutron";
import { covers, describePlacement } from "./placement";

function distributedFipFindings(r: ResourceView): Finding[] {
  if (chartOf(r) !== NEUTRON_CHART) return [];
  const n = neutronView(r);
  const findings: Finding[] = [];
  const mode = get(n.own, ["gateway", "floatingIpMode"]);
  if (mode !== "distributed") {
    findings.push({
      message: `${r.name}: gateway.floatingIpMode is ${describeValue(mode)}`,
      fix: "set gateway.floatingIpMode: distributed (D3: enable_distributed_floating_ip)",
    });
  }
  const bgp = n.enabled("bgpAgent");
  if (bgp === true) {
    const agent = n.placement("bgpAgent");
    if (!covers(agent, ["network", "compute"])) {
      findings.push({
        message: `${r.name}: the BGP agent is enabled on ${describePlacement(agent)}`,
        fix: "set placement.bgpAgent.roles: [network, compute]: hypervisors announce the FIPs of their VMs",
      });
    }
    if (!agent.tolerationKeys.includes(RESERVED_TAINT_KEY)) {
      findings.push({
        message: `${r.name}: the BGP agent does not tolerate ${RESERVED_TAINT_KEY}: the FIPs of VMs evacuated to a Masakari reserved host (§ 5.6) would not be announced`,
        fix: `add {key: ${RESERVED_TAINT_KEY}, operator: Exists, effect: NoSchedule} to placement.bgpAgent.extraTolerations`,
      });
    }
  }
  return findings;
}

export const d3DistributedFloatingIps = resourceRule(
  "D3",
  "d3-distributed-floating-ips",
  "floating IPs are distributed; the BGP agent, when enabled, runs on network and compute nodes and tolerates Masakari reserved hosts",
  distributedFipFindings,
);
