// Medik8s: NodeHealthCheck, Self Node Remediation and Node Maintenance, installed the way
// upstream supports them: OLM and Subscriptions to their OperatorHub.io bundles (upstream ships no
// Helm chart and calls OLM the supported path, NHC #328 / NMO #131). Then one SNR template with the
// OutOfServiceTaint strategy and the NodeHealthChecks this repository owns (§ 5.6): per role (and
// for the Kubernetes-only control plane), drawn along the zones (./medik8s-groups.ts), so that every
// node is watched by exactly one, or, alone in its role, by none (the rule: ./medik8s-rule.ts).
// The hosts of a Masakari failover segment (label openkeel.io/ha-segment, always compute nodes)
// belong to Masakari, which creates one NodeHealthCheck per segment.
// A node in maintenance or retiring (config/lifecycle.ts) gets a NodeMaintenance request: NMO
// leases the node, cordons it, taints it medik8s.io/drain and drains it, and undoes all of it when
// the request is deleted (medik8s/node-maintenance-operator controllers/nodemaintenance_controller.go,
// Reconcile and stopNodeMaintenanceImp; docs/overview.md). Our NodeHealthChecks leave such a node
// out by its state label: NHC would not remediate it anyway while NMO holds its lease (NHC asks for
// the same medik8s/common lease before it creates a remediation, and gives up on AlreadyHeldError:
// node-healthcheck-operator controllers/nodehealthcheck_controller.go, remediate), but left in, a
// node rebooting for its maintenance would count as unhealthy against maxUnhealthy and hold back
// the remediation of another node of its group.
import { MEDIK8S_DOCS } from "./medik8s-docs";
import { MEDIK8S_SETTINGS, medik8sSettings } from "./medik8s-settings";
import { MEDIK8S_TALOS } from "./medik8s-talos";
import { hasTrait, isDrained, type NodeStateTaint } from "../config/lifecycle";
import { K8S_CONTROL_PLANE_LABEL, ZONE_LABEL, type Taint, type Toleration } from "../config/roles";
import { stateChange, type NodeLifecycle, type NodeTransition, type SlottedStep } from "../lifecycle/contributor";
import { APPLY_AS_PATCH_ANNOTATION, type K8sObject, manifestsUnit, type ManifestsUnit, type RemoteManifestUnit } from "../plan/plan";
import type { Affinity } from "../placement/chart-helper";
import type { LabelSelector } from "../placement/scheduling";
import { arr, CONTROL_PLANE, obj, platformComponent, podScheduling, unplaced, type ObjectReader, type UpstreamWorkload } from "../placement/workloads";
import { upstreamReader, type PlatformComponent, type UpstreamManifest } from "./component";
import type { HostContract } from "../plan/host";
import { MEDIK8S_PLACEMENT_CHECKS, readNodeHealthCheck } from "./medik8s-placement";
import { REMEDIATION_RULE } from "./medik8s-rule";
import { NHC_CUSTOM_KINDS } from "./medik8s-webhook";
import { isQuorumGroup, NHC_CONSTRAINT, nhcChecks, nhcGroupChecks, nhcSelector, type NhcCheck, type NhcGroup } from "./medik8s-groups";
import { fact, resourceOf } from "../plan/needs";
import {
  controlPlaneScheduling,
  namespace,
  pinnedManifestUnit,
  selectorAndTolerations,
  patchThatWaitsFor,
  waitFor,
  type RemediationTemplateRef,
  type SegmentRemediation,
  type StackContext,
  type Contents,
} from "./context";
import { imageRef, KUBECTL_IMAGE, MEDIK8S_NHC, MEDIK8S_NMO, MEDIK8S_SNR, OLM, OLM_CRDS, type OlmPackagePin } from "./versions";

const NODE_MAINTENANCE_TYPE = "openkeel:platform:NodeMaintenance";
const OLM_TYPE = "openkeel:platform:Olm";
const INSTALLED_TYPE = "openkeel:platform:Medik8sInstalled";

const MEDIK8S_NAMESPACE = "medik8s";
/** The catalog olm.yaml installs: OperatorHub.io's community operators, where Medik8s publishes. */
const OLM_CATALOG = { name: "operatorhubio-catalog", namespace: "olm" };
const SNR_TEMPLATE_NAME = "openkeel-out-of-service";
/** The config SNR creates at start-up; it only takes the DaemonSet tolerations from this repository. */
const SNR_CONFIG_NAME = "self-node-remediation-config";

/** SNR's agents must fence a node before its workloads move (§ 5.6): its namespace is privileged. */
function medik8sNamespace(): K8sObject {
  return namespace(MEDIK8S_NAMESPACE, "privileged");
}

/**
 * OLM: crds.yaml then olm.yaml, applied as one group. olm.yaml holds objects (OperatorGroups, the
 * CatalogSource) of kinds crds.yaml defines: applied as two units, a preview on a fresh cluster
 * cannot resolve those kinds (found by the real engine, npm run e2e). Subscriptions and
 * ClusterServiceVersions live in these CRDs: protected. It waits for cert-manager: olm.yaml before
 * v0.38.0 holds a cert-manager Certificate and Issuer whose Secret olm-cert its two operators mount
 * (v0.37.0, the predecessor of the pin: the mirror's file, lines 191-253), and the provider must
 * know those kinds when it builds the group, a preview of a new cluster included (F6 of
 * e2e/FINDINGS.md); a pin bump from such a release (Renovate's path) deploys it first. v0.38.0
 * holds none: at the pin OLM waits for nothing but the pod network.
 */
function olmUnit(): RemoteManifestUnit {
  return pinnedManifestUnit("olm", OLM_TYPE, [OLM_CRDS, OLM], OLM_CONTENTS, { protect: true });
}

/** crds.yaml and olm.yaml: the kinds medik8s-operators creates and medik8s-installed patches; OLM's operators on the pod network (Linux nodes). */
const OLM_APIS = ["OperatorGroup", "Subscription", "ClusterServiceVersion"].map((k) => fact.api("operators.coreos.com", k));
const OLM_USES = [fact.podNetwork, fact.nodeLabel("kubernetes.io/os")];
const OLM_CONTENTS: Contents = {
  "v0.38.0": { offers: OLM_APIS, uses: OLM_USES },
  "v0.37.0": { offers: OLM_APIS, uses: [...OLM_USES, fact.api("cert-manager.io", "Certificate"), fact.api("cert-manager.io", "Issuer")] },
};

/** An OLM operator as olm.yaml (v0.38.0) ships it: one replica on any Linux node it can tolerate (none of the role taints). */
function olmOperator(name: string): UpstreamWorkload {
  return {
    kind: "Deployment",
    namespace: "olm",
    name,
    replicas: 1,
    scheduling: { nodeSelector: { "kubernetes.io/os": "linux" }, tolerations: [] },
    designRoles: CONTROL_PLANE,
  };
}

/**
 * OLM's operators. packageserver is not here: olm-operator creates it from the packageserver CSV
 * at run time (two replicas, the same selector), so no manifest of ours holds it.
 */
const OLM_UPSTREAM: UpstreamManifest = { pin: OLM, workloads: [olmOperator("olm-operator"), olmOperator("catalog-operator")] };

function subscription(ctx: StackContext, pin: OlmPackagePin): K8sObject {
  return {
    apiVersion: "operators.coreos.com/v1alpha1",
    kind: "Subscription",
    metadata: {
      name: pin.package,
      namespace: MEDIK8S_NAMESPACE,
      // The operator's CRDs come from OLM's InstallPlan, after this object exists: Pulumi holds
      // the Subscription (and so every later unit) until OLM reports the installed CSV, which it
      // creates after the CRDs of its InstallPlan.
      annotations: waitFor("jsonpath={.status.installedCSV}", 900),
    },
    spec: {
      name: pin.package,
      channel: pin.channel,
      source: OLM_CATALOG.name,
      sourceNamespace: OLM_CATALOG.namespace,
      startingCSV: pin.startingCSV,
      // Automatic approval would follow the channel past the pin (OLM installs startingCSV, then
      // every upgrade the moving catalog offers). Manual holds each InstallPlan until approved, and
      // the approver Job below approves those of the pinned versions only.
      installPlanApproval: "Manual",
      // The operators' Deployments (NHC, SNR manager, NMO): the control plane (§ 2.2).
      config: selectorAndTolerations(controlPlaneScheduling(ctx)),
    },
  };
}

function medik8sOperatorsUnit(ctx: StackContext): ManifestsUnit {
  const objects: K8sObject[] = [
    // No targetNamespaces: the bundles support the AllNamespaces install mode only.
    { apiVersion: "operators.coreos.com/v1", kind: "OperatorGroup", metadata: { name: "medik8s", namespace: MEDIK8S_NAMESPACE }, spec: {} },
    ...MEDIK8S_PINS.map((pin) => subscription(ctx, pin)),
  ];
  return manifestsUnit("medik8s-operators", "openkeel:platform:Medik8sOperators", objects, {
    offersAtRunTime: [
      {
        facts: MEDIK8S_PINS.map((pin) => fact.object("operators.coreos.com/ClusterServiceVersion", MEDIK8S_NAMESPACE, pin.startingCSV)),
        why: "each Subscription waits for its status.installedCSV (pulumi.com/waitFor): OLM has then created the ClusterServiceVersion, once the approver approved its InstallPlan",
      },
    ],
  });
}

const MEDIK8S_PINS = [MEDIK8S_SNR, MEDIK8S_NHC, MEDIK8S_NMO] as const;
const APPROVER = "medik8s-install-plan-approver";
/** Polls of the approver, 5 s apart: OLM's first resolution and the three installs fit in 15 minutes. */
const APPROVER_POLLS = 180;

/**
 * The approver's script (bash, kubectl). Each poll approves every pending InstallPlan of the
 * namespace whose ClusterServiceVersions are all pinned ones (OLM resolves a namespace's
 * Subscriptions together, so one plan may hold several, and a plan that also upgrades something
 * past its pin is never approved), and ends once every pinned version is installed.
 */
export const APPROVER_SCRIPT = `#!/bin/bash
set -euo pipefail
pinned=" $PINNED_CSVS "
for ((poll = 1; poll <= POLLS; poll++)); do
  kubectl get installplans -n "$NAMESPACE" -o jsonpath='{range .items[?(@.spec.approved==false)]}{.metadata.name}{" "}{.spec.clusterServiceVersionNames[*]}{"\n"}{end}' |
    while read -r plan csvs; do
      [ -n "$plan" ] || continue
      ours=yes
      for csv in $csvs; do case "$pinned" in *" $csv "*) ;; *) ours=no ;; esac; done
      if [ "$ours" = yes ]; then
        kubectl patch installplan "$plan" -n "$NAMESPACE" --type merge -p '{"spec":{"approved":true}}'
      else
        echo "left unapproved: InstallPlan $plan ($csvs) is not only pinned versions"
      fi
    done
  installed=" $(kubectl get subscriptions -n "$NAMESPACE" -o jsonpath='{.items[*].status.installedCSV}') "
  missing=""
  for csv in $PINNED_CSVS; do case "$installed" in *" $csv "*) ;; *) missing="$missing $csv" ;; esac; done
  if [ -z "$missing" ]; then echo "installed:$PINNED_CSVS"; exit 0; fi
  sleep "$POLL_SECONDS"
done
echo "not installed after $POLLS polls:$missing" >&2
exit 1
`;

/**
 * OLM installs a Manual Subscription's startingCSV only once its InstallPlan is approved, and
 * nothing in OLM approves exactly one version: this Job does, for the pinned CSVs (RBAC on the
 * namespace's InstallPlans and Subscriptions only). It runs beside the Subscriptions' unit (neither
 * waits for the other: they wait on each other's effect) on the control plane.
 */
function approverUnit(ctx: StackContext): ManifestsUnit {
  const meta = (name: string) => ({ name, namespace: MEDIK8S_NAMESPACE });
  const objects: K8sObject[] = [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: meta(APPROVER) },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: meta(APPROVER),
      rules: [
        { apiGroups: ["operators.coreos.com"], resources: ["installplans"], verbs: ["get", "list", "patch"] },
        { apiGroups: ["operators.coreos.com"], resources: ["subscriptions"], verbs: ["get", "list"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: meta(APPROVER),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: APPROVER },
      subjects: [{ kind: "ServiceAccount", name: APPROVER, namespace: MEDIK8S_NAMESPACE }],
    },
    { apiVersion: "v1", kind: "ConfigMap", metadata: meta(APPROVER), data: { "approve.sh": APPROVER_SCRIPT } },
    {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: meta(APPROVER),
      spec: {
        backoffLimit: 2,
        template: {
          spec: {
            serviceAccountName: APPROVER,
            restartPolicy: "Never",
            ...selectorAndTolerations(controlPlaneScheduling(ctx)),
            containers: [
              {
                name: "approve",
                image: imageRef(KUBECTL_IMAGE),
                command: ["/bin/bash", "/scripts/approve.sh"],
                env: [
                  { name: "NAMESPACE", value: MEDIK8S_NAMESPACE },
                  { name: "PINNED_CSVS", value: MEDIK8S_PINS.map((p) => p.startingCSV).join(" ") },
                  { name: "POLLS", value: String(APPROVER_POLLS) },
                  { name: "POLL_SECONDS", value: "5" },
                ],
                volumeMounts: [{ name: "scripts", mountPath: "/scripts", readOnly: true }],
              },
            ],
            volumes: [{ name: "scripts", configMap: { name: APPROVER } }],
          },
        },
      },
    },
  ];
  return manifestsUnit(APPROVER, "openkeel:platform:Medik8sInstallPlanApprover", objects, {
    waitsFor: [
      {
        unit: "olm",
        why: "its Job's script lists InstallPlans and Subscriptions, kinds of OLM's CRDs (its Role names them, which needs no CRD), and fails at once without them",
      },
    ],
  });
}

function maxUnhealthyOf(ctx: StackContext, group: NhcGroup): number | string {
  if (isQuorumGroup(group)) return 1;
  return medik8sSettings(ctx.platform).maxUnhealthy[group as Exclude<NhcGroup, "controlPlane" | "kubernetesControlPlane">];
}

/** The SNR template every NodeHealthCheck remediates with: ours, and Masakari's per segment. */
const REMEDIATION_TEMPLATE: RemediationTemplateRef = {
  apiVersion: "self-node-remediation.medik8s.io/v1alpha1",
  kind: "SelfNodeRemediationTemplate",
  namespace: MEDIK8S_NAMESPACE,
  name: SNR_TEMPLATE_NAME,
};

function unhealthyConditions(ctx: StackContext): SegmentRemediation["unhealthyConditions"] {
  const { unhealthyDuration } = medik8sSettings(ctx.platform);
  return [
    { type: "Ready", status: "False", duration: unhealthyDuration },
    { type: "Ready", status: "Unknown", duration: unhealthyDuration },
  ];
}

/**
 * After a storm (more of a check's nodes unhealthy than maxUnhealthy allows), NHC v0.12.0 creates no
 * remediation for stormCooldownDuration once the threshold holds again
 * (internal/controller/nodehealthcheck_controller.go 349–359 and 936–1060: evaluateStormRecovery,
 * its StormActive and StormCooldownActive conditions; without the field no cooldown, 938–940): the
 * nodes of a storm report healthy one by one, and the last ones would be fenced while they still
 * come back. As long as a node must be unhealthy before it is remediated at all.
 */
function stormCooldownDuration(ctx: StackContext): string {
  return medik8sSettings(ctx.platform).unhealthyDuration;
}

/** The zone term of a check's selector: its zone, or, joined beside per-zone checks, every zone but theirs. */
function zoneTerm(check: NhcCheck): NonNullable<LabelSelector["matchExpressions"]> {
  if (check.zone !== undefined) return [{ key: ZONE_LABEL, operator: "In", values: [check.zone] }];
  return check.notInZones ? [{ key: ZONE_LABEL, operator: "NotIn", values: check.notInZones }] : [];
}

function nodeHealthCheck(ctx: StackContext, check: NhcCheck): K8sObject {
  return {
    apiVersion: "remediation.medik8s.io/v1alpha1",
    kind: "NodeHealthCheck",
    metadata: { name: check.name },
    spec: {
      selector: { matchExpressions: [...nhcSelector(check.group, ctx.profile), ...zoneTerm(check)] },
      maxUnhealthy: check.maxUnhealthy ?? maxUnhealthyOf(ctx, check.group),
      stormCooldownDuration: stormCooldownDuration(ctx),
      unhealthyConditions: unhealthyConditions(ctx),
      remediationTemplate: { ...REMEDIATION_TEMPLATE },
    },
  };
}

/**
 * What Masakari puts in the NodeHealthCheck of each failover segment (§ 5.6): the same template and
 * conditions as ours, and the compute nodes' maxUnhealthy (segment hosts are compute nodes). A
 * segment may hold quorum nodes (every node of the small topology): Masakari's placement check
 * (openkeel/services/masakari.ts) then holds that maxUnhealthy to 1.
 */
function segmentRemediation(ctx: StackContext): SegmentRemediation {
  return { remediationTemplate: { ...REMEDIATION_TEMPLATE }, maxUnhealthy: maxUnhealthyOf(ctx, "compute"), unhealthyConditions: unhealthyConditions(ctx) };
}

/** The checks of the groups (and zones) some node of the inventory is in. */
function nodeHealthChecks(ctx: StackContext): K8sObject[] {
  return nhcChecks(ctx.topo.nodes).map((c) => nodeHealthCheck(ctx, c));
}

/**
 * SNR agents run on every node they may have to fence (§ 5.6: "it tolerates everything"): one
 * toleration of every taint, so that no taint added later (NMO's medik8s.io/drain, a disabled
 * host's openkeel.io/compute-disabled, a new role's) keeps an agent off its node. The config's
 * webhook accepts it (validateToleration: Exists with no value; the key is not checked).
 */
const SNR_AGENT_TOLERATIONS: Toleration[] = [{ operator: "Exists" }];

function medik8sRemediationObjects(ctx: StackContext): K8sObject[] {
  return [
    {
      apiVersion: "self-node-remediation.medik8s.io/v1alpha1",
      kind: "SelfNodeRemediationConfig",
      metadata: { name: SNR_CONFIG_NAME, namespace: MEDIK8S_NAMESPACE, annotations: { [APPLY_AS_PATCH_ANNOTATION]: "patch" } },
      spec: { customDsTolerations: SNR_AGENT_TOLERATIONS },
    },
    {
      apiVersion: "self-node-remediation.medik8s.io/v1alpha1",
      kind: "SelfNodeRemediationTemplate",
      metadata: { name: SNR_TEMPLATE_NAME, namespace: MEDIK8S_NAMESPACE },
      // Fence, then taint node.kubernetes.io/out-of-service so that volumes detach and pods move.
      spec: { template: { spec: { remediationStrategy: "OutOfServiceTaint" } } },
    },
    ...nodeHealthChecks(ctx),
  ];
}

function medik8sRemediationUnit(ctx: StackContext): ManifestsUnit {
  return manifestsUnit("medik8s-remediation", "openkeel:platform:Medik8sRemediation", medik8sRemediationObjects(ctx));
}

const INSTALLED_UNIT = "medik8s-installed";

/**
 * The operators' webhooks answer: each pinned ClusterServiceVersion has reached phase Succeeded.
 * The Subscriptions wait only for status.installedCSV, which OLM sets once the InstallPlan has
 * created the CSV, before it installs the CSV's deployments and webhooks (InstallReady: Install;
 * Installing: "waiting for install components to report healthy"). OLM sets Succeeded only when the
 * install strategy's deployments are available and the CSV's webhooks installed
 * (operator-framework/operator-lifecycle-manager@v0.38.0 pkg/controller/operators/olm/operator.go
 * 2318-2341, 2348-2374, updateInstallStatus 2615-2629). Every object of medik8s-remediation and
 * node-maintenance passes a webhook with failurePolicy Fail (self-node-remediation v0.13.0 CSV
 * webhookdefinitions: vselfnoderemediationconfig.kb.io, CREATE UPDATE DELETE of the config, and
 * the template's two), and the config patch could otherwise reach the API server while the
 * operator's pods are not ready, and be refused. A patch of each CSV (annotations of ours; OLM
 * creates the object) carries the wait.
 */
function medik8sInstalledUnit(): ManifestsUnit {
  const objects: K8sObject[] = MEDIK8S_PINS.map((pin) =>
    patchThatWaitsFor(
      { apiVersion: "operators.coreos.com/v1alpha1", kind: "ClusterServiceVersion", metadata: { name: pin.startingCSV, namespace: MEDIK8S_NAMESPACE } },
      "jsonpath={.status.phase}=Succeeded",
      900,
    ),
  );
  return manifestsUnit(INSTALLED_UNIT, INSTALLED_TYPE, objects, {
    offersAtRunTime: [
      {
        facts: [
          ...MEDIK8S_KINDS.map(([group, kind]) => fact.api(group, kind)),
          ...MEDIK8S_KINDS.map(([group, kind]) => fact.admission(group, resourceOf(kind))),
          fact.object("self-node-remediation.medik8s.io/SelfNodeRemediationConfig", MEDIK8S_NAMESPACE, SNR_CONFIG_NAME),
        ],
        why: "every pinned CSV has reached Succeeded: OLM has installed the CRDs its bundle owns, its deployments and its webhooks (above), and the SNR operator has created its configuration",
      },
    ],
  });
}

/** The kinds of the Medik8s operators this repository creates, which OLM installs from their bundles, each admitted by its operator's webhook. */
const MEDIK8S_KINDS = [
  ["remediation.medik8s.io", "NodeHealthCheck"],
  ["self-node-remediation.medik8s.io", "SelfNodeRemediationConfig"],
  ["self-node-remediation.medik8s.io", "SelfNodeRemediationTemplate"],
  ["nodemaintenance.medik8s.io", "NodeMaintenance"],
] as const;

const NODE_MAINTENANCE = { apiVersion: "nodemaintenance.medik8s.io/v1beta1", kind: "NodeMaintenance" } as const;

/**
 * One NodeMaintenance (nodemaintenance.medik8s.io/v1beta1, cluster-scoped; spec.nodeName,
 * spec.reason: api/v1beta1/nodemaintenance_types.go@v0.20.1) per node in maintenance or retiring,
 * named as the node (NMO's webhook allows one request per node). No unit while no node is drained.
 */
function nodeMaintenanceUnits(ctx: StackContext): ManifestsUnit[] {
  const drained = ctx.topo.nodes.filter((n) => isDrained(n.state));
  if (drained.length === 0) return [];
  const objects: K8sObject[] = drained.map((n) => ({
    ...NODE_MAINTENANCE,
    metadata: { name: n.name },
    spec: { nodeName: n.name, reason: `${n.state} in openkeel:nodes of stack ${ctx.cfg.stack}` },
  }));
  return [manifestsUnit("node-maintenance", NODE_MAINTENANCE_TYPE, objects)];
}

/**
 * The agent DaemonSet's own scheduling, as the operator renders it from
 * install/self-node-remediation-deamonset.yaml (medik8s/self-node-remediation; the copy in
 * test/fixtures/upstream/ is held equal to this): the exclude-from-remediation affinity and three
 * tolerations, to which the operator appends customDsTolerations (SelfNodeRemediationConfig
 * controller, updateDsTolerations).
 */
export const SNR_AGENT_UPSTREAM: { affinity: Affinity; tolerations: Toleration[] } = {
  affinity: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: "remediation.medik8s.io/exclude-from-remediation", operator: "NotIn", values: ["true"] }] }],
      },
    },
  },
  tolerations: [
    { key: "medik8s.io/remediation", operator: "Equal", value: "self-node-remediation", effect: "NoExecute" },
    { key: "node-role.kubernetes.io/master", operator: "Equal", effect: "NoSchedule" },
    { key: K8S_CONTROL_PLANE_LABEL, operator: "Equal", effect: "NoSchedule" },
  ],
};

/** The agent DaemonSet: upstream's scheduling plus customDsTolerations; the design wants it on every node it may fence (§ 5.6). */
const readSnrConfig: ObjectReader = (u, o) => {
  const spec = obj(o.spec);
  return [
    platformComponent(
      u,
      `${o.metadata.name}/self-node-remediation-agent`,
      "DaemonSet",
      { affinity: SNR_AGENT_UPSTREAM.affinity, tolerations: [...SNR_AGENT_UPSTREAM.tolerations, ...arr<Toleration>(spec.customDsTolerations)] },
      "allNodes",
    ),
  ];
};

/** A Job's pod: the InstallPlan approver, on the control plane. */
const readJob: ObjectReader = (u, o) => {
  const tpl = obj(obj(obj(o.spec).template).spec);
  return [platformComponent(u, `${o.metadata.name}/job`, "Pods", podScheduling(tpl), CONTROL_PLANE, { replicas: 1 })];
};

/** OLM applies spec.config's nodeSelector, tolerations and affinity to the operator's Deployments (§ 2.2). */
const readSubscription: ObjectReader = (u, o) => {
  const spec = obj(o.spec);
  // OLM applies spec.config's nodeSelector, tolerations and affinity to the operator's
  // Deployments (Medik8s operators, § 2.2: control plane).
  const config = obj(spec.config);
  return [platformComponent(u, `${o.metadata.name}/operator`, "Deployment", podScheduling(config), CONTROL_PLANE)];
};

/**
 * What a node's life asks of Medik8s (docs/node-lifecycle.md): pulumi up creates the node's
 * NodeMaintenance, NMO drains it, and the operator waits for that; when the request goes, NMO
 * uncordons the node, which a node meant to stay cordoned needs again.
 */
function medik8sSteps(t: NodeTransition): SlottedStep[] {
  const { node, before: b, after: h } = t;
  if (!b || !h || !stateChange(t)) return [];
  const asked = (requests: readonly unknown[]) => requests.length > 0;
  if (!asked(b.requests) && asked(h.requests)) {
    return [
      {
        slot: "await-drain",
        when: "after",
        what: "wait for the drain",
        command: `kubectl wait nodemaintenance/${node} --for=jsonpath='{.status.phase}'=Succeeded --timeout=2h`,
        why: "pulumi up asks the Node Maintenance Operator to drain it (NodeMaintenance); VMs live-migrate, PodDisruptionBudgets pace the rest",
      },
    ];
  }
  if (asked(b.requests) && !asked(h.requests) && hasTrait(h.state, "cordons") && !isDrained(h.state)) {
    return [
      {
        slot: "re-cordon",
        when: "after",
        what: "cordon again",
        command: `kubectl cordon ${node}`,
        why: "NMO uncordons the node when pulumi up deletes its NodeMaintenance",
      },
    ];
  }
  return [];
}

/**
 * The Node Maintenance Operator's taint on a node it drains, beside `node.kubernetes.io/unschedulable`
 * (medik8s/node-maintenance-operator controllers/taint.go:17-30 @ v0.20.1, maintenanceTaints).
 */
export const DRAIN_TAINT: Taint = { key: "medik8s.io/drain", effect: "NoSchedule" };

/** What every node agent must tolerate of NMO's drain (lifecycle/contributor.ts agentTaints). */
const DRAIN_AGENT_TAINT: NodeStateTaint = {
  taint: DRAIN_TAINT,
  why: "a node the Node Maintenance Operator drains carries it; NMO leaves DaemonSet pods alone, but one that restarts there (a rollout) stays Pending without it, the SNR agent that would fence the node included (§ 5.6)",
};

const medik8sLifecycle: NodeLifecycle = {
  drains: "NMO",
  // NMO taints the node it drains (controllers/taint.go, MaintenanceTaints)
  stateTaints: (n) => (isDrained(n.state) ? [DRAIN_TAINT] : []),
  agentTaints: [DRAIN_AGENT_TAINT],
  constraints: [NHC_CONSTRAINT],
  requestFor: (o) => {
    const name = obj(o.spec).nodeName;
    return o.apiVersion === NODE_MAINTENANCE.apiVersion && o.kind === NODE_MAINTENANCE.kind && typeof name === "string" ? name : undefined;
  },
  steps: medik8sSteps,
};

/**
 * § 5.6: SNR fences a node through its watchdog. Without /dev/watchdog it tries softdog, then a
 * reboot through /bin/bash (self-node-remediation@v0.13.0 internal/watchdog/linux.go:47-96,
 * internal/reboot/rebooter.go:38-82): Talos has neither (no CONFIG_SOFT_WATCHDOG, no shell), so a
 * node it may remediate needs a hardware watchdog.
 */
function medik8sHost(): Partial<HostContract> {
  return {
    needs: [
      {
        component: `medik8s-remediation/${SNR_CONFIG_NAME}/self-node-remediation-agent`,
        needs: [
          {
            kind: "device",
            anyOf: ["/dev/watchdog"],
            why: "§ 5.6: the agent fences its node through the watchdog; the software fallbacks need softdog or a shell",
            fix: "load the nodes' hardware watchdog driver (openkeel:talos.watchdogModule)",
          },
        ],
      },
    ],
  };
}

export const medik8s: PlatformComponent = {
  name: "Medik8s (NHC, SNR, NMO) on OLM",
  docs: MEDIK8S_DOCS,
  design: [
    // OLM's own operators are operators' controllers (§ 2.3): the control plane
    { workloads: /olm\/(olm-operator|catalog-operator)$/, reach: ["controlPlane"] },
    // § 2.2: the NHC operator, the Node Maintenance operator and SNR's controller on the control
    // plane; the Job that approves the pinned versions where they run (issue 14); SNR's agent everywhere
    { workloads: /(node-healthcheck-operator|node-maintenance-operator|self-node-remediation)\/operator$/, reach: ["controlPlane"] },
    { workloads: /install-plan-approver\/job$/, reach: ["controlPlane"] },
    { workloads: /self-node-remediation-agent$/, reach: "every node" },
    // § 5.6: one NodeHealthCheck per group, the Kubernetes-only control plane's before the control plane's
    { workloads: /kubernetes-control-plane\/remediates$/, reach: { nhc: "kubernetesControlPlane" } },
    { workloads: /control-plane\/remediates$/, reach: { nhc: "controlPlane" } },
    { workloads: /network(-[a-z0-9-]+)?\/remediates$/, reach: { nhc: "network" } },
    { workloads: /storage(-[a-z0-9-]+)?\/remediates$/, reach: { nhc: "storage" } },
    { workloads: /compute(-[a-z0-9-]+)?\/remediates$/, reach: { nhc: "compute" } },
    { workloads: /containers(-[a-z0-9-]+)?\/remediates$/, reach: { nhc: "containers" } },
    { workloads: /provisioning(-[a-z0-9-]+)?\/remediates$/, reach: { nhc: "provisioning" } },
  ],
  pins: [OLM_CRDS, OLM, MEDIK8S_NHC, MEDIK8S_SNR, MEDIK8S_NMO, KUBECTL_IMAGE],
  upstream: [OLM_UPSTREAM],
  artifacts: { olm: OLM_CONTENTS },
  settings: MEDIK8S_SETTINGS,
  talos: MEDIK8S_TALOS,
  namespaces: () => [medik8sNamespace()],
  lifecycle: medik8sLifecycle,
  segmentRemediation,
  customKinds: NHC_CUSTOM_KINDS,
  host: medik8sHost,
  checks: (cfg) =>
    nhcGroupChecks(cfg.nodes, (group) =>
      isQuorumGroup(group) ? 1 : medik8sSettings(cfg.platform).maxUnhealthy[group as Exclude<NhcGroup, "controlPlane" | "kubernetesControlPlane">],
    ),
  units: (ctx) => ({
    "crds-operators": [olmUnit(), approverUnit(ctx), medik8sOperatorsUnit(ctx)],
    // in platform-config, beside what needs it (the docs' order: each waits for what it uses only)
    "platform-config": [medik8sInstalledUnit(), medik8sRemediationUnit(ctx), ...nodeMaintenanceUnits(ctx)],
  }),
  readers: {
    units: {
      [OLM_TYPE]: upstreamReader(OLM_UPSTREAM),
      [NODE_MAINTENANCE_TYPE]: unplaced("requests to the Node Maintenance Operator: no pods"),
      [INSTALLED_TYPE]: unplaced("waits for OLM to report each operator installed: no pods"),
    },
    objects: { Subscription: readSubscription, NodeHealthCheck: readNodeHealthCheck, SelfNodeRemediationConfig: readSnrConfig, Job: readJob },
  },
  placementChecks: [...MEDIK8S_PLACEMENT_CHECKS, ...REMEDIATION_RULE],
};
