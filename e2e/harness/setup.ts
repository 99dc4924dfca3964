// What a stack's e2e stands on (README steps 1–6): the render, the cluster, the mirror, the
// stand-in controller, the Nodes, and the stack in a temporary copy of the project, bound to the
// e2e's cluster. Each step is fatal: without it the rest cannot run.
import * as fs from "node:fs";
import * as path from "node:path";
import { DEPLOY_GRAPH_ENV } from "../../plan/needs";
import { writeReadinessDelays } from "./readiness";
import { AdmissionStandIn } from "./admission";
import { registerNhcWebhookRule } from "./nhc-webhook";
import { Kube } from "./kube";
import { LiveWebhooks } from "./live-webhooks";
import { PodLog } from "./pod-log";
import { Mirror } from "./mirror";
import { nodeObject, nodeSpecs, type NodeSpec } from "./nodes";
import { background, run, sleep } from "./proc";
import { copyProject, setStackConfig, stackFile } from "./project";
import { newEncryptionSalt, withEncryptionSalt } from "../../config/encryption-salt";
import { passphraseOf } from "../../pipeline/encryption-salt-command";
import { pulumi, type PulumiEnv } from "./pulumi";
import type { RenderedStack } from "./rendered";
import { render, type StackRun } from "./stack-run";
import { PredecessorProgram } from "./predecessor";
import { oldRenderStep, predecessorRenderStep, type OldProgram } from "./upgrade";
import { STAND_IN_LABEL } from "../standins/artifacts";
import { KUBERNETES_VERSION } from "../../platform/versions";

/** Create the Nodes (as they would register themselves) and wait until kwok reports them Ready. */
export async function registerNodes(kube: Kube, specs: NodeSpec[]): Promise<void> {
  for (const s of specs) await kube.create("/api/v1/nodes", nodeObject(s));
  for (let i = 0; i < 120; i++) {
    const nodes = await kube.list("/api/v1/nodes");
    const ready = (n: (typeof nodes)[number]) => n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
    const waiting = specs.filter((s) => !nodes.some((n) => n.metadata.name === s.name && ready(n)));
    if (waiting.length === 0) return;
    await sleep(500);
  }
  throw new Error("Nodes did not become Ready within 60 s (is kwok running?)");
}

/** Step 1: `npm run render` of the repository's stack file. */
async function renderStep(r: StackRun): Promise<RenderedStack> {
  await r.step(
    "render (npm run render)",
    async (s) => {
      r.rendered = await render(r, undefined, path.join(r.work, "rendered"), "render");
      const idx = r.rendered.index;
      s.summary = `${idx.environment}/${idx.topology}, ${idx.nodes.length} nodes, ${r.rendered.units.length} units`;
    },
    { fatal: true },
  );
  return r.rendered!;
}

/** cluster.sh's default ports (its header: "Ports (127.0.0.1 only)"), each moved by `offset`; none without one. */
export function clusterPorts(offset: number | undefined): Record<string, string> {
  if (offset === undefined) return {};
  const defaults = { API_PORT: 6443, ETCD_PORT: 2379, ETCD_PEER_PORT: 2380, KCM_PORT: 10257, SCHEDULER_PORT: 10259, KWOK_PORT: 10247 };
  return Object.fromEntries(Object.entries(defaults).map(([k, v]) => [k, String(v + offset)]));
}

/**
 * Why the API server the e2e started is not the pinned Kubernetes (`GET /version`'s gitVersion),
 * or undefined: the program is proven against KUBERNETES_VERSION only. npm test reads the kit's
 * binary too, where it was built before the suites ran (on a fresh machine, .ci/run builds it
 * beside them: test/integration/platform/kubernetes-version.test.ts), so this is what holds it there.
 */
export function apiServerVersionProblem(gitVersion: string | undefined, pinned = KUBERNETES_VERSION): string | undefined {
  if (gitVersion === `v${pinned}`) return undefined;
  return `the API server says it is ${gitVersion ?? "no version"}, KUBERNETES_VERSION (platform/versions.ts) is ${pinned}: rebuild the engine kit (../shared/engine/build.sh; build.sh list names its kube-apiserver)`;
}

/** Step 2: `cluster.sh up`, unless --kubeconfig names a cluster. */
async function clusterStep(r: StackRun): Promise<void> {
  const o = r.o;
  await r.step(
    o.kubeconfig ? "cluster (--kubeconfig)" : "cluster up (cluster.sh)",
    async (s) => {
      if (o.kubeconfig) {
        r.kubeconfig = path.resolve(o.kubeconfig);
        s.summary = `existing cluster from ${r.kubeconfig}`;
      } else {
        r.clusterDir = path.join(r.work, "cluster");
        if (o.readinessDelays) writeReadinessDelays(r.clusterDir, o.readinessDelays);
        const res = await run(o.clusterScript, ["up", r.clusterDir], { log: r.log("cluster"), env: { ...process.env, ...clusterPorts(o.portOffset) } });
        if (res.code !== 0) throw new Error(`cluster.sh up exited ${res.code}: ${res.stderr.slice(-1500)}`);
        r.ownCluster = true;
        r.kubeconfig = path.join(r.clusterDir, "kubeconfig");
        s.summary = `${o.clusterScript} up ${r.clusterDir}`;
        if (o.readinessDelays)
          s.summary += `; kwok holds each pod ${o.readinessDelays.minSeconds}–${o.readinessDelays.maxSeconds} s before it starts, until the first pulumi up ends (readiness.ts)`;
      }
      r.kube = new Kube(r.kubeconfig);
      if (!(await r.kube.ready())) throw new Error("the API server is not ready");
      const version = (await r.kube.get<{ gitVersion?: string }>("/version"))?.gitVersion;
      const problem = apiServerVersionProblem(version);
      // a cluster --kubeconfig names is the operator's own: said, not refused
      if (problem !== undefined && r.ownCluster) throw new Error(problem);
      s.summary += problem === undefined ? `; Kubernetes ${version}` : `; ${problem}`;
    },
    { fatal: true },
  );
}

/** Whether a Service has a ready endpoint (its EndpointSlices, which the endpoint slice controller keeps from the Ready pods it selects). */
function serviceReady(kube: Kube): (service: { namespace: string; name: string }) => Promise<boolean> {
  interface Slice {
    endpoints?: { conditions?: { ready?: boolean } }[];
  }
  return async ({ namespace, name }) => {
    const selector = encodeURIComponent(`kubernetes.io/service-name=${name}`);
    const slices = await kube.list<Slice>(`/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices?labelSelector=${selector}`);
    return slices.some((sl) => (sl.endpoints ?? []).some((e) => e.conditions?.ready === true));
  };
}

/** Step 3, first: the admission stand-in, which the mirror points the served manifests' webhooks at. */
async function admissionStep(r: StackRun): Promise<void> {
  await r.step(
    "admission stand-in (127.0.0.1)",
    async (s) => {
      r.admission = new AdmissionStandIn();
      const at = await r.admission.start(path.join(r.work, "admission"), r.log("admission"));
      registerNhcWebhookRule(r.admission);
      s.summary = `${at.url}: answers every webhook of the served manifests (admits, converts apiVersion; NHC's as its webhook decides while a check remediates)`;
      r.podLog = new PodLog(r.kube!);
      r.podLog.start();
      // on an existing cluster the charts' own webhooks answer (their pods run): nothing to point
      if (r.ownCluster) {
        r.admission.reachable = serviceReady(r.kube!);
        r.liveWebhooks = new LiveWebhooks(r.kube!, r.admission, r.log("live-webhooks"));
        r.liveWebhooks.start();
        s.summary += "; and every webhook a Helm release installs, pointed at it once it exists";
      }
    },
    { fatal: true },
  );
}

/** Step 3: the mirror of every chart and remote manifest the render asks for. */
async function mirrorStep(r: StackRun, rendered: RenderedStack, old?: { program: OldProgram | PredecessorProgram; rendered: RenderedStack }): Promise<void> {
  const rep = r.report;
  await r.step(
    "mirror (127.0.0.1)",
    async (s) => {
      r.mirror = new Mirror(r.o.schemasDir, r.o.mirrorDir, r.admission);
      await r.mirror.start();
      r.mirror.addStack(rendered);
      // an upgrade run deploys two programs: the mirror serves what either render asks for
      if (old)
        r.mirror.addReleasedStack(old.rendered, {
          chartsDir: old.program.chartsDir,
          standInManifests: !old.program.servedRealManifests,
        });
      if (r.mirror.problems.length) throw new Error(r.mirror.problems.join("; "));
      const upstream = r.mirror.artifacts.filter((a) => a.source === "upstream manifest");
      const charts = r.mirror.artifacts.filter((a) => a.source === "upstream chart");
      s.summary = `${r.mirror.url}: ${r.mirror.artifacts.length} artifacts, ${charts.length} real charts and ${upstream.length} real manifests from ${r.o.mirrorDir ?? "no mirror folder"}`;
      for (const a of upstream) rep.upstream.push(`\`${a.id}\`: ${a.standsFor}`);
      for (const a of r.mirror.artifacts.filter((x) => x.source.endsWith("chart")))
        rep.charts.push(`${a.source === "upstream chart" ? "**real**" : `**${a.source}**`} \`${a.id}\`: ${a.standsFor}`);
      if (r.admission?.webhooks.length)
        rep.standIns.push(
          `admission stand-in (e2e/harness/admission.ts, ${r.admission.endpoint.url}): the mirror points the clientConfig of every webhook of the served manifests at it (e2e only; the API server cannot reach a Service here); it admits every request unchanged, and converts by apiVersion; what it answered is listed below`,
        );
      for (const a of r.mirror.artifacts)
        if (a.source === "stand-in chart" || a.source === "stand-in manifest") rep.standIns.push(`${a.source} \`${a.id}\`: ${a.standsFor}`);
      const contract = r.mirror.artifacts.filter((a) => a.source === "contract chart").map((a) => a.id);
      rep.standIns.push(
        `contract charts (e2e/charts, the § 5.1–5.2 interface with tiny workloads; the OpenKeel charts have no public index or archive, so nothing real can be installed) for ${contract.join(", ")}`,
      );
      rep.standIns.push("their MariaDB/RabbitMQ StatefulSets stand in for the operators' output (annotated e2e.openkeel.io/stand-in)");
    },
    { fatal: true },
  );
}

/** Step 4: the stand-in controller, in the background. */
async function controllerStep(r: StackRun): Promise<void> {
  await r.step(
    "stand-in controller",
    async (s) => {
      const tsx = path.join(r.o.repoRoot, "node_modules", ".bin", "tsx");
      const logFile = path.join(r.logs, "standin-controller.jsonl");
      r.controller = background(tsx, [path.join(__dirname, "standin-controller.ts"), r.kubeconfig, r.o.schemasDir, logFile], r.log("standin-controller"));
      s.summary = `pid ${r.controller.pid}: OLM Subscriptions (installedCSV + Medik8s CRDs), SNR config, KubeVirt/CDI Available`;
      r.report.standIns.push(
        "stand-in controller (e2e/harness/standin-controller.ts): plays OLM, the SNR operator, virt-operator and cdi-operator where the program waits on them; its actions are listed below",
      );
    },
    { fatal: true },
  );
}

/** E2E STAND-IN: a kind cluster comes with its `standard` class (local-path provisioner), which the lab's strict-local volumes ask for; nothing provisions it here. */
async function kindStorageClass(r: StackRun): Promise<void> {
  await r.kube!.create("/apis/storage.k8s.io/v1/storageclasses", {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: "standard", labels: { [STAND_IN_LABEL]: "true" }, annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
    provisioner: "rancher.io/local-path",
    reclaimPolicy: "Delete",
    volumeBindingMode: "WaitForFirstConsumer",
  });
  r.report.standIns.push(
    "StorageClass standard (rancher.io/local-path): the class a kind cluster creates, which the lab's strict-local volumes ask for; nothing provisions it here",
  );
}

/** Step 5: the Nodes of the rendered node configuration. */
async function nodesStep(r: StackRun, rendered: RenderedStack): Promise<void> {
  await r.step(
    "register Nodes",
    async (s) => {
      r.nodes = nodeSpecs(rendered);
      await registerNodes(r.kube!, r.nodes);
      s.summary = `${r.nodes.length} Nodes Ready (kwok)`;
      if (rendered.index.environment === "kind-lab" && r.ownCluster) await kindStorageClass(r);
      for (const n of r.nodes)
        s.detail.push(
          `${n.name}: labels ${Object.entries(n.labels)
            .map(([k, v]) => (v ? `${k}=${v}` : k))
            .join(
              ", ",
            )}; taints ${n.taints.map((t) => `${t.key}${t.value ? `=${t.value}` : ""}:${t.effect}`).join(", ") || "none"} — ${n.provenance.join("; ")}`,
        );
    },
    { fatal: true },
  );
}

/** The e2e cluster as a stack binds it: its kubeconfig's current context and server, and the live kube-system UID. */
async function e2eBinding(r: StackRun): Promise<{ context: string; apiServer: string; kubeSystemUID: string }> {
  const { context, apiServer } = r.kube!;
  const uid = (await r.kube!.get("/api/v1/namespaces/kube-system"))?.metadata?.uid;
  if (!context || !apiServer || !uid)
    throw new Error(`cannot bind the stack to the e2e cluster: context ${context}, server ${apiServer}, kube-system UID ${uid}`);
  return { context, apiServer, kubeSystemUID: uid };
}

/** The first lines that differ between two texts (at most 20). */
function diffLines(a: string, b: string): string {
  const al = a.split("\n");
  const bl = b.split("\n");
  const out: string[] = [];
  for (let i = 0; i < Math.max(al.length, bl.length); i++) if (al[i] !== bl[i]) out.push(`- ${al[i] ?? ""}\n+ ${bl[i] ?? ""}`);
  return out.slice(0, 20).join("\n");
}

/**
 * Step 6: `pulumi stack init` in a temporary copy of the project (of `program`: the repository, or
 * an upgrade run's old program), after the encryption salt is added as the runbook adds it (a check:
 * the CLI leaves that file byte for byte); the stack file pointed at the mirror and bound to the cluster.
 */
async function stackInitStep(r: StackRun, sharedHome: PulumiEnv, program: string): Promise<void> {
  const original = fs.readFileSync(stackFile(program, r.stack), "utf8");
  await r.step(
    `pulumi stack init (temporary project copy${program === r.o.repoRoot ? "" : " of the old program"})`,
    async (s) => {
      r.project = path.join(r.work, "project");
      copyProject(program, r.project);
      // the bench's switch reaches the program through its environment (components/deploy.ts)
      const graph = r.o.deployGraph ? { [DEPLOY_GRAPH_ENV]: r.o.deployGraph } : {};
      r.p = { ...sharedHome, env: { ...sharedHome.env, PULUMI_BACKEND_URL: `file://${path.join(r.work, "state")}`, KUBECONFIG: r.kubeconfig, ...graph } };
      fs.mkdirSync(path.join(r.work, "state"), { recursive: true });
      const file = stackFile(r.project, r.stack);
      // the runbook's order (docs/operating.md): npm run encryption-salt, then pulumi stack init
      const salted = withEncryptionSalt(original, newEncryptionSalt(passphraseOf(r.p.env))).text;
      fs.writeFileSync(file, salted);
      const res = await pulumi(["stack", "init", r.stack], r.project, r.p, r.log("stack-init"));
      if (res.code !== 0) throw new Error(`pulumi stack init exited ${res.code}: ${res.stderr.slice(-800)}`);
      const after = fs.readFileSync(file, "utf8");
      r.report.check(
        "pulumi stack init leaves the stack file npm run encryption-salt salted byte for byte",
        after === salted,
        after === salted ? [] : [`changed lines:\n${diffLines(salted, after)}`],
      );
      fs.writeFileSync(file, salted);
      setStackConfig(file, "mirror", { url: r.mirror!.url });
      // E2E STAND-IN: the stack is bound to the e2e's cluster (openkeel:cluster), its context, API
      // server and kube-system UID, as an operator binds a stack to a new cluster; the program
      // then checks all three against this cluster before it registers any unit.
      const binding = await e2eBinding(r);
      setStackConfig(file, "cluster", binding);
      r.report.standIns.push(
        `openkeel:cluster of the stack: the e2e cluster (context ${binding.context}, ${binding.apiServer}, kube-system ${binding.kubeSystemUID})`,
      );
      s.summary = `stack ${r.stack} in file://${path.join(r.work, "state")}; mirror ${r.mirror!.url}${after === salted ? "" : "; STACK FILE REWRITTEN by pulumi"}`;
    },
    { fatal: true },
  );
}

/**
 * README steps 1–6: the render of the stack, and the render the first up deploys (with --upgrade-from,
 * the old program's, whose project step 6 then initialises the stack in).
 */
export async function setUp(
  r: StackRun,
  sharedHome: PulumiEnv,
  old?: OldProgram | PredecessorProgram,
): Promise<{ rendered: RenderedStack; first: RenderedStack }> {
  const rendered = await renderStep(r);
  const first = !old ? rendered : old instanceof PredecessorProgram ? await predecessorRenderStep(r, rendered, old) : await oldRenderStep(r, old);
  await clusterStep(r);
  await admissionStep(r);
  await mirrorStep(r, rendered, old && { program: old, rendered: first });
  await controllerStep(r);
  await nodesStep(r, rendered);
  await stackInitStep(r, sharedHome, old?.dir ?? r.o.repoRoot);
  return { rendered, first };
}
