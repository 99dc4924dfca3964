// Neutron: networking, OVN in mode B (§ 3.1, D2). Its API and worker on the control plane; OVN
// central's RAFT members there, one per node (and per zone in large), on strict-local volumes (D5);
// the OVN chassis on every compute and network node (and containers node while Zun runs), placed by
// its own nodeSelector; the metadata agent on every hypervisor (D4), and ovn-bgp-agent where the
// fabric speaks BGP (D3).
import { z } from "zod";
import { BRIDGE_MAPPINGS_ANNOTATION, EXTERNAL_BOND_ANNOTATION, EXTERNAL_NIC_LABEL } from "../../config/roles";
import { labelKey, nodeSelectorSchema } from "../../config/k8s";
import { addFirst, concerned, downList, nodeList, ofTotal, type Loss, type NodeConstraint } from "../../lifecycle/feasibility";
import type { ComponentHostNeeds } from "../../plan/host";
import { isSecretRef, secretRef } from "../../plan/plan";
import { valueAt, type Check, type Problem } from "../../config/problems";
import type { Config, LoadedConfig } from "../../config/schema";
import type { LossFinding } from "../../placement/failure-table";
import { CONTROL_PLANE } from "../../placement/workloads";
import type { PlatformComponent } from "../../platform/component";
import { kubeOvn } from "../../platform/kube-ovn";
import { cloudRoleCheck } from "../../topology/checks";
import { chassisRoles, serviceEnabled } from "../../topology/services";
import type { Topology } from "../../topology/topology";
import { api, CHASSIS, chassisSelector, nodeAgentExtraTolerations, QUORUM_APART, secretRefSchema, unlisted, volumeSchema, worker } from "../components";
import { quorumPlacement } from "../context";
import { METADATA_PROXY_SECRET, releaseName } from "../names";
import { openkeelService, releaseValues } from "../service";

const NEUTRON = "neutron";

/** § 3.2: an HA chassis group needs two gateway chassis, one active and one standby. */
const HA_GATEWAYS = 2;

const GATEWAYS: NodeConstraint = {
  key: "gateway-chassis",
  facts: (plan) => (releaseValues(plan, releaseName(NEUTRON)) ? { haChassisGroup: HA_GATEWAYS } : undefined),
  loss: (loss, facts) => (facts ? gatewayLoss(loss) : []),
  judge(inv, facts) {
    const down = inv.down("network");
    if (!facts || !concerned(inv, down)) return [];
    const up = inv.up("network");
    if (up.length >= HA_GATEWAYS) return [];
    const gone = `${downList(down)} would leave ${up.length === 0 ? "no gateway chassis" : `one gateway chassis (${nodeList(up)})`}`;
    if (up.length === 0) {
      return [
        {
          level: "error",
          code: "gateway-chassis",
          message: `${gone}: the routers' gateways and the SNAT of VMs without a floating IP (§ 3.3) have nowhere to run`,
          fix: addFirst("a network node", down),
          path: inv.path(down),
        },
      ];
    }
    return [
      {
        level: "warning",
        code: "gateway-chassis",
        message: `${gone}: HA chassis groups need two (§ 3.2), so the routers' gateways run without a standby and the next failure of ${nodeList(up)} cuts them off`,
        fix: `add a network node first (3 are recommended, § 6.2), or take ${nodeList(down)} out only briefly`,
        path: inv.path(down),
      },
    ];
  },
};

/** Gateway chassis left: none cuts every router off, one runs them without a standby (§ 3.2). */
function gatewayLoss(loss: Loss): LossFinding[] {
  const all = loss.all("network");
  const up = loss.up("network");
  if (up.length === all.length) return [];
  const left = `${ofTotal(up.length, all.length)} gateway chassis left`;
  if (up.length === 0) {
    return [
      {
        what: "gateway chassis",
        level: "fatal",
        message: `${left}: every router's gateway and the SNAT of VMs without a floating IP (§ 3.3) are cut off`,
        fix: "network nodes in more than one failure domain: 3 are recommended (§ 6.2), one per zone in large (§ 6.3)",
      },
    ];
  }
  if (up.length < HA_GATEWAYS) {
    return [
      {
        what: "gateway chassis",
        level: "degraded",
        message: `${left}: the routers' HA chassis groups run without a standby (§ 3.2)`,
        fix: "a third network node (3 are recommended, § 6.2)",
      },
    ];
  }
  return [{ what: "gateway chassis", level: "holds", message: `${left}: the HA chassis groups fail over to them (§ 3.2)` }];
}

/**
 * § 3.1 mode B (D2): the OpenKeel chassis' ovs-vswitchd uses the kernel's openvswitch datapath, and
 * § 3.2: its init step adds the node's external NIC (the network.openkeel.io/external-nic label) to
 * the physnet bridge, so that NIC must exist on the host.
 */
function chassisNeeds(): ComponentHostNeeds[] {
  return [
    {
      component: `${releaseName(NEUTRON)}/chassis`,
      needs: [
        {
          kind: "kernelModule",
          anyOf: ["openvswitch"],
          why: "§ 3.1: ovs-vswitchd's kernel datapath (the openvswitch module)",
          fix: "load the openvswitch module on these nodes (Talos builds it in)",
        },
        {
          nodeLabel: EXTERNAL_NIC_LABEL,
          kind: "interface",
          takes: "the OVN chassis' physnet bridge",
          ovsOwned: true,
          why: "§ 3.2: the chassis adds the node's external NIC to its physnet bridge (br-ex), which makes ovs-system its master",
          fix: "declare that NIC under ovs of the node's host network (openkeel:hostNetworks.<name>.ovs: one NIC, or a bond of NICs with its mode and lacp), not under links or bonds, or correct the label to an interface declared there",
        },
      ],
    },
  ];
}

/** D4: the Neutron metadata agent signs with the secret Nova's metadata API checks. */
function metadataSecretProblems(cfg: LoadedConfig, valuesOf: (service: string) => Record<string, unknown> | undefined): Problem[] {
  const nova = valueAt(valuesOf("nova"), ["metadata", "sharedSecret"]);
  const neutron = valueAt(valuesOf(NEUTRON), ["metadataAgent", "sharedSecret"]);
  // a literal or missing secret is the contract's to report
  if (!isSecretRef(nova) || !isSecretRef(neutron) || nova.secretRef === neutron.secretRef) return [];
  const overridden =
    valueAt(cfg.services.nova?.values, ["metadata", "sharedSecret"]) !== undefined ||
    valueAt(cfg.services[NEUTRON]?.values, ["metadataAgent", "sharedSecret"]) !== undefined;
  // their descriptors give both the one generated secret: a difference no override explains is a bug
  if (!overridden) throw new Error(`D4: the descriptors give Nova (${nova.secretRef}) and Neutron (${neutron.secretRef}) different metadata secrets`);
  return [
    {
      file: cfg.file,
      path: "openkeel:services",
      message: "Nova's metadata.sharedSecret and Neutron's metadataAgent.sharedSecret differ: every metadata request would fail its signature check (D4)",
      fix: "remove the override of either, so that both use the one generated secret",
    },
  ];
}

// Two Open vSwitch stacks on one node (§ 3.1, § 7 Q1): Kube-OVN's ovs-ovn DaemonSet runs on every
// node (its nodeSelector is only `kubernetes.io/os: linux` and it tolerates every taint), and with
// Neutron the OpenKeel OVN chassis (mode B, D2) runs its own ovn-controller on the compute and
// network nodes (and the containers nodes while Zun runs). The design leaves open how the two
// coexist: a non-OVN primary CNI (its recommendation), Kube-OVN's ovs-vswitchd shared with a second
// integration bridge (to be validated), or Kube-OVN kept off those nodes (in practice the first).
// Upstream supports none of the shared set-ups: Kube-OVN has no value, flag or document for another
// ovn-controller on its ovs-vswitchd, and neither of its charts can keep ovs-ovn off chosen nodes
// (research note K9, /work/notes/longhorn-kubeovn-facts.md). This repository therefore configures
// neither, and says so on every stack where both stacks land: a warning, not an error, because an
// error would stop every production stack while the question is the design's to answer
// (docs/design-decisions.md, "Two OVS stacks on one hypervisor").

export const OVS_TWO_STACKS = "ovs-two-stacks";
/** Node names listed in the message before it says how many more. */
const LISTED = 6;

/** The nodes where Kube-OVN's ovs-ovn and the OpenKeel chassis both run, as a plan warning (where the stack installs Kube-OVN). */
function ovsStacksChecks(cfg: Config, topo: Topology, installed: readonly PlatformComponent[]): Check[] {
  if (!installed.includes(kubeOvn) || !serviceEnabled(cfg, topo, NEUTRON)) return [];
  const roles = chassisRoles(cfg, topo);
  const nodes = topo.nodes.filter((n) => n.roles.some((r) => roles.includes(r))).map((n) => n.name);
  if (nodes.length === 0) return [];
  const listed = nodes.length > LISTED ? `${nodes.slice(0, LISTED).join(", ")} and ${nodes.length - LISTED} more` : nodes.join(", ");
  return [
    {
      level: "warning",
      code: OVS_TWO_STACKS,
      // the nodes are this stack's; the reason and the fix are the same for every stack (printed once)
      message: `${nodes.length} node(s) run both Kube-OVN's ovs-ovn and the OpenKeel OVN chassis (${roles.join(", ")} roles): ${listed}`,
      reason:
        "how two OVS/OVN stacks share a node is the design's open question (§ 3.1, § 7 Q1), and upstream supports neither a second ovn-controller on Kube-OVN's ovs-vswitchd nor keeping ovs-ovn off these nodes: this repository configures no second integration bridge, so the tenant datapath on them is unvalidated",
      fix: "decide § 7 Q1 (a non-OVN primary CNI on these nodes, the design's recommendation; or a validated shared ovs-vswitchd with a second integration bridge) and test the tenant datapath of these nodes before production traffic (docs/design-decisions.md)",
      path: "openkeel:nodes",
    },
  ];
}

export const neutron = openkeelService({
  name: NEUTRON,
  chart: "openkeel-neutron",
  components: {
    api: api(30530),
    worker: unlisted(worker()),
    ovnCentral: {
      kind: "StatefulSet",
      placement: quorumPlacement,
      replicas: "quorum",
      // its own nodeSelector wins over the role (§ 5.2); an older chart's default was the lab key
      winningNodeSelector: ["ovnCentral", "nodeSelector"],
      settings: { storage: volumeSchema, nodeSelector: nodeSelectorSchema.optional() },
      // D2: the RAFT members on the control plane, whatever selector the chart is given
      design: { kind: "StatefulSet", roles: CONTROL_PLANE, confinedTo: "controlPlane" },
      quorum: { what: "OVN central", costs: "Neutron can change no network, port or router" },
      guarantee: {
        row: "§ 2.2 OVN central (D2)",
        source: "the post-render patch that carries it (openkeel/zone-spread.ts antiAffinityPostRender)",
        ...QUORUM_APART,
      },
      strictLocalVolume: { what: "OVN central", path: ["ovnCentral", "storage", "storageClassName"] },
    },
    // compute and network nodes, and containers nodes when Zun runs (their containers get Neutron
    // ports, § 1.2, § 2.2): the chassis label says which (../node-metadata.ts)
    chassis: {
      kind: "DaemonSet",
      nodeSelector: chassisSelector,
      // our contract for the chart: the Node annotations its physnet bridge mappings, and the OVS
      // bond it builds as the external NIC where the node has one, are read from
      settings: { bridgeMappingsAnnotation: labelKey, externalBondAnnotation: labelKey },
      design: CHASSIS,
    },
    metadataAgent: {
      kind: "DaemonSet",
      optional: true,
      // a VM Masakari evacuates to a reserved host still asks 169.254.169.254 (D4, § 5.6)
      placement: (ctx) => ({ role: "compute", enabled: true, extraTolerations: nodeAgentExtraTolerations(ctx) }),
      settings: { sharedSecret: secretRefSchema },
      unlisted: { priority: "none", switch: "on" },
      design: { kind: "DaemonSet", roles: ["compute"], reservedHosts: true },
    },
    bgpAgent: {
      kind: "DaemonSet",
      optional: true,
      // distributed FIPs leave from the hypervisors, so they announce them too (D3), reserved ones included
      placement: (ctx) => ({ roles: ["network", "compute"], enabled: ctx.cfg.bgp, extraTolerations: nodeAgentExtraTolerations(ctx) }),
      unlisted: { priority: "none", switch: "off" },
      design: { kind: "DaemonSet", roles: ["network", "compute"], reservedHosts: true },
    },
  },
  apiJob: true,
  settings: {
    backend: z.enum(["ovn-nb", "kube-ovn"]),
    gateway: z.strictObject({ floatingIpMode: z.enum(["centralized", "distributed"]) }),
  },
  values: (ctx) => ({
    backend: "ovn-nb",
    gateway: { floatingIpMode: "distributed" },
    // § 3.2: the chassis reads its wiring from its own Node; the mappings cannot be a label (`:`)
    chassis: { bridgeMappingsAnnotation: BRIDGE_MAPPINGS_ANNOTATION, externalBondAnnotation: EXTERNAL_BOND_ANNOTATION },
    ovnCentral: { storage: { storageClassName: ctx.storage.strictLocalClass } },
    metadataAgent: { sharedSecret: secretRef(METADATA_PROXY_SECRET) },
  }),
  host: chassisNeeds,
  constraints: [GATEWAYS],
  holds: [{ role: "network", what: "a gateway chassis" }],
  concern: "network",
  planChecks: (cfg, topo, installed) => [
    ...cloudRoleCheck(topo, "network", {
      level: "error",
      code: "network-count",
      message: "no network node: Neutron has no gateway chassis for router gateways and SNAT",
      fix: "give the network role to at least 1 node",
    }),
    ...ovsStacksChecks(cfg, topo, installed),
  ],
  releaseChecks: metadataSecretProblems,
  docs: {
    components:
      "`api`, `worker` (controlPlane; `worker` a post-render patch, below); `ovnCentral` (controlPlane; its required host anti-affinity, and in large the zone term, a post-render patch, `postrender/openkeel-neutron.yaml`: no chart reads either); `metadataAgent` (compute + `openkeel.io/reserved`, `enabled: true`, D4); `bgpAgent` (`[network, compute]` + `openkeel.io/reserved`, `enabled` = `openkeel:bgp`): both post-render patches, below",
    values:
      "`chassis.nodeSelector` (the chassis label, below); `chassis.bridgeMappingsAnnotation: network.openkeel.io/bridge-mappings` (where each chassis reads its physnet bridge mappings, D3); `ovnCentral.nodeSelector` (the controlPlane label, below); `backend: ovn-nb` (D2); `gateway.floatingIpMode: distributed` (D3); `ovnCentral.storage.storageClassName: longhorn-local`; `metadataAgent.sharedSecret` (D4); `metadataAgent.enabled`, `bgpAgent.enabled`",
  },
});
