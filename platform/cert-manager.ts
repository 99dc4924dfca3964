// cert-manager (Helm) on the control plane (§ 2.1), its CRDs from the release's own
// `cert-manager.crds.yaml`, applied before the chart and protected. Not from the chart: upstream
// manifests this repository applies (the RabbitMQ operators') hold Certificates and Issuers, and the
// Kubernetes provider's yaml/v2 component must know each kind's scope when it is built, a preview
// included. It learns a CRD's scope from CRDs the program itself registers (the provider's CRD
// cache, filled when it checks them), never from the objects of a Helm release, which do not exist
// yet in the preview of a new cluster: with the chart's CRDs, that preview failed (found by npm run
// e2e with the real manifests; pulumi/pulumi-kubernetes#3176).
import { helmReleaseUnit, type HelmReleaseUnit, type K8sObject, type RemoteManifestUnit } from "../plan/plan";
import {
  chartOperatorComponents,
  CONTROL_PLANE,
  num,
  obj,
  platformComponent,
  podScheduling,
  priorityOf,
  unplaced,
  type ChartWorkloads,
  type Obj,
} from "../placement/workloads";
import type { PlatformComponent } from "./component";
import { contentAt, controlPlaneScheduling, namespace, pinnedManifestUnit, selectorAndTolerations, type Contents, type StackContext } from "./context";
import { fact, type KindOffers } from "../plan/needs";
import { CERT_MANAGER_CHART, CERT_MANAGER_CRDS } from "./versions";
import { PRIORITY_CLASSES } from "./priority-classes";

const CERT_MANAGER_TYPE = "openkeel:platform:CertManager";

const CERT_MANAGER_NAMESPACE = "cert-manager";
const CRDS_TYPE = "openkeel:platform:CertManagerCrds";

/** The chart's pods run as non-root with RuntimeDefault seccomp and no capabilities. */
function certManagerNamespace(): K8sObject {
  return namespace(CERT_MANAGER_NAMESPACE, "restricted");
}

/**
 * The CRDs of cert-manager.crds.yaml. A stack deployed by a program before this unit (the last
 * release, .ci/last-release) has them from the chart (`crds.enabled`, with `crds.keep`, so the
 * chart's upgrade leaves them: helm.sh/resource-policy keep), and Helm's field manager co-owns
 * their fields: the unit adopts them by upsert (components/cluster.ts) with force, or the first
 * CRD change of a later cert-manager bump would be refused as a server-side apply conflict.
 */
const CERT_MANAGER_CRDS_FORCED = ["certificaterequests", "certificates", "clusterissuers", "issuers"]
  .map((p) => `CustomResourceDefinition ${p}.cert-manager.io`)
  .concat(["challenges", "orders"].map((p) => `CustomResourceDefinition ${p}.acme.cert-manager.io`));

const CERT_MANAGER_APIS = [
  ...["Certificate", "CertificateRequest", "ClusterIssuer", "Issuer"].map((k) => fact.api("cert-manager.io", k)),
  ...["Challenge", "Order"].map((k) => fact.api("acme.cert-manager.io", k)),
];

/** cert-manager.crds.yaml: its six CRDs, nothing else (the pin and its predecessor). */
const CRDS_CONTENTS: Contents = { "v1.21.1": { offers: CERT_MANAGER_APIS }, "v1.20.3": { offers: CERT_MANAGER_APIS } };

/** Its CRDs own every Certificate and Issuer: protected. */
function certManagerCrds(): RemoteManifestUnit {
  return pinnedManifestUnit("cert-manager-crds", CRDS_TYPE, CERT_MANAGER_CRDS, CRDS_CONTENTS, { protect: true, forceConflicts: CERT_MANAGER_CRDS_FORCED });
}

/**
 * The chart (crds.enabled false): its webhook admits every cert-manager.io and acme.cert-manager.io
 * object (failurePolicy Fail), so whatever creates a Certificate or an Issuer waits for it; its
 * pods run on the pod network, on Linux nodes.
 */
const CHART_CONTENT = {
  offers: [fact.admission("cert-manager.io", "*"), fact.admission("acme.cert-manager.io", "*")],
  uses: [fact.podNetwork, fact.nodeLabel("kubernetes.io/os")],
};
const CHART_CONTENTS: Contents = { "v1.21.1": CHART_CONTENT, "v1.20.3": CHART_CONTENT };

function certManagerRelease(ctx: StackContext): HelmReleaseUnit {
  const placement = selectorAndTolerations(controlPlaneScheduling(ctx));
  const values = {
    crds: { enabled: false },
    // § 2: operators' controllers; the chart's one key for all four pods (values.yaml global.priorityClassName)
    global: { priorityClassName: PRIORITY_CLASSES.control },
    ...placement,
    webhook: { ...placement },
    cainjector: { ...placement },
    startupapicheck: { ...placement },
  };
  return helmReleaseUnit("cert-manager", CERT_MANAGER_TYPE, CERT_MANAGER_NAMESPACE, CERT_MANAGER_CHART, values, {
    ...contentAt(CHART_CONTENTS, CERT_MANAGER_CHART.version, "the cert-manager chart"),
    waitsFor: [
      {
        unit: "cert-manager-crds",
        why: "its controller watches Certificates, Issuers and their kin, and its startupapicheck hook (`cmctl check api`) creates a Certificate in a dry run: cert-manager.io's CRDs must exist, which no object of the chart names (crds.enabled false)",
      },
    ],
  });
}

/** The workloads of the chart at CERT_MANAGER_CHART (release `cert-manager`: the chart names them after it). */
const CERT_MANAGER_CHART_WORKLOADS: ChartWorkloads = {
  rendered: {
    "Deployment cert-manager": "cert-manager",
    "Deployment cert-manager-webhook": "webhook",
    "Deployment cert-manager-cainjector": "cainjector",
    "Job cert-manager-startupapicheck": "startupapicheck",
  },
};

/**
 * A Certificate offers the Secret its spec.secretName names, in its own namespace: cert-manager
 * applies it (creates it when missing) once it has issued the certificate
 * (cert-manager@v1.21.1 pkg/controller/certificates/issuing/internal/secret.go:94-127, its name and
 * namespace from getCertificateSecret, :208-219), so a pod that mounts it waits for the Certificate's unit.
 */
const KIND_OFFERS: KindOffers = {
  "cert-manager.io/Certificate": (o) => {
    const secret = obj(o.spec).secretName;
    return typeof secret === "string" && secret !== "" ? [fact.secret(o.metadata.namespace ?? "default", secret)] : [];
  },
};

export const certManager: PlatformComponent = {
  name: "cert-manager",
  docs: [
    {
      component: "cert-manager",
      version:
        "v1.21.1: the CRDs from the release manifest `cert-manager.crds.yaml` (unit `cert-manager-crds`, protected), then the chart with `crds.enabled: false`",
      installedAs: "remote manifest, then Helm (`https://charts.jetstack.io`)",
      phase: "crds-operators",
      where: "control plane",
      stacks: "all",
    },
  ],
  // § 2.1: shared infrastructure on the control plane; a chart's hook Jobs are workloads too and go
  // where their operator goes (issue 22, item 7: startupapicheck)
  design: [
    { workloads: /\/cert-manager$|cert-manager\/(webhook|cainjector)$/, reach: ["controlPlane"] },
    { workloads: /cert-manager\/startupapicheck$/, reach: ["controlPlane"] },
  ],
  pins: [CERT_MANAGER_CRDS, CERT_MANAGER_CHART],
  charts: { [CERT_MANAGER_CHART.chart]: CERT_MANAGER_CHART_WORKLOADS },
  artifacts: { "cert-manager-crds": CRDS_CONTENTS, "cert-manager": CHART_CONTENTS },
  kindOffers: KIND_OFFERS,
  namespaces: () => [certManagerNamespace()],
  units: (ctx) => ({ "crds-operators": [certManagerCrds(), certManagerRelease(ctx)] }),
  readers: {
    units: {
      [CRDS_TYPE]: unplaced("CRDs only: no pods"),
      [CERT_MANAGER_TYPE]: (u) => {
        if (u.kind !== "HelmRelease") return [];
        // every template names global.priorityClassName; each Deployment has its `replicaCount` (1 by default)
        const priority = priorityOf(obj((u.values as Obj).global).priorityClassName);
        return [
          ...chartOperatorComponents(u, ["webhook", "cainjector"], (own) => ({ replicas: num(own.replicaCount) ?? 1, ...priority })),
          // the post-install hook Job (templates/startupapicheck-job.yaml), placed by startupapicheck.*
          platformComponent(u, "startupapicheck", "Pods", podScheduling(obj((u.values as Obj).startupapicheck)), CONTROL_PLANE, priority),
        ];
      },
    },
  },
};
