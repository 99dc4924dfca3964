// Node Feature Discovery (§ 2.3): labels every node with its hardware features
// (feature.node.kubernetes.io/*), which KubeVirt and the SR-IOV operator select on. The worker
// DaemonSet reads host paths read-only on every node, tainted ones included; nfd-master and the
// garbage collector run on the control plane.
import { K8S_CONTROL_PLANE_LABEL, RESERVED_TOLERATION, ROLES, type Toleration } from "../config/roles";
import { helmReleaseUnit, type HelmReleaseUnit, type K8sObject } from "../plan/plan";
import { CONTROL_PLANE, num, obj, platformComponent, podScheduling, priorityOf, type ChartWorkloads, type UnitReader } from "../placement/workloads";
import type { PlatformComponent } from "./component";
import { fact } from "../plan/needs";
import { contentAt, type Contents, controlPlaneScheduling, namespace, rolesTolerations, selectorAndTolerations, type StackContext } from "./context";
import { NODE_FEATURE_DISCOVERY_CHART } from "./versions";
import { PRIORITY_CLASSES } from "./priority-classes";

const NODE_FEATURE_DISCOVERY_TYPE = "openkeel:platform:NodeFeatureDiscovery";

const NAMESPACE = "node-feature-discovery";

/** Every node: each role's taint, Masakari's reserved hosts, the Kubernetes-only control plane. */
function workerTolerations(ctx: StackContext): Toleration[] {
  return [...rolesTolerations(ROLES), RESERVED_TOLERATION, ...ctx.agentTolerations, { key: K8S_CONTROL_PLANE_LABEL, operator: "Exists", effect: "NoSchedule" }];
}

/** The worker mounts host paths (read-only), which only the privileged Pod Security level admits. */
function nfdNamespace(): K8sObject {
  return namespace(NAMESPACE, "privileged");
}

/** The chart: its CRDs (NodeFeature, NodeFeatureRule, …: no unit creates such objects), its pods on the pod network. */
const NFD_CONTENT = { uses: [fact.podNetwork] };
const NFD_CONTENTS: Contents = { "0.18.3": NFD_CONTENT, "0.18.2": NFD_CONTENT };

function nfdRelease(ctx: StackContext): HelmReleaseUnit {
  const controlPlane = selectorAndTolerations(controlPlaneScheduling(ctx));
  const values = {
    // § 2: the operators' class. The top-level key only: with worker.priorityClassName as well the
    // worker template renders the key twice (templates/worker.yaml at 0.18.3)
    priorityClassName: PRIORITY_CLASSES.control,
    master: controlPlane,
    gc: controlPlane,
    worker: { tolerations: workerTolerations(ctx) },
  };
  return helmReleaseUnit("node-feature-discovery", NODE_FEATURE_DISCOVERY_TYPE, NAMESPACE, NODE_FEATURE_DISCOVERY_CHART, values, {
    ...contentAt(NFD_CONTENTS, NODE_FEATURE_DISCOVERY_CHART.version, "the node-feature-discovery chart"),
  });
}

const readRelease: UnitReader = (u) => {
  if (u.kind !== "HelmRelease") return [];
  const v = u.values;
  // templates/{master,nfd-gc,worker}.yaml at 0.18.3: the top-level priorityClassName (the worker's own too); the prune Job none
  const priority = priorityOf(v.priorityClassName ?? obj(v.worker).priorityClassName);
  return [
    // one replica each unless the values say otherwise (the chart's replicaCount)
    ...(["master", "gc"] as const).map((c) =>
      platformComponent(u, `nfd-${c}`, "Deployment", podScheduling(obj(v[c])), CONTROL_PLANE, {
        replicas: num(obj(v[c]).replicaCount) ?? 1,
        ...priorityOf(v.priorityClassName),
      }),
    ),
    platformComponent(u, "nfd-worker", "DaemonSet", podScheduling(obj(v.worker)), "allNodes", priority),
    // the post-delete hook Job (templates/post-delete-job.yaml) reuses master's nodeSelector, affinity and tolerations
    platformComponent(u, "nfd-prune", "Pods", podScheduling(obj(v.master)), CONTROL_PLANE),
  ];
};

/** The workloads of the chart at NODE_FEATURE_DISCOVERY_CHART (release `node-feature-discovery`: the chart names them after it). */
const NFD_CHART_WORKLOADS: ChartWorkloads = {
  rendered: {
    "Deployment node-feature-discovery-master": "nfd-master",
    "Deployment node-feature-discovery-gc": "nfd-gc",
    "DaemonSet node-feature-discovery-worker": "nfd-worker",
    "Job node-feature-discovery-prune": "nfd-prune",
  },
};

export const nodeFeatureDiscovery: PlatformComponent = {
  name: "Node Feature Discovery",
  docs: [
    {
      component: "Node Feature Discovery",
      version: "chart `node-feature-discovery` 0.18.3",
      installedAs:
        "Helm (`https://kubernetes-sigs.github.io/node-feature-discovery/charts`), namespace `node-feature-discovery` (privileged: the worker mounts host paths, read-only)",
      phase: "crds-operators",
      where: "nfd-master and gc on the control plane; nfd-worker on every node (every role taint, `openkeel.io/reserved`, the Kubernetes control-plane taint)",
      stacks: "all",
    },
  ],
  // § 2.3: Node Feature Discovery on every node; its master and garbage collector are operators
  design: [
    { workloads: /nfd-worker$/, reach: "every node" },
    { workloads: /nfd-(master|gc|prune)$/, reach: ["controlPlane"] },
  ],
  pins: [NODE_FEATURE_DISCOVERY_CHART],
  charts: { [NODE_FEATURE_DISCOVERY_CHART.chart]: NFD_CHART_WORKLOADS },
  artifacts: { "node-feature-discovery": NFD_CONTENTS },
  namespaces: () => [nfdNamespace()],
  units: (ctx) => ({ "crds-operators": [nfdRelease(ctx)] }),
  readers: { units: { [NODE_FEATURE_DISCOVERY_TYPE]: readRelease } },
};
