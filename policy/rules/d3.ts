// D3: distributed floating IPs: every hypervisor NATs the FIPs of its own VMs, so the chassis (and
// the external bridge mappings it carries) run on compute nodes too, and the BGP agent, when the
// fabric speaks BGP, runs on network and compute nodes.
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
  const chassis = n.placement("chassis");
  if (!chassis.terms.some((t) => t.has("compute") && [...t].every((x) => x === "compute"))) {
    findings.push({
      message: `${r.name}: the chassis and its bridge mappings do not reach compute nodes (${describePlacement(chassis)})`,
      fix: "include compute in placement.chassis.roles: with distributed FIPs every hypervisor is a gateway for its own VMs",
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
  }
  return findings;
}

export const d3DistributedFloatingIps = resourceRule(
  "D3",
  "d3-distributed-floating-ips",
  "floating IPs are distributed; the chassis and its bridge mappings run on compute; the BGP agent, when enabled, runs on network and compute",
  distributedFipFindings,
);
