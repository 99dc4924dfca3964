// Zun: containers (§ 1.2, § 2.2). Its API on the control plane, its compute agent on every
// containers node; § 5.2 lists neither: both are placed by post-render patches. Its containers and
// capsules run with the `kata` RuntimeClass, which its release waits for: one lightweight VM per
// Pod, on the containers nodes only. Its `scheduling` adds the containers role's selector and
// toleration to every Pod that names it, so a container can never land on a node without the Kata
// runtime (the Talos `kata-containers` extension is on containers nodes only, nodes/talos.ts).
import { z } from "zod";
import { labelKey, tolerationSchema } from "../../config/k8s";
import { roleLabelKey, roleToleration, type Role } from "../../config/roles";
import type { ComponentHostNeeds } from "../../plan/host";
import { manifestsUnit, type K8sObject, type ManifestsUnit } from "../../plan/plan";
import { obj, podScheduling, TENANT_WORKLOAD, type ObjectReader } from "../../placement/workloads";
import type { StackContext } from "../../platform/context";
import { api, computeLabel, nodeAgentExtraTolerations, unlisted } from "../components";
import { openkeelService } from "../service";

const KATA_RUNTIME_CLASS_UNIT = "openkeel-zun-runtime-class";
const CONTAINERS: Role = "containers";

/**
 * siderolabs/extensions container-runtime/kata-containers (README.md@85e5dca2): the extension
 * registers the containerd handler `kata` (Cloud Hypervisor); the README's RuntimeClass reserves
 * this fixed overhead per Pod for the VM.
 */
const KATA = { handler: "kata", overhead: { memory: "130Mi", cpu: "250m" } } as const;

function kataRuntimeClassUnit(ctx: StackContext): ManifestsUnit {
  const runtimeClass: K8sObject = {
    apiVersion: "node.k8s.io/v1",
    kind: "RuntimeClass",
    metadata: { name: KATA.handler },
    handler: KATA.handler,
    overhead: { podFixed: { ...KATA.overhead } },
    scheduling: {
      // without role labels (a lab whose nodes carry none) a role selector would match no node
      ...(ctx.rolesPassed ? { nodeSelector: { [roleLabelKey(CONTAINERS, ctx.topo.profile)]: "" } } : {}),
      tolerations: [roleToleration(CONTAINERS)],
    },
  };
  return manifestsUnit(KATA_RUNTIME_CLASS_UNIT, "openkeel:openkeel:RuntimeClass", [runtimeClass]);
}

/** The Pods that run with it (Zun's containers and capsules): tenant workloads on containers nodes only. */
const readRuntimeClass: ObjectReader = (u, o) => [
  {
    name: `${u.name}/${o.metadata.name}`,
    source: "openkeel",
    unit: u.name,
    kind: "Pods",
    scheduling: podScheduling(obj(o.scheduling)),
    designRoles: [CONTAINERS],
    confinedTo: CONTAINERS,
    ...TENANT_WORKLOAD,
  },
];

/**
 * § 1.2: Zun's containers run in Kata VMs: the containerd handler `kata` (the Talos
 * kata-containers extension registers it: siderolabs/extensions container-runtime/kata-containers)
 * and /dev/kvm for the VM.
 */
function kataNeeds(): ComponentHostNeeds[] {
  return [
    {
      component: `${KATA_RUNTIME_CLASS_UNIT}/kata`,
      needs: [
        {
          kind: "runtimeHandler",
          anyOf: ["kata"],
          why: "§ 1.2: the kata RuntimeClass's handler, which runs each Pod in a lightweight VM",
          fix: "give the containers role only to nodes whose OS has the Kata runtime (on Talos: the siderolabs/kata-containers extension, which the containers nodes' schematic carries)",
        },
        {
          kind: "device",
          anyOf: ["/dev/kvm"],
          why: "§ 1.2: a Kata container is a VM, started through /dev/kvm",
          fix: "give the containers role only to nodes with hardware virtualization (/dev/kvm)",
        },
      ],
    },
  ];
}

export const zun = openkeelService({
  name: "zun",
  chart: "openkeel-zun",
  components: {
    api: unlisted(api(30670)),
    computeAgent: {
      kind: "DaemonSet",
      placement: (ctx) => ({ role: CONTAINERS, extraTolerations: nodeAgentExtraTolerations(ctx) }),
      unlisted: { priority: "none" },
      design: { kind: "DaemonSet", roles: [CONTAINERS], ...TENANT_WORKLOAD, reservedHosts: true },
    },
  },
  requiredRole: CONTAINERS,
  // the containers' Neutron ports are bound on their own nodes (§ 2.2): those nodes are OVN chassis
  chassisRoles: [CONTAINERS],
  holds: [{ role: CONTAINERS, what: "Zun containers" }],
  settings: {
    config: z.strictObject({
      kubernetes: z
        .strictObject({
          // a node with both roles belongs to Nova's agent (§ 1.4); Zun must read the same label
          nova_compute_label: labelKey.optional(),
          // § 2.2: the containers' and capsules' Pods tolerate the containers role (they run on
          // the node Zun's scheduler picked, through the kata RuntimeClass)
          compute_toleration: tolerationSchema,
        })
        .optional(),
    }),
  },
  values: (ctx) => {
    const label = computeLabel(ctx);
    return { config: { kubernetes: { ...(label ? { nova_compute_label: label } : {}), compute_toleration: roleToleration(CONTAINERS) } } };
  },
  releaseUnits: (ctx) => ({
    units: [kataRuntimeClassUnit(ctx)],
    why: "Zun's compute agent runs every container and capsule as a Pod of the kata RuntimeClass: the Pods it creates at run time name it, no object of the release does",
  }),
  readers: { RuntimeClass: readRuntimeClass },
  host: kataNeeds,
  docs: {
    components: "post-render patches (below): `api` (controlPlane); `computeAgent` (containers + `openkeel.io/reserved` toleration)",
    values:
      "`config.kubernetes.nova_compute_label`; `config.kubernetes.compute_toleration` (the containers role's toleration, which the containers' Pods get, § 2.2)",
  },
});
