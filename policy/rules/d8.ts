// D8: the public ingress data plane runs on the network nodes and on the control plane nodes:
// a node affinity with two nodeSelectorTerms (OR), both present. § 5.2 lists no ingress for the
// infrastructure chart, which reads no placement for it: only its release's post-render patch of
// the ingress DaemonSet places it.
import { chartOf, type Finding, type ResourceView, RELEASE_TYPE, stackRule } from "./common";
import { INFRA_CHART } from "./charts";
import { covers, describePlacement } from "./placement";
import { patchedPlacement } from "./post-render";

function ingressFindings(resources: ResourceView[], r: ResourceView): Finding[] {
  const { name, placement: p, targets, misses, problem } = patchedPlacement(resources, r, "DaemonSet", "ingress");
  if (problem) return [problem];
  if (covers(p, ["controlPlane", "network"])) return misses;
  return [
    ...misses,
    {
      urn: r.urn,
      message: `${r.name}: the public ingress (DaemonSet ${name}, as its post-render patch leaves it, the release's patches targeting ${targets}; the chart places it nowhere, § 5.2) lands on ${describePlacement(p)}`,
      fix: "place it with roles: [controlPlane, network] (D8: one nodeSelectorTerm per role, OR), which the release's post-render patch carries",
    },
  ];
}

export const d8PublicIngress = stackRule(
  "D8",
  "d8-public-ingress",
  "the public ingress reaches control-plane OR network nodes, both terms present (its release's post-render patch)",
  (resources) => resources.filter((r) => r.type === RELEASE_TYPE && chartOf(r) === INFRA_CHART).flatMap((r) => ingressFindings(resources, r)),
);
