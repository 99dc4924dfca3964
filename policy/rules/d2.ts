// D2: Neutron writes its own OVN (mode B, backend ovn-nb): OVN central is 3 RAFT members on the
// control plane with required host anti-affinity (which the chart does not render, § 5.2: only
// the release's post-render patch gives it); the chassis run on compute and network nodes
// (and containers nodes, for Zun's ports), and nowhere else: the chassis tolerates every taint, so
// its nodeSelector alone decides; Kube-OVN's BGP speaker is not deployed (tenant IPs are announced
// by ovn-bgp-agent).
import { chassisLabelKey } from "../../config/roles";
import {
  chartOf,
  describeValue,
  type Finding,
  get,
  isObject,
  RELEASE_TYPE,
  resourceRule,
  type ResourceView,
  stackRule,
  valuesOf,
  valuesPath,
  walk,
} from "./common";
import { NEUTRON_CHART } from "./charts";
import { CHASSIS_ROLES, neutronReleases, neutronView, patchedNodes, selectedNodes } from "./neutron";
import { describePlacement, onlyOn } from "./placement";
import { apartOn, chartPodLabels, patchedPlacement, releaseId } from "./post-render";

const HOSTNAME_KEY = "kubernetes.io/hostname";

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
  const replicas = get(n.own, ["ovnCentral", "replicas"]);
  if (replicas !== undefined && replicas !== OVN_CENTRAL_MEMBERS) {
    findings.push({
      message: `${r.name}: ovnCentral.replicas is ${describeValue(replicas)}`,
      fix: `set it to ${OVN_CENTRAL_MEMBERS} (a RAFT cluster of 3 members survives one loss)`,
    });
  }
  if (!isObject(n.chassisSelector) || Object.keys(n.chassisSelector).length === 0) {
    findings.push({
      message: `${r.name}: chassis.nodeSelector is ${describeValue(n.chassisSelector)}: the chassis tolerates every taint, so it would run on every node (Kubernetes control plane, storage and provisioning nodes included)`,
      fix: `set chassis.nodeSelector: {${chassisLabelKey("hardened")}: ""}, the label the node-roles phase puts on compute and network nodes`,
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
  `Neutron backend ovn-nb; OVN central ${OVN_CENTRAL_MEMBERS} members on the control plane; a chassis nodeSelector; no Kube-OVN BGP speaker`,
  (r) => [...neutronOvnFindings(r), ...kubeOvnSpeakerFindings(r)],
);

/**
 * One RAFT member per node: the required host anti-affinity of OVN central's StatefulSet, from its
 * release's post-render patch, over the pods the chart labels (a term over other pods keeps nothing apart).
 */
function ovnCentralAntiAffinityFindings(resources: ResourceView[]): Finding[] {
  return neutronReleases(resources).flatMap((r): Finding[] => {
    const { name, podSpec, targets, misses, problem } = patchedPlacement(resources, r, "StatefulSet", "ovn-central");
    if (problem) return [problem];
    if (apartOn(podSpec, HOSTNAME_KEY, chartPodLabels(releaseId(r).name, name))) return misses;
    const why = podSpec
      ? `its post-render patch gives StatefulSet ${name} no required host anti-affinity over its own pods`
      : `no post-render patch reaches StatefulSet ${name} (the release's patches target: ${targets})`;
    return [
      ...misses,
      {
        urn: r.urn,
        message: `${r.name}: OVN central members may share a node: ${why}, and the chart renders none (§ 5.2)`,
        fix: "keep antiAffinity: required in OVN central's placement (openkeel:services.neutron.placement.ovnCentral): the release's post-render patch of StatefulSet <release>-ovn-central carries it (one RAFT member per node), over the pods the chart labels app.kubernetes.io/instance=<release>, app.kubernetes.io/name=<release>-ovn-central",
      },
    ];
  });
}

export const d2OvnCentralAntiAffinity = stackRule(
  "D2",
  "d2-ovn-central-anti-affinity",
  "OVN central's members on distinct nodes: a required host anti-affinity over its own pods reaches its StatefulSet (the release's post-render patch)",
  ovnCentralAntiAffinityFindings,
);

/** The nodes the chassis runs on, from its selector and the Node patches: every compute and network node, nothing but chassis roles. */
function chassisNodeFindings(resources: ResourceView[]): Finding[] {
  const nodes = patchedNodes(resources);
  const findings: Finding[] = [];
  for (const r of neutronReleases(resources)) {
    const n = neutronView(r);
    const on = new Set(selectedNodes(n.chassisSelector, nodes).map((x) => x.name));
    const missed = nodes.filter((x) => !on.has(x.name) && (x.roles.has("compute") || x.roles.has("network")));
    if (missed.length > 0) {
      findings.push({
        urn: r.urn,
        message: `${r.name}: the OVN chassis (chassis.nodeSelector ${describeValue(n.chassisSelector)}) misses compute or network node(s) ${missed.map((x) => x.name).join(", ")}`,
        fix: `select the chassis label (${chassisLabelKey("hardened")}) in chassis.nodeSelector; the node-roles phase puts it on every compute and network node`,
      });
    }
    const outside = nodes.filter((x) => on.has(x.name) && !CHASSIS_ROLES.some((role) => x.roles.has(role)));
    if (outside.length > 0) {
      findings.push({
        urn: r.urn,
        message: `${r.name}: the OVN chassis tolerates every taint and its selector (chassis.nodeSelector ${describeValue(n.chassisSelector)}) admits ${outside.map((x) => x.name).join(", ")}, which carry none of ${CHASSIS_ROLES.join(", ")}`,
        fix: `select only the chassis label (${chassisLabelKey("hardened")}) in chassis.nodeSelector, and keep that label off other nodes`,
      });
    }
  }
  return findings;
}

export const d2ChassisNodes = stackRule(
  "D2",
  "d2-chassis-nodes",
  `the OVN chassis, which tolerates every taint, runs on every compute and network node and only on ${CHASSIS_ROLES.join(", ")} nodes`,
  chassisNodeFindings,
);
