// CSI snapshots: external-snapshotter's CRDs (upstream files at the release tag) and the
// snapshot-controller. The controller's Deployment and RBAC are written here rather than taken from
// the tag's `deploy/kubernetes/snapshot-controller`, whose manifest names the previous release's
// image and carries no placement; they follow that folder (kube-system, leader election).
import { type K8sObject, manifestsUnit, type ManifestsUnit, type RemoteManifestUnit } from "../plan/plan";
import { unplaced } from "../placement/workloads";
import type { PlatformComponent } from "./component";
import { controlPlaneScheduling, pinnedManifestUnit, type Contents, type StackContext } from "./context";
import { imageRef, SNAPSHOT_CONTROLLER_IMAGE, SNAPSHOT_CRDS } from "./versions";
import { fact } from "../plan/needs";

const SNAPSHOT_CRD_TYPE = "openkeel:platform:SnapshotCrd";

const NAMESPACE = "kube-system";
const NAME = "snapshot-controller";

/** The kind of each CRD file's plural (`<group>_<plural>.yaml`). */
const KINDS: Record<string, string> = {
  volumesnapshotclasses: "VolumeSnapshotClass",
  volumesnapshotcontents: "VolumeSnapshotContent",
  volumesnapshots: "VolumeSnapshot",
  volumegroupsnapshotclasses: "VolumeGroupSnapshotClass",
  volumegroupsnapshotcontents: "VolumeGroupSnapshotContent",
  volumegroupsnapshots: "VolumeGroupSnapshot",
};

/** `<group>_<plural>.yaml` of a CRD file's URL. */
function crdFile(url: string): { group: string; plural: string } {
  const [group, plural] = url
    .slice(url.lastIndexOf("/") + 1)
    .replace(/\.yaml$/, "")
    .split("_");
  return { group, plural };
}

const crdUnitName = (plural: string) => `snapshot-crd-${plural}`;

/** Each CRD file is its one CRD (the pin and its predecessor), by its unit's name. */
const CRD_CONTENTS: Record<string, Contents> = Object.fromEntries(
  SNAPSHOT_CRDS.map((pin) => {
    const { group, plural } = crdFile(pin.url);
    const content = { offers: [fact.api(group, KINDS[plural])] };
    return [crdUnitName(plural), { "v8.6.0": content, "v8.5.0": content }];
  }),
);

/** One unit per CRD file: `snapshot-crd-volumesnapshotclasses`, `snapshot-crd-volumegroupsnapshots`, … */
function snapshotCrdUnits(): RemoteManifestUnit[] {
  return SNAPSHOT_CRDS.map((pin) => {
    const name = crdUnitName(crdFile(pin.url).plural);
    // CRDs own every VolumeSnapshot: deleting one deletes them all.
    return pinnedManifestUnit(name, SNAPSHOT_CRD_TYPE, pin, CRD_CONTENTS[name], { protect: true });
  });
}

const READ = ["get", "list", "watch"];
const rule = (group: string, resource: string, verbs: string[]) => ({ apiGroups: [group], resources: [resource], verbs });
const RULES = [
  rule("", "persistentvolumes", READ),
  rule("", "persistentvolumeclaims", [...READ, "update"]),
  { apiGroups: [""], resources: ["events"], verbs: ["list", "watch", "create", "update", "patch"] },
  // the same rules for the snapshot and the group-snapshot APIs
  ...[
    ["snapshot.storage.k8s.io", "volumesnapshot"],
    ["groupsnapshot.storage.k8s.io", "volumegroupsnapshot"],
  ].flatMap(([group, kind]) => [
    rule(group, `${kind}classes`, READ),
    rule(group, `${kind}contents`, ["create", "get", "list", "watch", "update", "delete", "patch"]),
    rule(group, `${kind}contents/status`, ["patch"]),
    rule(group, `${kind}s`, [...READ, "update", "patch"]),
    rule(group, `${kind}s/status`, ["update", "patch"]),
  ]),
];

function snapshotControllerObjects(ctx: StackContext): K8sObject[] {
  const scheduling = controlPlaneScheduling(ctx);
  const labels = { app: NAME };
  const subject = { kind: "ServiceAccount", name: NAME, namespace: NAMESPACE };
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: NAME, namespace: NAMESPACE } },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: `${NAME}-runner` }, rules: RULES },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: `${NAME}-role` },
      subjects: [subject],
      roleRef: { kind: "ClusterRole", name: `${NAME}-runner`, apiGroup: "rbac.authorization.k8s.io" },
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: `${NAME}-leaderelection`, namespace: NAMESPACE },
      rules: [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "watch", "list", "delete", "update", "create"] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: `${NAME}-leaderelection`, namespace: NAMESPACE },
      subjects: [subject],
      roleRef: { kind: "Role", name: `${NAME}-leaderelection`, apiGroup: "rbac.authorization.k8s.io" },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: NAME, namespace: NAMESPACE, labels },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: NAME,
            priorityClassName: "system-cluster-critical",
            nodeSelector: scheduling.nodeSelector,
            tolerations: scheduling.tolerations,
            // Preferred: a one-node lab still runs both replicas.
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [
                  { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: labels }, topologyKey: "kubernetes.io/hostname" } },
                ],
              },
            },
            containers: [
              {
                name: NAME,
                image: imageRef(SNAPSHOT_CONTROLLER_IMAGE),
                imagePullPolicy: "IfNotPresent",
                args: ["--v=5", "--leader-election=true"],
              },
            ],
          },
        },
      },
    },
  ];
}

/**
 * The controller exits at start while it cannot list VolumeSnapshots, VolumeSnapshotClasses and
 * VolumeSnapshotContents (external-snapshotter v8.6.0 cmd/snapshot-controller/main.go 94-117 and
 * 258-261, ensureCustomResourceDefinitionsExist; the group snapshot kinds only with the
 * VolumeGroupSnapshot feature gate, which it is not given): no object of it names them.
 */
function snapshotControllerUnit(ctx: StackContext): ManifestsUnit {
  const crds = SNAPSHOT_CRDS.map((pin) => crdFile(pin.url)).filter((f) => f.group === "snapshot.storage.k8s.io");
  return manifestsUnit(NAME, "openkeel:platform:SnapshotController", snapshotControllerObjects(ctx), {
    waitsFor: crds.map((f) => ({
      unit: crdUnitName(f.plural),
      why: `the controller exits at start while it cannot list ${KINDS[f.plural]}s (external-snapshotter v8.6.0 cmd/snapshot-controller/main.go 94-117, 258-261)`,
    })),
  });
}

export const snapshots: PlatformComponent = {
  name: "CSI snapshots",
  docs: [
    {
      component: "external-snapshotter CRDs",
      version: "v8.6.0",
      installedAs: "remote manifests (the six CRD files of `client/config/crd` at the tag)",
      phase: "crds-operators",
      where: "—",
      stacks: "production, lab ✱",
    },
    {
      component: "snapshot-controller",
      version: "image `registry.k8s.io/sig-storage/snapshot-controller:v8.6.0`",
      installedAs: "manifests (Deployment + RBAC of `deploy/kubernetes/snapshot-controller`, kube-system)",
      phase: "platform",
      where: "control plane",
      stacks: "production, lab ✱",
    },
  ],
  // § 2.3: the platform's controllers on the control plane
  design: [{ workloads: /snapshot-controller$/, reach: ["controlPlane"] }],
  pins: [...SNAPSHOT_CRDS, SNAPSHOT_CONTROLLER_IMAGE],
  artifacts: CRD_CONTENTS,
  units: (ctx) => ({ "crds-operators": snapshotCrdUnits(), platform: [snapshotControllerUnit(ctx)] }),
  readers: { units: { [SNAPSHOT_CRD_TYPE]: unplaced("CRDs only") } },
};
