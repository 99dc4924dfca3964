// Every version this repository deploys, in one place (Renovate-friendly). Exact versions only:
// no `latest`, no ranges, no floating tags. The Plan invariants reject an unpinned chart or URL.

/** A Helm chart: a Helm repository (https://…) or an OCI registry (oci://…), chart and version. */
export interface ChartPin {
  repository: string;
  chart: string;
  version: string;
}

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

const MARIADB_OPERATOR_REPO = "https://mariadb-operator.github.io/mariadb-operator";
export const MARIADB_OPERATOR_CRDS_CHART: ChartPin = { repository: MARIADB_OPERATOR_REPO, chart: "mariadb-operator-crds", version: "26.6.0" };
export const MARIADB_OPERATOR_CHART: ChartPin = { repository: MARIADB_OPERATOR_REPO, chart: "mariadb-operator", version: "26.6.0" };

const KUBEVIRT_VERSION = "v1.9.0";
export const KUBEVIRT_OPERATOR: ManifestPin = {
  version: KUBEVIRT_VERSION,
  url: `https://github.com/kubevirt/kubevirt/releases/download/${KUBEVIRT_VERSION}/kubevirt-operator.yaml`,
};

const CDI_VERSION = "v1.66.0";
export const CDI_OPERATOR: ManifestPin = {
  version: CDI_VERSION,
  url: `https://github.com/kubevirt/containerized-data-importer/releases/download/${CDI_VERSION}/cdi-operator.yaml`,
};

const RABBITMQ_CLUSTER_OPERATOR_VERSION = "v2.22.3";
export const RABBITMQ_CLUSTER_OPERATOR: ManifestPin = {
  version: RABBITMQ_CLUSTER_OPERATOR_VERSION,
  url: `https://github.com/rabbitmq/cluster-operator/releases/download/${RABBITMQ_CLUSTER_OPERATOR_VERSION}/cluster-operator.yml`,
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

/** The thick plugin image the release workflow pushes as `<tag>-thick` (the tag's manifest says `snapshot-thick`). */
export const MULTUS_IMAGE: ImagePin = { repository: "ghcr.io/k8snetworkplumbingwg/multus-cni", tag: "v4.3.0-thick" };

const OLM_VERSION = "v0.38.0";
export const OLM_CRDS: ManifestPin = {
  version: OLM_VERSION,
  url: `https://github.com/operator-framework/operator-lifecycle-manager/releases/download/${OLM_VERSION}/crds.yaml`,
};
export const OLM: ManifestPin = {
  version: OLM_VERSION,
  url: `https://github.com/operator-framework/operator-lifecycle-manager/releases/download/${OLM_VERSION}/olm.yaml`,
};

/** Medik8s operators from the OperatorHub.io community catalog (channel `stable`). */
export const MEDIK8S_NHC = olmPackage("node-healthcheck-operator", "v0.12.0");
export const MEDIK8S_SNR = olmPackage("self-node-remediation", "v0.13.0");
export const MEDIK8S_NMO = olmPackage("node-maintenance-operator", "v0.20.1");

// ---- OpenKeel charts ----
// The OpenKeel project publishes one chart per service plus the infrastructure chart
// (openkeel-chart). UNVERIFIED: no public index of these charts was found; the registry below is
// the project's own domain (the one of its label keys, openkeel.io) and the version the first
// line of charts carrying the § 5.2 placement helper. Stacks override both with `openkeel:charts`
// (stacks/README.md).
import type { OpenKeelChartKey } from "../components/config";

export const OPENKEEL_CHART_REPOSITORY = "oci://registry.openkeel.io/charts";

export const OPENKEEL_CHARTS = {
  infrastructure: { chart: "openkeel-chart", version: "1.0.0" },
  keystone: { chart: "openkeel-keystone", version: "1.0.0" },
  placement: { chart: "openkeel-placement", version: "1.0.0" },
  nova: { chart: "openkeel-nova", version: "1.0.0" },
  neutron: { chart: "openkeel-neutron", version: "1.0.0" },
  glance: { chart: "openkeel-glance", version: "1.0.0" },
  cinder: { chart: "openkeel-cinder", version: "1.0.0" },
  manila: { chart: "openkeel-manila", version: "1.0.0" },
  swift: { chart: "openkeel-swift", version: "1.0.0" },
  heat: { chart: "openkeel-heat", version: "1.0.0" },
  barbican: { chart: "openkeel-barbican", version: "1.0.0" },
  designate: { chart: "openkeel-designate", version: "1.0.0" },
  masakari: { chart: "openkeel-masakari", version: "1.0.0" },
  ironic: { chart: "openkeel-ironic", version: "1.0.0" },
  skyline: { chart: "openkeel-skyline", version: "1.0.0" },
  "ovn-octavia-provider": { chart: "openkeel-ovn-octavia-provider", version: "1.0.0" },
  zun: { chart: "openkeel-zun", version: "1.0.0" },
  "ec2-api": { chart: "openkeel-ec2-api", version: "1.0.0" },
} as const satisfies Record<OpenKeelChartKey, Omit<ChartPin, "repository">>;

// ---- Node operating systems and images (rendered/<stack>/talos/, rendered/lab/kind/) ----

/** Talos Linux release the machine-config patches and schematics target (its JSON schema validates them). */
export const TALOS_VERSION = "v1.13.9";
/** Image Factory that serves installers for the rendered schematics. */
export const TALOS_IMAGE_FACTORY = "factory.talos.dev";
/** kind release the lab cluster is created with; a node image is supported only with its own kind release. */
export const KIND_VERSION = "v0.32.0";
/** kind v0.32.0's default node image (kubernetes-sigs/kind pkg/apis/config/defaults/image.go@v0.32.0). */
export const KIND_NODE_IMAGE: ImagePin = {
  repository: "kindest/node",
  tag: "v1.36.1",
  digest: "sha256:3489c7674813ba5d8b1a9977baea8a6e553784dab7b84759d1014dbd78f7ebd5",
};
