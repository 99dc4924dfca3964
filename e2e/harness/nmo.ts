// E2E STAND-INS for the day-2 transitions (never used outside `npm run e2e`): the e2e cluster runs
// no Node Maintenance Operator and no longhorn-manager, so the harness plays their part where a
// transition needs it, against the real API server (its Eviction API honours every
// PodDisruptionBudget through the real disruption controller's status):
//   NMO          for a NodeMaintenance the program created: cordon (only when not cordoned yet, as
//                kubectl's RunCordonOrUncordon), taint medik8s.io/drain, evict every pod but
//                DaemonSet and mirror pods through the Eviction API, retried every 2 s while a PDB
//                refuses (NMO: 5 s), bounded; then status.phase Succeeded. When the request goes:
//                its taint removed, the node uncordoned if it still is
//                (medik8s/node-maintenance-operator controllers/nodemaintenance_controller.go).
//   longhorn-manager's instance-manager PDB: a stand-in instance-manager pod on the drained node
//                and its PodDisruptionBudget (minAvailable 1), deleted only when Longhorn's rule
//                allows it under the rendered nodeDrainPolicy (instanceManagerPdbVerdict); the
//                volumes are the node's StatefulSet pods that claim a Longhorn class
//                (e2e.openkeel.io/storage-class), attached while their pod is there, their
//                replica stopped once it is gone.
//   longhorn-manager's node registration: nodes.longhorn.io/<node>, which the eviction patch of
//                a retiring storage node needs to exist.
import { DRAIN_TAINT } from "../../platform/medik8s";
import type { Kube, KubeObject } from "./kube";
import { sleep } from "./proc";
import { drainLeft, drainProblems, instanceManagerPdbVerdict, podsToEvict, type DrainPod, type NodeReplica } from "./transitions-judge";

export const LONGHORN_NS = "longhorn-system";
const STAND_IN = "e2e.openkeel.io/stand-in";

/** A pod, as far as the drain and the agents' checks read it. */
export interface Pod extends KubeObject {
  spec: { nodeName?: string };
  status?: { phase?: string };
}

interface NodeObj extends KubeObject {
  spec?: { unschedulable?: boolean; taints?: { key: string; value?: string; effect: string }[] };
}

/** The pods bound to a node (every namespace). */
export const podsOn = (kube: Kube, node: string) => kube.list<Pod>(`/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${node}`)}`);
const podId = (p: KubeObject) => `${p.metadata.namespace}/${p.metadata.name}`;
const owner = (p: KubeObject) => (p.metadata.ownerReferences as { kind: string; name: string; controller?: boolean }[] | undefined)?.find((o) => o.controller);

function drainPod(p: Pod): DrainPod {
  return {
    id: podId(p),
    uid: p.metadata.uid ?? "",
    daemonSet: owner(p)?.kind === "DaemonSet",
    mirror: p.metadata.annotations?.["kubernetes.io/config.mirror"] !== undefined,
    terminating: p.metadata.deletionTimestamp !== undefined,
  };
}

/** Add a taint to a Node unless it has it (the list is replaced as a whole: the program's Node patch writes no taints). */
export async function addTaint(kube: Kube, node: string, taint: { key: string; effect: string }): Promise<void> {
  const n = await kube.get<NodeObj>(`/api/v1/nodes/${node}`);
  const taints = n?.spec?.taints ?? [];
  if (taints.some((t) => t.key === taint.key && t.effect === taint.effect)) return;
  await kube.mergePatch(`/api/v1/nodes/${node}`, { spec: { taints: [...taints, taint] } });
}

export async function removeTaint(kube: Kube, node: string, key: string): Promise<void> {
  const n = await kube.get<NodeObj>(`/api/v1/nodes/${node}`);
  const taints = n?.spec?.taints ?? [];
  if (!taints.some((t) => t.key === key)) return;
  await kube.mergePatch(`/api/v1/nodes/${node}`, { spec: { taints: taints.filter((t) => t.key !== key) } });
}

/** A Longhorn volume attached to the node: its pod's id and class, the pod's uid (attached while that pod is there). */
interface Volume {
  id: string;
  podUid: string;
  protectedElsewhere: boolean;
}

/** A Longhorn volume of the node: a StatefulSet pod there that claims a Longhorn class, and whether that class keeps a replica elsewhere. */
async function volumesOn(kube: Kube, pods: readonly Pod[]): Promise<Volume[]> {
  const out: Volume[] = [];
  for (const p of pods) {
    const o = owner(p);
    if (o?.kind !== "StatefulSet") continue;
    const sts = await kube.get(`/apis/apps/v1/namespaces/${p.metadata.namespace}/statefulsets/${o.name}`);
    const cls = sts?.metadata.annotations?.["e2e.openkeel.io/storage-class"];
    if (!cls) continue;
    const sc = await kube.get<KubeObject & { provisioner?: string; parameters?: Record<string, string> }>(`/apis/storage.k8s.io/v1/storageclasses/${cls}`);
    if (sc?.provisioner !== "driver.longhorn.io") continue;
    const strict = sc.parameters?.dataLocality === "strict-local" || Number(sc.parameters?.numberOfReplicas ?? "3") <= 1;
    out.push({ id: `${podId(p)} (${cls})`, podUid: p.metadata.uid ?? "", protectedElsewhere: !strict });
  }
  return out;
}

/** The instance-manager stand-in of a node: its pod (Running by kwok) and its PDB. */
async function instanceManagerStandIn(kube: Kube, node: string): Promise<{ pod: string; pdb: string }> {
  const name = `e2e-instance-manager-${node}`;
  const labels = { "longhorn.io/component": "instance-manager", "longhorn.io/node": node, [STAND_IN]: "instance-manager" };
  await kube.create(`/api/v1/namespaces/${LONGHORN_NS}/pods`, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: LONGHORN_NS, labels },
    spec: {
      nodeName: node,
      tolerations: [{ operator: "Exists" }],
      terminationGracePeriodSeconds: 0,
      containers: [{ name: "instance-manager", image: "e2e.invalid/longhorn-instance-manager:stand-in" }],
    },
  });
  await kube.create(`/apis/policy/v1/namespaces/${LONGHORN_NS}/poddisruptionbudgets`, {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name, namespace: LONGHORN_NS, labels: { [STAND_IN]: "instance-manager-pdb" } },
    spec: { minAvailable: 1, selector: { matchLabels: { "longhorn.io/component": "instance-manager", "longhorn.io/node": node } } },
  });
  for (let i = 0; i < 30; i++) {
    const pdb = await kube.get<KubeObject & { status?: { currentHealthy?: number; observedGeneration?: number } }>(
      `/apis/policy/v1/namespaces/${LONGHORN_NS}/poddisruptionbudgets/${name}`,
    );
    if ((pdb?.status?.currentHealthy ?? 0) >= 1) break;
    await sleep(1000);
  }
  return { pod: `${LONGHORN_NS}/${name}`, pdb: name };
}

export interface DrainOutcome {
  node: string;
  ok: boolean;
  seconds: number;
  detail: string[];
  /** every PDB that refused an eviction at least once */
  refusedBy: string[];
}

/** One eviction through the Eviction API: evicted, refused (429, the PDB's message) or gone. */
async function evict(kube: Kube, id: string): Promise<{ status: number; message: string; text: string }> {
  const [ns, name] = id.split("/");
  const res = await kube.request<{ message?: string }>("POST", `/api/v1/namespaces/${ns}/pods/${name}/eviction`, {
    apiVersion: "policy/v1",
    kind: "Eviction",
    metadata: { name, namespace: ns },
  });
  const message = typeof res.body === "object" && res.body?.message ? res.body.message : res.text.slice(0, 200);
  if (res.status >= 300 && res.status !== 429 && res.status !== 404) throw new Error(`eviction of ${id}: ${res.status} ${message}`);
  return { status: res.status, message, text: res.text };
}

/** NMO's cordon and taint. */
async function cordonAndTaint(kube: Kube, node: string, detail: string[]): Promise<void> {
  const n = await kube.get<NodeObj>(`/api/v1/nodes/${node}`);
  if (!n?.spec?.unschedulable) await kube.mergePatch(`/api/v1/nodes/${node}`, { spec: { unschedulable: true } });
  detail.push(
    `${node}: ${n?.spec?.unschedulable ? "already cordoned by the program's node-roles patch" : "cordoned"}; tainted ${DRAIN_TAINT.key}:${DRAIN_TAINT.effect}`,
  );
  await addTaint(kube, node, DRAIN_TAINT);
}

/**
 * NMO's drain of `node`, with the instance-manager stand-in under `drainPolicy` (when Longhorn is
 * installed), within `limitSeconds`.
 */
export async function drainAsNmo(kube: Kube, node: string, drainPolicy: string | undefined, limitSeconds: number): Promise<DrainOutcome> {
  const t0 = Date.now();
  const detail: string[] = [];
  await cordonAndTaint(kube, node, detail);
  const im = drainPolicy ? await instanceManagerStandIn(kube, node) : undefined;
  const volumes = await volumesOn(kube, await podsOn(kube, node));
  if (im)
    detail.push(
      `${node}: instance-manager stand-in ${im.pod} with PDB ${im.pdb} (minAvailable 1); Longhorn volumes attached here: ${volumes.map((v) => v.id).join(", ") || "none"}`,
    );
  const refusals = new Map<string, string>();
  const refusedBy = new Set<string>();
  const listed = podsToEvict((await podsOn(kube, node)).map(drainPod));
  let left = listed;
  let arrived: DrainPod[] = [];
  let pdbGone = !im;
  while ((Date.now() - t0) / 1000 < limitSeconds) {
    const pods = await podsOn(kube, node);
    ({ left, arrived } = drainLeft(listed, pods.map(drainPod)));
    if (im && !pdbGone) pdbGone = await reconcilePdb(kube, node, drainPolicy!, im.pdb, pods, volumes, detail);
    if (left.length === 0) break;
    for (const p of left.filter((x) => !x.terminating)) {
      const r = await evict(kube, p.id);
      if (r.status === 429) {
        refusals.set(p.id, r.message);
        refusedBy.add(/disruption budget ([a-z0-9.-]+) needs/.exec(r.text)?.[1] ?? r.message);
      } else if (r.status < 300) detail.push(`${node}: evicted ${p.id}${refusals.has(p.id) ? ` after refusals (${refusals.get(p.id)})` : ""}`);
    }
    await sleep(2000);
  }
  detail.push(`${node}: ${listed.length} pod(s) to evict listed at the start`);
  if (arrived.length)
    detail.push(
      `${node}: came back since, not waited for (as kubectl's drain helper): ${arrived.map((p) => p.id).join(", ")} (they tolerate the cordon's taint)`,
    );
  const seconds = (Date.now() - t0) / 1000;
  const problems = drainProblems(node, left, refusals, seconds, limitSeconds);
  if (problems.length === 0) await succeeded(kube, node);
  return { node, ok: problems.length === 0, seconds, detail: [...detail, ...problems], refusedBy: [...refusedBy] };
}

/** NMO v0.20.1's drain timing: the drain helper's timeout per reconcile, and the requeue after it fails (controllers/nodemaintenance_controller.go 52, 60). */
export const NMO_DRAINER_TIMEOUT_S = 30;
export const NMO_REQUEUE_S = 5;
/** k8s.io/kubectl pkg/drain evictPods: a refused eviction (429) is tried again after 5 s. */
const DRAIN_HELPER_RETRY_S = 5;

export interface NmoCycle {
  /** every eviction the drain helper tried in this reconcile */
  attempts: { at: string; pod: string; status: number; message: string }[];
  /** status.lastError as NMO writes it after the drain helper's timeout (none when the drain finished) */
  lastError?: string;
  pendingPods: string[];
  drained: boolean;
}

/**
 * One reconcile of NMO v0.20.1 (Reconcile 232-269): cordon and taint, then the drain helper with
 * its 30 s timeout (createDrainer 274-310: Force, IgnoreAllDaemonSets, DeleteEmptyDirData): every
 * pod but DaemonSet and mirror pods evicted, a refused one (429) again after 5 s (k8s.io/kubectl
 * pkg/drain/drain.go evictPods; NMO requires kubectl v0.34.3, the text is the same in v0.33.3
 * 292-321 and v0.36.3); at the timeout the error `error when evicting pods/"<pod>" -n "<ns>": global
 * timeout reached: 30s`, which onReconcileErrorWithRequeue (467-496) writes into status.lastError
 * with the pods still there in pendingPods, and the request comes back after 5 s. On success,
 * status.phase Succeeded.
 */
export async function nmoReconcile(kube: Kube, node: string): Promise<NmoCycle> {
  const t0 = Date.now();
  await cordonAndTaint(kube, node, []);
  const attempts: NmoCycle["attempts"] = [];
  let pending: DrainPod[] = [];
  while (true) {
    pending = podsToEvict((await podsOn(kube, node)).map(drainPod));
    if (pending.length === 0) {
      await succeeded(kube, node);
      return { attempts, pendingPods: [], drained: true };
    }
    if ((Date.now() - t0) / 1000 >= NMO_DRAINER_TIMEOUT_S) break;
    for (const p of pending.filter((x) => !x.terminating)) {
      const r = await evict(kube, p.id);
      attempts.push({ at: new Date().toISOString(), pod: p.id, status: r.status, message: r.message });
    }
    await sleep(DRAIN_HELPER_RETRY_S * 1000);
  }
  const [ns, name] = pending[0].id.split("/");
  const lastError = `error when evicting pods/"${name}" -n "${ns}": global timeout reached: ${NMO_DRAINER_TIMEOUT_S}s`;
  const pendingPods = pending.map((p) => p.id.split("/")[1]);
  const at = `/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances/${node}`;
  const patch = { status: { phase: "Running", lastError, pendingPods, lastUpdate: new Date().toISOString() } };
  const res = await kube.request("PATCH", `${at}/status`, patch, "application/merge-patch+json");
  if (res.status === 404) await kube.mergePatch(at, patch);
  await sleep(NMO_REQUEUE_S * 1000);
  return { attempts, lastError, pendingPods, drained: false };
}

/** The instance-manager PDB stand-in's turn: delete the PDB when Longhorn's rule allows it. Returns whether it is gone. */
async function reconcilePdb(
  kube: Kube,
  node: string,
  policy: string,
  pdb: string,
  pods: readonly Pod[],
  volumes: readonly Volume[],
  detail: string[],
): Promise<boolean> {
  const here = new Set(pods.map((p) => p.metadata.uid));
  const attached = volumes.filter((v) => here.has(v.podUid)).map((v) => v.id);
  const replicas: NodeReplica[] = volumes.map((v) => ({ volume: v.id, stopped: !attached.includes(v.id), protectedElsewhere: v.protectedElsewhere }));
  const n = await kube.get<NodeObj>(`/api/v1/nodes/${node}`);
  const verdict = instanceManagerPdbVerdict(policy, { cordoned: n?.spec?.unschedulable === true, attachedVolumes: attached, replicas });
  if (!verdict.deletable) return false;
  await kube.request("DELETE", `/apis/policy/v1/namespaces/${LONGHORN_NS}/poddisruptionbudgets/${pdb}`);
  detail.push(`${node}: the instance-manager PDB stand-in deleted its PDB (${verdict.why})`);
  return true;
}

/** The NodeMaintenance's status.phase Succeeded (what the runbook's `kubectl wait` waits for). */
async function succeeded(kube: Kube, node: string): Promise<void> {
  const at = `/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances/${node}`;
  const patch = { status: { phase: "Succeeded", drainProgress: 100 } };
  const res = await kube.request("PATCH", `${at}/status`, patch, "application/merge-patch+json");
  if (res.status === 404) await kube.mergePatch(at, patch);
}

/** NMO when a node's request is gone: its taint removed, the node uncordoned if it still is. */
export async function endMaintenance(kube: Kube, node: string): Promise<string> {
  await removeTaint(kube, node, DRAIN_TAINT.key);
  const n = await kube.get<NodeObj>(`/api/v1/nodes/${node}`);
  if (n?.spec?.unschedulable) {
    await kube.mergePatch(`/api/v1/nodes/${node}`, { spec: { unschedulable: null } });
    return `${node}: ${DRAIN_TAINT.key} removed, uncordoned by the NMO stand-in`;
  }
  return `${node}: ${DRAIN_TAINT.key} removed; already uncordoned (the node-roles patch gave spec.unschedulable back)`;
}

/** longhorn-manager's registration of a node: nodes.longhorn.io/<node> (the eviction patch needs it). */
export async function registerLonghornNode(kube: Kube, node: string): Promise<boolean> {
  const r = await kube.create(`/apis/longhorn.io/v1beta2/namespaces/${LONGHORN_NS}/nodes`, {
    apiVersion: "longhorn.io/v1beta2",
    kind: "Node",
    metadata: { name: node, namespace: LONGHORN_NS, labels: { [STAND_IN]: "longhorn-manager" } },
    spec: { name: node, allowScheduling: true, evictionRequested: false },
  });
  return r.status === 201;
}
