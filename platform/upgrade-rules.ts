// The upgrade rule of every pin of platform/versions.ts (platform/upgrades.ts types and judges them):
// the steps upstream supports, what comes first, what an operator does by hand, and the source that
// says so. Each rule names its pins by their export name in platform/versions.ts; each pin has
// exactly one rule (test/integration/platform/upgrades.test.ts), in the order of the pins there.
// The preview reads a change's own rules from this file alone (review/preview-command.ts), as it
// reads platform/versions.ts: it imports types only.
import type { UpgradeRule } from "./upgrades";

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

export const RABBITMQ_MESSAGING_TOPOLOGY_OPERATOR_UPGRADE: UpgradeRule = {
  component: "RabbitMQ messaging topology operator",
  pins: ["RABBITMQ_MESSAGING_TOPOLOGY_OPERATOR"],
  step: "any",
  notes: { github: "rabbitmq/messaging-topology-operator", tag: "{version}" },
  crds: "manifest",
  source:
    'rabbitmq/rabbitmq-website@3afc34c docs/kubernetes/operator/upgrade-operator.md: "upgrading the version of the RabbitMQ Cluster Operator (not the Messaging Topology Operator) will require the Pods of RabbitmqClusters to be restarted"',
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

export const MULTUS_UPGRADE: UpgradeRule = {
  component: "Multus",
  pins: ["MULTUS_IMAGE"],
  step: "any",
  notes: { github: "k8snetworkplumbingwg/multus-cni", tag: "{version}" },
  crds: "none",
  source:
    'k8snetworkplumbingwg/multus-cni deployments/multus-daemonset-thick.yml: "this deployment yaml does not care about following things intentionally … upgrade/update/uninstall scenario" (no upstream upgrade guidance)',
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

export const OPENKEEL_CHARTS_UPGRADE: UpgradeRule = {
  component: "OpenKeel charts",
  pins: ["OPENKEEL_CHARTS", "OPENKEEL_CHART_REPOSITORY"],
  step: "any",
  crds: "none",
  source: "UNVERIFIED: the OpenKeel charts publish no upgrade documentation this repository could read (no public index)",
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

export const TALOS_IMAGE_FACTORY_UPGRADE: UpgradeRule = {
  component: "Talos Image Factory",
  pins: ["TALOS_IMAGE_FACTORY"],
  step: "any",
  crds: "none",
  source: "a host name, no release",
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

/** Build tools, CI's runtime and the schema locations: nothing deployed, no upgrade path to keep. */
function buildTool(component: string, ...pins: string[]): UpgradeRule {
  return { component, pins, step: "any", downgrade: true, deployed: false, crds: "none", source: "a build tool: never deployed" };
}

export const CI_NODE_UPGRADE = buildTool("Node.js of CI", "CI_NODE_VERSION");

/** Where the schemas of the platform components' custom resources come from (the Kubernetes kinds': KUBERNETES_VERSION's OpenAPI). */
export const CRD_SCHEMAS_UPGRADE = buildTool("CRD JSON schemas", "CRDS_CATALOG_COMMIT", "MEDIK8S_CRDS");

export const KUBECONFORM_UPGRADE = buildTool("kubeconform", "TOOLS.kubeconform");

export const ACTIONLINT_UPGRADE = buildTool("actionlint", "TOOLS.actionlint");

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

/** Every upgrade rule above, in the order of their pins; each pin has exactly one (test/integration/platform/upgrades.test.ts). */
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
