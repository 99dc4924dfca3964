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
