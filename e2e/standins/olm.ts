// E2E STAND-IN for OLM installing a Medik8s operator (never used outside `npm run e2e`): the objects
// its InstallPlan and its CSV's install strategy create, in OLM's order, for the stand-in
// controller. OLM (operator-framework/operator-lifecycle-manager v0.38.0): the InstallPlan creates
// the CSV, and the Subscription reports it in status.installedCSV; then the CSV goes InstallReady →
// Installing (pkg/controller/operators/olm/operator.go 2318-2341: Install creates the deployments
// and the webhooks) → Succeeded once the deployments are available and the webhooks installed
// (updateInstallStatus, 2615-2629). Webhooks (pkg/controller/install/webhook.go 77-130): one
// configuration per webhookdefinition, generateName `<generateName>-`, the webhook named
// generateName, backed by the Service `<deploymentName>-service` (certresources.go 157-158) on
// containerPort, in the operator's namespace.
// Self-node-remediation's and node-healthcheck-operator's install strategies and webhooks are
// written out: they are what the program's SNR configuration patch and its NodeHealthChecks meet
// (self-node-remediation v0.13.0 bundle, k8s-operatorhub/community-operators
// operators/self-node-remediation/0.13.0/manifests/self-node-remediation.clusterserviceversion.yaml;
// node-healthcheck-operator v0.12.0 bundle/manifests/node-healthcheck-operator.clusterserviceversion.yaml
// 467-490 (the Deployment) and 664-685 (the webhookdefinition): the Deployments and
// webhookdefinitions). NMO's CSV goes Succeeded at once.
import { STAND_IN_LABEL } from "./artifacts";

type Obj = Record<string, unknown>;

/** What OLM's install of one CSV creates, as the stand-in writes it out. */
export interface OperatorInstall {
  package: string;
  deployment: string;
  podLabels: Record<string, string>;
  /** Its webhookdefinitions: [kind, generateName, API group, resource, operations, failurePolicy, path]. */
  webhooks: [string, string, string, string, string[], "Fail" | "Ignore", string][];
  /** From OLM's install of the webhooks to the Deployment: its pods' start-up, where the e2e holds it back. */
  startupSeconds: number;
}

/**
 * From OLM's install of the webhooks to the operator's pods answering: on a new cluster the node
 * pulls the operator's image first, then the manager's readinessProbe (initialDelaySeconds 5,
 * periodSeconds 10) passes 15 s after the container starts at the earliest. The stand-in holds
 * SNR's Deployment back 60 s: longer than what is left of the crds-operators phase once the
 * Subscriptions report installed here, so that a configuration that did not wait would meet the
 * webhook unready.
 */
export const SNR_STARTUP_SECONDS = 60;

const SNR_GROUP = "self-node-remediation.medik8s.io";

export const SNR_INSTALL: OperatorInstall = {
  package: "self-node-remediation",
  deployment: "self-node-remediation-controller-manager",
  podLabels: { "control-plane": "controller-manager", "self-node-remediation-operator": "" },
  webhooks: [
    [
      "MutatingWebhookConfiguration",
      "mselfnoderemediationtemplate.kb.io",
      SNR_GROUP,
      "selfnoderemediationtemplates",
      ["CREATE", "UPDATE"],
      "Fail",
      "/mutate-self-node-remediation-medik8s-io-v1alpha1-selfnoderemediationtemplate",
    ],
    [
      "ValidatingWebhookConfiguration",
      "vselfnoderemediation.kb.io",
      SNR_GROUP,
      "selfnoderemediations",
      ["CREATE", "UPDATE"],
      "Ignore",
      "/validate-self-node-remediation-medik8s-io-v1alpha1-selfnoderemediation",
    ],
    [
      "ValidatingWebhookConfiguration",
      "vselfnoderemediationconfig.kb.io",
      SNR_GROUP,
      "selfnoderemediationconfigs",
      ["CREATE", "UPDATE", "DELETE"],
      "Fail",
      "/validate-self-node-remediation-medik8s-io-v1alpha1-selfnoderemediationconfig",
    ],
    [
      "ValidatingWebhookConfiguration",
      "vselfnoderemediationtemplate.kb.io",
      SNR_GROUP,
      "selfnoderemediationtemplates",
      ["CREATE", "UPDATE"],
      "Fail",
      "/validate-self-node-remediation-medik8s-io-v1alpha1-selfnoderemediationtemplate",
    ],
  ],
  startupSeconds: SNR_STARTUP_SECONDS,
};

/** The webhook whose rule during a remediation the admission stand-in enforces (../harness/nhc-change.ts). */
export const NHC_WEBHOOK = "vnodehealthcheck.kb.io";

export const NHC_INSTALL: OperatorInstall = {
  package: "node-healthcheck-operator",
  deployment: "node-healthcheck-controller-manager",
  podLabels: { "app.kubernetes.io/component": "controller-manager", "app.kubernetes.io/name": "node-healthcheck-operator" },
  webhooks: [
    [
      "ValidatingWebhookConfiguration",
      NHC_WEBHOOK,
      "remediation.medik8s.io",
      "nodehealthchecks",
      ["CREATE", "UPDATE", "DELETE"],
      "Fail",
      "/validate-remediation-medik8s-io-v1alpha1-nodehealthcheck",
    ],
  ],
  startupSeconds: 0,
};

/** The installs the stand-in writes out, by package; another package's CSV goes Succeeded at once. */
export const OPERATOR_INSTALLS: readonly OperatorInstall[] = [SNR_INSTALL, NHC_INSTALL];

/** A ClusterServiceVersion as the InstallPlan creates it (the fields the OLM v0.38.0 CRD requires). */
export function csvObject(namespace: string, csv: string, pkg: string): Obj {
  return {
    apiVersion: "operators.coreos.com/v1alpha1",
    kind: "ClusterServiceVersion",
    metadata: { name: csv, namespace, labels: { [STAND_IN_LABEL]: "true" }, annotations: { [STAND_IN_LABEL]: `the CSV OLM's InstallPlan creates for ${pkg}` } },
    spec: {
      displayName: pkg,
      install: { strategy: "deployment", spec: { deployments: [] } },
      installModes: [{ type: "AllNamespaces", supported: true }],
    },
  };
}

/** What OLM's Install creates for a CSV before its Deployment serves: the webhook Service and configurations. */
export function webhookObjects(install: OperatorInstall, namespace: string): { path: string; body: Obj }[] {
  const service = {
    path: `/api/v1/namespaces/${namespace}/services`,
    body: {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: `${install.deployment}-service`, namespace, labels: { [STAND_IN_LABEL]: "true" } },
      spec: { selector: install.podLabels, ports: [{ name: "443", port: 443, targetPort: 9443, protocol: "TCP" }] },
    },
  };
  const configs = install.webhooks.map(([kind, name, group, resource, operations, failurePolicy, path]) => ({
    path: `/apis/admissionregistration.k8s.io/v1/${kind.toLowerCase()}s`,
    body: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind,
      metadata: { generateName: `${name}-`, labels: { [STAND_IN_LABEL]: "true", "olm.webhook-description-generate-name": name } },
      webhooks: [
        {
          name,
          admissionReviewVersions: ["v1"],
          failurePolicy,
          sideEffects: "None",
          rules: [{ apiGroups: [group], apiVersions: ["v1alpha1"], operations, resources: [resource] }],
          clientConfig: { service: { namespace, name: `${install.deployment}-service`, path, port: 443 } },
        },
      ],
    },
  }));
  return [service, ...configs];
}

/** The CSV's Deployment (pause image), with the Subscription's spec.config scheduling, as OLM applies it. */
export function operatorDeployment(install: OperatorInstall, namespace: string, config: Obj): Obj {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: install.deployment, namespace, labels: { [STAND_IN_LABEL]: "true" } },
    spec: {
      replicas: 2,
      selector: { matchLabels: install.podLabels },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
      template: {
        metadata: { labels: { ...install.podLabels, [STAND_IN_LABEL]: "true" } },
        spec: {
          priorityClassName: "system-cluster-critical",
          topologySpreadConstraints: [
            { labelSelector: { matchLabels: install.podLabels }, maxSkew: 1, topologyKey: "kubernetes.io/hostname", whenUnsatisfiable: "DoNotSchedule" },
          ],
          ...(config.nodeSelector ? { nodeSelector: config.nodeSelector } : {}),
          ...(config.tolerations ? { tolerations: config.tolerations } : {}),
          ...(config.affinity ? { affinity: config.affinity } : {}),
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 1,
          containers: [{ name: "manager", image: "registry.k8s.io/pause:3.10.1", ports: [{ containerPort: 9443, name: "webhook-server" }] }],
        },
      },
    },
  };
}
