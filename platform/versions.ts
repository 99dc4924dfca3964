// Every version this repository deploys, in one place (Renovate-friendly: renovate.json finds each
// pin here). Exact versions only: no `latest`, no ranges, no floating tags. Every command that plans
// a stack refuses a pin written otherwise first, naming it (pinProblems in platform/upgrades.ts:
// a chart, manifest, image or OLM pin's version or tag, a `*_VERSION` string is x.y.z, a `*_COMMIT`
// string a whole commit hash, a manifest's URL carries its version). Beside each pin, its upgrade rule (platform/upgrades.ts): the
// steps upstream supports, what comes first, what an operator does by hand, and the source that
// says so; `npm run plan`, the render and the preview refuse a step the rule does not allow.
// This file is read at other commits too (the committed state's pins): it imports types only.
import type { UpgradeRule } from "./upgrades";
import type { HostCapability } from "../plan/host";

/** A Helm chart: a Helm repository (https://…) or an OCI registry (oci://…), chart and version (the Plan's type). */
export type { ChartPin } from "../plan/plan";
import type { ChartPin } from "../plan/plan";

// ---- Platform components (Longhorn, KubeVirt, CDI, Kube-OVN, Multus, Medik8s, …) ----

/** An upstream release asset or a file at a release tag; the URL carries the version. */
export interface ManifestPin {
  url: string;
  version: string;
}

/** A container image pinned to a release tag, and by digest where the digest is known. */
export interface ImagePin {
  repository: string;
  tag: string;
  /** `sha256:…`: when set, the digest is what is pulled. */
  digest?: string;
}

export function imageRef(pin: ImagePin): string {
  return pin.digest ? `${pin.repository}:${pin.tag}@${pin.digest}` : `${pin.repository}:${pin.tag}`;
}

/** An operator published in an OLM catalog: the package, its channel and the CSV we install. */
export interface OlmPackagePin {
  package: string;
  channel: string;
  version: string;
  /** ClusterServiceVersion name, `<package>.v<version>`: the Subscription's startingCSV. */
  startingCSV: string;
}

function olmPackage(pkg: string, version: string, channel = "stable"): OlmPackagePin {
  return { package: pkg, channel, version, startingCSV: `${pkg}.${version}` };
}

export const LONGHORN_CHART: ChartPin = { repository: "https://charts.longhorn.io", chart: "longhorn", version: "1.12.1" };
export const LONGHORN_UPGRADE: UpgradeRule = {
  component: "Longhorn",
  pins: ["LONGHORN_CHART"],
  step: "minor",
  notes: { github: "longhorn/longhorn", tag: "v{version}" },
  crds: "chart",
  first: [
    'back up every volume (upstream: "Always back up volumes before upgrading")',
    "detach every V2 Data Engine volume (1.12 upgrades no V2 engine)",
    "leave the chart's default StorageClass parameters alone (changing them fails the chart upgrade)",
  ],
  manual: [
    "after the chart (the Longhorn manager), upgrade the engine of every volume to the new engine image: live only for healthy volumes from the previous minor, never for the iSCSI frontend (longhorn.io/docs/<version>/deploy/upgrade/upgrade-engine/)",
    "a failed pre-upgrade check of the chart: helm rollback longhorn <revision>",
  ],
  source:
    'longhorn/website@5182ed2 content/docs/1.12.0/deploy/upgrade/longhorn-manager.md: "We only support upgrading to v1.12 from v1.11.x. For other versions, please upgrade to v1.11.x first."',
};

/** The Kube-OVN chart with the v1 (UPPER_CASE) values; its versions carry a leading `v`. */
export const KUBE_OVN_CHART: ChartPin = { repository: "https://kubeovn.github.io/kube-ovn/", chart: "kube-ovn", version: "v1.16.2" };
export const KUBE_OVN_UPGRADE: UpgradeRule = {
  component: "Kube-OVN",
  pins: ["KUBE_OVN_CHART"],
  // upstream documents no step rule; operators step through each minor (Genestack 2026.1: v1.13 →
  // v1.14 → v1.15), and the chart's OVS/OVN upgrade hooks assume the previous release
  step: "minor",
  notes: { github: "kubeovn/kube-ovn", tag: "{version}" },
  crds: "chart",
  first: ["every value the cluster runs with is in the chart's values (a Helm upgrade reverts the others)"],
  manual: [
    "from a release before v1.12 only: set restart_ovs (charts/kube-ovn/README.md); the v1 chart's post-upgrade hook reads the live ovs-ovn DaemonSet, which an offline render cannot",
  ],
  source:
    'kubeovn/docs@d0060e3 docs/start/one-step-install.en.md: "ensure all parameter adjustments are updated in the values.yaml file before upgrading with Helm"; no upstream minor-step rule, one minor at a time as rackerlabs/genestack release notes 2026.1 do',
};

export const CERT_MANAGER_CHART: ChartPin = { repository: "https://charts.jetstack.io", chart: "cert-manager", version: "v1.21.1" };
/** The CRDs of the same release, as cert-manager publishes them beside the chart (platform/cert-manager.ts says why they are applied apart). */
export const CERT_MANAGER_CRDS: ManifestPin = {
  version: CERT_MANAGER_CHART.version,
  url: `https://github.com/cert-manager/cert-manager/releases/download/${CERT_MANAGER_CHART.version}/cert-manager.crds.yaml`,
};
export const CERT_MANAGER_UPGRADE: UpgradeRule = {
  component: "cert-manager",
  pins: ["CERT_MANAGER_CHART", "CERT_MANAGER_CRDS"],
  step: "minor",
  notes: { github: "cert-manager/cert-manager", tag: "{version}" },
  // the release's cert-manager.crds.yaml, its own unit before the chart (platform/cert-manager.ts); it follows the chart's version
  crds: "own-unit",
  first: [
    "back up the cert-manager resources (upstream advises it before every upgrade)",
    "read cert-manager.io/docs/releases/upgrading/upgrading-<from minor>-<to minor>/ and remove the values keys it drops (1.21: prometheus.servicemonitor.targetPort and .path, prometheus.podmonitor.path)",
  ],
  source:
    'cert-manager/website@10ffd03 content/docs/installation/upgrade.md: "We recommend that you upgrade cert-manager one minor version at a time, always choosing the latest patch version for the minor version."',
};

/** Chart versions equal the NFD release since v0.15 (release v0.18.3). */
export const NODE_FEATURE_DISCOVERY_CHART: ChartPin = {
  repository: "https://kubernetes-sigs.github.io/node-feature-discovery/charts",
  chart: "node-feature-discovery",
  version: "0.18.3",
};
export const NODE_FEATURE_DISCOVERY_UPGRADE: UpgradeRule = {
  component: "node-feature-discovery",
  pins: ["NODE_FEATURE_DISCOVERY_CHART"],
  step: "any",
  notes: { github: "kubernetes-sigs/node-feature-discovery", tag: "v{version}" },
  crds: "manual",
  first: [
    "apply the CRDs of the new release before the chart: kubectl apply -f https://raw.githubusercontent.com/kubernetes-sigs/node-feature-discovery/v<version>/deployment/base/nfd-crds/nfd-api-crds.yaml (Helm never upgrades a chart's crds/)",
  ],
  source:
    'kubernetes-sigs/node-feature-discovery@0060196 docs/deployment/helm.md: "From v0.14+ … # Install and upgrade CRD\'s kubectl apply -f …/nfd-api-crds.yaml # Install the new NFD deployment helm upgrade …"',
};

const MARIADB_OPERATOR_REPO = "https://mariadb-operator.github.io/mariadb-operator";
export const MARIADB_OPERATOR_CRDS_CHART: ChartPin = { repository: MARIADB_OPERATOR_REPO, chart: "mariadb-operator-crds", version: "26.6.0" };
export const MARIADB_OPERATOR_CHART: ChartPin = { repository: MARIADB_OPERATOR_REPO, chart: "mariadb-operator", version: "26.6.0" };
export const MARIADB_OPERATOR_UPGRADE: UpgradeRule = {
  component: "mariadb-operator",
  pins: ["MARIADB_OPERATOR_CHART", "MARIADB_OPERATOR_CRDS_CHART"],
  // calendar versions (26.3 → 26.6): no minor arithmetic; each release with extra steps has its guide
  step: "any",
  together: true,
  notes: { github: "mariadb-operator/mariadb-operator", tag: "{version}" },
  crds: "own-unit",
  first: [
    "follow every docs/releases/UPGRADE_<version>.md between the two versions, in order",
    "set updateStrategy.autoUpdateDataPlane=true on the MariaDB resources before the operator moves (UPGRADE_26.6.0.md), and back to false after",
    "never helm uninstall the CRDs chart (it cascades to every MariaDB)",
  ],
  source:
    'mariadb-operator/mariadb-operator@37ce532 docs/helm.md: "The first step to perform an operator update is upgrading the CRDs … Once updated, you may proceed to upgrade the operator"; @1428ba6 docs/UPDATES.md: "Be sure to review the release notes and follow the version-specific upgrade guides accordingly."',
};

const KUBEVIRT_VERSION = "v1.9.0";
export const KUBEVIRT_OPERATOR: ManifestPin = {
  version: KUBEVIRT_VERSION,
  url: `https://github.com/kubevirt/kubevirt/releases/download/${KUBEVIRT_VERSION}/kubevirt-operator.yaml`,
};
export const KUBEVIRT_UPGRADE: UpgradeRule = {
  component: "KubeVirt",
  pins: ["KUBEVIRT_OPERATOR"],
  step: "minor",
  notes: { github: "kubevirt/kubevirt", tag: "{version}" },
  crds: "manifest",
  // no imageTag in the KubeVirt CR: the new operator upgrades the install it reconciles
  rolls: ["kubevirt"],
  first: ["wait for kubectl -n kubevirt wait kv kubevirt --for condition=Available after the previous upgrade"],
  manual: ["running VMs keep their old virt-launcher unless workloadUpdateStrategy (LiveMigrate, Evict) is set: migrate them before the next minor"],
  source: 'kubevirt/user-guide@072c236 docs/cluster_admin/updating_and_deletion.md: "Updating is only supported from N-1 to N release."',
};

const CDI_VERSION = "v1.66.0";
export const CDI_OPERATOR: ManifestPin = {
  version: CDI_VERSION,
  url: `https://github.com/kubevirt/containerized-data-importer/releases/download/${CDI_VERSION}/cdi-operator.yaml`,
};
export const CDI_UPGRADE: UpgradeRule = {
  component: "CDI",
  pins: ["CDI_OPERATOR"],
  // no step rule upstream (minors are backwards compatible by its versioning policy)
  step: "any",
  notes: { github: "kubevirt/containerized-data-importer", tag: "{version}" },
  crds: "manifest",
  rolls: ["cdi"],
  first: [
    "kubectl get crd cdis.cdi.kubevirt.io -o jsonpath='{.status.storedVersions}' is [\"v1beta1\"] (a cluster still storing v1alpha1 passes a release ≥ v1.56.0 first)",
  ],
  source:
    'kubevirt/containerized-data-importer@9c91768 doc/versioning.md: "Minor versions represent the addition of backwards compatible features to CDI."; @a26c8be doc/upgrading.md (storedVersions)',
};

/** MetalLB's native (L2 and BGP, no FRR) manifest: CRDs, namespace, controller, speaker, webhooks. */
const METALLB_VERSION = "v0.16.1";
export const METALLB_NATIVE: ManifestPin = {
  version: METALLB_VERSION,
  url: `https://raw.githubusercontent.com/metallb/metallb/${METALLB_VERSION}/config/manifests/metallb-native.yaml`,
};
export const METALLB_UPGRADE: UpgradeRule = {
  component: "MetalLB",
  pins: ["METALLB_NATIVE"],
  // upstream names no step rule: the release notes of every minor passed say what each needs
  step: "any",
  notes: { github: "metallb/metallb", tag: "{version}" },
  crds: "manifest",
  rolls: ["metallb-placement"],
  first: [
    "read the release notes of every minor passed for required actions (upstream: pay special attention to them on a major/minor upgrade)",
    "the manifest's apply takes back the speaker's and controller's placement until metallb-placement, later in the same pulumi up, patches them again (platform/metallb.ts)",
  ],
  source:
    'metallb/metallb website/content/installation/_index.md "Upgrade": "When upgrading MetalLB, always check the release notes to see the changes and required actions, if any. Pay special attention to the release notes when upgrading to newer major/minor releases. Unless specified otherwise in the release notes, upgrade MetalLB using one of the methods described above" (plain manifests among them); no step rule',
};

const RABBITMQ_CLUSTER_OPERATOR_VERSION = "v2.22.3";
export const RABBITMQ_CLUSTER_OPERATOR: ManifestPin = {
  version: RABBITMQ_CLUSTER_OPERATOR_VERSION,
  url: `https://github.com/rabbitmq/cluster-operator/releases/download/${RABBITMQ_CLUSTER_OPERATOR_VERSION}/cluster-operator.yml`,
};
export const RABBITMQ_CLUSTER_OPERATOR_UPGRADE: UpgradeRule = {
  component: "RabbitMQ cluster operator",
  pins: ["RABBITMQ_CLUSTER_OPERATOR"],
  step: "any",
  notes: { github: "rabbitmq/cluster-operator", tag: "{version}" },
  crds: "manifest",
  // many releases roll every RabbitmqCluster StatefulSet (their notes say so)
  rolls: ["openkeel-chart/rabbitmq"],
  first: ["when the release notes announce a rolling update of RabbitmqClusters and its timing matters: pause reconciliation of the RabbitmqCluster first"],
  source:
    'rabbitmq/rabbitmq-website@3afc34c docs/kubernetes/operator/upgrade-operator.md: "To upgrade to the new version of the operator, simply apply the new operator manifest for the desired version."',
};

/** The release manifest that takes its webhook certificate from cert-manager (rabbitmq/messaging-topology-operator releases). */
const MESSAGING_TOPOLOGY_OPERATOR_VERSION = "v1.19.2";
export const RABBITMQ_MESSAGING_TOPOLOGY_OPERATOR: ManifestPin = {
  version: MESSAGING_TOPOLOGY_OPERATOR_VERSION,
  url: `https://github.com/rabbitmq/messaging-topology-operator/releases/download/${MESSAGING_TOPOLOGY_OPERATOR_VERSION}/messaging-topology-operator-with-certmanager.yaml`,
};
export const RABBITMQ_MESSAGING_TOPOLOGY_OPERATOR_UPGRADE: UpgradeRule = {
  component: "RabbitMQ messaging topology operator",
  pins: ["RABBITMQ_MESSAGING_TOPOLOGY_OPERATOR"],
  step: "any",
  notes: { github: "rabbitmq/messaging-topology-operator", tag: "{version}" },
  crds: "manifest",
  source:
    'rabbitmq/rabbitmq-website@3afc34c docs/kubernetes/operator/upgrade-operator.md: "upgrading the version of the RabbitMQ Cluster Operator (not the Messaging Topology Operator) will require the Pods of RabbitmqClusters to be restarted"',
};

const EXTERNAL_SNAPSHOTTER_VERSION = "v8.6.0";
const SNAPSHOT_CRD_FILES = [
  "snapshot.storage.k8s.io_volumesnapshotclasses.yaml",
  "snapshot.storage.k8s.io_volumesnapshotcontents.yaml",
  "snapshot.storage.k8s.io_volumesnapshots.yaml",
  "groupsnapshot.storage.k8s.io_volumegroupsnapshotclasses.yaml",
  "groupsnapshot.storage.k8s.io_volumegroupsnapshotcontents.yaml",
  "groupsnapshot.storage.k8s.io_volumegroupsnapshots.yaml",
];
/** The CRD files of external-snapshotter's `client/config/crd` at the release tag. */
export const SNAPSHOT_CRDS: ManifestPin[] = SNAPSHOT_CRD_FILES.map((file) => ({
  version: EXTERNAL_SNAPSHOTTER_VERSION,
  url: `https://raw.githubusercontent.com/kubernetes-csi/external-snapshotter/${EXTERNAL_SNAPSHOTTER_VERSION}/client/config/crd/${file}`,
}));
/** The tag's own manifest still names the previous image (v8.5.0); the release image is pinned here. */
export const SNAPSHOT_CONTROLLER_IMAGE: ImagePin = {
  repository: "registry.k8s.io/sig-storage/snapshot-controller",
  tag: EXTERNAL_SNAPSHOTTER_VERSION,
};
export const EXTERNAL_SNAPSHOTTER_UPGRADE: UpgradeRule = {
  component: "external-snapshotter",
  pins: ["SNAPSHOT_CONTROLLER_IMAGE", "SNAPSHOT_CRDS"],
  step: "any",
  together: true,
  notes: { github: "kubernetes-csi/external-snapshotter", tag: "{version}" },
  crds: "own-unit",
  first: ["a release that drops a served CRD version: kubectl get crd <crd> -o jsonpath='{.status.storedVersions}' holds none of the dropped ones"],
  source:
    'kubernetes-csi/external-snapshotter README.md (Usage): "Install Snapshot and Volume Group Snapshot CRDs … Install Common Snapshot Controller"; no step rule upstream',
};

/** The thick plugin image the release workflow pushes as `<tag>-thick` (the tag's manifest says `snapshot-thick`). */
export const MULTUS_IMAGE: ImagePin = { repository: "ghcr.io/k8snetworkplumbingwg/multus-cni", tag: "v4.3.0-thick" };
export const MULTUS_UPGRADE: UpgradeRule = {
  component: "Multus",
  pins: ["MULTUS_IMAGE"],
  step: "any",
  notes: { github: "k8snetworkplumbingwg/multus-cni", tag: "{version}" },
  crds: "none",
  source:
    'k8snetworkplumbingwg/multus-cni deployments/multus-daemonset-thick.yml: "this deployment yaml does not care about following things intentionally … upgrade/update/uninstall scenario" (no upstream upgrade guidance)',
};

const OLM_VERSION = "v0.38.0";
export const OLM_CRDS: ManifestPin = {
  version: OLM_VERSION,
  url: `https://github.com/operator-framework/operator-lifecycle-manager/releases/download/${OLM_VERSION}/crds.yaml`,
};
export const OLM: ManifestPin = {
  version: OLM_VERSION,
  url: `https://github.com/operator-framework/operator-lifecycle-manager/releases/download/${OLM_VERSION}/olm.yaml`,
};
export const OLM_UPGRADE: UpgradeRule = {
  component: "OLM",
  pins: ["OLM", "OLM_CRDS"],
  step: "any",
  together: true,
  notes: { github: "operator-framework/operator-lifecycle-manager", tag: "{version}" },
  // crds.yaml before olm.yaml, as one group (platform/medik8s.ts), server-side applied (too large for client-side apply)
  crds: "manifest",
  manual: ["OLM is 0.x and documents no upgrade path: read every release's notes between the two"],
  source:
    'operator-framework/operator-lifecycle-manager#2969: "OLM doesn\'t provide any official upgrade steps"; #3658 doc/install/install.md: "Installing the CRDs first gives them a chance to register before installing the rest"',
};

/**
 * kubectl for the Job that approves the InstallPlans of the pinned Medik8s versions (platform/medik8s.ts):
 * the Kubernetes release image, which has bash beside kubectl (kubernetes/kubernetes
 * build/server-image/kubectl/Dockerfile: debian-base with bash, grep, sed, coreutils, jq); the
 * Kubernetes version of the kind node image, within kubectl's one-minor skew of the clusters.
 */
export const KUBECTL_IMAGE: ImagePin = { repository: "registry.k8s.io/kubectl", tag: "v1.36.1" };
export const KUBECTL_UPGRADE: UpgradeRule = {
  component: "kubectl (the InstallPlan approver's image)",
  pins: ["KUBECTL_IMAGE"],
  step: "any",
  skew: { pin: "KIND_NODE_IMAGE", minors: 1, why: "kubectl is supported within one minor version of kube-apiserver" },
  notes: { github: "kubernetes/kubernetes", tag: "{version}" },
  crds: "none",
  source:
    'kubernetes/website@01bc097 content/en/releases/version-skew-policy.md: "kubectl is supported within one minor version (older or newer) of kube-apiserver."',
};

/** Medik8s operators from the OperatorHub.io community catalog (channel `stable`). */
export const MEDIK8S_NHC = olmPackage("node-healthcheck-operator", "v0.12.0");
export const MEDIK8S_SNR = olmPackage("self-node-remediation", "v0.13.0");
export const MEDIK8S_NMO = olmPackage("node-maintenance-operator", "v0.20.1");

/** What OLM does with a Medik8s pin bump: the same rule for each of the three operators. */
function medik8sUpgrade(component: string, pin: string, repository: string): UpgradeRule {
  return {
    component,
    pins: [pin],
    // OLM walks the channel's `replaces` chain one CSV at a time, and the approver Job approves the
    // pinned CSV only (platform/medik8s.ts): a pin that jumps over a CSV of the channel stalls
    step: "minor",
    notes: { github: `medik8s/${repository}`, tag: "{version}" },
    crds: "manifest",
    first: [
      `the pin is the next CSV of the channel after the installed one: k8s-operatorhub/community-operators operators/${repository}/<version>/manifests/*.clusterserviceversion.yaml spec.replaces names the installed one; otherwise pin that next CSV first (the approver approves the pinned CSV only)`,
    ],
    source:
      'OLM "Creating an update graph" (olm.operatorframework.io, v0.18): "An update sequence of bundles created via replaces will have updates step through each version in the chain."',
  };
}
export const MEDIK8S_NHC_UPGRADE = medik8sUpgrade("Medik8s NodeHealthCheck operator", "MEDIK8S_NHC", "node-healthcheck-operator");
export const MEDIK8S_SNR_UPGRADE = medik8sUpgrade("Medik8s Self Node Remediation", "MEDIK8S_SNR", "self-node-remediation");
export const MEDIK8S_NMO_UPGRADE = medik8sUpgrade("Medik8s Node Maintenance Operator", "MEDIK8S_NMO", "node-maintenance-operator");

// ---- OpenKeel charts ----
// The OpenKeel project publishes one chart per service plus the infrastructure chart
// (openkeel-chart), as one release line: every chart at one version, which this pin holds (each
// service's module names its chart: openkeel/services/). UNVERIFIED: no public index of these
// charts was found; the registry below is the project's own domain (the one of its label keys,
// openkeel.io) and the version the first line of charts carrying the § 5.2 placement helper. Stacks
// override both with `openkeel:charts`, a version for every chart or one per chart (stacks/README.md).
export const OPENKEEL_CHART_REPOSITORY = "oci://registry.openkeel.io/charts";

/** Charts published together as one release line: every chart whose name starts with `prefix`, at one version. */
export interface ChartLinePin {
  prefix: string;
  version: string;
}

/** The OpenKeel charts' release line. */
export const OPENKEEL_CHARTS = { prefix: "openkeel-", version: "1.0.0" } as const satisfies ChartLinePin;

export const OPENKEEL_CHARTS_UPGRADE: UpgradeRule = {
  component: "OpenKeel charts",
  pins: ["OPENKEEL_CHARTS", "OPENKEEL_CHART_REPOSITORY"],
  step: "any",
  crds: "none",
  source: "UNVERIFIED: the OpenKeel charts publish no upgrade documentation this repository could read (no public index)",
};

// ---- Data services of the infrastructure release (openkeel-chart) ----
// The versions the lab architecture names (seed 004: MariaDB 11.4, RabbitMQ 4.1), used in every
// stack: the MariaDB and RabbitMQ operators otherwise run their own defaults, which move with the
// operator (mariadb-operator 26.6.0 defaults to 11.8), and a Galera or RabbitMQ major upgrade is a
// data migration, never a side effect of an operator upgrade.

/** MariaDB 11.4 LTS (docker-library/repo-info repos/mariadb/remote/11.4.13.md@28b7129f: the index digest). */
export const MARIADB_IMAGE: ImagePin = {
  repository: "docker.io/library/mariadb",
  tag: "11.4.13",
  digest: "sha256:80494b9810694179889f7281ec44ca928241df577159c0356a1070e2e94616a1",
};
export const MARIADB_UPGRADE: UpgradeRule = {
  component: "MariaDB (Galera)",
  pins: ["MARIADB_IMAGE"],
  // upstream's Galera rolling upgrades go one series at a time (10.11 → 11.4 → 11.8); a series move
  // is a data migration: its path is added here in the change that plans it
  step: "patch",
  notes: { url: "https://mariadb.com/docs/release-notes/community-server/11.4/mariadb-{version}-release-notes" },
  crds: "none",
  rolls: ["openkeel-chart/mariadb"],
  first: ["a series move: start from the latest patch of the old series, with a gcache large enough for IST (rolling upgrades with SST do not work)"],
  source:
    'mariadb.com/docs/galera-cluster/galera-management/upgrading-galera-cluster/upgrading-from-mariadb-10.11-to-mariadb-11.4-with-galera-cluster: "In a rolling upgrade, each node is upgraded individually"; guides exist only between consecutive series',
};

/**
 * RabbitMQ 4.1, the `-management` variant the cluster operator's own default image is
 * (rabbitmq/cluster-operator main.go defaultRabbitmqImage); docker-library/repo-info
 * repos/rabbitmq/remote/4.1.8-management.md@0639f311: the index digest.
 */
export const RABBITMQ_IMAGE: ImagePin = {
  repository: "docker.io/library/rabbitmq",
  tag: "4.1.8-management",
  digest: "sha256:72914305cde66172bd85bc7cbede1edbbd16e5f1076af8b0d9afd3727c1e7980",
};
export const RABBITMQ_UPGRADE: UpgradeRule = {
  component: "RabbitMQ",
  pins: ["RABBITMQ_IMAGE"],
  step: "minor",
  paths: [
    { from: "4.0", to: "4.2" },
    { from: "3.13", to: "4.1" },
    { from: "3.13", to: "4.2" },
  ],
  notes: { github: "rabbitmq/rabbitmq-server", tag: "v{version}" },
  crds: "none",
  rolls: ["openkeel-chart/rabbitmq"],
  first: ["a minor or major step: enable every stable feature flag first (rabbitmqctl enable_feature_flag all); after it, enable the new version's"],
  source:
    'rabbitmq/rabbitmq-website@29cb9ec versioned_docs/version-4.2 (rolling-upgrade): "Rolling upgrades don\'t support skipping versions, except patch releases"; the paths are the "Release Series Upgradeability" table\'s',
};

// ---- Node operating systems and images (rendered/<stack>/talos/, rendered/lab/kind/) ----

/**
 * Talos Linux release the machine-config patches and schematics target (its JSON schema validates
 * them). tools/talos-validate/go.mod requires github.com/siderolabs/talos/pkg/machinery at this
 * version, whose validation judges every rendered node (a test keeps the two equal).
 */
export const TALOS_VERSION = "v1.13.9";
export const TALOS_UPGRADE: UpgradeRule = {
  component: "Talos Linux",
  pins: ["TALOS_VERSION", "TALOS_CONFIG_SCHEMA"],
  step: "minor",
  together: true,
  notes: { github: "siderolabs/talos", tag: "{version}" },
  crds: "none",
  first: [
    "the nodes run the latest patch of their current minor",
    "the new Talos minor supports the Kubernetes the cluster runs (docs.siderolabs.com/talos/<minor>/getting-started/support-matrix)",
  ],
  manual: [
    "talosctl upgrade --nodes <node> --image <factory.talos.dev/installer/<schematic>:<version>> one node at a time (Talos refuses a control-plane node whose upgrade would lose etcd quorum; Longhorn, OVN central and Galera recover from one node at a time only)",
    "Kubernetes is upgraded apart: talosctl upgrade-k8s --to <version>, one minor per run, never skipping a minor",
  ],
  source:
    'siderolabs/docs@2a55465 public/talos/v1.13/configure-your-talos-cluster/lifecycle-management/upgrading-talos.mdx: "this migration is only tested between adjacent minor releases. Thus the recommended upgrade path is to always upgrade to the latest patch release of all intermediate minor releases."',
};
/**
 * The Kubernetes of the production clusters, pinned here rather than left to whichever talosctl
 * generates the configs: Talos v1.13.9's own default (siderolabs/talos@v1.13.9
 * pkg/machinery/constants/constants.go:366 DefaultKubernetesVersion, what `talosctl gen config`
 * uses without --kubernetes-version), within what Talos v1.13 runs (1.31.0 to 1.36.x:
 * pkg/machinery/compatibility/talos113/talos113.go:27-30, which tools/talos-validate asks). Rendered
 * into the Talos patches as the images `gen config --kubernetes-version` sets (nodes/talos.ts) and
 * into talos/machines.yaml; kubeconform judges every rendered object by this version's schemas,
 * made from its OpenAPI (tools/kubernetes-schemas.ts). The lab's kind node image and the e2e's
 * control plane (../shared/engine) run the same minor (test/integration/platform/kubernetes-version.test.ts).
 */
export const KUBERNETES_VERSION = "1.36.3";
export const KUBERNETES_UPGRADE: UpgradeRule = {
  component: "Kubernetes",
  pins: ["KUBERNETES_VERSION"],
  step: "minor",
  skew: { pin: "KIND_NODE_IMAGE", minors: 0, why: "the lab runs the production clusters' Kubernetes minor, so that what the lab shows holds in production" },
  notes: { github: "kubernetes/kubernetes", tag: "v{version}" },
  crds: "none",
  first: [
    "the pinned Talos runs the new version (Talos v1.13: Kubernetes 1.31.0 to 1.36.x, siderolabs/talos pkg/machinery/compatibility/talos113/talos113.go; the Talos validation of npm test refuses another)",
    "read the new minor's urgent upgrade notes and removed APIs (kubernetes/kubernetes CHANGELOG); npm test judges every rendered object by the new version's schemas",
  ],
  manual: [
    "talosctl upgrade-k8s --nodes <a control-plane node> --to <version> before applying the rendered patches of the new version: it moves the API server first and every kubelet after it (a patch applied first would move kubelets ahead of the API server, which the version skew policy forbids), and writes the same images into the machine configs that the patches name",
    "the lab: create the kind cluster again with the node image of the new minor (KIND_NODE_IMAGE)",
  ],
  source:
    'siderolabs/go-kubernetes@v0.2.38 (Talos v1.13.9\'s) kubernetes/upgrade/path.go:58-99: Path.IsSupported allows "1.35->1.36" and "1.36->1.36" only, one minor up or the same; siderolabs/talos@v1.13.9 pkg/cluster/kubernetes/talos_managed.go:86-87 refuses any other path of `talosctl upgrade-k8s` ("unsupported upgrade path")',
};
/** Image Factory that serves installers for the rendered schematics. */
export const TALOS_IMAGE_FACTORY = "factory.talos.dev";
export const TALOS_IMAGE_FACTORY_UPGRADE: UpgradeRule = {
  component: "Talos Image Factory",
  pins: ["TALOS_IMAGE_FACTORY"],
  step: "any",
  crds: "none",
  source: "a host name, no release",
};
/** kind release the lab cluster is created with; a node image is supported only with its own kind release. */
export const KIND_VERSION = "v0.32.0";
/** kind v0.32.0's default node image (kubernetes-sigs/kind pkg/apis/config/defaults/image.go@v0.32.0). */
export const KIND_NODE_IMAGE: ImagePin = {
  repository: "kindest/node",
  tag: "v1.36.1",
  digest: "sha256:3489c7674813ba5d8b1a9977baea8a6e553784dab7b84759d1014dbd78f7ebd5",
};
export const KIND_UPGRADE: UpgradeRule = {
  component: "kind and its node image (the lab's Kubernetes)",
  pins: ["KIND_VERSION", "KIND_NODE_IMAGE"],
  // a kind cluster is created again, never upgraded in place
  step: "any",
  notes: { github: "kubernetes-sigs/kind", tag: "{version}" },
  crds: "none",
  first: ["the node image is one the kind release's notes list, by its digest (kubernetes-sigs/kind pkg/apis/config/defaults/image.go at the release tag)"],
  manual: ["create the lab's kind cluster again from rendered/lab/kind/cluster.yaml (kind delete cluster, kind create cluster --config …)"],
  source:
    'kind release notes: "You must use the @sha256 digest to guarantee an image built for this release"; kind quick start: "to find images suitable for a given release currently you should check the release notes for your given kind version"',
};

// ---- What the pins put on a node's host (the host contract's providers, placement/host.ts) ----

/**
 * What a pinned OS, extension or node agent gives the host of a node: the OS's own CNI plugins,
 * devices and kernel modules, an extension's tools, the plugins an agent's init step copies.
 * `readAt` is the version of `pin` the row was read at upstream (`source`): test/host-facts.test.ts
 * fails when the pin moves past it, so a bump of Talos, kind, Kube-OVN or Multus re-reads its row.
 */
export interface HostFactsRow {
  /** The pin of this file it was read for. */
  pin: string;
  readAt: string;
  /** Who, in messages and placement.md: `Talos v1.13.9`. */
  by: string;
  provides: readonly HostCapability[];
  source: string;
}

/** One table: every row of host facts, beside the pins it depends on. */
export const HOST_FACTS = {
  talos: {
    pin: "TALOS_VERSION",
    readAt: "v1.13.9",
    by: "Talos v1.13.9",
    provides: [
      ...["bridge", "firewall", "flannel", "host-local", "loopback", "portmap"].map((name) => ({ kind: "cniPlugin" as const, name })),
      ...["openvswitch", "geneve", "kvm", "vhost_net", "tun", "macvlan", "ipvlan", "8021q", "bonding", "iscsi_tcp", "nfs", "dm_crypt"].map((name) => ({
        kind: "kernelModule" as const,
        name,
      })),
      ...["/dev/net/tun", "/dev/vhost-net"].map((name) => ({ kind: "device" as const, name })),
    ],
    source:
      "siderolabs/talos@v1.13.9 Dockerfile:249-265,716-717 (only bridge, firewall, host-local, loopback, portmap of the cni package, and flannel: no macvlan, no ipvlan); " +
      "siderolabs/pkgs@f541ca4 (Talos' PKGS) kernel/build/config-amd64: CONFIG_OPENVSWITCH=y (1899), GENEVE=y (2637), KVM/KVM_INTEL/KVM_AMD=y (768-773), VHOST_NET=y (6177), TUN=y (2648), " +
      "MACVLAN=y (2631), IPVLAN=y (2634), VLAN_8021Q=y (1791), BONDING=y (2622), ISCSI_TCP=y (2385), NFS_V4=y (6783), DM_CRYPT=y (2573), no SOFT_WATCHDOG (4079)",
  },
  kindNode: {
    pin: "KIND_NODE_IMAGE",
    readAt: "v1.36.1",
    by: "kindest/node v1.36.1",
    provides: ["host-local", "loopback", "ptp", "portmap"].map((name) => ({ kind: "cniPlugin" as const, name })),
    source:
      "kubernetes-sigs/kind@v0.32.0 images/base/Dockerfile:173-185,226-230 (containernetworking/plugins v1.9.1: host-local, loopback, ptp, portmap); kindnetd copies none (pkg/build/nodeimage/const_cni.go:123-158)",
  },
  kubeOvnCni: {
    pin: "KUBE_OVN_CHART",
    readAt: "v1.16.2",
    by: "Kube-OVN v1.16.2 (kube-ovn-cni's install-cni)",
    provides: ["kube-ovn", "loopback", "portmap", "macvlan"].map((name) => ({ kind: "cniPlugin" as const, name })),
    source:
      "kubeovn/kube-ovn@v1.16.2 dist/images/install-cni.sh:25-42; chart templates/ovncni-ds.yaml:64-82,259-261 (hostPath cni_conf.CNI_BIN_DIR, /opt/cni/bin)",
  },
  multus: {
    pin: "MULTUS_IMAGE",
    readAt: "v4.3.0-thick",
    by: "Multus v4.3.0 (install_multus -t thick)",
    provides: ["multus-shim", "passthru"].map((name) => ({ kind: "cniPlugin" as const, name })),
    source: "k8snetworkplumbingwg/multus-cni@v4.3.0 cmd/install_multus/main.go:29,40-59",
  },
  iscsiTools: {
    pin: "TALOS_VERSION",
    readAt: "v1.13.9",
    by: "the siderolabs/iscsi-tools extension",
    provides: [
      { kind: "hostTool", name: "iscsiadm" },
      { kind: "hostTool", name: "iscsid" },
    ],
    source: "siderolabs/extensions@v1.13.9 storage/iscsi-tools/iscsid.yaml:1-13 (the ext-iscsid service), README.md:3 (iscsiadm in its mount namespace)",
  },
  utilLinuxTools: {
    pin: "TALOS_VERSION",
    readAt: "v1.13.9",
    by: "the siderolabs/util-linux-tools extension",
    provides: [
      { kind: "hostTool", name: "fstrim" },
      { kind: "hostTool", name: "nsenter" },
    ],
    source: "siderolabs/extensions@v1.13.9 tools/util-linux/pkg.yaml:26-31 (--enable-nsenter --enable-fstrim)",
  },
  kataContainers: {
    pin: "TALOS_VERSION",
    readAt: "v1.13.9",
    by: "the siderolabs/kata-containers extension",
    provides: [{ kind: "runtimeHandler", name: "kata" }],
    source:
      "siderolabs/extensions@v1.13.9 container-runtime/kata-containers/10-kata-containers.part:1-6 (the one handler, kata: Cloud Hypervisor, no kata-qemu)",
  },
} as const satisfies Record<string, HostFactsRow>;

/** The Talos system extensions this repository puts in schematics, and the host facts row of each. */
export const TALOS_EXTENSION_FACTS: Readonly<Record<string, HostFactsRow>> = {
  "siderolabs/iscsi-tools": HOST_FACTS.iscsiTools,
  "siderolabs/util-linux-tools": HOST_FACTS.utilLinuxTools,
  "siderolabs/kata-containers": HOST_FACTS.kataContainers,
};

// ---- Build tools (installed into .tools/ by `npm run tools`; never deployed) ----
// CI's runtimes (Go, the Pulumi CLI) and its GitHub Actions are pinned in the workflows, which cannot
// read this file; a test keeps their Pulumi CLI equal to the @pulumi/pulumi SDK of package.json, and
// their Node.js equal to CI_NODE_VERSION below.

/**
 * The Node.js LTS CI runs on (Node 20 reached its end of life in April 2026; @pulumi/pulumi 3.276
 * declares Node >= 22): every workflow's setup-node, and `.ci/run`'s second `npm test`, with the
 * binary of the npm package `node-<platform>-<arch>` at this version (linux-x64 and linux-arm64 are
 * published for it; the darwin ones are not).
 */
export const CI_NODE_VERSION = "24.21.0";

/** Build tools, CI's runtime and the schema locations: nothing deployed, no upgrade path to keep. */
function buildTool(component: string, ...pins: string[]): UpgradeRule {
  return { component, pins, step: "any", downgrade: true, deployed: false, crds: "none", source: "a build tool: never deployed" };
}
export const CI_NODE_UPGRADE = buildTool("Node.js of CI", "CI_NODE_VERSION");

/** A Go command-line tool: `go install <command>@<version>`, or its release archive where Go is missing. */
export interface ToolPin {
  /** The Go module whose version the binary's build info carries. */
  module: string;
  /** The package `go install` builds (the module's command). */
  command: string;
  version: string;
  /** Argument that makes the binary print its version (release builds print the pinned tag). */
  versionFlag: string;
  /**
   * Release archives by `<process.platform>-<process.arch>`: a .tar.gz holding the binary at its top
   * level, and the archive's SHA-256 (from the release's checksum file).
   */
  releases: Record<string, { url: string; sha256: string }>;
}

/** Where the schemas of the platform components' custom resources come from (the Kubernetes kinds': KUBERNETES_VERSION's OpenAPI). */
export const CRD_SCHEMAS_UPGRADE = buildTool("CRD JSON schemas", "CRDS_CATALOG_COMMIT", "MEDIK8S_CRDS");

export const TOOLS = {
  kubeconform: {
    module: "github.com/yannh/kubeconform",
    command: "github.com/yannh/kubeconform/cmd/kubeconform",
    version: "v0.7.0",
    versionFlag: "-v",
    releases: {
      "linux-x64": {
        url: "https://github.com/yannh/kubeconform/releases/download/v0.7.0/kubeconform-linux-amd64.tar.gz",
        sha256: "c31518ddd122663b3f3aa874cfe8178cb0988de944f29c74a0b9260920d115d3",
      },
      "linux-arm64": {
        url: "https://github.com/yannh/kubeconform/releases/download/v0.7.0/kubeconform-linux-arm64.tar.gz",
        sha256: "cc907ccf9e3c34523f0f32b69745265e0a6908ca85b92f41931d4537860eb83c",
      },
      "darwin-x64": {
        url: "https://github.com/yannh/kubeconform/releases/download/v0.7.0/kubeconform-darwin-amd64.tar.gz",
        sha256: "c6771cc894d82e1b12f35ee797dcda1f7da6a3787aa30902a15c264056dd40d4",
      },
      "darwin-arm64": {
        url: "https://github.com/yannh/kubeconform/releases/download/v0.7.0/kubeconform-darwin-arm64.tar.gz",
        sha256: "b5d32b2cb77f9c781c976b20a85e2d0bc8f9184d5d1cfe665a2f31a19f99eeb9",
      },
    },
  },
  actionlint: {
    module: "github.com/rhysd/actionlint",
    command: "github.com/rhysd/actionlint/cmd/actionlint",
    version: "v1.7.12",
    versionFlag: "-version",
    releases: {
      "linux-x64": {
        url: "https://github.com/rhysd/actionlint/releases/download/v1.7.12/actionlint_1.7.12_linux_amd64.tar.gz",
        sha256: "8aca8db96f1b94770f1b0d72b6dddcb1ebb8123cb3712530b08cc387b349a3d8",
      },
      "linux-arm64": {
        url: "https://github.com/rhysd/actionlint/releases/download/v1.7.12/actionlint_1.7.12_linux_arm64.tar.gz",
        sha256: "325e971b6ba9bfa504672e29be93c24981eeb1c07576d730e9f7c8805afff0c6",
      },
      "darwin-x64": {
        url: "https://github.com/rhysd/actionlint/releases/download/v1.7.12/actionlint_1.7.12_darwin_amd64.tar.gz",
        sha256: "5b44c3bc2255115c9b69e30efc0fecdf498fdb63c5d58e17084fd5f16324c644",
      },
      "darwin-arm64": {
        url: "https://github.com/rhysd/actionlint/releases/download/v1.7.12/actionlint_1.7.12_darwin_arm64.tar.gz",
        sha256: "aba9ced2dee8d27fecca3dc7feb1a7f9a52caefa1eb46f3271ea66b6e0e6953f",
      },
    },
  },
} as const satisfies Record<string, ToolPin>;
export const KUBECONFORM_UPGRADE = buildTool("kubeconform", "TOOLS.kubeconform");
export const ACTIONLINT_UPGRADE = buildTool("actionlint", "TOOLS.actionlint");

export type ToolName = keyof typeof TOOLS;

/**
 * The CNI reference plugins the attachment check runs (tools/cni-plugins.ts, test/integration/tools/cni-plugins.test.ts):
 * each rendered NetworkAttachmentDefinition's plugin, against its config, in network namespaces.
 * `go install <module>/<package>@<version>` into .tools/cni/; the module proxy serves it, no release
 * archive is fetched. The version is the one Kube-OVN puts on every node: at KUBE_OVN_CHART's tag,
 * kubeovn/kube-ovn dist/images/Dockerfile.base sets `ARG CNI_PLUGINS_VERSION=v1.9.1`, and
 * dist/images/go-deps/download-go-deps.sh extracts `./loopback ./portmap ./macvlan` of that
 * release into the image, which dist/images/install-cni.sh copies to /opt/cni/bin (a test reads it).
 */
export const CNI_PLUGINS = {
  module: "github.com/containernetworking/plugins",
  version: "v1.9.1",
  /** Binary name → package in the module: the attachment types the stack keys allow, and the IPAM the check gives them. */
  plugins: { macvlan: "plugins/main/macvlan", ipvlan: "plugins/main/ipvlan", "host-local": "plugins/ipam/host-local" },
} as const;
export const CNI_PLUGINS_UPGRADE: UpgradeRule = {
  component: "CNI plugins of the attachment check",
  pins: ["CNI_PLUGINS"],
  step: "any",
  downgrade: true,
  deployed: false,
  crds: "none",
  first: [
    "the CNI_PLUGINS_VERSION of kubeovn/kube-ovn dist/images/Dockerfile.base at KUBE_OVN_CHART's tag: the plugins the nodes run (test/integration/tools/cni-plugins.test.ts compares them)",
  ],
  source: "a test tool, never deployed; it follows Kube-OVN's CNI_PLUGINS_VERSION (kubeovn/kube-ovn@v1.16.2 dist/images/Dockerfile.base line 191)",
};

/**
 * Helm, for the test that renders every platform chart at its pin (`helm template`, the release's
 * post-renderer run by Helm itself) and holds the placement model to it (tools/chart-placement.ts,
 * test/integration/placement/chart-placement.test.ts). `go install <command>@<version>` into .tools/helm (the module proxy,
 * checked against sum.golang.org; no replace directive in its go.mod, so no wrapper module). The
 * version is the Helm the deploying code runs: `helm.v3.Release` is the Kubernetes provider's
 * (@pulumi/kubernetes), built on helm.sh/helm/v3, and the newest provider/go.mod of
 * pulumi/pulumi-kubernetes this repository could read (master of 2026-07-01, after v4.32.0) requires
 * helm.sh/helm/v3 v3.20.2 (since #4277, 2026-04-10); the go.mod of v4.34.2 itself could not be read
 * (neither in the snapshot of its repository nor on the module proxy).
 */
export const HELM = { module: "helm.sh/helm/v3", command: "helm.sh/helm/v3/cmd/helm", version: "v3.20.2" } as const;
export const HELM_UPGRADE: UpgradeRule = {
  component: "Helm of the chart placement test",
  pins: ["HELM"],
  step: "any",
  downgrade: true,
  deployed: false,
  crds: "none",
  first: [
    "the helm.sh/helm/v3 version that provider/go.mod of pulumi/pulumi-kubernetes requires at the @pulumi/kubernetes version of package.json: the Helm that installs the releases (stay on its major)",
  ],
  source: "a test tool, never deployed; it follows the Kubernetes provider's Helm (pulumi/pulumi-kubernetes provider/go.mod: helm.sh/helm/v3 v3.20.2)",
};

// ---- CRD schemas where no offline schema folder is (npm run validate, npm test on GitHub) ----
// The offline folder (../shared/schemas) mirrors these; without it, kubeconform reads the catalog
// at the commit below, and what it lacks is built from upstream files at release tags
// (tools/upstream-schemas.ts). A commit, never `master` or `main`: a schema that changes upstream
// must not change what a pull request is validated against. The Kubernetes kinds' schemas come from
// KUBERNETES_VERSION's OpenAPI in every mode (tools/kubernetes-schemas.ts).

/**
 * datreeio/CRDs-catalog at a recent commit of its main branch (it added the Envoy AI Gateway v1beta1
 * schemas; the kubevirt.io, cdi.kubevirt.io, operators.coreos.com and snapshot.storage.k8s.io files
 * the stacks use are older additions, by the catalog's history). It has no medik8s group: see
 * MEDIK8S_CRDS.
 */
export const CRDS_CATALOG_COMMIT = "3b33851d3319afccc2c235c7db8293263eb97b0f";

const medik8sCrd = (repository: string, version: string, file: string): ManifestPin => ({
  version,
  url: `https://raw.githubusercontent.com/medik8s/${repository}/${version}/config/crd/bases/${file}`,
});
/**
 * The CRDs of the pinned Medik8s operators, at their release tags (kubebuilder's config/crd/bases):
 * converted to strict JSON schemas where no offline folder is, as ../shared/schemas holds them.
 */
export const MEDIK8S_CRDS: ManifestPin[] = [
  medik8sCrd("node-healthcheck-operator", MEDIK8S_NHC.version, "remediation.medik8s.io_nodehealthchecks.yaml"),
  medik8sCrd("self-node-remediation", MEDIK8S_SNR.version, "self-node-remediation.medik8s.io_selfnoderemediationconfigs.yaml"),
  medik8sCrd("self-node-remediation", MEDIK8S_SNR.version, "self-node-remediation.medik8s.io_selfnoderemediations.yaml"),
  medik8sCrd("self-node-remediation", MEDIK8S_SNR.version, "self-node-remediation.medik8s.io_selfnoderemediationtemplates.yaml"),
  medik8sCrd("node-maintenance-operator", MEDIK8S_NMO.version, "nodemaintenance.medik8s.io_nodemaintenances.yaml"),
];

/** The Talos machine-config schema of TALOS_VERSION (what ../shared/schemas/talos/<minor>/ holds). */
export const TALOS_CONFIG_SCHEMA: ManifestPin = {
  version: TALOS_VERSION,
  url: `https://raw.githubusercontent.com/siderolabs/talos/${TALOS_VERSION}/pkg/machinery/config/schemas/config.schema.json`,
};

/** Every upgrade rule, each declared beside its pins above; each pin has exactly one (test/integration/platform/upgrades.test.ts). */
export const UPGRADE_RULES: readonly UpgradeRule[] = [
  LONGHORN_UPGRADE,
  KUBE_OVN_UPGRADE,
  CERT_MANAGER_UPGRADE,
  NODE_FEATURE_DISCOVERY_UPGRADE,
  MARIADB_OPERATOR_UPGRADE,
  KUBEVIRT_UPGRADE,
  CDI_UPGRADE,
  METALLB_UPGRADE,
  RABBITMQ_CLUSTER_OPERATOR_UPGRADE,
  RABBITMQ_MESSAGING_TOPOLOGY_OPERATOR_UPGRADE,
  EXTERNAL_SNAPSHOTTER_UPGRADE,
  MULTUS_UPGRADE,
  OLM_UPGRADE,
  KUBECTL_UPGRADE,
  MEDIK8S_NHC_UPGRADE,
  MEDIK8S_SNR_UPGRADE,
  MEDIK8S_NMO_UPGRADE,
  OPENKEEL_CHARTS_UPGRADE,
  MARIADB_UPGRADE,
  RABBITMQ_UPGRADE,
  TALOS_UPGRADE,
  KUBERNETES_UPGRADE,
  TALOS_IMAGE_FACTORY_UPGRADE,
  KIND_UPGRADE,
  CI_NODE_UPGRADE,
  CRD_SCHEMAS_UPGRADE,
  KUBECONFORM_UPGRADE,
  ACTIONLINT_UPGRADE,
  CNI_PLUGINS_UPGRADE,
  HELM_UPGRADE,
];
