// `npm run e2e`: the real Pulumi engine and a real Kubernetes control plane, per stack:
//   render → cluster (cluster.sh, unless --kubeconfig) → mirror → stand-in controller → Nodes →
//   pulumi stack init → pulumi up --policy-pack (kube-apiserver restarted mid-way) → rerun →
//   checks (objects accepted, role labels, placement by the real scheduler, storage classes) →
//   pulumi preview --policy-pack policy --expect-no-changes → policy pack D1–D8 against
//   `npm run policy` → day 2 (a new compute node: exact preview steps, up) → pulumi destroy
//   (protected objects stay). The preview-timing mode (`--time-preview`, for `npm run bench`) stops
//   after the first up and times that preview instead.
// It reads the program only through its rendered output and its CLIs (`npm run render`,
// `npm run policy`); see test/e2e/README.md.
import { type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Kube } from "./kube";
import { Mirror } from "./mirror";
import { nodeObject, nodeSpecs, type NodeSpec } from "./nodes";
import { gunzipSync } from "node:zlib";
import { parseAllDocuments } from "yaml";
import { checkPlacement, compareLeaves } from "./placement-check";
import { background, run, sleep, stop, which } from "./proc";
import { copyProject, mutateStackConfig, readStackConfig, setStackConfig, stackFile } from "./project";
import { installPlugins, policyViolations, previewProblem, previewSteps, pulumi, pulumiEnv, summaryLine, type PolicyViolation, type PulumiEnv } from "./pulumi";
import { readDocs, readPlacement, readRendered, type RenderedStack } from "./rendered";
import { Report, type StepResult } from "./report";
import { STAND_IN_LABEL } from "../standins/artifacts";

type Obj = Record<string, any>;

export interface E2EOptions {
  repoRoot: string;
  stacks: string[];
  kubeconfig?: string;
  keep: boolean;
  clusterScript: string;
  schemasDir: string;
  outRoot: string;
  /** restart kube-apiserver during the first `pulumi up` (only on a cluster the e2e started) */
  interrupt: boolean;
  /** D1–D8 mutated stacks (production stacks only) */
  policyMutations: boolean;
  /**
   * Time `pulumi preview --policy-pack policy` of the deployed stack instead of the whole e2e: the
   * setup, one `pulumi up --policy-pack policy` (no API server restart), then `tries` previews, each
   * of which must exit 0, propose no change and show the pack; then the cluster goes down. Reports
   * go to <outRoot>/preview-timing/<stack>. `turn` runs after each try (the bench times the offline
   * path there, so that both sides are taken in turns on the same machine).
   */
  previewTiming?: { tries: number; turn?: (stack: string) => Promise<void> };
  log: (line: string) => void;
}

/** The policy pack's name (policy/index.ts), as the engine prints it when the pack ran. */
const PACK = "openkeel-placement";

/** cluster.sh of the engine kit: env OPENKEEL_E2E_CLUSTER_SCRIPT, else ../shared/engine/cluster.sh. */
export function defaultClusterScript(repoRoot: string): string {
  return path.resolve(process.env.OPENKEEL_E2E_CLUSTER_SCRIPT ?? path.join(repoRoot, "..", "shared", "engine", "cluster.sh"));
}

const ROLE_KEBAB: Record<string, string> = {
  controlPlane: "control-plane",
  compute: "compute",
  network: "network",
  storage: "storage",
  containers: "containers",
  provisioning: "provisioning",
};
const ROLE_PREFIXES = ["node-role.openkeel.io/", "node-restriction.kubernetes.io/openkeel-"];
// The label keys below are the e2e's own copy, from the design (D1, § 5.2), on purpose: the check
// holds the real cluster against the design, not against config/roles.ts.
/** The role label keys of README "Values layout": default and hardened profiles (D1). */
function roleLabel(role: string, profile: string): string {
  return profile === "hardened" ? `node-restriction.kubernetes.io/openkeel-${ROLE_KEBAB[role]}` : `node-role.openkeel.io/${ROLE_KEBAB[role]}`;
}

/** The OVN chassis label (§ 5.2), hardened like the role labels in production (D1). */
function chassisLabel(profile: string): string {
  return profile === "hardened" ? "node-restriction.kubernetes.io/openkeel-ovn-chassis" : "openkeel.io/ovn-chassis";
}

/** The labels the node-roles phase writes on each Node, from its rendered objects. */
function renderedNodeLabels(rendered: RenderedStack): Map<string, Record<string, string>> {
  const labels = new Map<string, Record<string, string>>();
  for (const u of rendered.units) {
    for (const f of u.objects ?? []) {
      for (const o of readDocs(path.join(rendered.dir, f)) as Obj[]) {
        if (o.kind === "Node" && typeof o.metadata?.name === "string" && !labels.has(o.metadata.name)) labels.set(o.metadata.name, o.metadata.labels ?? {});
      }
    }
  }
  return labels;
}

/** One decision's mutated stack (test/policy.test.ts's cases, as config or as a resource mutation). */
interface PolicyMutation {
  decision: string;
  what: string;
  config?: { key: string; mutate: (v: any) => any };
  resource?: { type: string; name: string; path: string[]; value?: unknown; delete?: boolean };
}

const RELEASE = "kubernetes:helm.sh/v3:Release";
const service = (name: string, values: Obj) => ({
  key: "services",
  mutate: (v: any) => {
    const s = v ?? {};
    s[name] = { ...(s[name] ?? {}), values };
    return s;
  },
});
const POLICY_MUTATIONS: PolicyMutation[] = [
  {
    decision: "D1",
    what: "a placement override selecting the lab control-plane key",
    resource: {
      type: RELEASE,
      name: "openkeel-keystone",
      path: ["values", "placement", "api", "nodeSelector"],
      value: { "node-role.openkeel.io/control-plane": "" },
    },
  },
  { decision: "D2", what: "the kube-ovn backend through a raw values override", config: service("neutron", { backend: "kube-ovn" }) },
  { decision: "D3", what: "centralized floating IPs", config: service("neutron", { gateway: { floatingIpMode: "centralized" } }) },
  { decision: "D4", what: "the metadata agent disabled", config: service("neutron", { placement: { metadataAgent: { enabled: false } } }) },
  {
    decision: "D5",
    what: "Galera on a class the stack does not create",
    resource: { type: RELEASE, name: "openkeel-chart", path: ["values", "infrastructure", "mariadb", "storage", "storageClassName"], value: "longhorn" },
  },
  { decision: "D6", what: "the dynamic reservation off", config: service("nova", { computeAgent: { dynamicReservation: { enabled: false } } }) },
  {
    decision: "D7",
    what: "the Ironic conductor on the control plane",
    resource: { type: RELEASE, name: "openkeel-ironic", path: ["values", "placement", "conductor", "role"], value: "controlPlane" },
  },
  {
    decision: "D8",
    what: "public ingress on network nodes only",
    resource: { type: RELEASE, name: "openkeel-chart", path: ["values", "ingress", "placement"], value: { roles: ["network"] } },
  },
];

class StackRun {
  readonly report: Report;
  readonly dir: string;
  readonly logs: string;
  readonly work: string;
  kubeconfig = "";
  kube?: Kube;
  mirror?: Mirror;
  controller?: ChildProcess;
  ownCluster = false;
  clusterDir = "";
  project = "";
  rendered?: RenderedStack;
  p?: PulumiEnv;
  /** the first preview failed: judge a new stack's preview in the policy step instead */
  freshPreviewPending = false;
  nodes: NodeSpec[] = [];

  constructor(
    readonly stack: string,
    readonly o: E2EOptions,
    readonly tmp: string,
  ) {
    this.report = new Report(stack);
    this.dir = path.join(o.outRoot, stack);
    this.logs = path.join(this.dir, "logs");
    this.work = path.join(tmp, stack);
    fs.rmSync(this.dir, { recursive: true, force: true });
    fs.mkdirSync(this.logs, { recursive: true });
    fs.mkdirSync(this.work, { recursive: true });
  }

  log(name: string): string {
    return path.join(this.logs, `${name}.log`);
  }

  /** Run one step: timed, recorded, its exceptions turned into a failed step. */
  async step(name: string, fn: (s: StepResult) => Promise<unknown>, opts: { fatal?: boolean } = {}): Promise<StepResult> {
    const s: StepResult = { name, seconds: 0, ok: true, detail: [] };
    const t0 = Date.now();
    this.o.log(`[${this.stack}] ${name} …`);
    try {
      await fn(s);
    } catch (e) {
      s.ok = false;
      s.detail.push(`error: ${(e as Error).message}`);
    }
    s.seconds = (Date.now() - t0) / 1000;
    this.report.steps.push(s);
    this.report.write(path.join(this.dir, "report.md"));
    this.o.log(`[${this.stack}] ${name}: ${s.skipped ? "skipped" : s.ok ? "ok" : "FAILED"} (${s.seconds.toFixed(1)} s)${s.summary ? ` — ${s.summary}` : ""}`);
    if (!s.ok && opts.fatal) throw new Fatal(name);
    return s;
  }
}

class Fatal extends Error {}

async function render(r: StackRun, stacksDir: string | undefined, out: string, logName: string): Promise<RenderedStack> {
  const args = ["run", "-s", "render", "--", "--stack", r.stack, "--out", out, ...(stacksDir ? ["--stacks-dir", stacksDir] : [])];
  const res = await run("npm", args, { cwd: r.o.repoRoot, log: r.log(logName) });
  if (res.code !== 0) throw new Error(`npm run render exited ${res.code}:\n${(res.stderr || res.stdout).trim().slice(-2000)}`);
  return readRendered(out, r.stack);
}

async function registerNodes(kube: Kube, specs: NodeSpec[]): Promise<void> {
  for (const s of specs) await kube.create("/api/v1/nodes", nodeObject(s));
  for (let i = 0; i < 120; i++) {
    const nodes = await kube.list("/api/v1/nodes");
    const ready = (n: Obj) => n.status?.conditions?.some((c: Obj) => c.type === "Ready" && c.status === "True");
    const waiting = specs.filter((s) => !nodes.some((n) => n.metadata.name === s.name && ready(n)));
    if (waiting.length === 0) return;
    await sleep(500);
  }
  throw new Error("Nodes did not become Ready within 60 s (is kwok running?)");
}

/** Role labels every Node must carry exactly (README "Values layout", D1 label keys). */
async function checkRoleLabels(r: StackRun, rendered: RenderedStack): Promise<void> {
  const nodes = await r.kube!.list("/api/v1/nodes");
  const problems: string[] = [];
  const seen: string[] = [];
  const chassis = chassisLabel(rendered.index.labelProfile);
  const writtenLabels = renderedNodeLabels(rendered);
  for (const inv of rendered.index.nodes) {
    const n = nodes.find((x) => x.metadata.name === inv.name);
    if (!n) {
      problems.push(`${inv.name}: no such Node`);
      continue;
    }
    // the role labels, and the OVN chassis label on the nodes that run the chassis (§ 5.2: compute
    // and network, containers too where Zun runs; its rendered Node object says which)
    const written = writtenLabels.get(inv.name) ?? {};
    const isChassis = inv.roles.some((role) => role === "compute" || role === "network") || (inv.roles.includes("containers") && chassis in written);
    if (isChassis && !(chassis in written)) problems.push(`${inv.name}: the rendered node-roles object lacks the chassis label ${chassis}`);
    const want = [...inv.roles.map((role) => roleLabel(role, rendered.index.labelProfile)), ...(isChassis ? [chassis] : [])]
      .filter((k) => ROLE_PREFIXES.some((p) => k.startsWith(p)))
      .sort();
    const have = Object.keys(n.metadata.labels ?? {})
      .filter((k) => ROLE_PREFIXES.some((p) => k.startsWith(p)))
      .sort();
    seen.push(`${inv.name}: ${have.join(", ") || "(none)"}`);
    if (JSON.stringify(want) !== JSON.stringify(have))
      problems.push(`${inv.name}: role labels ${have.join(", ") || "(none)"}, expected exactly ${want.join(", ") || "(none)"}`);
  }
  r.report.check("every Node carries exactly its role labels after the node-roles phase", problems.length === 0, [...problems, ...seen]);
}

/** Warnings the API server returned (unknown fields pruned, PodSecurity) as the engine printed them. */
function apiWarnings(text: string): string[] {
  return [
    ...new Set(
      text
        .split("\n")
        .filter((l) => /unknown field|would violate PodSecurity|Warning:.*(deprecated|unknown)/i.test(l))
        .map((l) => l.trim()),
    ),
  ];
}

/** The e2e cluster as a stack binds it: its kubeconfig's current context and server, and the live kube-system UID. */
async function e2eBinding(r: StackRun): Promise<{ context: string; apiServer: string; kubeSystemUID: string }> {
  const kubeconfig = parseAllDocuments(fs.readFileSync(r.kubeconfig, "utf8"))[0]?.toJS() as any;
  const context = kubeconfig?.["current-context"] as string;
  const cluster = (kubeconfig?.contexts ?? []).find((c: any) => c.name === context)?.context?.cluster;
  const apiServer = (kubeconfig?.clusters ?? []).find((c: any) => c.name === cluster)?.cluster?.server as string;
  const uid = (await r.kube!.get<any>("/api/v1/namespaces/kube-system"))?.metadata?.uid as string;
  if (!context || !apiServer || !uid)
    throw new Error(`cannot bind the stack to the e2e cluster: context ${context}, server ${apiServer}, kube-system UID ${uid}`);
  return { context, apiServer, kubeSystemUID: uid };
}

/** Every object as written (rendered objects; objects of the contract charts' releases) vs the cluster. */
async function checkPersisted(r: StackRun, rendered: RenderedStack): Promise<void> {
  const res = await run("kubectl", ["get", "-R", "-f", path.join(rendered.dir, "objects"), "-o", "json", "--ignore-not-found", "--kubeconfig", r.kubeconfig], {
    log: r.log("persisted"),
  });
  const live: Obj[] = res.stdout.trim() ? (JSON.parse(res.stdout).items ?? [JSON.parse(res.stdout)]) : [];
  const key = (o: Obj) =>
    `${String(o.apiVersion).split("/").length > 1 ? String(o.apiVersion).split("/")[0] : ""}/${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
  const liveByKey = new Map(live.map((o) => [key(o), o]));
  const written: { source: string; obj: Obj }[] = [];
  for (const u of rendered.units)
    for (const f of u.objects ?? []) for (const o of readDocs(path.join(rendered.dir, f)) as Obj[]) if (o.kind !== "Node") written.push({ source: f, obj: o });
  // the contract charts' objects, from their Helm release records
  const contract = rendered.units.filter((u) => u.kind === "HelmRelease" && u.chart?.chart.startsWith("openkeel-"));
  for (const u of contract) {
    const secrets = await r.kube!.list(
      `/api/v1/namespaces/${u.namespace}/secrets?labelSelector=${encodeURIComponent(`owner=helm,name=${u.release},status=deployed`)}`,
    );
    const sec = secrets.sort((a, b) => Number(b.metadata.labels.version) - Number(a.metadata.labels.version))[0];
    if (!sec) continue;
    const rel = JSON.parse(gunzipSync(Buffer.from(Buffer.from(sec.data.release, "base64").toString("utf8"), "base64")).toString("utf8"));
    for (const d of parseAllDocuments(rel.manifest as string)) {
      const o = d.toJS() as Obj;
      if (!o?.kind) continue;
      o.metadata.namespace ??= ["PriorityClass"].includes(o.kind) ? undefined : u.namespace;
      written.push({ source: `Helm release ${u.release}`, obj: o });
      if (!liveByKey.has(key(o))) {
        const [group, version] = String(o.apiVersion).includes("/") ? String(o.apiVersion).split("/") : ["", o.apiVersion];
        const got = await run(
          "kubectl",
          [
            "get",
            `${o.kind}${group ? `.${version}.${group}` : ""}`,
            o.metadata.name,
            ...(o.metadata.namespace ? ["-n", o.metadata.namespace] : []),
            "-o",
            "json",
            "--kubeconfig",
            r.kubeconfig,
          ],
          { log: r.log("persisted") },
        );
        if (got.code === 0) liveByKey.set(key(o), JSON.parse(got.stdout));
      }
    }
  }
  const problems: string[] = [];
  for (const { source, obj } of written) {
    const l = liveByKey.get(key(obj));
    const id = `${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ""}${obj.metadata.name}`;
    if (!l) {
      problems.push(`${id} (${source}): not in the cluster`);
      continue;
    }
    const { metadata, status: _s, ...body } = obj;
    const cmp: Obj = {
      ...body,
      metadata: {
        labels: metadata.labels ?? {},
        annotations: Object.fromEntries(Object.entries(metadata.annotations ?? {}).filter(([k]) => !k.startsWith("openkeel.io/apply-as"))),
      },
    };
    if (obj.kind === "Secret") {
      delete cmp.data;
      delete cmp.stringData;
    }
    for (const d of compareLeaves(cmp, l)) problems.push(`${id} (${source}): ${d}`);
  }
  r.report.check("every object as written is what the API server kept (nothing pruned by a CRD schema or changed)", problems.length === 0, [
    `${written.length} objects compared (rendered objects/**, and the objects of ${contract.length} contract-chart releases)`,
    ...problems,
  ]);
}

async function checkAfterUp(r: StackRun, rendered: RenderedStack, label: string): Promise<void> {
  await checkRoleLabels(r, rendered);
  await checkPersisted(r, rendered);
  // placement by the real scheduler; give the scheduler and kwok a moment to settle
  let result = await checkPlacement(r.kube!, rendered, readPlacement(rendered));
  for (let i = 0; i < 10 && result.findings.some((f) => / is Pending: /.test(f.problem) && !/Unschedulable/.test(f.problem)); i++) {
    await sleep(1000);
    result = await checkPlacement(r.kube!, rendered, readPlacement(rendered));
  }
  r.report.check(`placement proven by the real scheduler (${label})`, result.findings.length === 0, [
    ...result.findings.map((f) => `${f.component}: ${f.problem}`),
    ...result.checked.map((c) => `checked ${c}`),
  ]);
  const missing = result.storage.filter((s) => !s.exists);
  r.report.check(
    "every StatefulSet's storage class exists in the cluster",
    missing.length === 0,
    result.storage.map(
      (s) => `${s.object} claims storageClassName ${s.storageClass}: ${s.exists ? "exists" : "NO SUCH StorageClass (its PVCs would stay Pending)"}`,
    ),
  );
}

/** Objects of protected units, as `kubectl get -f` input: rendered objects, stand-in files; Helm release records. */
function protectedObjects(r: StackRun, rendered: RenderedStack): { files: string[]; releases: { name: string; namespace: string }[]; units: string[] } {
  const files: string[] = [];
  const releases: { name: string; namespace: string }[] = [];
  const units: string[] = [];
  for (const u of rendered.units.filter((x) => x.protect)) {
    units.push(u.name);
    if (u.kind === "Manifests") files.push(...(u.objects ?? []).map((f) => path.join(rendered.dir, f)).filter((f) => !/\/node-[^/]+\.yaml$/.test(f)));
    if (u.kind === "HelmRelease") releases.push({ name: u.release, namespace: u.namespace });
    for (const url of u.kind === "RemoteManifest" ? (u.urls ?? []) : []) {
      const body = r.mirror?.fileBody(url);
      if (body) {
        const f = path.join(r.work, "protected", `${u.name}-${path.basename(url)}`);
        fs.mkdirSync(path.dirname(f), { recursive: true });
        fs.writeFileSync(f, body);
        files.push(f);
      }
    }
  }
  return { files, releases, units };
}

async function protectedStillThere(r: StackRun, rendered: RenderedStack, when: string): Promise<{ ok: boolean; detail: string[] }> {
  const { files, releases } = protectedObjects(r, rendered);
  const detail: string[] = [];
  let ok = true;
  for (const f of files) {
    for (const o of readDocs(f) as Obj[]) {
      const kind = o.kind as string;
      const [group, version] = (o.apiVersion as string).includes("/") ? (o.apiVersion as string).split("/") : ["", o.apiVersion as string];
      const res = await run(
        "kubectl",
        [
          "get",
          `${kind}${group ? `.${version}.${group}` : ""}`,
          o.metadata.name,
          ...(o.metadata.namespace ? ["-n", o.metadata.namespace] : []),
          "-o",
          "name",
          "--kubeconfig",
          r.kubeconfig,
        ],
        {
          log: r.log(`protected-${when}`),
        },
      );
      if (res.code !== 0) {
        ok = false;
        detail.push(`GONE ${kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name} (${path.basename(f)})`);
      }
    }
  }
  for (const rel of releases) {
    const secrets = await r.kube!.list(`/api/v1/namespaces/${rel.namespace}/secrets?labelSelector=${encodeURIComponent(`owner=helm,name=${rel.name}`)}`);
    if (secrets.length === 0) {
      ok = false;
      detail.push(`GONE Helm release ${rel.namespace}/${rel.name}`);
    }
  }
  detail.unshift(
    `${files.length} object file(s) and ${releases.length} Helm release(s) of protected units checked: ${ok ? "all still in the cluster" : "some are gone"}`,
  );
  return { ok, detail };
}

/** What the render diff says `pulumi preview` must do after the day-2 change. */
function expectedSteps(before: RenderedStack, after: RenderedStack): { op: string; match: (type: string, name: string) => boolean; what: string }[] {
  const exp: { op: string; match: (type: string, name: string) => boolean; what: string }[] = [];
  const b = new Map(before.units.map((u) => [u.name, u]));
  const read = (r: RenderedStack, f: string) => fs.readFileSync(path.join(r.dir, f), "utf8");
  const objectId = (r: RenderedStack, f: string) => {
    const o = readDocs(path.join(r.dir, f))[0] as Obj;
    return { kind: o.kind as string, name: o.metadata.name as string, ns: o.metadata.namespace as string | undefined };
  };
  const objMatch = (unit: string, id: { kind: string; name: string; ns?: string }) => (type: string, name: string) =>
    name.startsWith(`${unit}:`) &&
    name.endsWith(`${id.ns ? `${id.ns}/` : ":"}${id.name}`) &&
    (id.kind === "Node" ? type === "kubernetes:core/v1:NodePatch" : type.endsWith(`:${id.kind}`));
  for (const u of after.units) {
    const old = b.get(u.name);
    if (!old) {
      exp.push({ op: "create", what: `new unit ${u.name} (${u.type})`, match: (type, name) => type === u.type && name === u.name });
      if (u.kind === "HelmRelease") exp.push({ op: "create", what: `Helm release ${u.name}`, match: (type, name) => type === RELEASE && name === u.name });
      for (const f of u.objects ?? []) {
        const id = objectId(after, f);
        exp.push({ op: "create", what: `${id.kind} ${id.name} of new unit ${u.name}`, match: objMatch(u.name, id) });
      }
      continue;
    }
    if (u.kind === "HelmRelease") {
      const changed = JSON.stringify(u.chart) !== JSON.stringify(old.chart) || (u.values && old.values && read(after, u.values) !== read(before, old.values));
      if (changed)
        exp.push({
          op: "update",
          what: `Helm release ${u.name}: values or chart changed in the render`,
          match: (type, name) => type === RELEASE && name === u.name,
        });
    }
    if (u.kind === "Manifests") {
      const oldFiles = new Set(old.objects ?? []);
      for (const f of u.objects ?? []) {
        const id = objectId(after, f);
        if (!oldFiles.has(f)) exp.push({ op: "create", what: `${id.kind} ${id.name} (${u.name}): new in the render`, match: objMatch(u.name, id) });
        else if (read(after, f) !== read(before, f))
          exp.push({ op: "update", what: `${id.kind} ${id.name} (${u.name}): changed in the render`, match: objMatch(u.name, id) });
      }
      for (const f of old.objects ?? []) {
        if ((u.objects ?? []).includes(f)) continue;
        const id = objectId(before, f);
        exp.push({ op: "delete", what: `${id.kind} ${id.name} (${u.name}): gone from the render`, match: objMatch(u.name, id) });
      }
    }
    if (u.kind === "RemoteManifest" && JSON.stringify(u.urls) !== JSON.stringify(old.urls))
      exp.push({ op: "replace", what: `remote manifest ${u.name}: URL changed`, match: (_t, name) => name === u.name });
  }
  for (const u of before.units)
    if (!after.units.some((x) => x.name === u.name))
      exp.push({ op: "delete", what: `unit ${u.name} gone from the render`, match: (_t, name) => name === u.name || name.startsWith(`${u.name}:`) });
  return exp;
}

/** A realistic new compute node: a sibling compute node's roles, labels and zone, the next name and IP. */
function newComputeNode(stackFilePath: string, environment: string): { entry: Obj; name: string } {
  const nodes = readStackConfig(stackFilePath)["openkeel:nodes"] as Obj[];
  const sibling = [...nodes].reverse().find((n) => (n.roles ?? []).includes("compute"));
  if (!sibling) throw new Error("the stack has no compute node to model the new one on");
  const names = new Set(nodes.map((n) => n.name));
  let name: string;
  if (environment === "kind-lab") {
    // kind names workers <cluster>-worker, -worker2, …; a kind worker gets the compute role
    const cluster = (nodes.find((n) => n.kubernetesControlPlane)?.name as string).replace(/-control-plane\d*$/, "");
    const workers = nodes.filter((n) => /-worker\d*$/.test(n.name)).length;
    name = `${cluster}-worker${workers === 0 ? "" : workers + 1}`;
    return { name, entry: { name, roles: ["compute"] } };
  }
  const m = /^(.*?)(\d+)$/.exec(sibling.name);
  if (!m) throw new Error(`cannot derive a name from ${sibling.name}`);
  let i = Number(m[2]) + 1;
  while (names.has((name = `${m[1]}${String(i).padStart(m[2].length, "0")}`))) i++;
  const ips = nodes.map((n) => n.internalIP).filter((x): x is string => typeof x === "string" && /^\d+\.\d+\.\d+\.\d+$/.test(x));
  const base = (sibling.internalIP as string).split(".").slice(0, 3).join(".");
  const used = new Set(ips);
  let last = Math.max(...ips.filter((x) => x.startsWith(`${base}.`)).map((x) => Number(x.split(".")[3])));
  let ip: string;
  while (used.has((ip = `${base}.${++last}`)));
  const entry: Obj = { name, internalIP: ip, roles: [...sibling.roles] };
  if (sibling.zone) entry.zone = sibling.zone;
  if (sibling.labels && Object.keys(sibling.labels).length) entry.labels = { ...sibling.labels };
  // the same provider networks as its sibling: a chassis with distributed floating IPs (D3) needs them
  if (sibling.bridgeMappings !== undefined) entry.bridgeMappings = sibling.bridgeMappings;
  return { name, entry };
}

function violationSet(vs: { policy: string; resourceName: string }[]): string[] {
  return [...new Set(vs.map((v) => `${v.policy} @ ${v.resourceName || "(stack)"}`))].sort();
}

/** `npm run policy` lines: `  mandatory [policy] name (type):` */
function offlineViolations(text: string): PolicyViolation[] {
  return [...text.matchAll(/^\s+(mandatory|advisory) \[([a-z0-9-]+)\] (.*?)(?: \(([^()]+)\))?:\s*$/gm)].map((m) => ({
    level: m[1],
    policy: m[2],
    resourceName: m[4] ? m[3] : m[3] === "(stack)" ? "" : m[3],
    resourceType: m[4] ?? "",
  }));
}

/**
 * During the first preview of a new stack the generated secrets are unknown: the pack may only
 * report the documented advisory of d4-metadata-secret (README, Policy pack); any other "can't
 * run" advisory is a policy the engine does not enforce there.
 */
function freshStackPolicyCheck(r: StackRun, text: string, where: string): void {
  const advisories = policyViolations(text).filter((v) => v.level === "advisory");
  const documented = (v: PolicyViolation) => v.policy === "d4-metadata-secret";
  const lines = [...new Set((text.match(/can't run policy .*$/gm) ?? []).map((l) => l.trim()))];
  r.report.check(
    "the policy pack judges every resource in the first preview of a new stack (only the documented d4-metadata-secret advisory)",
    advisories.every(documented),
    [
      `evaluated on ${where}`,
      ...[...new Set(advisories.map((v) => `${documented(v) ? "documented" : "NOT ENFORCED"}: ${v.policy} @ ${v.resourceName}`))],
      ...lines,
    ],
  );
}

async function policyChecks(r: StackRun, baseStackFile: string): Promise<void> {
  // a second copy whose program entry applies the mutation (Pulumi.yaml main)
  const proj = path.join(r.work, "project-policy");
  copyProject(r.o.repoRoot, proj);
  fs.copyFileSync(path.join(r.o.repoRoot, "test", "e2e", "fixtures", "e2e-mutation.ts"), path.join(proj, "e2e-mutation.ts"));
  const pulumiYaml = path.join(proj, "Pulumi.yaml");
  fs.writeFileSync(pulumiYaml, fs.readFileSync(pulumiYaml, "utf8").replace(/^main: .*$/m, "main: e2e-mutation.ts"));
  const base = fs.readFileSync(baseStackFile, "utf8").replace(/^encryptionsalt: .*\n/m, "");
  // Each mutated stack starts from the shipped stack's state (its generated secrets known, as for
  // an operator changing an existing stack): the state of the first pulumi up, renamed.
  const exported = await pulumi(["stack", "export", "--show-secrets"], r.project, r.p!, r.log("policy-export"));
  if (exported.code !== 0) throw new Error(`pulumi stack export exited ${exported.code}`);
  const fresh = r.freshPreviewPending
    ? (async () => {
        // a new stack of the shipped config, no state: what a first `pulumi preview` sees
        const stack = `${r.stack}-new`;
        const log = r.log("policy-new-stack");
        await pulumi(["stack", "init", stack], proj, r.p!, log);
        const file = stackFile(proj, stack);
        const salt = /^encryptionsalt: .*$/m.exec(fs.readFileSync(file, "utf8"))?.[0] ?? "";
        fs.writeFileSync(file, `${base.replace(/\n*$/, "\n")}${salt}\n`);
        const res = await pulumi(["preview", "--stack", stack, "--policy-pack", "policy"], proj, r.p!, log);
        await pulumi(["stack", "rm", "--yes", "--force", stack], proj, r.p!, log);
        freshStackPolicyCheck(r, res.stdout + res.stderr, `a preview of a new stack ${stack} (the first pulumi up's preview failed), exit ${res.code}`);
      })()
    : Promise.resolve();
  const results = await pool(POLICY_MUTATIONS, 2, async (m) => {
    const stack = `${r.stack}-${m.decision.toLowerCase()}`;
    const file = stackFile(proj, stack);
    const env = m.resource ? { OPENKEEL_E2E_MUTATION: JSON.stringify(m.resource) } : {};
    const log = r.log(`policy-${m.decision}`);
    const init = await pulumi(["stack", "init", stack], proj, r.p!, log);
    const salt = /^encryptionsalt: .*$/m.exec(fs.readFileSync(file, "utf8"))?.[0] ?? "";
    fs.writeFileSync(file, `${base.replace(/\n*$/, "\n")}${salt}\n`);
    if (m.config) mutateStackConfig(file, m.config.key, m.config.mutate);
    const stateFile = path.join(r.work, `state-${stack}.json`);
    fs.writeFileSync(
      stateFile,
      exported.stdout
        .split(`urn:pulumi:${r.stack}::`)
        .join(`urn:pulumi:${stack}::`)
        .split(`pulumi:pulumi:Stack::openkeel-${r.stack}"`)
        .join(`pulumi:pulumi:Stack::openkeel-${stack}"`),
    );
    const imported = await pulumi(["stack", "import", "--stack", stack, "--file", stateFile], proj, r.p!, log);
    if (imported.code !== 0) throw new Error(`pulumi stack import into ${stack} exited ${imported.code}: ${imported.stderr.slice(-600)}`);
    const t0 = Date.now();
    const real = await pulumi(["preview", "--stack", stack, "--policy-pack", "policy"], proj, r.p!, log, { env });
    const engineSeconds = (Date.now() - t0) / 1000;
    let offline;
    if (m.config) {
      // `npm run policy` itself, on the mutated stack file
      offline = await run("npm", ["run", "-s", "policy", "--", "--stacks-dir", path.dirname(file), "--stack", stack], { cwd: r.o.repoRoot, log });
    } else {
      offline = await run(path.join(r.o.repoRoot, "node_modules", ".bin", "tsx"), [path.join(__dirname, "policy-offline.ts"), proj, stack], {
        cwd: r.o.repoRoot,
        log,
        env: { ...process.env, ...env },
      });
    }
    const engine = violationSet(policyViolations(real.stdout + real.stderr).filter((v) => v.level === "mandatory"));
    const offl = violationSet(offlineViolations(offline.stdout).filter((v) => v.level === "mandatory"));
    await pulumi(["stack", "rm", "--yes", "--force", stack], proj, r.p!, log);
    return { m, stack, init, real, offline, engine, offl, engineSeconds };
  });
  await fresh;
  for (const x of results) {
    const same = JSON.stringify(x.engine) === JSON.stringify(x.offl);
    const tripped = x.engine.some((v) => v.toLowerCase().startsWith(`${x.m.decision.toLowerCase()}-`));
    r.report.check(
      `policy pack in the real engine, ${x.m.decision} (${x.m.what}): same mandatory violations as npm run policy`,
      same && tripped && x.real.code !== 0 && x.init.code === 0,
      [
        `mutation: ${x.m.config ? `stack config ${x.m.config.key}` : `resource ${x.m.resource!.name} ${x.m.resource!.path.join(".")}`} (stack ${x.stack})`,
        `pulumi preview --policy-pack policy: exit ${x.real.code}, ${x.engineSeconds.toFixed(0)} s; mandatory: ${x.engine.join("; ") || "none"}`,
        `${x.m.config ? "npm run policy" : "npm run policy's library (test/e2e/harness/policy-offline.ts)"}: exit ${x.offline.code}; mandatory: ${x.offl.join("; ") || "none"}`,
        ...(same ? [] : ["DIFFERENT violations"]),
        ...(tripped ? [] : [`the engine reported no ${x.m.decision} violation`]),
        `log: ${x.real.log}`,
      ],
    );
  }
}

async function pool<T, R>(items: T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}

/** `pulumi up …`, restarting kube-apiserver once the first OpenKeel Helm release exists (mid-way). */
async function upWithRestart(r: StackRun, s: StepResult, args: string[], logName: string, state: { interrupted: boolean; pending: boolean }) {
  let watching = state.pending;
  let restart: Promise<void> | undefined;
  const watcher = (async () => {
    while (watching) {
      await sleep(1000);
      try {
        const rel = await r.kube!.list(`/api/v1/namespaces/openkeel/secrets?labelSelector=${encodeURIComponent("owner=helm")}`);
        if (rel.length > 0 && watching) {
          watching = false;
          state.interrupted = true;
          state.pending = false;
          s.detail.push(
            `kube-apiserver restarted while the program was applying (first OpenKeel Helm release ${rel[0].metadata.labels.name} installed), ${new Date().toISOString()}`,
          );
          restart = run(r.o.clusterScript, ["restart", r.clusterDir, "kube-apiserver"], { log: r.log("cluster") }).then((x) => {
            s.detail.push(`cluster.sh restart kube-apiserver: exit ${x.code} after ${x.seconds.toFixed(0)} s`);
          });
        }
      } catch {
        /* API server busy */
      }
    }
  })();
  const res = await pulumi(args, r.project, r.p!, r.log(logName), { timeoutMs: 20 * 60_000 });
  watching = false;
  await watcher;
  await restart;
  if (state.pending) s.detail.push("no OpenKeel release appeared before the run ended: the API server was not restarted during it");
  return res;
}

/** `pulumi preview --policy-pack policy` of the deployed stack, `tries` times; every try must pass previewProblem. */
async function timePreviews(r: StackRun, tries: number, turn?: (stack: string) => Promise<void>): Promise<void> {
  await r.step(`pulumi preview --policy-pack policy, timed (${tries} tries)`, async (s) => {
    for (let i = 1; i <= tries; i++) {
      const res = await pulumi(["preview", "--policy-pack", "policy"], r.project, r.p!, r.log(`preview-timed-${i}`));
      const problem = previewProblem(res.code, res.stdout + res.stderr, PACK);
      s.detail.push(`try ${i}: ${res.seconds.toFixed(2)} s, exit ${res.code}; ${summaryLine(res.stdout)}${problem ? `; ${problem}` : ""}`);
      if (problem) throw new Error(`try ${i} of pulumi preview --policy-pack policy: ${problem}\n${errorLines(res.stdout + res.stderr).join("\n")}`);
      r.report.previewSeconds.push(res.seconds);
      await turn?.(r.stack);
    }
    s.summary = `${r.report.previewSeconds.map((x) => x.toFixed(2)).join(", ")} s`;
  });
}

async function runStack(stack: string, o: E2EOptions, tmp: string, sharedHome: PulumiEnv): Promise<Report> {
  const r = new StackRun(stack, o, tmp);
  const rep = r.report;
  try {
    await r.step(
      "render (npm run render)",
      async (s) => {
        r.rendered = await render(r, undefined, path.join(r.work, "rendered"), "render");
        const idx = r.rendered.index;
        s.summary = `${idx.environment}/${idx.topology}, ${idx.nodes.length} nodes, ${r.rendered.units.length} units`;
      },
      { fatal: true },
    );
    const rendered = r.rendered!;

    await r.step(
      o.kubeconfig ? "cluster (--kubeconfig)" : "cluster up (cluster.sh)",
      async (s) => {
        if (o.kubeconfig) {
          r.kubeconfig = path.resolve(o.kubeconfig);
          s.summary = `existing cluster from ${r.kubeconfig}`;
        } else {
          r.clusterDir = path.join(r.work, "cluster");
          const res = await run(o.clusterScript, ["up", r.clusterDir], { log: r.log("cluster") });
          if (res.code !== 0) throw new Error(`cluster.sh up exited ${res.code}: ${res.stderr.slice(-1500)}`);
          r.ownCluster = true;
          r.kubeconfig = path.join(r.clusterDir, "kubeconfig");
          s.summary = `${o.clusterScript} up ${r.clusterDir}`;
        }
        r.kube = new Kube(r.kubeconfig);
        if (!(await r.kube.ready())) throw new Error("the API server is not ready");
      },
      { fatal: true },
    );

    await r.step(
      "mirror (127.0.0.1)",
      async (s) => {
        r.mirror = new Mirror(o.schemasDir);
        await r.mirror.start();
        r.mirror.addStack(rendered);
        if (r.mirror.problems.length) throw new Error(r.mirror.problems.join("; "));
        s.summary = `${r.mirror.url}: ${r.mirror.artifacts.length} artifacts`;
        for (const a of r.mirror.artifacts) if (a.source !== "contract chart") rep.standIns.push(`${a.source} \`${a.id}\`: ${a.standsFor}`);
        const contract = r.mirror.artifacts.filter((a) => a.source === "contract chart").map((a) => a.id);
        rep.standIns.push(`contract charts (test/e2e/charts, the § 5.1–5.2 interface with tiny workloads) for ${contract.join(", ")}`);
        rep.standIns.push("their MariaDB/RabbitMQ StatefulSets stand in for the operators' output (annotated e2e.openkeel.io/stand-in)");
      },
      { fatal: true },
    );

    await r.step(
      "stand-in controller",
      async (s) => {
        const tsx = path.join(o.repoRoot, "node_modules", ".bin", "tsx");
        const logFile = path.join(r.logs, "standin-controller.jsonl");
        r.controller = background(tsx, [path.join(__dirname, "standin-controller.ts"), r.kubeconfig, o.schemasDir, logFile], r.log("standin-controller"));
        s.summary = `pid ${r.controller.pid}: OLM Subscriptions (installedCSV + Medik8s CRDs), SNR config, KubeVirt/CDI Available`;
        rep.standIns.push(
          "stand-in controller (test/e2e/harness/standin-controller.ts): plays OLM, the SNR operator, virt-operator and cdi-operator where the program waits on them; its actions are listed below",
        );
      },
      { fatal: true },
    );

    await r.step(
      "register Nodes",
      async (s) => {
        r.nodes = nodeSpecs(rendered);
        await registerNodes(r.kube!, r.nodes);
        s.summary = `${r.nodes.length} Nodes Ready (kwok)`;
        if (rendered.index.environment === "kind-lab" && r.ownCluster) {
          // E2E STAND-IN: a kind cluster comes with its `standard` class (local-path provisioner),
          // which the lab's strict-local volumes ask for; nothing provisions it here.
          await r.kube!.create("/apis/storage.k8s.io/v1/storageclasses", {
            apiVersion: "storage.k8s.io/v1",
            kind: "StorageClass",
            metadata: { name: "standard", labels: { [STAND_IN_LABEL]: "true" }, annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
            provisioner: "rancher.io/local-path",
            reclaimPolicy: "Delete",
            volumeBindingMode: "WaitForFirstConsumer",
          });
          rep.standIns.push(
            "StorageClass standard (rancher.io/local-path): the class a kind cluster creates, which the lab's strict-local volumes ask for; nothing provisions it here",
          );
        }
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

    const original = fs.readFileSync(path.join(o.repoRoot, "stacks", `Pulumi.${stack}.yaml`), "utf8");
    await r.step(
      "pulumi stack init (temporary project copy)",
      async (s) => {
        r.project = path.join(r.work, "project");
        copyProject(o.repoRoot, r.project);
        r.p = { ...sharedHome, env: { ...sharedHome.env, PULUMI_BACKEND_URL: `file://${path.join(r.work, "state")}`, KUBECONFIG: r.kubeconfig } };
        fs.mkdirSync(path.join(r.work, "state"), { recursive: true });
        const file = stackFile(r.project, stack);
        const res = await pulumi(["stack", "init", stack], r.project, r.p, r.log("stack-init"));
        if (res.code !== 0) throw new Error(`pulumi stack init exited ${res.code}: ${res.stderr.slice(-800)}`);
        const after = fs.readFileSync(file, "utf8");
        const salt = /^encryptionsalt: .*$/m.exec(after)?.[0];
        const rewritten = after.replace(/^encryptionsalt: .*\n/m, "") !== original;
        if (rewritten) {
          const changed = diffLines(original, after.replace(/^encryptionsalt: .*\n/m, ""));
          s.detail.push(`pulumi stack init rewrote the stack file (besides adding encryptionsalt); changed lines:\n${changed}`);
          rep.notes.push(
            "pulumi stack init rewrites the stack file it initialises (see step 'pulumi stack init'); the e2e restores the repository's text (plus encryptionsalt) in its copy",
          );
        }
        fs.writeFileSync(file, `${original.replace(/\n*$/, "\n")}${salt ? `${salt}\n` : ""}`);
        setStackConfig(file, "mirror", { url: r.mirror!.url });
        // E2E STAND-IN: the stack is bound to the e2e's cluster (openkeel:cluster), its context, API
        // server and kube-system UID, as an operator binds a stack to a new cluster; the program
        // then checks all three against this cluster before it registers any unit.
        const binding = await e2eBinding(r);
        setStackConfig(file, "cluster", binding);
        rep.standIns.push(
          `openkeel:cluster of the stack: the e2e cluster (context ${binding.context}, ${binding.apiServer}, kube-system ${binding.kubeSystemUID})`,
        );
        s.summary = `stack ${stack} in file://${path.join(r.work, "state")}; mirror ${r.mirror!.url}${rewritten ? "; STACK FILE REWRITTEN by pulumi" : ""}`;
      },
      { fatal: true },
    );

    // ---- the first pulumi up, with the API server restarted mid-way ----
    const state = { interrupted: false, pending: o.interrupt && r.ownCluster && !o.previewTiming };
    const upStep = (title: string, args: string[], logName: string) =>
      r.step(title + (state.pending ? " (kube-apiserver restarted mid-way)" : ""), async (s) => {
        const before = state.interrupted;
        const res = await upWithRestart(r, s, args, logName, state);
        const thisRunInterrupted = !before && state.interrupted;
        s.log = res.log;
        s.summary = `exit ${res.code}; ${summaryLine(res.stdout)}`;
        const warnings = apiWarnings(res.stdout + res.stderr);
        if (warnings.length) s.detail.push(`API server warnings:\n${warnings.join("\n")}`);
        if (res.code !== 0) {
          s.detail.push(`errors:\n${errorLines(res.stdout + res.stderr).join("\n")}`);
          if (!/^Updating \(/m.test(res.stdout)) {
            s.ok = false;
            s.detail.push("the run failed in its preview stage, before changing anything");
          } else if (!thisRunInterrupted) s.ok = false;
          else s.detail.push("the run was interrupted on purpose: its errors are judged by the rerun");
        }
        return res;
      });
    let lastUp = await upStep("pulumi up --yes --policy-pack policy", ["up", "--yes", "--policy-pack", "policy"], "up");
    const upLogs = ["up"];
    const upLog = () => upLogs.map((n) => (fs.existsSync(r.log(n)) ? fs.readFileSync(r.log(n), "utf8") : "")).join("\n");
    // a new stack's first preview: can the pack judge every resource? (unknown secrets make rules advisory)
    const firstPreviewFailed = !lastUp.ok && lastUp.detail.some((d) => d.includes("preview stage"));
    if (!firstPreviewFailed && !o.previewTiming) freshStackPolicyCheck(r, fs.readFileSync(r.log("up"), "utf8"), "the first pulumi up's preview");
    if (firstPreviewFailed) {
      r.freshPreviewPending = true;
      upLogs.push("up-skip-preview");
      lastUp = await upStep(
        "pulumi up --yes --skip-preview --policy-pack policy (to get past the failed preview)",
        ["up", "--yes", "--skip-preview", "--policy-pack", "policy"],
        "up-skip-preview",
      );
    }
    // rerun until a run after the interrupted one passes (at most three reruns)
    let interruptedAt = state.interrupted ? rep.steps.length - 1 : -1;
    for (let i = 1; i <= 3 && (!lastUp.ok || state.pending || interruptedAt === rep.steps.length - 1); i++) {
      upLogs.push(`up-rerun-${i}`);
      lastUp = await upStep(
        `pulumi up --yes --policy-pack policy (rerun ${i}${interruptedAt >= 0 ? ": converges" : ""})`,
        ["up", "--yes", "--policy-pack", "policy"],
        `up-rerun-${i}`,
      );
      if (state.interrupted && interruptedAt < 0) interruptedAt = rep.steps.length - 1;
    }
    if (o.previewTiming) {
      if (!lastUp.ok) throw new Fatal(lastUp.name);
      await timePreviews(r, o.previewTiming.tries, o.previewTiming.turn);
      return rep;
    }
    if (o.interrupt && r.ownCluster) {
      const still = await protectedStillThere(r, rendered, "after-interrupt");
      const ok = state.interrupted && lastUp.ok && interruptedAt >= 0 && interruptedAt < rep.steps.length - 1 && still.ok;
      rep.check("interrupted pulumi up: the rerun converges and nothing protected was deleted", ok, [
        state.interrupted
          ? `kube-apiserver was restarted during step ${interruptedAt + 1} (${rep.steps[interruptedAt]?.name})`
          : "the API server was never restarted during a run",
        `last pulumi up: ${lastUp.ok ? "ok" : "FAILED"} (${lastUp.name})`,
        ...still.detail,
      ]);
    }
    if (o.interrupt && !r.ownCluster) rep.notes.push("no kube-apiserver restart: the cluster is not the e2e's own (--kubeconfig)");
    const upWarnings = apiWarnings(upLog());
    rep.check("every object accepted by the real API server (no unknown fields pruned, no PodSecurity warnings)", upWarnings.length === 0, upWarnings);

    await r.step("checks after pulumi up", async (s) => {
      const before = rep.checks.length;
      await checkAfterUp(r, rendered, "after pulumi up");
      const ran = rep.checks.slice(before);
      s.summary = ran.map((c) => `${c.ok ? "ok" : "FAILED"}: ${c.name}`).join("; ");
      s.ok = ran.every((c) => c.ok);
    });

    // the command an operator runs before every change, the pack included: nothing to change, nothing refused
    await r.step("pulumi preview --policy-pack policy --expect-no-changes", async (s) => {
      const res = await pulumi(["preview", "--expect-no-changes", "--diff", "--policy-pack", "policy"], r.project, r.p!, r.log("preview-idempotent"));
      s.log = res.log;
      s.summary = `exit ${res.code}; ${summaryLine(res.stdout)}`;
      if (res.code !== 0) {
        s.ok = false;
        s.detail.push(`changes or errors:\n${changesOf(res.stdout).join("\n")}\n${errorLines(res.stdout + res.stderr).join("\n")}`);
      }
    });

    await r.step("policy pack: npm run policy on the shipped stack", async (s) => {
      const res = await run("npm", ["run", "-s", "policy", "--", "--stack", stack], { cwd: o.repoRoot, log: r.log("policy-offline") });
      const up = upLog();
      const idempotent = fs.existsSync(r.log("preview-idempotent")) ? fs.readFileSync(r.log("preview-idempotent"), "utf8") : "";
      const engine = violationSet(policyViolations(up + idempotent).filter((v) => v.level === "mandatory"));
      const offline = violationSet(offlineViolations(res.stdout).filter((v) => v.level === "mandatory"));
      s.summary = `npm run policy exit ${res.code}; engine (pulumi up and preview --policy-pack): ${engine.length} mandatory, npm run policy: ${offline.length}`;
      const ran = (text: string) => (text.includes(PACK) ? ` (pack ${PACK} ran)` : " (NO sign of the pack in the engine output)");
      rep.check(
        "the policy pack runs inside the real engine and passes the shipped stack",
        engine.length === 0 && up.includes(PACK) && idempotent.includes(PACK) && res.code === 0,
        [
          `pulumi up and pulumi preview --policy-pack policy: ${engine.join("; ") || "no mandatory violation"}; up${ran(up)}; preview${ran(idempotent)}`,
          `npm run policy: exit ${res.code}; ${offline.join("; ") || "no mandatory violation"}`,
        ],
      );
    });

    if (o.policyMutations && rendered.index.environment !== "kind-lab") {
      await r.step("policy pack D1–D8: mutated stacks, real engine vs npm run policy", async (s) => {
        await policyChecks(r, stackFile(r.project, stack));
        const mine = rep.checks.filter((c) => c.name.startsWith("policy pack in the real engine, D"));
        s.summary = `${mine.filter((c) => c.ok).length}/${mine.length} decisions agree`;
      });
    } else if (o.policyMutations) {
      rep.notes.push("D1–D8 mutated stacks are run for production stacks only: kind-lab stacks are exempt from D1–D8 (README, Policy pack)");
    }

    // ---- day 2: a new compute node ----
    // The Plan of the copy's stack file (with openkeel:mirror set) is what pulumi deployed; the
    // render before the change is taken from it too, so that the diff holds the day-2 change only.
    let day1: RenderedStack | undefined;
    let day2: RenderedStack | undefined;
    let newNode = "";
    if (o.kubeconfig) {
      rep.steps.push({
        name: "day 2: add a compute node",
        seconds: 0,
        ok: true,
        skipped: true,
        detail: ["skipped with --kubeconfig: a node of an existing cluster (kind) must join for real; add one and rerun the e2e"],
      });
    } else
      await r.step("day 2: add a compute node (inventory + cluster), re-render", async (s) => {
        const file = stackFile(r.project, stack);
        day1 = await render(r, path.dirname(file), path.join(r.work, "rendered-day1"), "render-day1");
        const { entry, name } = newComputeNode(file, rendered.index.environment);
        newNode = name;
        mutateStackConfig(file, "nodes", (nodes: Obj[]) => [...nodes, entry]);
        day2 = await render(r, path.dirname(file), path.join(r.work, "rendered-day2"), "render-day2");
        const spec = nodeSpecs(day2).find((n) => n.name === name)!;
        await registerNodes(r.kube!, [spec]);
        s.summary = `${name} ${JSON.stringify(entry)}`;
        s.detail.push(
          `registered ${name}: ${Object.entries(spec.labels)
            .map(([k, v]) => (v ? `${k}=${v}` : k))
            .join(", ")}; taints ${spec.taints.map((t) => `${t.key}:${t.effect}`).join(", ") || "none"}`,
        );
      });

    if (day2) {
      await r.step("day 2: pulumi preview shows exactly the expected steps", async (s) => {
        const exp = expectedSteps(day1!, day2!);
        const res = await pulumi(["preview", "--json"], r.project, r.p!, r.log("preview-day2"));
        s.log = res.log;
        if (res.code !== 0) throw new Error(`pulumi preview --json exited ${res.code}: ${errorLines(res.stdout + res.stderr).join("\n")}`);
        const { steps, changeSummary } = previewSteps(res.stdout);
        const changes = steps.filter((x) => x.op !== "same" && x.op !== "read");
        const unexpected = changes.filter((c) => !exp.some((e) => e.op === c.op && e.match(c.type, c.name)));
        const missing = exp.filter((e) => !changes.some((c) => c.op === e.op && e.match(c.type, c.name)));
        s.summary = `engine: ${Object.entries(changeSummary)
          .map(([k, v]) => `${k} ${v}`)
          .join(", ")}; expected ${exp.length} change(s) from the render diff`;
        s.detail.push(...exp.map((e) => `expected ${e.op}: ${e.what}`));
        s.detail.push(...changes.map((c) => `engine ${c.op}: ${c.type} ${c.name}`));
        if (unexpected.length || missing.length) {
          s.ok = false;
          s.detail.push(...unexpected.map((c) => `UNEXPECTED ${c.op} ${c.type} ${c.name}`), ...missing.map((e) => `MISSING ${e.op}: ${e.what}`));
        }
      });
      await r.step("day 2: pulumi up --yes --skip-preview --policy-pack policy", async (s) => {
        // the preview was the step before; the update itself is what is measured here
        const res = await pulumi(["up", "--yes", "--skip-preview", "--policy-pack", "policy"], r.project, r.p!, r.log("up-day2"), { timeoutMs: 20 * 60_000 });
        s.log = res.log;
        s.summary = `exit ${res.code}; ${summaryLine(res.stdout)}`;
        if (res.code !== 0) {
          s.ok = false;
          s.detail.push(`errors:\n${errorLines(res.stdout + res.stderr).join("\n")}`);
        }
      });
      await r.step("checks after day 2", async (s) => {
        const before = rep.checks.length;
        await checkAfterUp(r, day2!, `after day 2 (${newNode})`);
        const ran = rep.checks.slice(before);
        s.summary = ran.map((c) => `${c.ok ? "ok" : "FAILED"}: ${c.name}`).join("; ");
        s.ok = ran.every((c) => c.ok);
      });
    }

    // ---- destroy: protected resources stay ----
    const last = day2 ?? rendered;
    await r.step("pulumi destroy --yes", async (s) => {
      const res = await pulumi(["destroy", "--yes"], r.project, r.p!, r.log("destroy"), { timeoutMs: 20 * 60_000 });
      s.log = res.log;
      s.summary = `exit ${res.code}; ${summaryLine(res.stdout)}`;
      s.detail.push(
        `engine: ${
          errorLines(res.stdout + res.stderr)
            .slice(0, 15)
            .join("\n") || "(no error lines)"
        }`,
      );
      const still = await protectedStillThere(r, last, "after-destroy");
      s.detail.push(...still.detail);
      rep.check("pulumi destroy leaves every protected resource in place", still.ok, still.detail);
      const state = await pulumi(["stack", "export"], r.project, r.p!, r.log("destroy"));
      const left = state.code === 0 ? ((JSON.parse(state.stdout).deployment?.resources ?? []) as Obj[]) : [];
      const prot = left.filter((x) => x.protect).length;
      s.detail.push(`state after destroy: ${left.length} resources, ${prot} protected, ${left.filter((x) => x.retainOnDelete).length} retainOnDelete`);
    });
    if (fs.existsSync(r.log("destroy")) && /exclude-protected|protected/i.test(fs.readFileSync(r.log("destroy"), "utf8"))) {
      await r.step("pulumi destroy --yes --exclude-protected", async (s) => {
        const res = await pulumi(["destroy", "--yes", "--exclude-protected"], r.project, r.p!, r.log("destroy-exclude-protected"), { timeoutMs: 20 * 60_000 });
        s.log = res.log;
        s.summary = `exit ${res.code}; ${summaryLine(res.stdout)}`;
        if (res.code !== 0) s.detail.push(`errors:\n${errorLines(res.stdout + res.stderr).join("\n")}`);
        const still = await protectedStillThere(r, last, "after-destroy-exclude");
        s.detail.push(...still.detail);
        rep.check("pulumi destroy --exclude-protected leaves every protected resource in place", still.ok, still.detail);
        const nodes = await r.kube!.list("/api/v1/nodes");
        s.detail.push(`Nodes after destroy: ${nodes.length} (NodePatch deletes relinquish labels; Nodes are never deleted)`);
      });
      await r.step("pulumi state unprotect --all, then pulumi destroy --yes (retainOnDelete)", async (s) => {
        const un = await pulumi(["state", "unprotect", "--all", "--yes"], r.project, r.p!, r.log("destroy-retain"));
        if (un.code !== 0) throw new Error(`pulumi state unprotect --all exited ${un.code}: ${un.stderr.slice(-500)}`);
        const res = await pulumi(["destroy", "--yes"], r.project, r.p!, r.log("destroy-retain"), { timeoutMs: 20 * 60_000 });
        s.log = res.log;
        s.summary = `exit ${res.code}; ${summaryLine(res.stdout)}`;
        if (res.code !== 0) {
          s.ok = false;
          s.detail.push(`errors:\n${errorLines(res.stdout + res.stderr).join("\n")}`);
        }
        const still = await protectedStillThere(r, last, "after-destroy-retain");
        s.detail.push(...still.detail);
        const state = await pulumi(["stack", "export"], r.project, r.p!, r.log("destroy-retain"));
        const left = state.code === 0 ? ((JSON.parse(state.stdout).deployment?.resources ?? []) as Obj[]) : [];
        s.detail.push(`state after destroy: ${left.length} resources`);
        rep.check(
          "after pulumi state unprotect, pulumi destroy forgets protected resources and leaves them in the cluster (retainOnDelete)",
          still.ok && res.code === 0,
          still.detail,
        );
      });
    }
  } catch (e) {
    if (!(e instanceof Fatal)) {
      rep.steps.push({ name: "driver", seconds: 0, ok: false, detail: [`internal error: ${(e as Error).stack}`] });
    }
  } finally {
    await stop(r.controller);
    const actions = fs.existsSync(path.join(r.logs, "standin-controller.jsonl"))
      ? fs
          .readFileSync(path.join(r.logs, "standin-controller.jsonl"), "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
    rep.controller.push(
      ...actions.filter((a) => !["start", "stop"].includes(a.action)).map((a) => `${a.time} ${a.action}: ${a.object}${a.detail ? ` — ${a.detail}` : ""}`),
    );
    if (r.mirror) {
      rep.notes.push(
        `mirror served ${r.mirror.requests.filter((q) => q.status === 200).length} requests; refused: ${[...new Set(r.mirror.requests.filter((q) => q.status !== 200).map((q) => q.path))].join(", ") || "none"}`,
      );
      await r.mirror.close();
    }
    r.kube?.close();
    if (r.ownCluster && !o.keep) {
      await run(o.clusterScript, ["down", r.clusterDir], { log: r.log("cluster") });
    } else if (r.ownCluster) {
      rep.notes.push(`cluster kept (--keep): export KUBECONFIG=${r.kubeconfig}; stop it with ${o.clusterScript} down ${r.clusterDir}`);
    }
    rep.finished = Date.now();
    rep.write(path.join(r.dir, "report.md"));
    // machine-readable step times (for `npm run bench` and CI)
    fs.writeFileSync(
      path.join(r.dir, "steps.json"),
      JSON.stringify(
        {
          stack,
          ok: rep.ok,
          seconds: (rep.finished - rep.started) / 1000,
          steps: rep.steps.map((x) => ({ name: x.name, seconds: x.seconds, ok: x.ok, skipped: x.skipped ?? false, summary: x.summary ?? "" })),
          failedChecks: rep.checks.filter((c) => !c.ok).map((c) => c.name),
          ...(rep.previewSeconds.length ? { previewSeconds: rep.previewSeconds } : {}),
        },
        null,
        2,
      ),
    );
  }
  return rep;
}

function errorLines(text: string): string[] {
  const lines = text
    .split("\n")
    .filter((l) => /\berror\b|failed|refusing|cannot|protected/i.test(l))
    .map((l) => l.trimEnd());
  return [...new Set(lines)].slice(0, 60);
}

function changesOf(text: string): string[] {
  return text
    .split("\n")
    .filter((l) => /^\s+[~+-]{1,2}\+?\s/.test(l) || /^\s+\+-\s/.test(l))
    .slice(0, 60);
}

function diffLines(a: string, b: string): string {
  const al = a.split("\n");
  const bl = b.split("\n");
  const out: string[] = [];
  for (let i = 0; i < Math.max(al.length, bl.length); i++) if (al[i] !== bl[i]) out.push(`- ${al[i] ?? ""}\n+ ${bl[i] ?? ""}`);
  return out.slice(0, 20).join("\n");
}

/** Why the e2e cannot run (exit 2), or undefined. */
function cannotRun(o: E2EOptions): string | undefined {
  const missing = ["pulumi", "kubectl", "pulumi-resource-kubernetes", "pulumi-resource-random"].filter((b) => !which(b));
  if (missing.length)
    return `not on PATH: ${missing.join(", ")}. Put the engine's bin dir on PATH (../shared/engine/build.sh → $HOME/.cache/openkeel-engine/bin) or install the released Pulumi CLI and plugins.`;
  if (!o.kubeconfig && !fs.existsSync(o.clusterScript))
    return `no cluster script at ${o.clusterScript} (set --cluster-script or OPENKEEL_E2E_CLUSTER_SCRIPT, or pass --kubeconfig)`;
  return undefined;
}

/** Every stack in turn, each on its own cluster; the reports. */
async function runStacks(o: E2EOptions): Promise<Report[]> {
  const outRoot = o.previewTiming ? path.join(o.outRoot, "preview-timing") : o.outRoot;
  fs.mkdirSync(outRoot, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-e2e-"));
  // kubectl's discovery cache stays in the temp dir, not in $HOME
  process.env.KUBECACHEDIR = path.join(tmp, "kube-cache");
  const home = pulumiEnv(tmp, path.join(tmp, "state"), o.kubeconfig ?? "");
  try {
    const plugins = await installPlugins(home, o.repoRoot, path.join(outRoot, "plugins.log"));
    o.log(`e2e: plugins ${plugins.join("; ")}; temp ${tmp}`);
    const reports: Report[] = [];
    for (const stack of o.stacks) reports.push(await runStack(stack, { ...o, outRoot }, tmp, home));
    return reports;
  } finally {
    if (!o.keep) fs.rmSync(tmp, { recursive: true, force: true });
  }
}

export async function runE2E(o: E2EOptions): Promise<number> {
  const why = cannotRun(o);
  if (why) {
    o.log(`e2e: ${why}`);
    return 2;
  }
  const t0 = Date.now();
  const reports = await runStacks(o);
  const outRoot = o.previewTiming ? path.join(o.outRoot, "preview-timing") : o.outRoot;
  o.log("");
  o.log("e2e step times:");
  for (const rep of reports) {
    for (const s of rep.steps)
      o.log(`  ${rep.stack.padEnd(12)} ${s.seconds.toFixed(1).padStart(7)} s  ${s.skipped ? "skip" : s.ok ? "ok  " : "FAIL"}  ${s.name}`);
    o.log(
      `  ${rep.stack.padEnd(12)} ${(((rep.finished ?? Date.now()) - rep.started) / 1000).toFixed(0).padStart(7)} s  ${rep.ok ? "PASS" : "FAIL"}  ${rep.checks.filter((c) => !c.ok).length} failed check(s): ${path.join(outRoot, rep.stack, "report.md")}`,
    );
  }
  if (o.previewTiming)
    for (const rep of reports)
      o.log(`  ${rep.stack.padEnd(12)} pulumi preview --policy-pack policy: ${rep.previewSeconds.map((x) => `${x.toFixed(2)} s`).join(", ") || "not timed"}`);
  o.log(`e2e: ${((Date.now() - t0) / 1000).toFixed(0)} s in all; ${reports.every((x) => x.ok) ? "PASS" : "FAIL"}`);
  return reports.every((x) => x.ok) ? 0 : 1;
}

export interface PreviewTiming {
  stack: string;
  ok: boolean;
  /** every timed try, in seconds (empty when the setup or a try failed) */
  seconds: number[];
  /** what failed, when not ok: the failed steps and checks */
  failure?: string;
  report: string;
}

/** The preview-timing mode for the bench: per stack, the times of `pulumi preview --policy-pack policy`. */
export async function timeEnginePreviews(o: E2EOptions & { previewTiming: { tries: number } }): Promise<PreviewTiming[] | { cannotRun: string }> {
  const why = cannotRun(o);
  if (why) return { cannotRun: why };
  const reports = await runStacks(o);
  return reports.map((rep) => {
    const report = path.join(o.outRoot, "preview-timing", rep.stack, "report.md");
    if (rep.ok && rep.previewSeconds.length === o.previewTiming.tries) return { stack: rep.stack, ok: true, seconds: rep.previewSeconds, report };
    const failed = [
      ...rep.steps.filter((x) => !x.ok && !x.skipped).map((x) => `step "${x.name}": ${x.detail.find((d) => d.startsWith("error: ")) ?? x.summary ?? "failed"}`),
      ...rep.checks.filter((c) => !c.ok).map((c) => `check "${c.name}"`),
    ];
    return { stack: rep.stack, ok: false, seconds: [], failure: failed.join("; ").slice(0, 600) || "no timed preview", report };
  });
}
