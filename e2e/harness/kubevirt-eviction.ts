// E2E STAND-IN for KubeVirt's pod eviction admitter (never used outside `npm run e2e`): virt-api's
// `virt-launcher-eviction-interceptor.kubevirt.io`, which virt-operator registers on pods/eviction
// (kubevirt v1.9.0 pkg/virt-operator/resource/generate/components/webhooks.go 314-362: the
// ValidatingWebhookConfiguration virt-api-validator, failurePolicy Fail, the match condition
// `object.metadata.name.startsWith("virt-launcher")`, path /pod-eviction-validate). Its decision is
// pkg/virt-api/webhooks/validating-webhook/admitters/pod-eviction-admitter.go at v1.9.0, written
// out below line by line (admitLauncherEviction); virt-api itself does not run on this cluster.
// A VMI that cannot live-migrate under `evictionStrategy: LiveMigrate` (the cluster-wide one this
// repository sets) is denied eviction for good: the Node Maintenance Operator's drain of its node
// retries without end (nmo.ts nmoDrainCycles). The VMI CRD comes from ../shared/schemas (virt-operator,
// which would install it, does not run here).
import type { AdmissionStandIn } from "./admission";
import { webhookPath } from "./admission";
import type { Kube, KubeObject } from "./kube";
import { crdFor } from "../standins/crds";

type Json = Record<string, unknown>;

export const EVICTION_WEBHOOK = "virt-launcher-eviction-interceptor.kubevirt.io";
const CONFIGURATION = "virt-api-validator";
const STAND_IN = "e2e.openkeel.io/stand-in";
/** kubevirt.io/api core/v1 types.go: AppLabel (1133), DomainAnnotation (1138), VirtualMachineInstanceIsMigratable (713). */
const APP_LABEL = "kubevirt.io";
const DOMAIN_ANNOTATION = "kubevirt.io/domain";
const LIVE_MIGRATABLE = "LiveMigratable";

export interface LauncherPod {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { nodeName?: string };
  status?: { phase?: string };
}

export interface Vmi {
  metadata: { name: string; namespace?: string };
  spec?: { evictionStrategy?: string };
  status?: { nodeName?: string; evacuationNodeName?: string; conditions?: { type: string; status: string }[] };
}

/** The admitter's answer: allowed, or denied with its message (HTTP 429, as `denied`, 219-227); `mark` when it marks the VMI for evacuation. */
export type Verdict = { allowed: true } | { allowed: false; message: string; mark?: string | undefined };

/**
 * PodEvictionAdmitter.Admit for a pod (86-98) and admitLauncherPod (127-183) at v1.9.0; the
 * hotplug pod branch (100-125) is left out: this e2e has none. `vmi` undefined: the get failed.
 */
export function admitLauncherEviction(pod: LauncherPod, vmi: Vmi | undefined, clusterStrategy: string | undefined): Verdict {
  const launcher = pod.metadata.labels?.[APP_LABEL] === "virt-launcher";
  const completed = pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";
  if (!launcher || completed) return { allowed: true };
  const vmiName = pod.metadata.annotations?.[DOMAIN_ANNOTATION];
  if (!vmiName) return { allowed: true };
  if (!vmi) return { allowed: false, message: `kubevirt failed getting the vmi: virtualmachineinstances.kubevirt.io "${vmiName}" not found` };
  // migrations.VMIEvictionStrategy: the VMI's own, else the cluster's
  const strategy = vmi.spec?.evictionStrategy ?? clusterStrategy;
  if (strategy === undefined) return { allowed: true };
  const migratable = (vmi.status?.conditions ?? []).some((c) => c.type === LIVE_MIGRATABLE && c.status === "True");
  let mark = false;
  switch (strategy) {
    case "LiveMigrate":
      if (!migratable) return { allowed: false, message: `VMI ${vmi.metadata.name} is configured with an eviction strategy but is not live-migratable` };
      mark = true;
      break;
    case "LiveMigrateIfPossible":
      mark = migratable;
      break;
    case "External":
      mark = true;
      break;
  }
  if (!mark) return { allowed: true };
  const evacuation = `Eviction triggered evacuation of VMI "${vmi.metadata.namespace}/${vmi.metadata.name}"`;
  if (vmi.status?.evacuationNodeName) return { allowed: false, message: `Evacuation in progress: ${evacuation}` };
  if (vmi.status?.nodeName !== pod.spec?.nodeName) return { allowed: false, message: "Eviction request for target Pod" };
  return { allowed: false, message: evacuation, mark: pod.spec?.nodeName };
}

/** The admitter against the cluster: the pod, its VMI and the KubeVirt CR's evictionStrategy read as virt-api reads them. */
export function evictionHandler(kube: Kube): (review: Json) => Promise<{ body: Json; what: string }> {
  return async (review) => {
    const req = (review.request ?? {}) as Json;
    const ns = String(req.namespace);
    const name = String(req.name);
    const answer = (response: Json, what: string) => ({
      body: { apiVersion: review.apiVersion ?? "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid: req.uid, ...response } },
      what,
    });
    const pod = await kube.get<LauncherPod>(`/api/v1/namespaces/${ns}/pods/${name}`);
    if (!pod) return answer({ allowed: true }, `eviction of ${ns}/${name}: no such pod, allowed`);
    const vmiName = pod.metadata.annotations?.[DOMAIN_ANNOTATION];
    const vmi = vmiName ? await kube.get<Vmi>(`/apis/kubevirt.io/v1/namespaces/${ns}/virtualmachineinstances/${vmiName}`) : undefined;
    const [kv] = await kube.list<KubeObject & { spec?: { configuration?: { evictionStrategy?: string } } }>("/apis/kubevirt.io/v1/kubevirts");
    const verdict = admitLauncherEviction(pod, vmi, kv?.spec?.configuration?.evictionStrategy);
    if (verdict.allowed) return answer({ allowed: true }, `eviction of ${ns}/${name}: allowed`);
    if (verdict.mark && !req.dryRun)
      await kube.request(
        "PATCH",
        `/apis/kubevirt.io/v1/namespaces/${ns}/virtualmachineinstances/${vmiName}/status`,
        [{ op: "add", path: "/status/evacuationNodeName", value: verdict.mark }],
        "application/json-patch+json",
      );
    return answer({ allowed: false, status: { message: verdict.message, code: 429 } }, `eviction of ${ns}/${name}: DENIED (429): ${verdict.message}`);
  };
}

/** virt-api-validator's eviction webhook as virt-operator registers it, pointed at the admission stand-in's handler. */
export function evictionWebhookConfiguration(admission: AdmissionStandIn): Json {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: CONFIGURATION, labels: { [STAND_IN]: "true", [APP_LABEL]: CONFIGURATION } },
    webhooks: [
      {
        name: EVICTION_WEBHOOK,
        admissionReviewVersions: ["v1"],
        failurePolicy: "Fail",
        timeoutSeconds: 10,
        sideEffects: "NoneOnDryRun",
        rules: [{ operations: ["*"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods/eviction"] }],
        matchConditions: [{ name: "only-vms", expression: 'object.metadata.name.startsWith("virt-launcher")' }],
        clientConfig: {
          url: `${admission.endpoint.url}${webhookPath("ValidatingWebhookConfiguration", CONFIGURATION, EVICTION_WEBHOOK)}`,
          caBundle: admission.endpoint.caBundle,
        },
      },
    ],
  };
}

/** The admitter registered: its configuration in the cluster, its handler in the admission stand-in. */
export async function registerEvictionAdmitter(kube: Kube, admission: AdmissionStandIn, schemasDir: string): Promise<void> {
  const crd = crdFor(
    schemasDir,
    { group: "kubevirt.io", kind: "VirtualMachineInstance", plural: "virtualmachineinstances", scope: "Namespaced", versions: ["v1"] },
    "stand-in for the VMI CRD virt-operator installs",
  );
  await kube.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  for (let i = 0; i < 100; i++) {
    const got = await kube.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/virtualmachineinstances.kubevirt.io");
    if (got?.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")) break;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  admission.webhooks.push({
    kind: "ValidatingWebhookConfiguration",
    configuration: CONFIGURATION,
    webhook: EVICTION_WEBHOOK,
    upstream: "service kubevirt/virt-api:443/pod-eviction-validate",
    manifest: "virt-operator's install (stand-in: kubevirt-eviction.ts)",
  });
  admission.handlers.set(webhookPath("ValidatingWebhookConfiguration", CONFIGURATION, EVICTION_WEBHOOK), evictionHandler(kube));
  await kube.create("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", evictionWebhookConfiguration(admission));
}

/** A VM whose disk is a non-shared PVC (virt-handler's LiveMigratable=False, pkg/virt-handler/vm.go 1882) running on `node`, and its virt-launcher pod. */
export async function placeNonMigratableVmi(kube: Kube, namespace: string, node: string): Promise<{ vmi: string; pod: string }> {
  const vmi = "vm-local-disk";
  await kube.create("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace, labels: { [STAND_IN]: "true" } } });
  const created = await kube.create(`/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances`, {
    apiVersion: "kubevirt.io/v1",
    kind: "VirtualMachineInstance",
    metadata: { name: vmi, namespace, labels: { [STAND_IN]: "true" } },
    spec: { domain: { devices: {}, resources: { requests: { memory: "64Mi" } } } },
  });
  const uid =
    (created.body as KubeObject).metadata?.uid ?? (await kube.get(`/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances/${vmi}`))?.metadata.uid;
  const now = new Date().toISOString();
  await kube.request(
    "PATCH",
    `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances/${vmi}/status`,
    {
      status: {
        phase: "Running",
        nodeName: node,
        conditions: [
          {
            type: LIVE_MIGRATABLE,
            status: "False",
            reason: "DisksNotLiveMigratable",
            message: "cannot migrate VMI: PVC rootdisk is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)",
            lastProbeTime: null,
            lastTransitionTime: now,
          },
        ],
      },
    },
    "application/merge-patch+json",
  );
  const pod = `virt-launcher-${vmi}-e2e00`;
  await kube.create(`/api/v1/namespaces/${namespace}/pods`, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: pod,
      namespace,
      labels: { [APP_LABEL]: "virt-launcher", "vm.kubevirt.io/name": vmi, [STAND_IN]: "true" },
      annotations: { [DOMAIN_ANNOTATION]: vmi },
      // virt-controller owns the launcher by its VMI: deleting the VMI (virtctl stop) takes the pod along (garbage collector)
      ownerReferences: [{ apiVersion: "kubevirt.io/v1", kind: "VirtualMachineInstance", name: vmi, uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: { nodeName: node, terminationGracePeriodSeconds: 1, containers: [{ name: "compute", image: "registry.k8s.io/pause:3.10.1" }] },
  });
  return { vmi, pod };
}
