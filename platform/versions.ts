// Every version this repository deploys, in one place (Renovate-friendly: renovate.json finds each
// pin here; a release's `*_VERSION` constant has a `// renovate:` line right above it that says where
// Renovate looks it up, so a new one needs that line and no new manager). Exact versions only: no `latest`, no ranges, no floating tags. Every command that plans
// a stack refuses a pin written otherwise first, naming it (pinProblems in platform/upgrades.ts:
// a chart, manifest, image or OLM pin's version or tag, a `*_VERSION` string is x.y.z, a `*_COMMIT`
// string a whole commit hash, a manifest's URL carries its version). Each pin's upgrade rule is in
// platform/upgrade-rules.ts (`<NAME>_UPGRADE`, in the order of the pins here): the steps upstream
// supports, what comes first, what an operator does by hand, and the source that says so; `npm run
// plan`, the render and the preview refuse a step the rule does not allow. What a pin puts on a
// node's host: platform/host-facts.ts.
// This file is read at other commits too (the committed state's pins): it imports types only.
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

/** The Kube-OVN chart with the v1 (UPPER_CASE) values; its versions carry a leading `v`. */
export const KUBE_OVN_CHART: ChartPin = { repository: "https://kubeovn.github.io/kube-ovn/", chart: "kube-ovn", version: "v1.16.2" };

export const CERT_MANAGER_CHART: ChartPin = { repository: "https://charts.jetstack.io", chart: "cert-manager", version: "v1.21.1" };
/** The CRDs of the same release, as cert-manager publishes them beside the chart (platform/cert-manager.ts says why they are applied apart). */
export const CERT_MANAGER_CRDS: ManifestPin = {
  version: CERT_MANAGER_CHART.version,
  url: `https://github.com/cert-manager/cert-manager/releases/download/${CERT_MANAGER_CHART.version}/cert-manager.crds.yaml`,
};

/** Chart versions equal the NFD release since v0.15 (release v0.18.3). */
export const NODE_FEATURE_DISCOVERY_CHART: ChartPin = {
  repository: "https://kubernetes-sigs.github.io/node-feature-discovery/charts",
  chart: "node-feature-discovery",
  version: "0.18.3",
};

const MARIADB_OPERATOR_REPO = "https://mariadb-operator.github.io/mariadb-operator";
export const MARIADB_OPERATOR_CRDS_CHART: ChartPin = { repository: MARIADB_OPERATOR_REPO, chart: "mariadb-operator-crds", version: "26.6.0" };
export const MARIADB_OPERATOR_CHART: ChartPin = { repository: MARIADB_OPERATOR_REPO, chart: "mariadb-operator", version: "26.6.0" };

// renovate: datasource=github-releases depName=kubevirt/kubevirt
const KUBEVIRT_VERSION = "v1.9.0";
export const KUBEVIRT_OPERATOR: ManifestPin = {
  version: KUBEVIRT_VERSION,
  url: `https://github.com/kubevirt/kubevirt/releases/download/${KUBEVIRT_VERSION}/kubevirt-operator.yaml`,
};

// renovate: datasource=github-releases depName=kubevirt/containerized-data-importer
const CDI_VERSION = "v1.66.0";
export const CDI_OPERATOR: ManifestPin = {
  version: CDI_VERSION,
  url: `https://github.com/kubevirt/containerized-data-importer/releases/download/${CDI_VERSION}/cdi-operator.yaml`,
};

/** MetalLB's native (L2 and BGP, no FRR) manifest: CRDs, namespace, controller, speaker, webhooks. */
// renovate: datasource=github-tags depName=metallb/metallb
const METALLB_VERSION = "v0.16.1";
export const METALLB_NATIVE: ManifestPin = {
  version: METALLB_VERSION,
  url: `https://raw.githubusercontent.com/metallb/metallb/${METALLB_VERSION}/config/manifests/metallb-native.yaml`,
};

// renovate: datasource=github-releases depName=rabbitmq/cluster-operator
const RABBITMQ_CLUSTER_OPERATOR_VERSION = "v2.22.3";
export const RABBITMQ_CLUSTER_OPERATOR: ManifestPin = {
  version: RABBITMQ_CLUSTER_OPERATOR_VERSION,
  url: `https://github.com/rabbitmq/cluster-operator/releases/download/${RABBITMQ_CLUSTER_OPERATOR_VERSION}/cluster-operator.yml`,
};

/** The release manifest that takes its webhook certificate from cert-manager (rabbitmq/messaging-topology-operator releases). */
// renovate: datasource=github-releases depName=rabbitmq/messaging-topology-operator
const MESSAGING_TOPOLOGY_OPERATOR_VERSION = "v1.19.2";
export const RABBITMQ_MESSAGING_TOPOLOGY_OPERATOR: ManifestPin = {
  version: MESSAGING_TOPOLOGY_OPERATOR_VERSION,
  url: `https://github.com/rabbitmq/messaging-topology-operator/releases/download/${MESSAGING_TOPOLOGY_OPERATOR_VERSION}/messaging-topology-operator-with-certmanager.yaml`,
};

// renovate: datasource=github-tags depName=kubernetes-csi/external-snapshotter extractVersion=^(?<version>v\d+\.\d+\.\d+)$
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

/** The thick plugin image the release workflow pushes as `<tag>-thick` (the tag's manifest says `snapshot-thick`). */
export const MULTUS_IMAGE: ImagePin = { repository: "ghcr.io/k8snetworkplumbingwg/multus-cni", tag: "v4.3.0-thick" };

// renovate: datasource=github-releases depName=operator-framework/operator-lifecycle-manager
const OLM_VERSION = "v0.38.0";
export const OLM_CRDS: ManifestPin = {
  version: OLM_VERSION,
  url: `https://github.com/operator-framework/operator-lifecycle-manager/releases/download/${OLM_VERSION}/crds.yaml`,
};
export const OLM: ManifestPin = {
  version: OLM_VERSION,
  url: `https://github.com/operator-framework/operator-lifecycle-manager/releases/download/${OLM_VERSION}/olm.yaml`,
};

/**
 * kubectl for the Job that approves the InstallPlans of the pinned Medik8s versions (platform/medik8s.ts):
 * the Kubernetes release image, which has bash beside kubectl (kubernetes/kubernetes
 * build/server-image/kubectl/Dockerfile: debian-base with bash, grep, sed, coreutils, jq); the
 * Kubernetes version of the kind node image, within kubectl's one-minor skew of the clusters.
 */
export const KUBECTL_IMAGE: ImagePin = { repository: "registry.k8s.io/kubectl", tag: "v1.36.1" };

/** Medik8s operators from the OperatorHub.io community catalog (channel `stable`). */
export const MEDIK8S_NHC = olmPackage("node-healthcheck-operator", "v0.12.0");
export const MEDIK8S_SNR = olmPackage("self-node-remediation", "v0.13.0");
export const MEDIK8S_NMO = olmPackage("node-maintenance-operator", "v0.20.1");

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

// ---- Node operating systems and images (rendered/<stack>/talos/, rendered/lab/kind/) ----

/**
 * Talos Linux release the machine-config patches and schematics target (its JSON schema validates
 * them). tools/talos-validate/go.mod requires github.com/siderolabs/talos/pkg/machinery at this
 * version, whose validation judges every rendered node (a test keeps the two equal).
 */
// renovate: datasource=github-releases depName=siderolabs/talos
export const TALOS_VERSION = "v1.13.9";
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
// renovate: datasource=github-releases depName=kubernetes/kubernetes extractVersion=^v(?<version>\d+\.\d+\.\d+)$
export const KUBERNETES_VERSION = "1.36.3";
/** Image Factory that serves installers for the rendered schematics. */
export const TALOS_IMAGE_FACTORY = "factory.talos.dev";
/** kind release the lab cluster is created with; a node image is supported only with its own kind release. */
// renovate: datasource=github-releases depName=kubernetes-sigs/kind
export const KIND_VERSION = "v0.32.0";
/** kind v0.32.0's default node image (kubernetes-sigs/kind pkg/apis/config/defaults/image.go@v0.32.0). */
export const KIND_NODE_IMAGE: ImagePin = {
  repository: "kindest/node",
  tag: "v1.36.1",
  digest: "sha256:3489c7674813ba5d8b1a9977baea8a6e553784dab7b84759d1014dbd78f7ebd5",
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
// renovate: datasource=node-version depName=node
export const CI_NODE_VERSION = "24.21.0";

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
