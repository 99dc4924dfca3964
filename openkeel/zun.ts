// The `kata` RuntimeClass of Zun's containers and capsules (§ 1.2, § 2.2): one lightweight VM per
// Pod, on the containers nodes only. Its `scheduling` adds the containers role's selector and
// toleration to every Pod that names it, so a container can never land on a node without the Kata
// runtime (the Talos `kata-containers` extension is on containers nodes only, nodes/talos.ts).
import { roleLabelKey, roleToleration, type Role } from "../config/roles";
import { manifestsUnit, type K8sObject, type ManifestsUnit } from "../plan/plan";
import { obj, podScheduling, TENANT_WORKLOAD, type ObjectReader } from "../placement/workloads";
import type { StackContext } from "../platform/context";

export const KATA_RUNTIME_CLASS_UNIT = "openkeel-zun-runtime-class";
const CONTAINERS: Role = "containers";

/**
 * siderolabs/extensions container-runtime/kata-containers (README.md@85e5dca2): the extension
 * registers the containerd handler `kata` (Cloud Hypervisor); the README's RuntimeClass reserves
 * this fixed overhead per Pod for the VM.
 */
const KATA = { handler: "kata", overhead: { memory: "130Mi", cpu: "250m" } } as const;

export function kataRuntimeClassUnit(ctx: StackContext): ManifestsUnit {
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

export const RUNTIME_CLASS_READERS: Record<string, ObjectReader> = { RuntimeClass: readRuntimeClass };
