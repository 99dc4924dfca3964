// Nova: compute. Its API, conductor, scheduler (§ 5.2 does not list it: a post-render patch) and
// console proxy on the control plane; its compute agent on every hypervisor (D6: it subtracts the
// live requests of non-VM pods from the inventories), Masakari's reserved hosts included; an Ironic
// agent where Ironic runs. Its agents register in Placement, so its release waits for Placement's.
// A hypervisor's drain waits for its VMs' live migration, and Nova's service on it is disabled first.
import { z } from "zod";
import { labelKey } from "../../config/k8s";
import { COMPUTE_DISABLED_TAINT, hasTrait, isDrained } from "../../config/lifecycle";
import { stateChange, type SlottedStep } from "../../lifecycle/contributor";
import { addFirst, concerned, downList, nodeList, ofTotal, transition, type NodeConstraint } from "../../lifecycle/feasibility";
import { secretRef } from "../../plan/plan";
import { fact } from "../../plan/needs";
import { TENANT_WORKLOAD } from "../../placement/workloads";
import { cloudRoleCheck } from "../../topology/checks";
import { api, computeLabel, nodeAgentExtraTolerations, secretRefSchema, unlisted, worker } from "../components";
import { METADATA_PROXY_SECRET, releaseName } from "../names";
import { openkeelService, releaseValues, type ServiceLifecycle } from "../service";

const NOVA = "nova";

/** D6 (§ 4.2): the compute agent subtracts the live requests of non-VM pods from the inventories. */
const DYNAMIC_RESERVATION = {
  enabled: true,
  debounceSeconds: 30,
  thresholds: { vcpu: 1, memoryMiB: 256 },
} as const;

const dynamicReservationSchema = z.strictObject({
  enabled: z.boolean(),
  debounceSeconds: z.number().int().min(0),
  thresholds: z.strictObject({ vcpu: z.number().min(0), memoryMiB: z.number().int().min(0) }),
});

/**
 * The hypervisors (§ 4.1, § 5.6): a drain live-migrates their VMs (KubeVirt evictionStrategy:
 * LiveMigrate), which needs another hypervisor up; a loss leaves their VMs down until Masakari
 * evacuates them.
 */
const HYPERVISORS: NodeConstraint = {
  key: "hypervisors",
  facts: (plan) => (releaseValues(plan, releaseName(NOVA)) ? { evictionStrategy: "LiveMigrate" } : undefined),
  loss(loss, facts) {
    const all = loss.all("compute");
    const out = loss.out("compute");
    if (!facts || out.length === 0) return [];
    if (out.length === all.length) {
      return [
        {
          what: "hypervisors",
          level: "fatal",
          message: `${ofTotal(0, all.length)} hypervisors left: every VM is down, and none can start anywhere`,
          fix: "compute nodes in more than one failure domain (per zone in large, § 6.3)",
        },
      ];
    }
    const free = Math.ceil((100 * out.length) / all.length);
    return [
      {
        what: "hypervisors",
        level: "degraded",
        message: `${ofTotal(all.length - out.length, all.length)} hypervisors left: the VMs of the lost ones are down until Masakari evacuates them (after fencing, § 5.6) to the others, which need ${free}% of their capacity free to take them (equal hosts and load assumed: the inventory has no VM sizing)`,
        fix: `keep ${free}% of the compute capacity free (Placement's allocation ratios or reserved hosts, § 5.6), or add compute nodes`,
      },
    ];
  },
  judge(inv, facts) {
    const down = inv.down("compute");
    if (!facts || !concerned(inv, down)) return [];
    const up = inv.up("compute");
    if (up.length === 0) {
      return [
        {
          level: "error",
          code: "hypervisors-left",
          message: `${downList(down)} would leave no hypervisor up: their VMs have nowhere to go, and their drain waits for live migrations that cannot start (KubeVirt evictionStrategy: LiveMigrate)`,
          fix: down.length > 1 ? `take one hypervisor at a time: ${transition(down.slice(1))} later` : addFirst("a compute node", down),
          path: inv.path(down),
        },
      ];
    }
    if (down.length < 2 && up.length > 1) return [];
    const last = up.length === 1 ? "; with one hypervisor left, no VM can live-migrate again until they are back" : "";
    const message =
      down.length > 1
        ? `${downList(down)} would be out at once: their VMs live-migrate to ${nodeList(up)}, which must have room for all of them${last}`
        : `${downList(down)} would leave one hypervisor up (${nodeList(up)}): its VMs live-migrate there, and none can live-migrate again until it is back`;
    return [
      {
        level: "warning",
        code: "hypervisors-left",
        message,
        fix:
          down.length > 1
            ? `take one hypervisor at a time: ${transition(down.slice(1))} later, or check first that ${nodeList(up)} can hold their VMs`
            : addFirst("a compute node", down),
        path: inv.path(down.slice(1).length > 0 ? down.slice(1) : down),
      },
    ];
  },
};

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

/** Before a hypervisor's drain, after KubeVirt's step has listed the VMs that cannot live-migrate. */
function moveVms(node: string): SlottedStep {
  return {
    slot: "clear-drain",
    when: "before",
    what: "move or stop them through Nova",
    command: `openstack server list --all-projects --host ${node} --long; for each VM listed above: openstack server migrate --wait <server> && openstack server resize confirm <server> (cold migration), or openstack server stop <server> until the node is back`,
    why: "Nova owns the VMs: a cold migration restarts one on another host (§ 5.5: what cannot live-migrate is Nova's to move), a stopped one leaves no pod to evict; done before pulumi up, the drain finishes",
  };
}

/**
 * `state: disabled` is no node state. To stop new VMs on a hypervisor without draining it, the
 * design has two ways (§ 4.1), neither of which is a drain: the stack's `cordoned` (no new pods at
 * all; the compute agent reports the nova-compute service disabled, "cordoned in Kubernetes"), or
 * disabling the service in Nova alone, outside the stack (the compute agent taints the node
 * `openkeel.io/compute-disabled`, which every node agent here tolerates: docs/node-lifecycle.md).
 * `maintenance` would drain it.
 */
const NOT_STATES = {
  disabled:
    "to stop new VMs on this hypervisor without draining it, write state: cordoned (no new pods land there, VMs included: the compute agent reports its nova-compute service disabled, 'cordoned in Kubernetes', § 4.1; nothing running moves), or leave the stack alone and run openstack compute service set --disable <node> nova-compute (the compute agent taints the node openkeel.io/compute-disabled:NoSchedule: no new VMs, other pods still land). maintenance would drain the node (docs/node-lifecycle.md)",
};

/**
 * What a node's life asks of Nova (docs/node-lifecycle.md): its compute service on a compute node
 * is disabled before it is drained (no new VM lands on it; a Masakari segment host also goes on
 * maintenance, § 5.5), enabled when it is back, and deleted when the node leaves — Nova refuses
 * while the resource provider has allocations, so only once every VM has left it.
 */
const LIFECYCLE: ServiceLifecycle = {
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
    if (isDrained(s.to) && !isDrained(s.from)) return [disableNova(node, s.to), moveVms(node)];
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

export const nova = openkeelService({
  name: NOVA,
  chart: "openkeel-nova",
  components: {
    api: api(30520),
    conductor: worker(),
    scheduler: unlisted(worker()),
    // noVNC and the serial console: the user's browser connects to it
    consoleProxy: { ...worker(), publicApi: { labNodePort: 30521 } },
    computeAgent: {
      kind: "DaemonSet",
      placement: (ctx) => ({ role: "compute", extraTolerations: nodeAgentExtraTolerations(ctx) }),
      settings: { dynamicReservation: dynamicReservationSchema },
      design: { kind: "DaemonSet", roles: ["compute"], ...TENANT_WORKLOAD, reservedHosts: true },
    },
    ironicAgent: {
      kind: "Deployment",
      optional: true,
      // one active (Lease): publishes Ironic nodes to Placement, only useful with Ironic
      placement: (ctx) => ({ role: "controlPlane", enabled: ctx.serviceOn("ironic") }),
      replicas: { fixed: 1 },
    },
  },
  waitsFor: [
    { service: "placement", why: "its compute agents register the nova-compute service and their resource providers in Placement when they start (§ 4.2)" },
  ],
  usesAtRunTime: [
    {
      facts: [fact.api("kubevirt.io", "VirtualMachineInstance")],
      why: "its compute agent reads and creates VirtualMachineInstances (§ 2: RBAC on VMIs), whose CRD virt-operator installs once it reconciles the KubeVirt CR",
    },
  ],
  apiJob: true,
  settings: {
    config: z.strictObject({
      // the driver and the compute agent must find the same hypervisors (§ 5.2)
      kubernetes: z.strictObject({ compute_role_label: labelKey }).optional(),
    }),
    metadata: z.strictObject({ sharedSecret: secretRefSchema }),
  },
  values: (ctx) => {
    const label = computeLabel(ctx);
    return {
      computeAgent: { dynamicReservation: { ...DYNAMIC_RESERVATION, thresholds: { ...DYNAMIC_RESERVATION.thresholds } } },
      config: label ? { kubernetes: { compute_role_label: label } } : {},
      metadata: { sharedSecret: secretRef(METADATA_PROXY_SECRET) },
    };
  },
  constraints: [HYPERVISORS],
  concern: "compute",
  planChecks: (_cfg, topo) =>
    cloudRoleCheck(topo, "compute", {
      level: "error",
      code: "compute-count",
      message: "no compute node: Nova has no hypervisor",
      fix: "give the compute role to at least 1 node",
    }),
  lifecycle: LIFECYCLE,
  holds: [{ role: "compute", what: "a nova-compute service" }],
  notStates: NOT_STATES,
  docs: {
    components:
      "`api`, `conductor`, `scheduler` (a post-render patch, below), `consoleProxy` (controlPlane); `computeAgent` (compute + `openkeel.io/reserved` toleration); `ironicAgent` (controlPlane, `enabled` with Ironic)",
    values:
      "`computeAgent.dynamicReservation` (D6: `enabled`, `debounceSeconds: 30`, `thresholds: {vcpu: 1, memoryMiB: 256}`); `config.kubernetes.compute_role_label` (the profile's compute label); `metadata.sharedSecret` (D4)",
  },
});
