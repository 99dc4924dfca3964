// Multus (thick plugin). The objects of the v4.3.0 release's `deployments/multus-daemonset-thick.yml`
// (k8snetworkplumbingwg/multus-cni; a copy is test/fixtures/upstream/, and
// test/platform/multus-upstream.test.ts holds these objects to it field by field), written here because
// that file names a floating image. The only changes, each in docs/platform.md:
//   - both images: the release's `v4.3.0-thick` instead of the floating `snapshot-thick`;
//   - the DaemonSet's priorityClassName system-node-critical (design § 2: CNI DaemonSets);
//   - on Talos, the netns host path /var/run/netns/ (where Talos keeps network namespaces) and
//     more CPU and memory for the daemon, whose 50Mi limit is too tight (siderolabs Multus guide).
import { type K8sObject, manifestsUnit, type ManifestsUnit, type Unit } from "../plan/plan";
import type { PlatformComponent } from "./component";
import { fact } from "../plan/needs";
import type { StackContext } from "./context";
import type { HostFactsRow } from "./host-facts";
import { imageRef, MULTUS_IMAGE } from "./versions";

const NS = "kube-system";
const TALOS_NETNS_PATH = "/var/run/netns/";
const DEFAULT_NETNS_PATH = "/run/netns/";

const NAD_CRD: K8sObject = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "network-attachment-definitions.k8s.cni.cncf.io" },
  spec: {
    group: "k8s.cni.cncf.io",
    scope: "Namespaced",
    names: {
      plural: "network-attachment-definitions",
      singular: "network-attachment-definition",
      kind: "NetworkAttachmentDefinition",
      shortNames: ["nad", "net-attach-def"],
    },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            description:
              "NetworkAttachmentDefinition is a CRD schema specified by the Network Plumbing Working Group to express the intent for attaching pods to one or more logical or physical networks. More information available at: https://github.com/k8snetworkplumbingwg/multi-net-spec",
            type: "object",
            properties: {
              apiVersion: {
                description:
                  "APIVersion defines the versioned schema of this represen tation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
                type: "string",
              },
              kind: {
                description:
                  "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
                type: "string",
              },
              metadata: { type: "object" },
              spec: {
                description: "NetworkAttachmentDefinition spec defines the desired state of a network attachment",
                type: "object",
                properties: {
                  config: { description: "NetworkAttachmentDefinition config is a JSON-formatted CNI configuration", type: "string" },
                },
              },
            },
          },
        },
      },
    ],
  },
};

const DAEMON_CONFIG = {
  chrootDir: "/hostroot",
  cniVersion: "0.3.1",
  logLevel: "verbose",
  logToStderr: true,
  cniConfigDir: "/host/etc/cni/net.d",
  multusAutoconfigDir: "/host/etc/cni/net.d",
  multusConfigFile: "auto",
  socketDir: "/host/run/multus/",
};

function multusNetnsPath(ctx: Pick<StackContext, "topo">): string {
  return ctx.topo.environment.nodeOs === "talos" ? TALOS_NETNS_PATH : DEFAULT_NETNS_PATH;
}

/** Upstream's requests and limits; on Talos, the siderolabs guide's (the 50Mi limit OOM-kills the daemon). */
function multusResources(ctx: Pick<StackContext, "topo">) {
  return ctx.topo.environment.nodeOs === "talos"
    ? { requests: { cpu: "200m", memory: "100Mi" }, limits: { cpu: "300m", memory: "150Mi" } }
    : { requests: { cpu: "100m", memory: "50Mi" }, limits: { cpu: "100m", memory: "50Mi" } };
}

/** The thick-plugin DaemonSet (upstream's deployments/multus-daemonset-thick.yml), with the host paths and sizes of the nodes' OS. */
function multusDaemonSet(ctx: StackContext): K8sObject {
  const labels = { tier: "node", app: "multus", name: "multus" };
  const image = imageRef(MULTUS_IMAGE);
  const hostPath = (name: string, path: string) => ({ name, hostPath: { path } });
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: "kube-multus-ds", namespace: NS, labels },
    spec: {
      selector: { matchLabels: { name: "multus" } },
      updateStrategy: { type: "RollingUpdate" },
      template: {
        metadata: { labels },
        spec: {
          hostNetwork: true,
          hostPID: true,
          priorityClassName: "system-node-critical",
          // Every node: secondary networks are needed wherever a pod may ask for one.
          tolerations: [
            { operator: "Exists", effect: "NoSchedule" },
            { operator: "Exists", effect: "NoExecute" },
          ],
          serviceAccountName: "multus",
          containers: [
            {
              name: "kube-multus",
              image,
              command: ["/usr/src/multus-cni/bin/multus-daemon"],
              resources: multusResources(ctx),
              securityContext: { privileged: true },
              terminationMessagePolicy: "FallbackToLogsOnError",
              volumeMounts: [
                { name: "cni", mountPath: "/host/etc/cni/net.d" },
                // multus-daemon expects the CNI bin path to be identical on the host and in the pod.
                { name: "cnibin", mountPath: "/opt/cni/bin" },
                { name: "host-run", mountPath: "/host/run" },
                { name: "host-var-lib-cni-multus", mountPath: "/var/lib/cni/multus" },
                { name: "host-var-lib-kubelet", mountPath: "/var/lib/kubelet", mountPropagation: "HostToContainer" },
                { name: "host-run-k8s-cni-cncf-io", mountPath: "/run/k8s.cni.cncf.io" },
                { name: "host-run-netns", mountPath: "/run/netns", mountPropagation: "HostToContainer" },
                { name: "multus-daemon-config", mountPath: "/etc/cni/net.d/multus.d", readOnly: true },
                { name: "hostroot", mountPath: "/hostroot", mountPropagation: "HostToContainer" },
                { name: "multus-conf-dir", mountPath: "/etc/cni/multus/net.d" },
              ],
              env: [{ name: "MULTUS_NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } }],
            },
          ],
          initContainers: [
            {
              name: "install-multus-binary",
              image,
              command: ["/usr/src/multus-cni/bin/install_multus", "-d", "/host/opt/cni/bin", "-t", "thick"],
              resources: { requests: { cpu: "10m", memory: "15Mi" } },
              securityContext: { privileged: true },
              terminationMessagePolicy: "FallbackToLogsOnError",
              volumeMounts: [{ name: "cnibin", mountPath: "/host/opt/cni/bin", mountPropagation: "Bidirectional" }],
            },
          ],
          terminationGracePeriodSeconds: 10,
          volumes: [
            hostPath("cni", "/etc/cni/net.d"),
            hostPath("cnibin", "/opt/cni/bin"),
            hostPath("hostroot", "/"),
            {
              name: "multus-daemon-config",
              configMap: { name: "multus-daemon-config", items: [{ key: "daemon-config.json", path: "daemon-config.json" }] },
            },
            hostPath("host-run", "/run"),
            hostPath("host-var-lib-cni-multus", "/var/lib/cni/multus"),
            hostPath("host-var-lib-kubelet", "/var/lib/kubelet"),
            hostPath("host-run-k8s-cni-cncf-io", "/run/k8s.cni.cncf.io"),
            hostPath("host-run-netns", multusNetnsPath(ctx)),
            hostPath("multus-conf-dir", "/etc/cni/multus/net.d"),
          ],
        },
      },
    },
  };
}

function multusObjects(ctx: StackContext): K8sObject[] {
  return [
    NAD_CRD,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "multus" },
      rules: [
        { apiGroups: ["k8s.cni.cncf.io"], resources: ["*"], verbs: ["*"] },
        { apiGroups: [""], resources: ["pods", "pods/status"], verbs: ["get", "list", "update", "watch"] },
        { apiGroups: ["", "events.k8s.io"], resources: ["events"], verbs: ["create", "patch", "update"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "multus" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "multus" },
      subjects: [{ kind: "ServiceAccount", name: "multus", namespace: NS }],
    },
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "multus", namespace: NS } },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "multus-daemon-config", namespace: NS, labels: { tier: "node", app: "multus" } },
      data: { "daemon-config.json": `${JSON.stringify(DAEMON_CONFIG, null, 4)}\n` },
    },
    multusDaemonSet(ctx),
  ];
}

/**
 * Its daemon delegates every pod's primary network to the pod network's CNI configuration, which it
 * looks for in /etc/cni/net.d for 120 s at start and fails without (`multusConfigFile: auto`,
 * multus-cni@v4.3.0 pkg/server/config/manager.go 53-64 and 289-295, findMasterPlugin): its pods are
 * on the host network, so no object shows that need.
 */
function multusUnit(ctx: StackContext, podNetwork: Unit | undefined): ManifestsUnit {
  // Holds the NetworkAttachmentDefinition CRD: deleting it deletes every NAD.
  return manifestsUnit("multus", "openkeel:platform:Multus", multusObjects(ctx), {
    protect: true,
    ...(podNetwork
      ? {
          waitsFor: [
            {
              unit: podNetwork.name,
              why: "its daemon writes its configuration from the pod network's CNI configuration, which it waits for 120 s at start and fails without (multus-cni@v4.3.0 pkg/server/config/manager.go 53-64, 289-295)",
            },
          ],
        }
      : {}),
    offersAtRunTime: [
      {
        facts: [fact.attachments],
        why: "its DaemonSet installs the Multus CNI (multus-shim) on every node: it attaches the secondary networks a pod's k8s.v1.cni.cncf.io/networks names",
      },
    ],
  });
}

/** What install_multus (the DaemonSet's init container) copies into /opt/cni/bin of every node (platform/host-facts.ts HostFactsRow). */
const MULTUS_CNI_FACTS = {
  pin: "MULTUS_IMAGE",
  readAt: "v4.3.0-thick",
  by: "Multus v4.3.0 (install_multus -t thick)",
  provides: ["multus-shim", "passthru"].map((name) => ({ kind: "cniPlugin" as const, name })),
  source: "k8snetworkplumbingwg/multus-cni@v4.3.0 cmd/install_multus/main.go:29,40-59",
} as const satisfies HostFactsRow;

/** Secondary networks on every node (a DaemonSet the placement report reads like any other). */
export const multus: PlatformComponent = {
  name: "Multus",
  docs: [
    {
      component: "Multus (thick)",
      version: "v4.3.0, image `ghcr.io/k8snetworkplumbingwg/multus-cni:v4.3.0-thick`",
      installedAs:
        "the objects of the release's `multus-daemonset-thick.yml`, written in its `platform/` module and held to a committed copy of it (`test/fixtures/upstream/`) field by field; the only changes: the pinned image instead of `snapshot-thick`, `priorityClassName: system-node-critical` (design § 2), and on Talos the netns path `/var/run/netns/` and the daemon's requests and limits (200m/100Mi, 300m/150Mi: the upstream 50Mi limit OOM-kills it, siderolabs Multus guide)",
      phase: "crds-operators",
      where: "every node",
      stacks: "all",
    },
  ],
  design: [{ workloads: /kube-multus-ds$/, reach: "every node" }],
  pins: [MULTUS_IMAGE],
  units: (ctx, { podNetwork }) => ({ "crds-operators": [multusUnit(ctx, podNetwork)] }),
  readers: {},
  // the init container's install_multus copies the thick plugin's shim into /opt/cni/bin; the
  // daemon writes the primary CNI configuration, of type multus-shim (multus-cni@v4.3.0
  // pkg/server/config/generator.go:34), which every pod sandbox then runs first
  host: () => ({
    podNeeds: [
      {
        kind: "cniPlugin",
        anyOf: ["multus-shim"],
        why: "Multus' primary CNI configuration (type multus-shim) runs it for every pod, before the pod network's",
        fix: "run Multus' DaemonSet on every node that takes pods (it tolerates every taint)",
      },
    ],
  }),
  hostInstalls: [{ component: "multus/kube-multus-ds", facts: MULTUS_CNI_FACTS }],
};
