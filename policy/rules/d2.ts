// D2: Neutron writes its own OVN (mode B, backend ovn-nb): OVN central is 3 RAFT members on the
// control plane with required host anti-affinity; the chassis run on compute and network nodes;
// Kube-OVN's BGP speaker is not deployed (tenant IPs are announced by ovn-bgp-agent).
import { chartOf, describeValue, type Finding, get, RELEASE_TYPE, resourceRule, type ResourceView, valuesOf, valuesPath, walk } from "./common";
import { neutronView, NEUTRON_CHART } from "./neutron";
import { covers, describePlacement, onlyOn } from "./placement";

const OVN_CENTRAL_MEMBERS = 3;

function neutronOvnFindings(r: ResourceView): Finding[] {
  if (chartOf(r) !== NEUTRON_CHART) return [];
  const n = neutronView(r);
  const findings: Finding[] = [];
  if (n.own.backend !== "ovn-nb") {
    findings.push({ message: `${r.name}: backend is ${describeValue(n.own.backend)}`, fix: "set backend: ovn-nb (D2: the parallel OVN)" });
  }
  const central = n.placement("ovnCentral", "controlPlane");
  if (!onlyOn(central, "controlPlane")) {
    findings.push({
      message: `${r.name}: OVN central (placement.ovnCentral) lands on ${describePlacement(central)}`,
      fix: "place it with role: controlPlane and no raw selector that widens it",
    });
  }
  if (!central.requiredHostAntiAffinity) {
    findings.push({
      message: `${r.name}: OVN central members may share a node (no required host anti-affinity)`,
      fix: "set placement.ovnCentral.antiAffinity: required (one RAFT member per node)",
    });
  }
  const replicas = get(n.own, ["ovnCentral", "replicas"]);
  if (replicas !== undefined && replicas !== OVN_CENTRAL_MEMBERS) {
    findings.push({
      message: `${r.name}: ovnCentral.replicas is ${describeValue(replicas)}`,
      fix: `set it to ${OVN_CENTRAL_MEMBERS} (a RAFT cluster of 3 members survives one loss)`,
    });
  }
  const chassis = n.placement("chassis");
  if (!covers(chassis, ["compute", "network"], ["compute", "network", "containers"])) {
    findings.push({
      message: `${r.name}: the OVN chassis (placement.chassis) lands on ${describePlacement(chassis)}`,
      fix: "set placement.chassis.roles: [compute, network] (one nodeSelectorTerm per role)",
    });
  }
  return findings;
}

/** Kube-OVN's speaker in any form: a release value that enables it, or an object/manifest named so. */
function kubeOvnSpeakerFindings(r: ResourceView): Finding[] {
  const findings: Finding[] = [];
  const chart = chartOf(r) ?? "";
  if (r.type === RELEASE_TYPE && chart.startsWith("kube-ovn")) {
    walk(valuesOf(r), (path, value) => {
      const key = path[path.length - 1] ?? "";
      const inSpeaker = path.some((p) => /speaker/i.test(p));
      if (inSpeaker && /^(enabled|enable)$/i.test(key) && (value === true || value === "true")) {
        findings.push({
          message: `${r.name}: values.${valuesPath(path)} turns on Kube-OVN's BGP speaker`,
          fix: "remove it: with the parallel OVN (D2) tenant IPs are announced by ovn-bgp-agent (openkeel-neutron bgpAgent)",
        });
      }
    });
  }
  // a ConfigFile names its file, a ConfigGroup its files
  const files = [r.props.file, ...(Array.isArray(r.props.files) ? r.props.files : [])].filter((f): f is string => typeof f === "string");
  const name = get(r.props, ["metadata", "name"]);
  const text = [r.name, ...files, typeof name === "string" ? name : ""].join(" ");
  if (/kube-ovn[-_]?speaker/i.test(text)) {
    findings.push({
      message: `${r.name} (${r.type}) deploys Kube-OVN's BGP speaker`,
      fix: "remove it: with the parallel OVN (D2) tenant IPs are announced by ovn-bgp-agent (openkeel-neutron bgpAgent)",
    });
  }
  return findings;
}

export const d2ParallelOvn = resourceRule(
  "D2",
  "d2-parallel-ovn",
  `Neutron backend ovn-nb; OVN central ${OVN_CENTRAL_MEMBERS} members on the control plane with required host anti-affinity; chassis on compute and network; no Kube-OVN BGP speaker`,
  (r) => [...neutronOvnFindings(r), ...kubeOvnSpeakerFindings(r)],
);
