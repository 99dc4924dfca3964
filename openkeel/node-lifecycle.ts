// What a node's life asks of OpenKeel's own services (docs/node-lifecycle.md): Nova's compute
// service on a compute node is disabled before it is drained (no new VM lands on it; a Masakari
// segment host also goes on maintenance, § 5.5), enabled when it is back, and deleted when the
// node leaves — Nova refuses while the resource provider has allocations, so only once every VM
// has left it.
import { COMPUTE_DISABLED_TAINT, hasTrait, isDrained } from "../config/lifecycle";
import { stateChange, type NodeLifecycle, type SlottedStep } from "../lifecycle/contributor";
import { OPENKEEL_CONSTRAINTS } from "./feasibility";

/** Before a hypervisor is drained: no new VM lands on it, and its compute agent taints it (§ 4.1). */
function disableNova(node: string, reason: string): SlottedStep {
  return {
    slot: "stop-work",
    when: "before",
    what: "disable Nova",
    command: `openstack compute service set --disable --disable-reason ${reason} ${node} nova-compute`,
    why: "no new VM lands on it; a Masakari segment host also goes on maintenance (openstack segment host update --on_maintenance True, § 5.5)",
  };
}

export const openkeelLifecycle: NodeLifecycle = {
  constraints: OPENKEEL_CONSTRAINTS,
  // the runbooks disable a drained hypervisor's service first, and the compute agent taints it (§ 4.1)
  stateTaints: (n) => (isDrained(n.state) && n.roles.includes("compute") ? [COMPUTE_DISABLED_TAINT] : []),
  steps: (t): SlottedStep[] => {
    const { node, before: b, after: h } = t;
    if (b && !h) {
      if (!b.roles.includes("compute")) return [];
      return [
        // a retiring node was disabled when it entered the state; any other is disabled before its drain
        ...(isDrained(b.state) ? [] : [disableNova(node, "removal")]),
        {
          slot: "retire-services",
          when: "before",
          what: "delete the Nova service",
          command: `openstack compute service delete <id of nova-compute on ${node}>`,
          why: "Nova refuses while the resource provider has allocations: every VM has left it first (§ 5.5)",
        },
      ];
    }
    const s = stateChange(t);
    if (!s || !h?.roles.includes("compute")) return [];
    if (isDrained(s.to) && !isDrained(s.from)) return [disableNova(node, s.to)];
    if (isDrained(s.from) && !hasTrait(s.to, "cordons")) {
      return [
        {
          slot: "resume-work",
          when: "after",
          what: "enable Nova",
          command: `openstack compute service set --enable ${node} nova-compute`,
          why: "it takes VMs again (and clear on_maintenance of a segment host)",
        },
      ];
    }
    return [];
  },
};
