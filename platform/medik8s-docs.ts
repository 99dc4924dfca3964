// Medik8s' rows of docs/platform.md's table (OLM, the operators, the remediation and the
// maintenance units): its descriptor's `docs`, kept beside its module, which is long enough already.
import type { DocsRow } from "./docs-row";

export const MEDIK8S_DOCS: readonly DocsRow[] = [
  {
    component: "OLM",
    version: "v0.38.0",
    installedAs: "remote manifests `crds.yaml` then `olm.yaml`",
    phase: "crds-operators",
    where: "olm-operator and catalog-operator on untainted Linux nodes (see below)",
    stacks: "production",
  },
  {
    component: "Medik8s NHC, SNR, NMO",
    version: "v0.12.0, v0.13.0, v0.20.1 (`startingCSV`, `installPlanApproval: Manual`)",
    installedAs:
      "OLM: an OperatorGroup and three Subscriptions (channel `stable`, OperatorHub.io catalog) in `medik8s` (privileged); beside them the Job `medik8s-install-plan-approver` (image `registry.k8s.io/kubectl:v1.36.1`) approves the InstallPlans made only of the pinned CSVs, and nothing else",
    phase: "crds-operators",
    where: "operators and the approver on the control plane; SNR agents on every node (`customDsTolerations: [{operator: Exists}]`: every taint, § 5.6)",
    stacks: "production",
  },
  {
    component: "Medik8s remediation",
    version: "—",
    installedAs: "manifests",
    phase: "platform-config",
    where:
      "SelfNodeRemediationTemplate `openkeel-out-of-service` (OutOfServiceTaint); one NodeHealthCheck per group a node of the stack is first in (`openkeel-control-plane` and `openkeel-kubernetes-control-plane` with maxUnhealthy 1, then `openkeel-network`, `-storage`, `-compute`, `-containers`, `-provisioning`; where the nodes have zones, one per zone holding two of a group's nodes, the rest joined: [the rule](node-lifecycle.md#remediation-what-is-fenced-and-what-is-left-to-a-human)): disjoint, every node in exactly one (but a node alone in its group: none), Masakari segment hosts (`openkeel.io/ha-segment`) in none (Masakari's own checks watch them, § 5.6: the Masakari release is told this template, the compute nodes' maxUnhealthy and the same conditions for them, `segmentHealthChecks`), nor nodes in maintenance or retiring (`openkeel.io/node-state`)",
    stacks: "production",
  },
  {
    component: "Node maintenance",
    version: "—",
    installedAs: "manifests (unit `node-maintenance`, only while some node is drained)",
    phase: "platform-config",
    where: "one `NodeMaintenance` per node in `maintenance` or `retiring` ([node lifecycle](node-lifecycle.md)); NMO drains it",
    stacks: "production",
  },
];
