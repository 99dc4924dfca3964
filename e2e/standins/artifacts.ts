// E2E STAND-INS for the upstream artifacts that cannot be had offline: the platform Helm charts and
// the pinned release manifests. Each carries only what the e2e needs from the real artifact — its
// CRDs (crds.ts, from ../shared/schemas) and the namespaces it creates where this repository puts
// objects — and names itself a stand-in in its own metadata. The mirror (e2e/harness/mirror.ts)
// serves them; nothing here is used outside `npm run e2e`.
import * as fs from "node:fs";
import { parseAllDocuments, stringify } from "yaml";
import { KUBE_OVN_KINDS, requireKubeOvnCrds } from "../../tools/kube-ovn-crds";
import { crdFor, KINDS, type CrdKind } from "./crds";

export const STAND_IN_LABEL = "e2e.openkeel.io/stand-in";

type Obj = Record<string, unknown>;

export interface StandInChart {
  /** What the real chart is. */
  standsFor: string;
  /** Files of the chart besides Chart.yaml (paths relative to the chart root). */
  files(schemasDir: string): Record<string, string>;
}

export interface StandInFile {
  standsFor: string;
  objects(schemasDir: string): Obj[];
}

const yamlDocs = (objs: Obj[]) => objs.map((o) => `---\n${stringify(o, { lineWidth: 0 })}`).join("");

function namespace(name: string, standIn: string, labels: Record<string, string> = {}): Obj {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      labels: { ...labels, [STAND_IN_LABEL]: "true" },
      annotations: { [STAND_IN_LABEL]: `${standIn}: namespace the upstream manifest creates (e2e only)` },
    },
  };
}

const crds = (schemas: string, kinds: CrdKind[], standIn: string) => kinds.map((k) => crdFor(schemas, k, standIn));

/** A ConfigMap that says what the stand-in release replaces (a chart must render something to be seen). */
function marker(standsFor: string, why: string): string {
  return `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-e2e-stand-in
  namespace: {{ .Release.Namespace }}
  labels: {${STAND_IN_LABEL}: "true"}
data:
  standsFor: ${JSON.stringify(standsFor)}
  note: ${JSON.stringify(why)}
`;
}

/** CRDs are served through .Files.Get: their descriptions may contain `{{`, which templates would parse. */
function crdChart(kinds: CrdKind[], standsFor: string, condition?: string): StandInChart["files"] {
  return (schemas) => {
    const list = crds(schemas, kinds, `stand-in for ${standsFor}`);
    const keep = list.map((c) => ({
      ...c,
      metadata: { ...(c.metadata as Obj), annotations: { ...((c.metadata as Obj).annotations as Obj), "helm.sh/resource-policy": "keep" } },
    }));
    const tpl = condition
      ? `{{- if ${condition} }}\n{{- if (.Values.crds | default dict).keep }}\n{{ .Files.Get "files/crds-keep.yaml" }}\n{{- else }}\n{{ .Files.Get "files/crds.yaml" }}\n{{- end }}\n{{- end }}\n`
      : `{{ .Files.Get "files/crds.yaml" }}\n`;
    return {
      "templates/crds.yaml": tpl,
      "files/crds.yaml": yamlDocs(list),
      ...(condition ? { "files/crds-keep.yaml": yamlDocs(keep) } : {}),
      "values.yaml": "# E2E stand-in: accepts the real chart's values and ignores what it does not need.\n{}\n",
    };
  };
}

/**
 * kube-ovn-controller as the pinned chart renders it (charts/kube-ovn/templates/controller-deploy.yaml:
 * replicas = the master count, nodeSelector kubernetes.io/os only, every NoSchedule taint and
 * CriticalAddonsOnly tolerated, required host anti-affinity, host network), the pause image: the
 * release's post-render patch must find it, and the real scheduler places it after the patch.
 */
const KUBE_OVN_CONTROLLER = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: kube-ovn-controller
  namespace: {{ .Values.namespace | default "kube-system" }}
  labels: {${STAND_IN_LABEL}: "true"}
spec:
  replicas: {{ len (splitList "," (.Values.MASTER_NODES | default "x")) }}
  selector:
    matchLabels: {app: kube-ovn-controller}
  template:
    metadata:
      labels: {app: kube-ovn-controller, ${STAND_IN_LABEL}: "true"}
    spec:
      nodeSelector: {kubernetes.io/os: linux}
      tolerations:
        - {effect: NoSchedule, operator: Exists}
        - {key: CriticalAddonsOnly, operator: Exists}
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - {labelSelector: {matchLabels: {app: kube-ovn-controller}}, topologyKey: kubernetes.io/hostname}
      hostNetwork: true
      priorityClassName: system-cluster-critical
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 1
      containers:
        - {name: kube-ovn-controller, image: "registry.k8s.io/pause:3.10.1", imagePullPolicy: IfNotPresent}
`;

/**
 * The CRDs of the kubeovn.io kinds this repository writes (the Subnets of the Multus attachments),
 * as the pinned chart ships them: its charts/kube-ovn/templates/kube-ovn-crd.yaml, fetched from
 * the Go module proxy by `npm run tools` (tools/kube-ovn-crds.ts), not copied into this repository.
 */
function kubeOvnCrds(): Obj[] {
  const docs = parseAllDocuments(fs.readFileSync(requireKubeOvnCrds(), "utf8")).map((d) => d.toJS() as Obj | null);
  const wanted = new Set<string>(KUBE_OVN_KINDS);
  return docs.filter((d): d is Obj => d?.kind === "CustomResourceDefinition" && wanted.has(String(((d.spec as Obj).names as Obj).kind)));
}

export const STAND_IN_CHARTS: Record<string, StandInChart> = {
  longhorn: { standsFor: "Longhorn chart (CRDs only)", files: crdChart(KINDS.longhorn, "the Longhorn chart") },
  "cert-manager": {
    standsFor: "cert-manager chart (CRDs only, when crds.enabled or installCRDs)",
    files: crdChart(KINDS.certManager, "the cert-manager chart", "or (.Values.crds | default dict).enabled .Values.installCRDs"),
  },
  "mariadb-operator-crds": { standsFor: "mariadb-operator-crds chart", files: crdChart(KINDS.mariadb, "the mariadb-operator-crds chart") },
  "mariadb-operator": {
    standsFor: "mariadb-operator chart (no CRDs: they come from mariadb-operator-crds; no operator runs)",
    files: () => ({
      "templates/stand-in.yaml": marker(
        "mariadb-operator chart",
        "the operator Deployment is not run in the e2e; the MariaDB CRs are validated by the CRDs of mariadb-operator-crds",
      ),
      "values.yaml": "{}\n",
    }),
  },
  "kube-ovn": {
    standsFor:
      "Kube-OVN chart (the real CRDs of the kinds this repository writes, from the pinned module; its kube-ovn-controller Deployment, the target of the release's post-render patch; the e2e cluster needs no CNI)",
    files: () => ({
      "templates/stand-in.yaml": marker("Kube-OVN chart", "no Kube-OVN runs: no pod gets an address from a Subnet, the API server only accepts the objects"),
      "templates/crds.yaml": `{{ .Files.Get "files/crds.yaml" }}\n`,
      "files/crds.yaml": yamlDocs(kubeOvnCrds()),
      "templates/controller-deploy.yaml": KUBE_OVN_CONTROLLER,
      "values.yaml": "{}\n",
    }),
  },
  "node-feature-discovery": {
    standsFor: "Node Feature Discovery chart (nothing: no nfd.k8s-sigs.io schema in ../shared/schemas)",
    files: () => ({
      "templates/stand-in.yaml": marker(
        "Node Feature Discovery chart",
        "no nfd.k8s-sigs.io CRD schemas are available offline; this repository writes no nfd.k8s-sigs.io object",
      ),
      "values.yaml": "{}\n",
    }),
  },
};

/** Remote manifests by file name (the last segment of the pinned URL): used only where the mirror folder has no file. */
export const STAND_IN_FILES: Record<string, StandInFile> = {
  "cert-manager.crds.yaml": {
    standsFor: "cert-manager release manifest cert-manager.crds.yaml (its CRDs, from ../shared/schemas)",
    objects: (s) => crds(s, KINDS.certManager, "stand-in for cert-manager.crds.yaml"),
  },
  "kubevirt-operator.yaml": {
    standsFor: "KubeVirt release manifest kubevirt-operator.yaml (namespace kubevirt + KubeVirt CRD; no virt-operator)",
    objects: (s) => [
      namespace("kubevirt", "kubevirt-operator.yaml", { "kubevirt.io": "", "pod-security.kubernetes.io/enforce": "privileged" }),
      ...crds(s, KINDS.kubevirt, "stand-in for kubevirt-operator.yaml"),
    ],
  },
  "cdi-operator.yaml": {
    standsFor: "CDI release manifest cdi-operator.yaml (namespace cdi + CDI CRD; no cdi-operator)",
    objects: (s) => [namespace("cdi", "cdi-operator.yaml", { "cdi.kubevirt.io": "" }), ...crds(s, KINDS.cdi, "stand-in for cdi-operator.yaml")],
  },
  "cluster-operator.yml": {
    standsFor: "RabbitMQ cluster-operator.yml (namespace rabbitmq-system + RabbitmqCluster CRD; no operator)",
    objects: (s) => [namespace("rabbitmq-system", "cluster-operator.yml"), ...crds(s, KINDS.rabbitmq, "stand-in for cluster-operator.yml")],
  },
  "messaging-topology-operator-with-certmanager.yaml": {
    standsFor: "RabbitMQ messaging-topology-operator-with-certmanager.yaml (the rabbitmq.com topology CRDs; no operator, no webhook)",
    objects: (s) => crds(s, KINDS.rabbitmqTopology, "stand-in for messaging-topology-operator-with-certmanager.yaml"),
  },
  ...Object.fromEntries(
    Object.entries(KINDS.snapshot).map(([file, k]) => [
      file,
      { standsFor: `external-snapshotter CRD file ${file}`, objects: (s: string) => crds(s, [k], `stand-in for ${file}`) } satisfies StandInFile,
    ]),
  ),
  "crds.yaml": {
    standsFor: "OLM crds.yaml (the operators.coreos.com CRDs the schema folder has)",
    objects: (s) => crds(s, KINDS.olm, "stand-in for OLM crds.yaml"),
  },
  "olm.yaml": {
    standsFor: "OLM olm.yaml (namespaces olm and operators, their OperatorGroups, the operatorhubio-catalog CatalogSource; no OLM operators)",
    objects: () => [
      namespace("olm", "olm.yaml"),
      namespace("operators", "olm.yaml"),
      {
        apiVersion: "operators.coreos.com/v1",
        kind: "OperatorGroup",
        metadata: { name: "global-operators", namespace: "operators", labels: { [STAND_IN_LABEL]: "true" } },
      },
      {
        apiVersion: "operators.coreos.com/v1",
        kind: "OperatorGroup",
        metadata: { name: "olm-operators", namespace: "olm", labels: { [STAND_IN_LABEL]: "true" } },
        spec: { targetNamespaces: ["olm"] },
      },
      {
        apiVersion: "operators.coreos.com/v1alpha1",
        kind: "CatalogSource",
        metadata: { name: "operatorhubio-catalog", namespace: "olm", labels: { [STAND_IN_LABEL]: "true" } },
        spec: {
          sourceType: "grpc",
          image: "e2e.invalid/operatorhubio/catalog:stand-in",
          displayName: "Community Operators (e2e stand-in)",
          publisher: "OperatorHub.io",
        },
      },
    ],
  },
};

export function standInFileYaml(name: string, schemasDir: string): string | undefined {
  const f = STAND_IN_FILES[name];
  return f ? yamlDocs(f.objects(schemasDir)) : undefined;
}
