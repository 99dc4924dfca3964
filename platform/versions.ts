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
