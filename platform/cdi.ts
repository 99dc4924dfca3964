// CDI: the pinned operator manifest and our CDI CR. The CR spells placement differently from
// KubeVirt's: `spec.infra` and `spec.workload` (singular) are NodePlacements themselves, with no
// `nodePlacement` level (cdi.kubevirt.io/v1beta1 schema). cdi-operator itself runs where its
// release puts it (no toleration, no role selector): on an untainted node, the control plane in
// every shipped topology (docs/platform.md).
import { ROLES, type Role } from "../config/roles";
import { type K8sObject, manifestsUnit, type ManifestsUnit } from "../plan/plan";
import { resolvePlacement } from "../placement/chart-helper";
import { CONTROL_PLANE, obj, platformComponent, type ObjectReader, type UpstreamWorkload } from "../placement/workloads";
import { manifestOperator, type PlatformComponent } from "./component";
import { controlPlaneScheduling, rolesTolerations, selectorAndTolerations, waitFor, type StackContext } from "./context";
import { nodePlacement } from "./kubevirt";
import { CDI_OPERATOR } from "./versions";
import { PRIORITY_CLASSES } from "./priority-classes";
import { fact } from "../plan/needs";

/** cdi-operator.yaml: the CDI CRD; cdi-operator on the pod network, on Linux nodes. */
const OPERATOR_CONTENT = { offers: [fact.api("cdi.kubevirt.io", "CDI")], uses: [fact.podNetwork, fact.nodeLabel("kubernetes.io/os")] };
const CDI_OPERATOR_CONTENTS = { "v1.66.0": OPERATOR_CONTENT, "v1.65.0": OPERATOR_CONTENT };

/** Every role some storage node carries: medium's storage nodes are also (tainted) compute nodes. */
function storageNodeRoles(ctx: StackContext): Role[] {
  const carried = new Set(ctx.topo.nodesByRole.storage.flatMap((n) => n.roles));
  carried.add("storage");
  return ROLES.filter((r) => carried.has(r));
}

/** Importer, cloner and upload-server pods: next to the Longhorn replicas they write (§ 2.2). */
function cdiWorkloadPlacement(ctx: StackContext) {
  return selectorAndTolerations(resolvePlacement({ role: "storage", tolerations: rolesTolerations(storageNodeRoles(ctx)) }, { profile: ctx.profile }));
}

function cdiUnit(ctx: StackContext): ManifestsUnit {
  const objects: K8sObject[] = [
    {
      apiVersion: "cdi.kubevirt.io/v1beta1",
      kind: "CDI",
      metadata: { name: "cdi", annotations: waitFor("condition=Available", 900) },
      spec: {
        infra: selectorAndTolerations(controlPlaneScheduling(ctx)),
        workload: cdiWorkloadPlacement(ctx),
        config: { featureGates: ["HonorWaitForFirstConsumer"] },
        // § 2: the CDI control plane is an operator's controller (the CR's only priority field)
        priorityClass: PRIORITY_CLASSES.control,
        imagePullPolicy: "IfNotPresent",
      },
    },
  ];
  // Deleting the CR uninstalls CDI.
  return manifestsUnit("cdi", "openkeel:platform:Cdi", objects, { protect: true });
}

/** cdi-operator as cdi-operator.yaml (v1.66.0) ships it: any Linux node it can tolerate (none of the role taints), preferring its own pods' host. */
export const CDI_OPERATOR_WORKLOAD: UpstreamWorkload = {
  kind: "Deployment",
  namespace: "cdi",
  name: "cdi-operator",
  replicas: 1,
  scheduling: {
    nodeSelector: { "kubernetes.io/os": "linux" },
    affinity: {
      podAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            podAffinityTerm: {
              labelSelector: { matchExpressions: [{ key: "cdi.kubevirt.io", operator: "In", values: ["cdi-operator"] }] },
              topologyKey: "kubernetes.io/hostname",
            },
            weight: 1,
          },
        ],
      },
    },
    tolerations: [],
  },
  designRoles: CONTROL_PLANE,
};

const readCdi: ObjectReader = (u, o) => {
  const spec = obj(o.spec);
  const id = (s: string) => `${o.metadata.name}/${s}`;
  // CDI's NodePlacement is inline (spec.infra, spec.workload: singular), not under nodePlacement.
  return [
    platformComponent(u, id("cdi-infra"), "Deployment", nodePlacement(spec.infra), CONTROL_PLANE),
    platformComponent(u, id("cdi-importer+cloner+upload"), "Pods", nodePlacement(spec.workload), ["storage"]),
  ];
};

export const cdi: PlatformComponent = {
  ...manifestOperator(
    "CDI",
    CDI_OPERATOR,
    { name: "cdi-operator", type: "openkeel:platform:CdiOperator", workloads: [CDI_OPERATOR_WORKLOAD], contents: CDI_OPERATOR_CONTENTS },
    { unit: cdiUnit, readers: { CDI: readCdi } },
  ),
  docs: [
    {
      component: "CDI",
      version: "v1.66.0",
      installedAs: "remote manifest `cdi-operator.yaml` + our `CDI` CR",
      phase: "crds-operators / platform",
      where: "infra on the control plane; importer/cloner/upload pods on storage nodes (tolerating every role those nodes carry)",
      stacks: "production, lab ✱",
    },
  ],
  // § 2.2: CDI's operator and infrastructure on the control plane; its importer, cloner and upload pods write
  // the storage nodes' volumes
  design: [
    { workloads: /cdi-operator\/cdi-operator$/, reach: ["controlPlane"] },
    { workloads: /cdi-infra$/, reach: ["controlPlane"] },
    { workloads: /cdi-importer\+cloner\+upload$/, reach: ["storage"] },
  ],
};
