// Every version this repository deploys, in one place (Renovate-friendly). Exact versions only:
// no `latest`, no ranges, no floating tags. The Plan invariants reject an unpinned chart or URL.

/** A Helm chart: a Helm repository (https://…) or an OCI registry (oci://…), chart and version. */
export interface ChartPin {
  repository: string;
  chart: string;
  version: string;
}

// ---- Platform components (Longhorn, KubeVirt, CDI, Kube-OVN, Multus, Medik8s, …) ----

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

/** A container image pinned by tag and digest (the digest is what is pulled). */
export interface ImagePin {
  repository: string;
  tag: string;
  digest: string;
}

export function imageRef(p: ImagePin): string {
  return `${p.repository}:${p.tag}@${p.digest}`;
}

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
