// How the placement report reads Longhorn: the pods its release places (and those longhorn-manager
// creates with the system-managed settings), the share managers of a class that places them, and
// the workloads of its chart at LONGHORN_CHART.
import {
  CONTROL_PLANE,
  isObj,
  num,
  obj,
  platformComponent,
  podScheduling,
  priorityOf,
  type ChartWorkloads,
  type Component,
  type Obj,
  type ObjectReader,
  type UnitReader,
} from "../placement/workloads";
import type { PodScheduling } from "../placement/scheduling";
import {
  CREATE_DEFAULT_DISK_LABEL,
  LONGHORN_DISK_ROLES,
  LONGHORN_DRIVER,
  LONGHORN_TYPE,
  parseLonghornNodeSelector,
  parseLonghornTolerations,
  SHARE_MANAGER_NODE_SELECTOR,
  SYSTEM_MANAGED_NODE_SELECTOR,
  VOLUME_CONSUMER_ROLES,
} from "./longhorn-names";
import { allUnits } from "../plan/plan";

/** Longhorn chart: a component's value replaces the global one when non-empty (`default`). */
function longhornPick(values: Obj, component: string, field: "nodeSelector" | "tolerations"): unknown {
  const own = obj(values[component])[field];
  const empty = own === undefined || own === null || (Array.isArray(own) ? own.length === 0 : isObj(own) && Object.keys(own).length === 0);
  return empty ? obj(values.global)[field] : own;
}

/**
 * The CSI sidecar Deployments longhorn-manager creates (app/driver.go deployCSIDriver, research note
 * L3), `csi.<x>ReplicaCount` replicas each (3 by default: csi/deployment.go). At 1.12.1 they take
 * the same system-managed-components-node-selector and taint-toleration as the CSI plugin
 * DaemonSet, which must run wherever a volume is mounted: § 2.3's "control plane (or storage)"
 * cannot be had without confining the plugin too (no VM disk would attach on a hypervisor), so
 * they run on any node that uses volumes (docs/design-decisions.md). Their design row stays § 2.3's.
 */
const CSI_SIDECARS = {
  attacher: "attacherReplicaCount",
  provisioner: "provisionerReplicaCount",
  resizer: "resizerReplicaCount",
  snapshotter: "snapshotterReplicaCount",
};

const DEFAULT_CSI_REPLICAS = 3;

function csiSidecars(u: Parameters<UnitReader>[0], values: Obj, systemManaged: PodScheduling): Component[] {
  return Object.entries(CSI_SIDECARS).map(([name, key]) =>
    platformComponent(u, `csi-${name}`, "Deployment", systemManaged, ["controlPlane", "storage"], {
      replicas: num(obj(values.csi)[key]) ?? DEFAULT_CSI_REPLICAS,
    }),
  );
}

/**
 * The share-manager pods of a Longhorn class that places them (`shareManagerNodeSelector`): the
 * system-managed selector with the class's merged in, the taint-toleration setting (as the Plan's
 * Longhorn release sets it) plus the class's `shareManagerTolerations` (share_manager_controller.go
 * createShareManagerPod). One pod per RWX volume, on storage nodes (§ 2.3).
 */
export const readStorageClass: ObjectReader = (u, o, ctx) => {
  const params = obj(o.parameters);
  if (o.provisioner !== LONGHORN_DRIVER || params[SHARE_MANAGER_NODE_SELECTOR] === undefined) return [];
  const release = allUnits(ctx.plan).find((r) => r.kind === "HelmRelease" && r.type === LONGHORN_TYPE);
  const setting = release?.kind === "HelmRelease" ? obj(obj(release.values).defaultSettings).taintToleration : undefined;
  const scheduling: PodScheduling = {
    nodeSelector: { ...SYSTEM_MANAGED_NODE_SELECTOR, ...parseLonghornNodeSelector(params[SHARE_MANAGER_NODE_SELECTOR]) },
    tolerations: [...parseLonghornTolerations(setting), ...parseLonghornTolerations(params.shareManagerTolerations)],
  };
  return [platformComponent(u, `${o.metadata.name}/share-manager`, "Pods", scheduling, ["storage"], { confinedTo: "storage" })];
};

/**
 * The chart's priority class (values.yaml at 1.12.1: `defaultSettings.priorityClass`, which
 * `longhornManager`, `longhornDriver` and `longhornUI.priorityClass` repeat by a YAML alias); the
 * release creates it (templates/priorityclass.yaml).
 */
const LONGHORN_PRIORITY_CLASS = "longhorn-critical";

export const readRelease: UnitReader = (u) => {
  if (u.kind !== "HelmRelease") return [];
  const v = u.values as Obj;
  const settings = obj(v.defaultSettings);
  const user = (component: string): PodScheduling =>
    podScheduling({ nodeSelector: longhornPick(v, component, "nodeSelector"), tolerations: longhornPick(v, component, "tolerations") });
  // templates/{daemonset-sa,deployment-driver,deployment-ui}.yaml: `<component>.priorityClass`, when not empty
  const priority = (component: string) => priorityOf(obj(v[component]).priorityClass ?? LONGHORN_PRIORITY_CLASS);
  const manager = user("longhornManager");
  const systemManaged: PodScheduling = {
    nodeSelector: parseLonghornNodeSelector(settings.systemManagedComponentsNodeSelector),
    tolerations: parseLonghornTolerations(settings.taintToleration),
  };
  const managed = priorityOf(settings.priorityClass ?? LONGHORN_PRIORITY_CLASS);
  const diskLabelled = settings.createDefaultDiskLabeledNodes === true || settings.createDefaultDiskLabeledNodes === "true";
  return [
    platformComponent(u, "longhorn-manager", "DaemonSet", manager, VOLUME_CONSUMER_ROLES, priority("longhornManager")),
    // created by longhorn-manager with the priority-class setting (the chart's default-setting.yaml writes it)
    platformComponent(u, "longhorn-csi-plugin+instance-managers", "DaemonSet", systemManaged, VOLUME_CONSUMER_ROLES, managed),
    ...csiSidecars(u, v, systemManaged).map((c) => ({ ...c, ...managed })),
    // templates/deployment-driver.yaml: `replicas: 1`, fixed
    platformComponent(u, "longhorn-driver-deployer", "Deployment", user("longhornDriver"), CONTROL_PLANE, { replicas: 1, ...priority("longhornDriver") }),
    platformComponent(u, "longhorn-ui", "Deployment", user("longhornUI"), CONTROL_PLANE, {
      replicas: num(obj(v.longhornUI).replicas) ?? 2,
      ...priority("longhornUI"),
    }),
    // Helm hooks (templates/{preupgrade,postupgrade,uninstall}-job.yaml): the manager's nodeSelector
    // and tolerations; the manager's priority class, but for the pre-upgrade Job, which names none
    platformComponent(u, "longhorn-pre-upgrade", "Pods", manager, CONTROL_PLANE),
    platformComponent(u, "longhorn-post-upgrade+uninstall", "Pods", manager, CONTROL_PLANE, priority("longhornManager")),
    // Disks: a node gets a default disk when longhorn-manager runs there and, with
    // createDefaultDiskLabeledNodes, it carries node.longhorn.io/create-default-disk=true|config.
    // Storage nodes hold the replicas (§ 2.3); control-plane nodes the strict-local volumes of D5.
    platformComponent(u, "longhorn-default-disks", "LonghornDisks", manager, LONGHORN_DISK_ROLES, {
      ...(diskLabelled
        ? { nodeSelection: { matchExpressions: [{ key: CREATE_DEFAULT_DISK_LABEL, operator: "In", values: ["true", "config"] }] } }
        : { nodeSelection: {} }),
    }),
  ];
};

/** The workloads of the chart at LONGHORN_CHART (templates/*.yaml), by the component of readRelease that stands for each. */
export const LONGHORN_CHART_WORKLOADS: ChartWorkloads = {
  rendered: {
    "DaemonSet longhorn-manager": "longhorn-manager",
    "Deployment longhorn-driver-deployer": "longhorn-driver-deployer",
    "Deployment longhorn-ui": "longhorn-ui",
    "Job longhorn-pre-upgrade": "longhorn-pre-upgrade",
    "Job longhorn-post-upgrade": "longhorn-post-upgrade+uninstall",
    "Job longhorn-uninstall": "longhorn-post-upgrade+uninstall",
  },
  notRendered: {
    "longhorn-csi-plugin+instance-managers":
      "longhorn-manager creates them at run time with the system-managed settings (the CSI plugin DaemonSet through longhorn-driver-deployer, an instance manager per node)",
    "csi-attacher": "a Deployment longhorn-driver-deployer creates (app/driver.go deployCSIDriver)",
    "csi-provisioner": "a Deployment longhorn-driver-deployer creates (app/driver.go deployCSIDriver)",
    "csi-resizer": "a Deployment longhorn-driver-deployer creates (app/driver.go deployCSIDriver)",
    "csi-snapshotter": "a Deployment longhorn-driver-deployer creates (app/driver.go deployCSIDriver)",
    "longhorn-default-disks": "Longhorn's disks on the nodes it selects, no pods",
  },
};
