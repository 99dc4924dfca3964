// E2E STAND-INS for the upstream artifacts that cannot be had offline: the platform Helm charts and
// the pinned release manifests. Each carries only what the e2e needs from the real artifact — its
// CRDs (crds.ts, from ../shared/schemas) and the namespaces it creates where this repository puts
// objects — and names itself a stand-in in its own metadata. The mirror (test/e2e/harness/mirror.ts)
// serves them; nothing here is used outside `npm run e2e`.
import { stringify } from "yaml";
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
    standsFor: "Kube-OVN chart (nothing: no kubeovn.io schema in ../shared/schemas, and the e2e cluster needs no CNI)",
    files: () => ({
      "templates/stand-in.yaml": marker("Kube-OVN chart", "no kubeovn.io CRD schemas are available offline; this repository writes no kubeovn.io object"),
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

/** A workload of metallb-native.yaml as the manifest names and schedules it (the program patches both). */
function metallbWorkload(kind: "DaemonSet" | "Deployment", name: string, podSpec: Obj): Obj {
  const labels = { app: "metallb", component: name };
  return {
    apiVersion: "apps/v1",
    kind,
    metadata: { name, namespace: "metallb-system", labels: { ...labels, [STAND_IN_LABEL]: "true" } },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          nodeSelector: { "kubernetes.io/os": "linux" },
          containers: [{ name, image: `e2e.invalid/metallb/${name}:stand-in` }],
          ...podSpec,
        },
      },
    },
  };
}

/** Remote manifests by file name (the last segment of the pinned URL). */
export const STAND_IN_FILES: Record<string, StandInFile> = {
  "metallb-native.yaml": {
    standsFor:
      "MetalLB metallb-native.yaml (namespace metallb-system, the IPAddressPool and L2Advertisement CRDs, the speaker DaemonSet and controller Deployment as the manifest schedules them, with a stand-in image; no webhooks)",
    objects: (s) => [
      namespace("metallb-system", "metallb-native.yaml", {
        "pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/audit": "privileged",
        "pod-security.kubernetes.io/warn": "privileged",
      }),
      ...crds(s, KINDS.metallb, "stand-in for metallb-native.yaml"),
      metallbWorkload("DaemonSet", "speaker", {
        hostNetwork: true,
        tolerations: [
          { key: "node-role.kubernetes.io/master", operator: "Exists", effect: "NoSchedule" },
          { key: "node-role.kubernetes.io/control-plane", operator: "Exists", effect: "NoSchedule" },
        ],
      }),
      metallbWorkload("Deployment", "controller", {}),
    ],
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
