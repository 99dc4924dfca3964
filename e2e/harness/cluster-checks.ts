// What the e2e holds the cluster to after a `pulumi up` (README step 8): the role labels of every
// Node, every object as written against what the API server kept, placement by the real scheduler,
// the storage classes; and that the objects of protected units are still there (steps 7 and 12).
import * as fs from "node:fs";
import * as path from "node:path";
import { releaseObjects, releaseRecords } from "./helm-records";
import type { KubeObject } from "./kube";
import { checkPlacement, compareLeaves } from "./placement-check";
import { run, sleep, type RunResult } from "./proc";
import { readDocs, readPlacement, type RenderedStack } from "./rendered";
import type { StackRun } from "./stack-run";

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

/** The objects of a rendered file: Kubernetes objects, each with its metadata. */
export function renderedObjects(file: string): KubeObject[] {
  return readDocs(file) as KubeObject[];
}

/** The labels the node-roles phase writes on each Node, from its rendered objects. */
function renderedNodeLabels(rendered: RenderedStack): Map<string, Record<string, string>> {
  const labels = new Map<string, Record<string, string>>();
  for (const u of rendered.units) {
    for (const f of u.objects ?? []) {
      for (const o of renderedObjects(path.join(rendered.dir, f))) {
        if (o.kind === "Node" && typeof o.metadata?.name === "string" && !labels.has(o.metadata.name)) labels.set(o.metadata.name, o.metadata.labels ?? {});
      }
    }
  }
  return labels;
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

/** `kubectl get` of one object as written (by kind, group version, name and namespace). */
function kubectlGet(r: StackRun, o: KubeObject, output: "json" | "name", log: string): Promise<RunResult> {
  const apiVersion = String(o.apiVersion);
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  const args = ["get", `${o.kind}${group ? `.${version}.${group}` : ""}`, o.metadata.name, ...(o.metadata.namespace ? ["-n", o.metadata.namespace] : [])];
  return run("kubectl", [...args, "-o", output, "--kubeconfig", r.kubeconfig], { log });
}

const objectKey = (o: KubeObject) =>
  `${String(o.apiVersion).split("/").length > 1 ? String(o.apiVersion).split("/")[0] : ""}/${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;

/** Every object as written: the rendered ones (Nodes aside), then those of the contract charts' releases, each found live as well when it is. */
async function writtenAndLive(
  r: StackRun,
  rendered: RenderedStack,
): Promise<{ written: { source: string; obj: KubeObject }[]; live: Map<string, unknown>; contract: number }> {
  const res = await run("kubectl", ["get", "-R", "-f", path.join(rendered.dir, "objects"), "-o", "json", "--ignore-not-found", "--kubeconfig", r.kubeconfig], {
    log: r.log("persisted"),
  });
  const parsed = res.stdout.trim() ? (JSON.parse(res.stdout) as { items?: KubeObject[] } & KubeObject) : undefined;
  const found: KubeObject[] = parsed ? (parsed.items ?? [parsed]) : [];
  const live = new Map<string, unknown>(found.map((o) => [objectKey(o), o]));
  const written: { source: string; obj: KubeObject }[] = [];
  for (const u of rendered.units)
    for (const f of u.objects ?? []) for (const o of renderedObjects(path.join(rendered.dir, f))) if (o.kind !== "Node") written.push({ source: f, obj: o });
  // the contract charts' objects, from their Helm release records
  const contract = rendered.units.filter((u) => u.kind === "HelmRelease" && u.chart?.chart.startsWith("openkeel-"));
  for (const u of contract) {
    const [record] = await releaseRecords(r.kube!, u.namespace!, u.release!, "deployed");
    if (!record) continue;
    for (const o of releaseObjects(record)) {
      if (!o?.kind) continue;
      // Helm leaves out the release's namespace on the namespaced objects it writes there
      if (o.kind !== "PriorityClass" && u.namespace) o.metadata.namespace ??= u.namespace;
      written.push({ source: `Helm release ${u.release}`, obj: o });
      if (!live.has(objectKey(o))) {
        const got = await kubectlGet(r, o, "json", r.log("persisted"));
        if (got.code === 0) live.set(objectKey(o), JSON.parse(got.stdout));
      }
    }
  }
  return { written, live, contract: contract.length };
}

/** Every object as written (rendered objects; objects of the contract charts' releases) vs the cluster. */
async function checkPersisted(r: StackRun, rendered: RenderedStack): Promise<void> {
  const { written, live, contract } = await writtenAndLive(r, rendered);
  const problems: string[] = [];
  for (const { source, obj } of written) {
    const l = live.get(objectKey(obj));
    const id = `${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ""}${obj.metadata.name}`;
    if (!l) {
      problems.push(`${id} (${source}): not in the cluster`);
      continue;
    }
    const { metadata, status: _s, ...body } = obj;
    const cmp: Record<string, unknown> = {
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
    `${written.length} objects compared (rendered objects/**, and the objects of ${contract} contract-chart releases)`,
    ...problems,
  ]);
}

/**
 * Looks at the placement, a second apart, until it has no finding: the scheduler, the DaemonSet
 * controller and kwok act after pulumi up returns, so a DaemonSet pod not yet created on a new
 * node, or not yet bound, is lag, not a disagreement (looking again only at unbound pods, ten
 * times, left the first kind to chance). A real disagreement stays, and fails after the last look.
 */
const PLACEMENT_LOOKS = 60;

/** `look` until `settled` or `looks` times, `wait` between; the last result, the first, how many looks. */
export async function untilSettled<T>(
  look: () => Promise<T>,
  settled: (x: T) => boolean,
  looks: number,
  wait: () => Promise<unknown> = () => sleep(1000),
): Promise<{ result: T; first: T; looks: number }> {
  const first = await look();
  let result = first;
  let n = 1;
  while (!settled(result) && n < looks) {
    await wait();
    result = await look();
    n++;
  }
  return { result, first, looks: n };
}

/** The checks after a `pulumi up` (README step 8). */
export async function checkAfterUp(r: StackRun, rendered: RenderedStack, label: string): Promise<void> {
  await checkRoleLabels(r, rendered);
  await checkPersisted(r, rendered);
  const served = (url: string) => r.mirror?.servedUpstream(url);
  const hookPods = (namespace: string, job: string) => r.podLog?.ofJob(namespace, job) ?? [];
  const t0 = Date.now();
  const look = () => checkPlacement(r.kube!, rendered, readPlacement(rendered), served, hookPods);
  const { result, first, looks } = await untilSettled(look, (x) => x.findings.length === 0, PLACEMENT_LOOKS);
  const finding = (f: { component: string; problem: string }) => `${f.component}: ${f.problem}`;
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  const settling =
    looks > 1 ? [`${looks} looks in ${seconds} s; the first found ${first.findings.length}: ${first.findings.slice(0, 5).map(finding).join("; ")}`] : [];
  r.report.check(`placement proven by the real scheduler (${label})`, result.findings.length === 0, [
    ...settling,
    ...result.findings.map(finding),
    ...result.checked.map((c) => `checked ${c}`),
    ...result.unexercised.map((c) => `not exercised: ${c}`),
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

/** Whether every object of a protected unit is still in the cluster (`when` names the logs). */
export async function protectedStillThere(r: StackRun, rendered: RenderedStack, when: string): Promise<{ ok: boolean; detail: string[] }> {
  const { files, releases } = protectedObjects(r, rendered);
  const detail: string[] = [];
  let ok = true;
  for (const f of files) {
    for (const o of renderedObjects(f)) {
      const res = await kubectlGet(r, o, "name", r.log(`protected-${when}`));
      if (res.code !== 0) {
        ok = false;
        detail.push(`GONE ${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name} (${path.basename(f)})`);
      }
    }
  }
  for (const rel of releases) {
    if ((await releaseRecords(r.kube!, rel.namespace, rel.name)).length === 0) {
      ok = false;
      detail.push(`GONE Helm release ${rel.namespace}/${rel.name}`);
    }
  }
  detail.unshift(
    `${files.length} object file(s) and ${releases.length} Helm release(s) of protected units checked: ${ok ? "all still in the cluster" : "some are gone"}`,
  );
  return { ok, detail };
}
