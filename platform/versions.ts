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
