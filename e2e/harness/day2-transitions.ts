// Day 2 on the real control plane (README step 11a–11e; issue 21 item 4), on a production stack
// after the day-2 node joined: the NodeHealthChecks' selectors evaluated by the API server; a
// disabled hypervisor through a rollout of every DaemonSet; maintenance of a control-plane node
// and of a compute+storage node (the drain through the Eviction API, every PDB honoured); the
// retirement of the day-2 node end to end (retiring → drained and evicted → removed from the
// inventory → preview → `pulumi up`). Each transition is one the feasibility model lets through:
// `npm run render` runs it (a plan check) and refuses a transition that could not finish. What the
// cluster has no controller for is played by the stand-ins of nmo.ts.
import * as fs from "node:fs";
import * as path from "node:path";
import { COMPUTE_DISABLED_TAINT, DEFAULT_STATE, hasTrait, type NodeState } from "../../config/lifecycle";
import { nodeAgentTaints } from "../../environments/resolve";
import { checkAfterUp } from "./cluster-checks";
import { previewShowsExactly, type PreviewChange } from "./day2";
import type { Kube, KubeObject } from "./kube";
import { addTaint, drainAsNmo, endMaintenance, LONGHORN_NS, nmoReconcile, podsOn, registerLonghornNode, type Pod, removeTaint } from "./nmo";
import { placeNonMigratableVmi, registerEvictionAdmitter } from "./kubevirt-eviction";
import { mutateStackConfig, stackFile } from "./project";
import { pulumi } from "./pulumi";
import { readPlacement, type RenderedStack } from "./rendered";
import { recordRun, render, stateResources, type StackRun, type StateResource } from "./stack-run";
import { labelSelectorQuery, nhcProblems, protectedLost, rolloutProblems, type AgentOnNode, type LabelSelector } from "./transitions-judge";
import { aloneInGroup } from "../../platform/medik8s-groups";
import { sleep } from "./proc";

/** How long a rollout of every DaemonSet, and one node's drain, may take. */
const ROLLOUT_LIMIT_S = 300;
const DRAIN_LIMIT_S = 180;
const UP_TIMEOUT_MS = 20 * 60_000;
const FEASIBLE =
  "npm run render passed its plan checks, the feasibility model (lifecycle/feasibility.ts) among them: it judges this inventory's states as a transition that can finish";

interface DaemonSet extends KubeObject {
  spec: { selector: { matchLabels?: Record<string, string> }; updateStrategy?: { type?: string }; template: { spec: { tolerations?: { key?: string }[] } } };
  status?: { desiredNumberScheduled?: number; updatedNumberScheduled?: number; numberAvailable?: number; observedGeneration?: number };
}

const dsId = (d: KubeObject) => `${d.metadata.namespace}/${d.metadata.name}`;
const ownerOf = (p: KubeObject) =>
  (p.metadata.ownerReferences as { kind: string; name: string; uid: string }[] | undefined)?.find((o) => o.kind === "DaemonSet");

/** A stack edit: the states of some nodes (the default state: the key removed), or nodes removed. */
function editNodes(r: StackRun, states: Record<string, NodeState | "removed">): void {
  mutateStackConfig(stackFile(r.project, r.stack), "nodes", (nodes) =>
    (nodes as Record<string, unknown>[])
      .filter((n) => states[n.name as string] !== "removed")
      .map((n) => {
        const state = states[n.name as string];
        if (state === undefined) return n;
        const { state: _old, ...rest } = n;
        return state === DEFAULT_STATE ? rest : { ...rest, state };
      }),
  );
}

export async function up(r: StackRun, s: Parameters<typeof recordRun>[0], logName: string): Promise<void> {
  const res = await pulumi(["up", "--yes", "--skip-preview", "--policy-pack", "policy"], r.project, r.p!, r.log(logName), { timeoutMs: UP_TIMEOUT_MS });
  recordRun(s, res);
  if (res.code !== 0) throw new Error(`pulumi up exited ${res.code}`);
}

/** 11a: every NodeHealthCheck's spec.selector, as the API server holds it, asked of the API server against the real Nodes. */
export async function nhcStep(r: StackRun, rendered: RenderedStack, label: string): Promise<void> {
  await r.checkStep(`day 2: every NodeHealthCheck's selector evaluated by the API server (${label})`, async () => {
    const placement = readPlacement(rendered);
    const expected = new Map(
      placement.components.filter((c) => c.kind === "NodeHealthCheck").map((c) => [c.name.split("/").slice(-2)[0], c.eligible] as [string, readonly string[]]),
    );
    const live = await r.kube!.list<KubeObject & { spec?: { selector?: LabelSelector } }>("/apis/remediation.medik8s.io/v1alpha1/nodehealthchecks");
    const detail: string[] = [];
    const checks = [];
    for (const nhc of live) {
      const q = labelSelectorQuery(nhc.spec?.selector ?? {});
      const selected = (await r.kube!.list(`/api/v1/nodes?labelSelector=${encodeURIComponent(q)}`)).map((n) => n.metadata.name);
      checks.push({ name: nhc.metadata.name, expected: expected.get(nhc.metadata.name) ?? [], selected });
      detail.push(
        `${nhc.metadata.name}: labelSelector=${q} → ${selected.join(", ") || "no node"}; placement.json: ${(expected.get(nhc.metadata.name) ?? ["(not in the report)"]).join(", ")}`,
      );
    }
    const missing = [...expected.keys()].filter((n) => !live.some((l) => l.metadata.name === n));
    const alone = aloneInGroup(placement.nodes);
    const problems = [
      ...missing.map((n) => `NodeHealthCheck ${n} of the render is not in the cluster`),
      ...nhcProblems(
        checks,
        placement.nodes.map((n) => ({ name: n.name, unwatched: hasTrait(n.state, "leavesHealthChecks"), alone: alone.has(n.name) })),
      ),
    ];
    r.report.check(
      `every NodeHealthCheck selects exactly the nodes placement.json says, each node its state keeps in the checks is watched by exactly one, but one alone in its group by none (${label})`,
      problems.length === 0,
      [...problems, ...detail],
    );
  });
}

/** The DaemonSets' pods on a node, by DaemonSet. */
async function agentsOn(kube: Kube, node: string): Promise<Map<string, Pod>> {
  const out = new Map<string, Pod>();
  for (const p of await podsOn(kube, node)) {
    const o = ownerOf(p);
    if (o && !p.metadata.deletionTimestamp) out.set(`${p.metadata.namespace}/${o.name}`, p);
  }
  return out;
}

/** The revision hash of a DaemonSet's newest ControllerRevision. */
async function newestRevision(kube: Kube, ds: DaemonSet): Promise<string | undefined> {
  const revs = await kube.list<KubeObject & { revision?: number }>(`/apis/apps/v1/namespaces/${ds.metadata.namespace}/controllerrevisions`);
  const own = revs.filter((x) => (x.metadata.ownerReferences as { uid: string }[] | undefined)?.some((o) => o.uid === ds.metadata.uid));
  own.sort((a, b) => (b.revision ?? 0) - (a.revision ?? 0));
  return own[0]?.metadata.labels?.["controller-revision-hash"];
}

/** `kubectl rollout restart` of every DaemonSet (the template annotation it sets), and the wait until each rolled out. */
async function rolloutEvery(kube: Kube, node: string, detail: string[]): Promise<DaemonSet[]> {
  const dss = await kube.list<DaemonSet>("/apis/apps/v1/daemonsets");
  const at = new Date().toISOString();
  for (const d of dss) {
    await kube.mergePatch(`/apis/apps/v1/namespaces/${d.metadata.namespace}/daemonsets/${d.metadata.name}`, {
      spec: { template: { metadata: { annotations: { "kubectl.kubernetes.io/restartedAt": at } } } },
    });
    // OnDelete: the controller replaces a pod only once it is deleted, as an operator then does
    if (d.spec.updateStrategy?.type === "OnDelete") {
      const p = (await agentsOn(kube, node)).get(dsId(d));
      if (p) await kube.request("DELETE", `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`);
      detail.push(`${dsId(d)}: updateStrategy OnDelete, its pod on ${node} deleted`);
    }
  }
  const t0 = Date.now();
  let pending: string[];
  do {
    await sleep(2000);
    const now = await kube.list<DaemonSet>("/apis/apps/v1/daemonsets");
    pending = now
      .filter((d) => {
        const st = d.status ?? {};
        const want = st.desiredNumberScheduled ?? 0;
        return (st.observedGeneration ?? 0) < Number(d.metadata.generation) || (st.updatedNumberScheduled ?? 0) < want || (st.numberAvailable ?? 0) < want;
      })
      .map(dsId);
  } while (pending.length > 0 && (Date.now() - t0) / 1000 < ROLLOUT_LIMIT_S);
  detail.push(
    `rolled out ${dss.length} DaemonSet(s) in ${((Date.now() - t0) / 1000).toFixed(0)} s${pending.length ? `; NOT DONE within ${ROLLOUT_LIMIT_S} s: ${pending.join(", ")}` : ""}`,
  );
  return kube.list<DaemonSet>("/apis/apps/v1/daemonsets");
}

/**
 * The negative: a copy of one node agent without the node-state tolerations (nodeAgentTaints)
 * gets no pod on the disabled hypervisor from the real DaemonSet controller, while it does
 * elsewhere. It shows that the check above can fail.
 */
async function withoutTolerations(kube: Kube, node: string, source: DaemonSet): Promise<{ ok: boolean; detail: string }> {
  const ns = source.metadata.namespace!;
  const name = "e2e-agent-without-state-tolerations";
  const labels = { "e2e.openkeel.io/negative": name };
  const keys = new Set(nodeAgentTaints().map((t) => t.taint.key));
  const spec = structuredClone(source.spec.template.spec);
  // without a toleration of everything too (a keyless Exists), which would tolerate them as well
  spec.tolerations = (spec.tolerations ?? []).filter((t) => t.key && !keys.has(t.key));
  await kube.create(`/apis/apps/v1/namespaces/${ns}/daemonsets`, {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name, namespace: ns, labels },
    spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec } },
  });
  let pods: Pod[] = [];
  for (let i = 0; i < 30; i++) {
    await sleep(1000);
    pods = await kube.list<Pod>(`/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(`e2e.openkeel.io/negative=${name}`)}`);
    const ds = await kube.get<DaemonSet>(`/apis/apps/v1/namespaces/${ns}/daemonsets/${name}`);
    if (pods.length > 0 && pods.length >= (ds?.status?.desiredNumberScheduled ?? 1)) break;
  }
  await kube.request("DELETE", `/apis/apps/v1/namespaces/${ns}/daemonsets/${name}`, {
    kind: "DeleteOptions",
    apiVersion: "v1",
    propagationPolicy: "Background",
  });
  const where = [...new Set(pods.map((p) => p.spec.nodeName).filter(Boolean))].sort();
  const ok = pods.length > 0 && !where.includes(node);
  return {
    ok,
    detail: `a copy of ${dsId(source)} without the tolerations of ${[...keys].join(", ")}: pods on ${where.join(", ") || "no node"}${ok ? `, none on ${node}: without the node agent tolerations the rollout would leave the disabled hypervisor without the agent` : ""}`,
  };
}

/** 11b: a disabled hypervisor (§ 4.1's taint) through a rollout of every DaemonSet the stack installs. */
async function disabledHypervisorStep(r: StackRun, rendered: RenderedStack, node: string): Promise<void> {
  const taint = `${COMPUTE_DISABLED_TAINT.key}:${COMPUTE_DISABLED_TAINT.effect}`;
  await r.checkStep(`day 2: disable hypervisor ${node} (${taint}), roll out every DaemonSet: every node agent is back on it`, async () => {
    const kube = r.kube!;
    const before = await agentsOn(kube, node);
    await addTaint(kube, node, COMPUTE_DISABLED_TAINT);
    const detail = [
      `tainted ${node} ${taint} (the compute agent's taint of a disabled host, config/lifecycle.ts COMPUTE_DISABLED_TAINT); ${before.size} DaemonSet pod(s) on it before`,
      "each DaemonSet's pod template annotated kubectl.kubernetes.io/restartedAt (what kubectl rollout restart does): a real rollout by the real DaemonSet controller and scheduler",
    ];
    const dss = await rolloutEvery(kube, node, detail);
    const after = await agentsOn(kube, node);
    const agents: AgentOnNode[] = [];
    for (const d of dss) {
      const p = after.get(dsId(d));
      agents.push({
        daemonSet: dsId(d),
        belongs: before.has(dsId(d)),
        before: before.get(dsId(d))?.metadata.uid,
        ...(p ? { after: { uid: p.metadata.uid ?? "", revision: p.metadata.labels?.["controller-revision-hash"] ?? "", phase: p.status?.phase ?? "" } } : {}),
        updatedRevision: await newestRevision(kube, d),
      });
    }
    const problems = rolloutProblems(node, taint, agents);
    detail.push(...agents.filter((a) => a.belongs).map((a) => `${a.daemonSet}: ${a.after ? `pod ${a.after.revision} ${a.after.phase}` : "NO POD"} on ${node}`));
    r.report.check(`after a rollout of every DaemonSet, every node agent runs again on the disabled hypervisor ${node}`, problems.length === 0, [
      ...problems,
      ...detail,
    ]);
    const source = dss.find((d) => before.has(dsId(d)) && (d.spec.template.spec.tolerations ?? []).some((t) => t.key === COMPUTE_DISABLED_TAINT.key));
    if (!source) r.report.check(`the negative: an agent without the node-state tolerations gets no pod on ${node}`, false, ["no node agent to copy"]);
    else {
      const neg = await withoutTolerations(kube, node, source);
      r.report.check(`the negative: an agent without the node-state tolerations gets no pod on ${node}`, neg.ok, [neg.detail]);
    }
    await checkAfterUp(r, rendered, `after the rollout with ${node} disabled`);
  });
}

/** The drained nodes of the render, each with its NodeMaintenance as the program wrote it. */
async function nodeMaintenances(kube: Kube, nodes: readonly string[]): Promise<string[]> {
  const problems: string[] = [];
  for (const n of nodes) {
    const nm = await kube.get<KubeObject & { spec?: { nodeName?: string } }>(`/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances/${n}`);
    if (nm?.spec?.nodeName !== n) problems.push(`no NodeMaintenance ${n} with spec.nodeName ${n} after pulumi up`);
  }
  return problems;
}

/** NMO's drain of each node in turn, one check each; every PodDisruptionBudget in the cluster listed. */
async function drainSteps(r: StackRun, rendered: RenderedStack, nodes: readonly string[], label: string): Promise<void> {
  await r.checkStep(`day 2: ${label}: the NMO stand-in drains ${nodes.join(", ")} through the Eviction API, every PodDisruptionBudget honoured`, async () => {
    const kube = r.kube!;
    const policy = (rendered.index.feasibility?.longhorn as { nodeDrainPolicy?: string } | undefined)?.nodeDrainPolicy;
    const missing = await nodeMaintenances(kube, nodes);
    r.report.check(`${label}: pulumi up wrote a NodeMaintenance for ${nodes.join(", ")}`, missing.length === 0, missing);
    for (const node of nodes) {
      const out = await drainAsNmo(kube, node, policy, DRAIN_LIMIT_S);
      const pdbs = (await kube.list("/apis/policy/v1/poddisruptionbudgets")).map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
      r.report.check(`${label}: the drain of ${node} completes (Longhorn nodeDrainPolicy ${policy ?? "none"})`, out.ok, [
        `${out.seconds.toFixed(0)} s; evictions refused (429) by: ${out.refusedBy.join(", ") || "no PDB"}`,
        `PodDisruptionBudgets in the cluster after it: ${pdbs.join(", ") || "none"}`,
        ...out.detail,
      ]);
    }
  });
}

/** The stand-ins of this module, once in the report. */
function noteStandIns(r: StackRun): void {
  r.report.standIns.push(
    "Node Maintenance Operator (e2e/harness/nmo.ts): for each NodeMaintenance the program creates, cordon, taint medik8s.io/drain, evict every pod but DaemonSet and mirror pods through the Eviction API, retried while a PDB refuses (bounded), then status.phase Succeeded; when the request goes, the taint removed and the node uncordoned",
    "Longhorn instance-manager PodDisruptionBudget (nmo.ts): a stand-in instance-manager pod on each drained node and its PDB (minAvailable 1), deleted only as longhorn-manager's canDeleteInstanceManagerPDB allows under the rendered nodeDrainPolicy (allow-if-replica-is-stopped): cordoned, no volume attached, no running replica without a protected copy elsewhere",
    "longhorn-manager's node registration (nmo.ts): nodes.longhorn.io/<node> of the retiring node, which the program's eviction patch needs",
    "the compute agent (day2-transitions.ts): the openkeel.io/compute-disabled taint set on disable and lifted on enable, as § 4.1's agent does",
    "KubeVirt's pod eviction admitter (kubevirt-eviction.ts): virt-api-validator's virt-launcher-eviction-interceptor.kubevirt.io (failurePolicy Fail, pods/eviction) answered by the admission stand-in with kubevirt v1.9.0 pod-eviction-admitter.go's decision; the VMI CRD from ../shared/schemas; one VMI (LiveMigratable False, a non-shared PVC) and its virt-launcher pod on the hypervisor, owned by the VMI",
    "NMO's reconcile of a drain that cannot finish (nmo.ts nmoReconcile): the drain helper's 30 s of evictions, each refused one again after 5 s, then status.lastError and pendingPods, and the request again after 5 s (node-maintenance-operator v0.20.1)",
  );
}

/** The tenant namespace of the non-migratable VM (stand-in). */
const VM_NAMESPACE = "e2e-tenant-vms";
/** NMO reconciles to watch the blocked drain through: each the drain helper's 30 s, then a requeue after 5 s. */
const BLOCKED_RECONCILES = 2;

/**
 * The runbook's query of the VMIs on a node that cannot live-migrate (issue 39 item 4): their
 * LiveMigratable condition is not True (kubevirt v1.9.0 VirtualMachineInstance.IsMigratable), the
 * eviction admitter denies their eviction under LiveMigrate.
 */
export const NON_MIGRATABLE_QUERY = (node: string) =>
  `kubectl get vmi -A -o jsonpath='{range .items[?(@.status.nodeName=="${node}")]}{.metadata.namespace}/{.metadata.name} {.status.conditions[?(@.type=="LiveMigratable")].status} {.status.conditions[?(@.type=="LiveMigratable")].reason}{"\\n"}{end}'`;

/**
 * 11c, before the hypervisor's drain (issue 39 item 4): a VM that cannot live-migrate (a non-shared
 * PVC) runs on it; KubeVirt's eviction admitter (kubevirt-eviction.ts) denies its launcher's
 * eviction under the cluster's LiveMigrate, and NMO's reconciles (nmo.ts nmoReconcile) retry
 * without end, writing the timeout into status.lastError. Then the runbook's step: find the node's
 * non-migratable VMIs and stop each (virtctl stop <vm>; a VMI without a VM: kubectl delete vmi),
 * after which its launcher pod goes (the garbage collector, by its ownerReference) and the drain
 * below can finish.
 */
async function blockedDrainStep(r: StackRun, node: string): Promise<void> {
  await r.checkStep(`day 2: maintenance: a VM that cannot live-migrate blocks the drain of ${node}; the runbook's step releases it`, async () => {
    const kube = r.kube!;
    await registerEvictionAdmitter(kube, r.admission!, r.o.schemasDir);
    const { vmi, pod } = await placeNonMigratableVmi(kube, VM_NAMESPACE, node);
    const cycles = [];
    for (let i = 0; i < BLOCKED_RECONCILES; i++) cycles.push(await nmoReconcile(kube, node));
    const launcher = `${VM_NAMESPACE}/${pod}`;
    const denials = cycles.flatMap((c) => c.attempts).filter((a) => a.pod === launcher);
    const nm = await kube.get<KubeObject & { status?: { phase?: string; lastError?: string; pendingPods?: string[] } }>(
      `/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances/${node}`,
    );
    const blocked =
      cycles.every((c) => !c.drained) &&
      denials.length > 0 &&
      denials.every((d) => d.status === 429 && d.message.includes(`VMI ${vmi} is configured with an eviction strategy but is not live-migratable`)) &&
      /^error when evicting pods\/"[^"]+" -n "[^"]+": global timeout reached: 30s$/.test(nm?.status?.lastError ?? "") &&
      (nm?.status?.pendingPods ?? []).includes(pod);
    r.report.check(
      `a non-migratable VMI on ${node} blocks its drain: every eviction of its launcher denied, NMO retrying, the timeout in NodeMaintenance status`,
      blocked,
      [
        `VMI ${VM_NAMESPACE}/${vmi} on ${node}, LiveMigratable False (DisksNotLiveMigratable); launcher ${launcher}`,
        `${BLOCKED_RECONCILES} NMO reconciles, ${denials.length} eviction(s) of the launcher, every one: ${[...new Set(denials.map((d) => `${d.status} ${d.message}`))].join(" | ")}`,
        `NodeMaintenance ${node}: phase ${nm?.status?.phase}, lastError ${JSON.stringify(nm?.status?.lastError)}, pendingPods ${JSON.stringify(nm?.status?.pendingPods)}`,
      ],
    );
    // the runbook: the node's VMIs that cannot live-migrate, each stopped
    const vmis = await kube.list<KubeObject & { status?: { nodeName?: string; conditions?: { type: string; status: string; reason?: string }[] } }>(
      "/apis/kubevirt.io/v1/virtualmachineinstances",
    );
    const stuck = vmis.filter(
      (v) => v.status?.nodeName === node && !(v.status.conditions ?? []).some((c) => c.type === "LiveMigratable" && c.status === "True"),
    );
    for (const v of stuck) await kube.request("DELETE", `/apis/kubevirt.io/v1/namespaces/${v.metadata.namespace}/virtualmachineinstances/${v.metadata.name}`);
    let gone = false;
    for (let i = 0; i < 30 && !gone; i++) {
      await sleep(1000);
      gone = !(await kube.get(`/api/v1/namespaces/${VM_NAMESPACE}/pods/${pod}`));
    }
    const released = await nmoReconcile(kube, node);
    const freed = released.drained || !released.pendingPods.includes(pod);
    r.report.check(
      `the runbook's step releases the drain of ${node}: its non-migratable VMIs found and stopped, their launchers gone, NMO's next reconcile no longer waits for them`,
      gone && freed && stuck.length === 1,
      [
        `the runbook's query: ${NON_MIGRATABLE_QUERY(node)}`,
        `found: ${stuck.map((v) => `${v.metadata.namespace}/${v.metadata.name} (${v.status?.conditions?.find((c) => c.type === "LiveMigratable")?.reason})`).join(", ") || "none"}; each stopped (virtctl stop <vm>; here kubectl delete vmi: no VM object owns it)`,
        `launcher ${launcher}: ${gone ? "deleted by the garbage collector (its ownerReference to the VMI)" : "STILL THERE after 30 s"}`,
        `NMO's next reconcile: ${released.drained ? "drained, status.phase Succeeded" : `pods still pending (${released.pendingPods.join(", ")}), none of them a launcher: the drain below finishes them`}`,
      ],
    );
  });
}

/** 11c: maintenance of a control-plane node and a compute+storage node (a hypervisor disabled first). */
async function maintenanceSteps(r: StackRun, nodes: readonly string[], hypervisor: string): Promise<RenderedStack | undefined> {
  let rendered: RenderedStack | undefined;
  const s = await r.step(`day 2: maintenance of ${nodes.join(", ")}: state maintenance, render, pulumi up`, async (st) => {
    editNodes(r, Object.fromEntries(nodes.map((n) => [n, "maintenance"])));
    rendered = await render(r, path.dirname(stackFile(r.project, r.stack)), path.join(r.work, "rendered-maintenance"), "render-maintenance");
    st.detail.push(FEASIBLE);
    await up(r, st, "up-maintenance");
  });
  if (!s.ok || !rendered) return undefined;
  await nhcStep(r, rendered, "during maintenance");
  await blockedDrainStep(r, hypervisor);
  await drainSteps(r, rendered, nodes, "maintenance");
  return rendered;
}

/** Maintenance ends for `back` and `retiree` starts retiring, in one stack edit; NMO ends the maintenances, the compute agent enables the host. */
async function retiringStep(r: StackRun, back: readonly string[], hypervisor: string, retiree: string): Promise<RenderedStack | undefined> {
  let rendered: RenderedStack | undefined;
  await r.step(`day 2: ${back.join(", ")} back to active, ${retiree} retiring: render, pulumi up`, async (s) => {
    const kube = r.kube!;
    if (await registerLonghornNode(kube, retiree)) s.detail.push(`longhorn-manager stand-in: registered nodes.longhorn.io ${LONGHORN_NS}/${retiree}`);
    editNodes(r, { ...Object.fromEntries(back.map((n) => [n, "active" as const])), [retiree]: "retiring" });
    rendered = await render(r, path.dirname(stackFile(r.project, r.stack)), path.join(r.work, "rendered-retire"), "render-retire");
    s.detail.push(FEASIBLE);
    await up(r, s, "up-retiring");
    const problems: string[] = [];
    for (const n of back) {
      if (await kube.get(`/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances/${n}`)) problems.push(`NodeMaintenance ${n} still there`);
      s.detail.push(await endMaintenance(kube, n));
    }
    await removeTaint(kube, hypervisor, COMPUTE_DISABLED_TAINT.key);
    s.detail.push(`compute agent stand-in: ${hypervisor} enabled, ${COMPUTE_DISABLED_TAINT.key} lifted`);
    for (const n of back)
      if ((await kube.get<KubeObject & { spec?: { unschedulable?: boolean } }>(`/api/v1/nodes/${n}`))?.spec?.unschedulable)
        problems.push(`${n} is still cordoned`);
    problems.push(...(await nodeMaintenances(kube, [retiree])));
    const storage = rendered!.index.nodes.find((n) => n.name === retiree)?.roles.includes("storage") ?? false;
    const ln = await kube.get<KubeObject & { spec?: { evictionRequested?: boolean; allowScheduling?: boolean } }>(
      `/apis/longhorn.io/v1beta2/namespaces/${LONGHORN_NS}/nodes/${retiree}`,
    );
    if (storage && (ln?.spec?.evictionRequested !== true || ln.spec.allowScheduling !== false))
      problems.push(`nodes.longhorn.io ${retiree}: spec ${JSON.stringify(ln?.spec)}, not the eviction request`);
    r.report.check(
      `maintenance ends for ${back.join(", ")} (NodeMaintenance gone, uncordoned); ${retiree} retiring: NodeMaintenance and Longhorn eviction request written`,
      problems.length === 0,
      problems,
    );
  });
  return rendered;
}

/** The stack export's resources (an export that fails fails the step). */
async function exported(r: StackRun, logName: string): Promise<StateResource[]> {
  const res = await pulumi(["stack", "export"], r.project, r.p!, r.log(logName));
  if (res.code !== 0) throw new Error(`pulumi stack export exited ${res.code}`);
  return stateResources(res);
}

/** The retiring node's drain and Longhorn eviction (runbook steps 4 and 6). */
async function evictRetiree(r: StackRun, rendered: RenderedStack, retiree: string): Promise<void> {
  await drainSteps(r, rendered, [retiree], "retiring");
  await r.checkStep(`day 2: retiring ${retiree}: Longhorn's eviction has nothing left on it`, async () => {
    const replicas = (await r.kube!.list<KubeObject & { spec?: { nodeID?: string } }>(`/apis/longhorn.io/v1beta2/namespaces/${LONGHORN_NS}/replicas`)).filter(
      (x) => x.spec?.nodeID === retiree,
    );
    r.report.check(
      `no replicas.longhorn.io on ${retiree} (the runbook's step 6 query)`,
      replicas.length === 0,
      replicas.map((x) => x.metadata.name),
    );
  });
}

/** The steps of the removal the preview must list (docs/node-lifecycle.md, retiring → removed, step 2). */
function removalNeeds(changes: readonly PreviewChange[], retiree: string, storage: boolean): string[] {
  const needs: [string, (c: PreviewChange) => boolean][] = [
    ["the node-roles patch goes", (c) => c.op === "delete" && c.type === "kubernetes:core/v1:NodePatch" && c.name.endsWith(retiree)],
    ["the NodeMaintenance goes", (c) => c.op === "delete" && c.type.endsWith(":NodeMaintenance") && c.name.endsWith(retiree)],
  ];
  // the eviction request exists for a retiring storage node only
  if (storage) needs.push(["the Longhorn eviction patch goes", (c) => c.op === "delete" && c.name.startsWith("longhorn-node-eviction")]);
  return needs.filter(([, m]) => !changes.some(m)).map(([what]) => `the preview lacks a step docs/node-lifecycle.md names: ${what}`);
}

/** 11d: the retired node leaves the inventory: render (the removal guard), preview, up; nothing protected lost. */
async function removeStep(r: StackRun, retiring: RenderedStack, retiree: string): Promise<RenderedStack | undefined> {
  const out = path.join(r.work, "rendered-removed");
  let removed: RenderedStack | undefined;
  const s = await r.step(`day 2: remove ${retiree} from the inventory, render against the retiring render (node-removal)`, async (st) => {
    // the render on disk is what the removal guard reads as committed: the retiring one
    fs.cpSync(path.dirname(retiring.dir), out, { recursive: true });
    editNodes(r, { [retiree]: "removed" });
    removed = await render(r, path.dirname(stackFile(r.project, r.stack)), out, "render-removed");
    st.detail.push(`${FEASIBLE}; the removal guard found ${retiree} retiring in the render before`);
  });
  if (!s.ok || !removed) return undefined;
  const before = await exported(r, "export-before-removal");
  const changes = await previewShowsExactly(
    r,
    retiring,
    removed,
    `day 2: pulumi preview of the removal of ${retiree} shows exactly the steps needed`,
    "preview-removal",
  );
  const protectedUrns = new Set(before.filter((x) => x.protect).map((x) => x.urn));
  const storage = retiring.index.nodes.find((n) => n.name === retiree)?.roles.includes("storage") ?? false;
  const problems = [
    ...removalNeeds(changes, retiree, storage),
    ...changes.filter((c) => c.op === "delete" && protectedUrns.has(c.urn)).map((c) => `the preview deletes protected ${c.urn}`),
  ];
  r.report.check(`the removal's preview lists the steps docs/node-lifecycle.md names and deletes nothing protected`, problems.length === 0, problems);
  await r.step(`day 2: pulumi up of the removal of ${retiree}, then kubectl delete node`, async (st) => {
    await up(r, st, "up-removal");
    const lost = protectedLost(before, await exported(r, "export-after-removal"));
    r.report.check(`the removal of ${retiree} loses no protected resource (stack export before and after)`, lost.length === 0, [
      `${protectedUrns.size} protected before`,
      ...lost.map((u) => `LOST ${u}`),
    ]);
    await afterRemoval(r, retiree, st.detail);
  });
  await r.checkStep(`checks after the removal of ${retiree}`, () => checkAfterUp(r, removed!, `after the removal of ${retiree}`));
  return removed;
}

/** The runbook's "after" of a removal: the Node and Longhorn's node deleted; the pods bound there go (pod GC). */
async function afterRemoval(r: StackRun, node: string, detail: string[]): Promise<void> {
  const kube = r.kube!;
  await kube.request("DELETE", `/api/v1/nodes/${node}`);
  await kube.request("DELETE", `/apis/longhorn.io/v1beta2/namespaces/${LONGHORN_NS}/nodes/${node}`);
  const t0 = Date.now();
  let left: Pod[];
  do {
    await sleep(2000);
    left = await podsOn(kube, node);
  } while (left.length > 0 && Date.now() - t0 < 120_000);
  detail.push(`deleted Node ${node} and nodes.longhorn.io ${node}; pods still bound to it after ${((Date.now() - t0) / 1000).toFixed(0)} s: ${left.length}`);
}

/** README steps 11a–11e, for production stacks. Returns the render the cluster holds afterwards. */
export async function dayTwoTransitions(r: StackRun, day1: RenderedStack, day2: RenderedStack): Promise<RenderedStack> {
  if (!r.o.transitions) {
    r.report.steps.push({ name: "day 2: node transitions", seconds: 0, ok: true, skipped: true, detail: ["--no-transitions"] });
    return day2;
  }
  const retiree = day2.index.nodes.find((n) => !day1.index.nodes.some((x) => x.name === n.name))?.name;
  if (r.o.kubeconfig || day2.index.environment !== "talos-production" || !retiree || day2 === day1) {
    r.report.steps.push({
      name: "day 2: node transitions",
      seconds: 0,
      ok: true,
      skipped: true,
      detail: ["production stacks on the e2e's own cluster only, after the day-2 node joined (the lab has no Node Maintenance Operator)"],
    });
    return day2;
  }
  noteStandIns(r);
  // a hypervisor that is a storage node too where the topology has one (medium), else a compute node
  const hypervisor = (
    day1.index.nodes.find((n) => n.roles.includes("compute") && n.roles.includes("storage")) ?? day1.index.nodes.find((n) => n.roles.includes("compute"))
  )?.name;
  const controlPlane = (
    day1.index.nodes.find((n) => n.roles.includes("controlPlane") && n.kubernetesControlPlane) ?? day1.index.nodes.find((n) => n.roles.includes("controlPlane"))
  )?.name;
  if (!hypervisor || !controlPlane) {
    r.report.steps.push({
      name: "day 2: node transitions",
      seconds: 0,
      ok: false,
      detail: ["the stack has no compute node or no controlPlane node to put into maintenance"],
    });
    return day2;
  }
  await nhcStep(r, day2, "after day 2");
  await disabledHypervisorStep(r, day2, hypervisor);
  const inMaintenance = [...new Set([controlPlane, hypervisor])];
  const maintenance = await maintenanceSteps(r, inMaintenance, hypervisor);
  if (!maintenance) return day2;
  const retiring = await retiringStep(r, inMaintenance, hypervisor, retiree);
  if (!retiring) return maintenance;
  await evictRetiree(r, retiring, retiree);
  return (await removeStep(r, retiring, retiree)) ?? retiring;
}
