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
import type { Check } from "../config/problems";
import type { Config } from "../config/schema";
import { chassisRoles, serviceEnabled } from "../topology/services";
import type { Topology } from "../topology/topology";

export const OVS_TWO_STACKS = "ovs-two-stacks";
/** Node names listed in the message before it says how many more. */
const LISTED = 6;

/** The nodes where Kube-OVN's ovs-ovn and the OpenKeel chassis both run, as a plan warning. */
export function ovsStacksChecks(cfg: Config, topo: Topology): Check[] {
  if (!serviceEnabled(cfg, topo, "neutron")) return [];
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
