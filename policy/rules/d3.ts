// D3: distributed floating IPs: every hypervisor NATs the FIPs of its own VMs, so every compute
// (and network) node is an OVN chassis with its physnet bridge mappings, and the BGP agent, when
// the fabric speaks BGP, runs on network and compute nodes, reserved hypervisors included (§ 5.2
// lists no BGP agent: its release's post-render patch places it).
import { BRIDGE_MAPPINGS_ANNOTATION, EXTERNAL_BOND_ANNOTATION, RESERVED_TAINT_KEY } from "../../config/roles";
import { describeValue, type Finding, get, type ResourceView, stackRule } from "./common";
import { neutronReleases, neutronView, patchedNodes, selectedNodes, type PatchedNode } from "./neutron";
import { covers, describePlacement } from "./placement";
import { patchedPlacement } from "./post-render";

/** The BGP agent's placement: § 5.2 lists no BGP agent, so only its release's post-render patch places it. */
function bgpAgentFindings(resources: ResourceView[], r: ResourceView): Finding[] {
  const { name, placement: agent, targets, misses, problem } = patchedPlacement(resources, r, "DaemonSet", "bgp-agent");
  if (problem) return [problem];
  const findings: Finding[] = [...misses];
  if (!covers(agent, ["network", "compute"])) {
    findings.push({
      urn: r.urn,
      message: `${r.name}: the BGP agent is enabled on ${describePlacement(agent)} (DaemonSet ${name} as its post-render patch leaves it, the release's patches targeting ${targets}; the chart places it nowhere, § 5.2)`,
      fix: "set placement.bgpAgent.roles: [network, compute] (the release's post-render patch carries it): hypervisors announce the FIPs of their VMs",
    });
  }
  if (!agent.tolerationKeys.includes(RESERVED_TAINT_KEY)) {
    findings.push({
      urn: r.urn,
      message: `${r.name}: the BGP agent does not tolerate ${RESERVED_TAINT_KEY}: the FIPs of VMs evacuated to a Masakari reserved host (§ 5.6) would not be announced`,
      fix: `add {key: ${RESERVED_TAINT_KEY}, operator: Exists, effect: NoSchedule} to placement.bgpAgent.extraTolerations`,
    });
  }
  return findings;
}

function distributedFipFindings(resources: ResourceView[]): Finding[] {
  return neutronReleases(resources).flatMap((r) => {
    const n = neutronView(r);
    const findings: Finding[] = [];
    const mode = get(n.own, ["gateway", "floatingIpMode"]);
    if (mode !== "distributed") {
      findings.push({
        urn: r.urn,
        message: `${r.name}: gateway.floatingIpMode is ${describeValue(mode)}`,
        fix: "set gateway.floatingIpMode: distributed (D3: enable_distributed_floating_ip)",
      });
    }
    return n.enabled("bgpAgent") === true ? [...findings, ...bgpAgentFindings(resources, r)] : findings;
  });
}

export const d3DistributedFloatingIps = stackRule(
  "D3",
  "d3-distributed-floating-ips",
  "floating IPs are distributed; the BGP agent, when enabled, runs on network and compute nodes and tolerates Masakari reserved hosts (its release's post-render patch)",
  distributedFipFindings,
);

/**
 * The chassis reads the external NIC's OVS bond from the annotation its Node patch writes where
 * the NIC is a bond (`chassis.externalBondAnnotation`): Talos leaves that NIC to OVS, so read from
 * another annotation no chassis builds the bond and the node's external network stays down.
 */
function externalBondFindings(r: ResourceView, nodes: readonly PatchedNode[]): Finding[] {
  const bonded = nodes.filter((x) => x.annotations[EXTERNAL_BOND_ANNOTATION] !== undefined).map((x) => x.name);
  const key = get(neutronView(r).own, ["chassis", "externalBondAnnotation"]);
  if (bonded.length === 0 || key === EXTERNAL_BOND_ANNOTATION) return [];
  return [
    {
      urn: r.urn,
      message: `${r.name}: chassis.externalBondAnnotation is ${describeValue(key)}, not the annotation the Node patches write (${EXTERNAL_BOND_ANNOTATION}): the chassis of ${bonded.join(", ")} would not build their external bond, whose NICs Talos leaves to Open vSwitch`,
      fix: `set chassis.externalBondAnnotation: ${EXTERNAL_BOND_ANNOTATION}`,
    },
  ];
}

/**
 * Every compute and network node is a chassis with bridge mappings: the Node patch carries them
 * in the annotation the chassis reads (`chassis.bridgeMappingsAnnotation`), and the chassis'
 * selector admits the node; where its external NIC is a bond, the chassis reads that too.
 */
function bridgeMappingFindings(resources: ResourceView[]): Finding[] {
  const nodes = patchedNodes(resources).filter((n) => n.roles.has("compute") || n.roles.has("network"));
  const findings: Finding[] = [];
  for (const r of neutronReleases(resources)) {
    const n = neutronView(r);
    const key = get(n.own, ["chassis", "bridgeMappingsAnnotation"]);
    if (key !== BRIDGE_MAPPINGS_ANNOTATION) {
      findings.push({
        urn: r.urn,
        message: `${r.name}: chassis.bridgeMappingsAnnotation is ${describeValue(key)}, not the annotation the Node patches write (${BRIDGE_MAPPINGS_ANNOTATION}): no chassis would find its bridge mappings`,
        fix: `set chassis.bridgeMappingsAnnotation: ${BRIDGE_MAPPINGS_ANNOTATION}`,
      });
    }
    findings.push(...externalBondFindings(r, nodes));
    const on = new Set(selectedNodes(n.chassisSelector, nodes).map((x) => x.name));
    const off = nodes.filter((x) => !on.has(x.name)).map((x) => x.name);
    if (off.length > 0) {
      findings.push({
        urn: r.urn,
        message: `${r.name}: no chassis runs on compute or network node(s) ${off.join(", ")}, so their floating IPs and bridge mappings go unused`,
        fix: "select every compute and network node with chassis.nodeSelector (the chassis label)",
      });
    }
  }
  if (neutronReleases(resources).length === 0) return findings;
  for (const x of nodes.filter((node) => !node.annotations[BRIDGE_MAPPINGS_ANNOTATION])) {
    findings.push({
      urn: x.urn,
      message: `node ${x.name} (${[...x.roles].join(", ")}) carries no ${BRIDGE_MAPPINGS_ANNOTATION} annotation: its chassis would have no physnet bridge mappings`,
      fix: "set its bridgeMappings: (e.g. physnet1:br-ex) in openkeel:nodes; the node-roles phase writes the annotation",
    });
  }
  return findings;
}

export const d3BridgeMappings = stackRule(
  "D3",
  "d3-bridge-mappings",
  `every compute and network node is an OVN chassis and carries its physnet bridge mappings (${BRIDGE_MAPPINGS_ANNOTATION}), which the chassis reads, as it reads the external NIC's bond where there is one (${EXTERNAL_BOND_ANNOTATION})`,
  bridgeMappingFindings,
);
