// KubeVirt: the pinned operator manifest (CRDs, virt-operator, the privileged `kubevirt`
// namespace) and our own KubeVirt CR with the placement of § 4.4: infra (virt-api,
// virt-controller) on the control plane, virt-handler on compute nodes, reserved hosts included.
// virt-operator itself runs where its release puts it, which no value of ours reaches (the CR
// places only what virt-operator creates): on the Kubernetes control plane, which it requires —
// in the large topology the Kubernetes-only nodes, not the OpenKeel control plane
// (docs/design-decisions.md).
import { isDrained } from "../config/lifecycle";
import { stateChange, type NodeLifecycle, type SlottedStep } from "../lifecycle/contributor";
import type { Check } from "../config/problems";
import { K8S_CONTROL_PLANE_LABEL, RESERVED_TOLERATION } from "../config/roles";
import type { Config } from "../config/schema";
import type { EnvironmentTraits } from "../topology/environment";
import type { Topology } from "../topology/topology";
import { type K8sObject, manifestsUnit, type ManifestsUnit } from "../plan/plan";
import { resolvePlacement } from "../placement/chart-helper";
import type { PodScheduling } from "../placement/scheduling";
import {
  CONTROL_PLANE,
  isObj,
  num,
  obj,
  platformComponent,
  podScheduling,
  TENANT_WORKLOAD,
  type ObjectReader,
  type UpstreamWorkload,
} from "../placement/workloads";
import { manifestOperator, type PlatformComponent } from "./component";
import type { HostContract } from "../plan/host";
import { controlPlaneScheduling, selectorAndTolerations, waitFor, type StackContext } from "./context";
import { KUBEVIRT_OPERATOR } from "./versions";
import { fact } from "../plan/needs";

const KUBEVIRT_NAMESPACE = "kubevirt";

/**
 * kubevirt-operator.yaml: the KubeVirt CRD, its namespace (the KubeVirt CR's), the class virt-operator gives its operands
 * (kubevirt-cluster-critical); virt-operator on the pod network, on Linux nodes, preferring the
 * control plane (its affinity reads the kubelet's and Talos' control-plane labels).
 */
const OPERATOR_CONTENT = {
  offers: [fact.api("kubevirt.io", "KubeVirt"), fact.namespace(KUBEVIRT_NAMESPACE), fact.priorityClass("kubevirt-cluster-critical")],
  uses: [fact.podNetwork, ...["kubernetes.io/os", "node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"].map(fact.nodeLabel)],
};
const KUBEVIRT_OPERATOR_CONTENTS = { "v1.9.0": OPERATOR_CONTENT, "v1.8.4": OPERATOR_CONTENT };

/** virt-handler (and so where VMIs may start): compute nodes, Masakari reserved hosts too (§ 5.6). */
function virtHandlerPlacement(ctx: StackContext) {
  // the taints of a disabled or draining host too: a rollout must bring it back there (§ 4.1)
  return selectorAndTolerations(
    resolvePlacement({ role: "compute", extraTolerations: [RESERVED_TOLERATION, ...ctx.agentTolerations] }, { profile: ctx.profile }),
  );
}

const KUBEVIRT_CR_UNIT = "kubevirt";

/** KubeVirt emulates (`developerConfiguration.useEmulation`) where the environment's nodes have no /dev/kvm: kind's. */
const emulates = (env: EnvironmentTraits) => !env.hardwareVirtualization;

/**
 * Emulation never in a cloud (issue 45): with useEmulation a VM pod requests no /dev/kvm, so the
 * scheduler may place it on a hypervisor without one (kubevirt@v1.9.0
 * pkg/virt-controller/services/renderresources.go:478-480), where virt-launcher, finding no KVM, runs
 * the guest on QEMU's software CPU instead of failing (pkg/virt-launcher/virtwrap/converter/kvm/
 * configurator.go:103-109). A cloud's VMs are its tenants': § 2 runs virt-handler with /dev/kvm on
 * every compute node. Refused on every stack of an environment whose traits say it both holds a
 * cloud's inventory and emulates, before the host contract could blame a node or a role for it.
 */
function emulationChecks(cfg: Config, topo: Topology): Check[] {
  const env = topo.environment;
  if (!emulates(env) || !env.cloudInventory) return [];
  const file = `environments/${cfg.environment}.ts`;
  return [
    {
      level: "error",
      code: "kubevirt-emulation",
      file,
      message:
        "KubeVirt would run this cloud's VMs without /dev/kvm (its CR's developerConfiguration.useEmulation, as the environment's traits count its nodes without hardware virtualization): " +
        "a VM pod then requests no /dev/kvm, may be placed on a hypervisor without it and runs on QEMU's emulated CPU, many times slower and without the host's CPU model for its guests; § 2 runs virt-handler with /dev/kvm on every compute node",
      fix: `set hardwareVirtualization: true in the traits of ${file} (Talos builds KVM in: a hypervisor without /dev/kvm has virtualization switched off in its firmware, and the host contract then names it); emulation is for a lab, whose environment holds no cloud inventory`,
    },
  ];
}

function kubevirtUnit(ctx: StackContext): ManifestsUnit {
  const objects: K8sObject[] = [
    {
      apiVersion: "kubevirt.io/v1",
      kind: "KubeVirt",
      metadata: {
        name: "kubevirt",
        namespace: KUBEVIRT_NAMESPACE,
        // What uses KubeVirt (Nova's compute agent: its usesAtRunTime) starts once KubeVirt reports Available.
        annotations: waitFor("condition=Available", 1200),
      },
      spec: {
        infra: { nodePlacement: selectorAndTolerations(controlPlaneScheduling(ctx)) },
        workloads: { nodePlacement: virtHandlerPlacement(ctx) },
        configuration: {
          migrations: { parallelMigrationsPerCluster: 5, parallelOutboundMigrationsPerNode: 2 },
          evictionStrategy: "LiveMigrate",
          // no /dev/kvm on the nodes (kind's): emulate
          ...(emulates(ctx.topo.environment) ? { developerConfiguration: { useEmulation: true } } : {}),
        },
      },
    },
  ];
  // Deleting the CR uninstalls KubeVirt.
  return manifestsUnit(KUBEVIRT_CR_UNIT, "openkeel:platform:KubeVirt", objects, {
    protect: true,
    offersAtRunTime: [
      {
        facts: [fact.api("kubevirt.io", "VirtualMachineInstance")],
        why: "virt-operator installs KubeVirt's CRDs (VirtualMachineInstance among them), virt-api and virt-handler when it reconciles this CR, which waits for condition=Available",
      },
    ],
  });
}

const KUBEVIRT_OS: Record<string, string> = { "kubernetes.io/os": "linux" };

/**
 * virt-operator as kubevirt-operator.yaml (v1.9.0) ships it: two replicas that require a node
 * labelled node-role.kubernetes.io/control-plane (or the older …/master), tolerate that taint and
 * CriticalAddonsOnly, and prefer non-worker nodes and one replica per host.
 */
export const VIRT_OPERATOR: UpstreamWorkload = {
  kind: "Deployment",
  namespace: KUBEVIRT_NAMESPACE,
  name: "virt-operator",
  replicas: 2,
  scheduling: {
    nodeSelector: KUBEVIRT_OS,
    affinity: {
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { preference: { matchExpressions: [{ key: "node-role.kubernetes.io/worker", operator: "DoesNotExist" }] }, weight: 100 },
        ],
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: K8S_CONTROL_PLANE_LABEL, operator: "Exists" }] },
            { matchExpressions: [{ key: "node-role.kubernetes.io/master", operator: "Exists" }] },
          ],
        },
      },
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            podAffinityTerm: {
              labelSelector: { matchExpressions: [{ key: "kubevirt.io", operator: "In", values: ["virt-operator"] }] },
              topologyKey: "kubernetes.io/hostname",
            },
            weight: 1,
          },
        ],
      },
    },
    tolerations: [
      { key: "CriticalAddonsOnly", operator: "Exists" },
      { effect: "NoSchedule", key: K8S_CONTROL_PLANE_LABEL, operator: "Exists" },
      { effect: "NoSchedule", key: "node-role.kubernetes.io/master", operator: "Exists" },
    ],
  },
  // upstream's hard requirement, not § 2.2's control plane: docs/design-decisions.md
  designRoles: "kubernetesControlPlane",
};

/** A NodePlacement (nodeSelector, affinity, tolerations), with the selector the operator adds. */
export function nodePlacement(np: unknown, extraSelector: Record<string, string> = {}): PodScheduling {
  const p = obj(np);
  return podScheduling(p, { nodeSelector: extraSelector });
}

/** The KubeVirt CR: infra (virt-api, virt-controller) and workloads (virt-handler) placements. */
const readKubeVirt: ObjectReader = (u, o) => {
  const spec = obj(o.spec);
  const id = (s: string) => `${o.metadata.name}/${s}`;
  // virt-operator always adds kubernetes.io/os=linux; without infra.nodePlacement it puts
  // virt-api/controller on the Kubernetes control plane (placement.go@v1.9.0).
  const infra = obj(spec.infra);
  const infraSched: PodScheduling = isObj(infra.nodePlacement)
    ? nodePlacement(infra.nodePlacement, KUBEVIRT_OS)
    : {
        nodeSelector: KUBEVIRT_OS,
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: K8S_CONTROL_PLANE_LABEL, operator: "Exists" }] }],
            },
          },
        },
        tolerations: [{ key: K8S_CONTROL_PLANE_LABEL, operator: "Exists", effect: "NoSchedule" }],
      };
  return [
    platformComponent(u, id("virt-api+virt-controller"), "Deployment", infraSched, CONTROL_PLANE, { replicas: num(infra.replicas) ?? 2 }),
    platformComponent(u, id("virt-handler"), "DaemonSet", nodePlacement(obj(spec.workloads).nodePlacement, KUBEVIRT_OS), ["compute"], TENANT_WORKLOAD),
  ];
};

/**
 * virt-handler's device plugins serve every VM pod of its node /dev/net/tun, /dev/vhost-net and,
 * unless the stack emulates, /dev/kvm (kubevirt@v1.9.0 pkg/virt-handler/device-manager/
 * device_controller.go:111-123); a missing device is advertised Unhealthy (generic_device.go:284-303),
 * and a VM pod that requests it stays Pending (pkg/virt-controller/services/renderresources.go:466-480).
 */
function kubevirtHost(ctx: StackContext): Partial<HostContract> {
  const emulated = emulates(ctx.topo.environment);
  const device = (name: string, why: string) => ({
    kind: "device" as const,
    anyOf: [name],
    why,
    fix: `give the compute role only to nodes whose host has ${name}`,
  });
  return {
    needs: [
      {
        component: `${KUBEVIRT_CR_UNIT}/kubevirt/virt-handler`,
        needs: [
          ...(emulated ? [] : [device("/dev/kvm", "each VM pod requests devices.kubevirt.io/kvm: the VM runs on KVM")]),
          device("/dev/net/tun", "each VM pod with a network interface requests devices.kubevirt.io/tun"),
          ...(emulated ? [] : [device("/dev/vhost-net", "each virtio NIC requests devices.kubevirt.io/vhost-net")]),
        ],
      },
    ],
  };
}

/**
 * The VMs whose eviction KubeVirt will deny on a node: with evictionStrategy LiveMigrate (ours, the
 * cluster-wide default above), the eviction admitter denies the eviction of a virt-launcher pod
 * whose VMI is not live-migratable — its LiveMigratable condition not True
 * (kubevirt/kubevirt v1.9.0 pkg/virt-api/webhooks/validating-webhook/admitters/pod-eviction-admitter.go
 * 127–170; VirtualMachineInstance.IsMigratable, staging/src/kubevirt.io/api/core/v1/types.go 537–544:
 * a host-model CPU with no compatible target, a local disk, a host or SR-IOV device, a non-shared
 * PVC). The Node Maintenance Operator retries the drain every ~35 s for ever
 * (medik8s/node-maintenance-operator v0.20.1 controllers/nodemaintenance_controller.go 52, 60,
 * 232–300: 30 s per attempt, then a requeue after 5 s), so the state never finishes.
 */
export function unmigratableVmis(node: string): string {
  const condition = (field: string) => `{.status.conditions[?(@.type=="LiveMigratable")].${field}}`;
  return `kubectl get vmi -A -o jsonpath='{range .items[?(@.status.nodeName=="${node}")]}{.metadata.namespace}/{.metadata.name} ${condition("status")} ${condition("reason")}{"\\n"}{end}' | grep -v ' True '`;
}

/** A hypervisor entering maintenance or retiring: its VMs that cannot live-migrate are found before the drain (the VM service moves them: its own step in the same slot). */
function kubevirtSteps(node: string): SlottedStep[] {
  return [
    {
      slot: "clear-drain",
      when: "before",
      what: "find the VMs that cannot live-migrate",
      command: unmigratableVmis(node),
      why: "KubeVirt denies the eviction of a VMI whose LiveMigratable condition is not True (evictionStrategy: LiveMigrate), and the drain retries it for ever; each line is one (namespace os-<project>, its reason)",
    },
  ];
}

const kubevirtLifecycle: NodeLifecycle = {
  holds: [{ role: "compute", what: "VMs" }],
  steps: (t) => {
    const s = stateChange(t);
    if (!s || !t.after?.roles.includes("compute") || !isDrained(s.to) || isDrained(s.from)) return [];
    return kubevirtSteps(t.node);
  },
};

export const kubevirt: PlatformComponent = {
  ...manifestOperator(
    "KubeVirt",
    KUBEVIRT_OPERATOR,
    { name: "kubevirt-operator", type: "openkeel:platform:KubeVirtOperator", workloads: [VIRT_OPERATOR], contents: KUBEVIRT_OPERATOR_CONTENTS },
    { unit: kubevirtUnit, readers: { KubeVirt: readKubeVirt } },
  ),
  host: kubevirtHost,
  docs: [
    {
      component: "KubeVirt",
      version: "v1.9.0",
      installedAs: "remote manifest `kubevirt-operator.yaml` + our `KubeVirt` CR",
      phase: "crds-operators / platform",
      where:
        "virt-operator on the Kubernetes control plane (its release requires it: see below); infra on the control plane; virt-handler on compute nodes (also `openkeel.io/reserved` hosts, and disabled or draining ones: `openkeel.io/compute-disabled`, `medik8s.io/drain`); 5 migrations per cluster, 2 per node, `evictionStrategy: LiveMigrate`; lab: emulation (never in production: `kubevirt-emulation` refuses an environment that holds a cloud's inventory without `/dev/kvm`)",
      stacks: "production, lab ✱",
    },
  ],
  design: [
    { workloads: /virt-api\+virt-controller$/, reach: ["controlPlane"] },
    // § 2.2 puts virt-operator on the control plane; its release requires the Kubernetes control
    // plane, which docs/design-decisions.md accepts (in large: the Kubernetes-only nodes)
    { workloads: /kubevirt-operator\/virt-operator$/, reach: "kubernetes control plane" },
    { workloads: /virt-handler$/, reach: ["compute"] },
  ],
  lifecycle: kubevirtLifecycle,
  checks: emulationChecks,
  priorityClasses: [
    {
      name: "kubevirt-cluster-critical",
      value: 1_000_000_000,
      source: "kubevirt-operator.yaml v1.9.0 (PriorityClass, value 1e9, line 7032; virt-operator hard-codes it on its operands)",
    },
  ],
};
