// Placement proven by the real scheduler: where the pods of every component were bound, against
// rendered/<stack>/placement.json (the data placement.md shows). For the contract charts'
// components (pods labelled app.kubernetes.io/instance=<release>, app.kubernetes.io/component=
// <placement key>), for the Deployments/DaemonSets/StatefulSets this repository writes as
// objects, for every one of the upstream manifests the mirror served (`<unit>/<name>`: the
// operators of the release manifests, which the placement model reads from their modules), and for
// every workload and every hook Job that ran of the upstream charts' releases (from each release's
// Helm record; a hook's pods from the pod log, since Helm deletes the Job once it succeeded), each
// matched to its unit's row by name (chartComponent). A pod bound where the report says it may not run, a DaemonSet that covers other nodes
// than the report's eligible ones, a Pending pod, a component of the report without pods or pods
// of a component the report lacks: each is a disagreement between our model and the scheduler.
import * as path from "node:path";
import { yamlDocuments, type RenderedPlacement } from "../../render/rendered";
import type { Kube } from "./kube";
import type { RenderedStack } from "./rendered";
import { readDocs } from "./rendered";
import { E2E_COMPONENT_LABEL, E2E_RELEASE_LABEL } from "../standins/operators";
import { APPLY_AS_PATCH_ANNOTATION } from "../../plan/plan";
import { releaseHooks, releaseObjects, releaseRecords } from "./helm-records";
import type { BoundPod } from "./pod-log";

interface Meta {
  name: string;
  namespace?: string | undefined;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
}

/** The fields of a live Pod this check reads. */
interface Pod {
  metadata: Meta;
  spec: { nodeName?: string };
  status?: { phase?: string; conditions?: { type: string; reason?: string; message?: string }[] };
}

/** The fields of a live Deployment, DaemonSet or StatefulSet this check reads. */
interface Workload {
  kind?: string;
  metadata: Meta;
  spec: { selector: { matchLabels: Record<string, string> } };
}

interface PlacementFinding {
  component: string;
  problem: string;
}

export interface PlacementResult {
  checked: string[];
  /** rows of upstream charts' units that nothing of their release made here */
  unexercised: string[];
  findings: PlacementFinding[];
  storage: { object: string; storageClass: string; exists: boolean }[];
}

type Component = RenderedPlacement["components"][number];

function podReason(p: Pod): string {
  const c = (p.status?.conditions ?? []).find((x) => x.type === "PodScheduled");
  return c ? `${c.reason ?? ""}: ${c.message ?? ""}` : `phase ${p.status?.phase}`;
}

interface Group {
  component: string;
  kinds: Set<string>;
  pods: Pod[];
  daemonSets: Workload[];
  workloads: Workload[];
}

class Groups extends Map<string, Group> {
  of(component: string): Group {
    let g = this.get(component);
    if (!g) this.set(component, (g = { component, kinds: new Set(), pods: [], daemonSets: [], workloads: [] }));
    return g;
  }
}

/** The contract charts' workloads (their APIs' Jobs included) and pods, labelled by release and placement key; their StatefulSets. */
async function contractGroups(kube: Kube, groups: Groups): Promise<Workload[]> {
  const sel = "labelSelector=e2e.openkeel.io%2Fcontract-chart";
  const [pods, dss, deps, stss, jobs] = await Promise.all([
    kube.list<Pod>(`/api/v1/pods?${sel}`),
    kube.list<Workload>(`/apis/apps/v1/daemonsets?${sel}`),
    kube.list<Workload>(`/apis/apps/v1/deployments?${sel}`),
    kube.list<Workload>(`/apis/apps/v1/statefulsets?${sel}`),
    kube.list<Workload>(`/apis/batch/v1/jobs?${sel}`),
  ]);
  // the stand-in operators' StatefulSets name their component (their pods carry the operators' own labels)
  const key = (o: { metadata: Meta }) => {
    const l = o.metadata.labels ?? {};
    return l[E2E_RELEASE_LABEL]
      ? `${l[E2E_RELEASE_LABEL]}/${l[E2E_COMPONENT_LABEL]}`
      : `${l["app.kubernetes.io/instance"]}/${l["app.kubernetes.io/component"]}`;
  };
  for (const p of pods) groups.of(key(p)).pods.push(p);
  // a list's items may omit their kind: the list's own
  const byKind: [string, Workload[]][] = [
    ["DaemonSet", dss],
    ["Deployment", deps],
    ["StatefulSet", stss],
    ["Job", jobs],
  ];
  for (const [kind, list] of byKind)
    for (const w of list) {
      const g = groups.of(key(w));
      g.kinds.add(w.kind ?? kind);
      g.workloads.push(w);
      if (kind === "DaemonSet") g.daemonSets.push(w);
    }
  return stss;
}

const WORKLOAD_KINDS = ["Deployment", "DaemonSet", "StatefulSet"];

/** One workload as written, into its group: the live object and its pods. */
async function addWorkload(kube: Kube, g: Group, o: { kind: string; metadata: Meta }): Promise<void> {
  const ns = o.metadata.namespace ?? "default";
  const live = await kube.get<Workload>(`/apis/apps/v1/namespaces/${ns}/${o.kind.toLowerCase()}s/${o.metadata.name}`);
  g.kinds.add(o.kind);
  if (!live) return;
  g.workloads.push(live);
  if (o.kind === "DaemonSet") g.daemonSets.push(live);
  const q = Object.entries(live.spec.selector.matchLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  g.pods.push(...((await kube.list(`/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(q)}`)) as Pod[]));
}

const workloadKey = (o: { kind: string; metadata: Meta }) => `${o.kind}/${o.metadata.namespace ?? "default"}/${o.metadata.name}`;

/** The workloads this repository's units patch rather than own (APPLY_AS_PATCH_ANNOTATION: plan/plan.ts). */
function patchedWorkloads(r: RenderedStack): Set<string> {
  const keys = new Set<string>();
  for (const u of r.units) {
    for (const f of u.objects ?? []) {
      for (const o of readDocs(path.join(r.dir, f)) as unknown as { kind: string; metadata: Meta }[]) {
        if (WORKLOAD_KINDS.includes(o.kind) && o.metadata.annotations?.[APPLY_AS_PATCH_ANNOTATION] !== undefined) keys.add(workloadKey(o));
      }
    }
  }
  return keys;
}

/** Workloads this repository writes as objects: `<unit>/<object name>` rows, with their live pods. */
async function objectGroups(kube: Kube, r: RenderedStack, components: ReadonlyMap<string, Component>, groups: Groups): Promise<void> {
  for (const u of r.units) {
    for (const f of u.objects ?? []) {
      for (const o of readDocs(path.join(r.dir, f)) as unknown as { kind: string; metadata: Meta }[]) {
        const component = `${u.name}/${o.metadata.name}`;
        if (WORKLOAD_KINDS.includes(o.kind) && components.has(component)) await addWorkload(kube, groups.of(component), o);
      }
    }
  }
}

/**
 * Every workload of the upstream manifests the mirror served (`served`: the body of a URL):
 * `<unit>/<name>` rows. One the placement data lacks is a finding: the model must know them all.
 */
async function manifestGroups(kube: Kube, r: RenderedStack, served: (url: string) => string | undefined, groups: Groups): Promise<void> {
  const patched = patchedWorkloads(r);
  for (const u of r.units) {
    for (const url of u.urls ?? []) {
      const body = served(url);
      if (body === undefined) continue;
      for (const o of yamlDocuments(body) as { kind?: string; metadata?: Meta }[]) {
        // a workload another unit patches (MetalLB's) is that unit's row, judged by objectGroups
        if (o?.metadata && WORKLOAD_KINDS.includes(String(o.kind)) && !patched.has(workloadKey(o as { kind: string; metadata: Meta })))
          await addWorkload(kube, groups.of(`${u.name}/${o.metadata.name}`), o as { kind: string; metadata: Meta });
      }
    }
  }
}

const kebab = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase();

/**
 * The row of placement.json an upstream chart's workload or hook Job is: a row `<unit>/<id>` joins
 * the ids of the objects it stands for with `+` (`kube-ovn-cni+ovs-ovn+pinger`), each the object's
 * name, its name past the release's prefix, or a values key of the chart in camelCase
 * (`certController` for `mariadb-operator-cert-controller`); a plural id stands for each object
 * named in its singular (`upgrade-hooks`: `kube-ovn-pre-upgrade-hook`, `kube-ovn-post-upgrade-hook`).
 * A name matches an id when it is the id, or the release's name, a dash and the id, or ends with a
 * dash and the id's last words (`node-feature-discovery-master` and `nfd-master`); the closest match
 * wins, and two rows matching alike is a finding, as is none.
 */
export function chartComponent(unit: string, release: string, name: string, components: readonly string[]): { component: string } | { problem: string } {
  const past = name.startsWith(`${release}-`) ? name.slice(release.length + 1) : name;
  const rank = (id: string): number => {
    const k = kebab(id);
    if (name === k) return 3;
    if (name === `${release}-${k}`) return 2;
    if (past.length > 0 && (k.endsWith(`-${past}`) || past.endsWith(`-${k}`))) return 1;
    // a plural id: each object named in its singular
    return k.endsWith("s") && past.endsWith(`-${k.slice(0, -1)}`) ? 1 : 0;
  };
  const scored = components
    .filter((c) => c.startsWith(`${unit}/`))
    .map((c) => ({
      c,
      score: Math.max(
        ...c
          .slice(unit.length + 1)
          .split("+")
          .map(rank),
      ),
    }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score);
  if (scored.length === 0) return { problem: `placement.json has no row of unit ${unit} for ${name}` };
  if (scored.length > 1 && scored[1].score === scored[0].score)
    return {
      problem: `${name} matches rows ${scored
        .filter((x) => x.score === scored[0].score)
        .map((x) => x.c)
        .join(" and ")} of placement.json alike`,
    };
  return { component: scored[0].c };
}

/** The units that install an upstream chart (the contract charts, `openkeel-*`, are contractGroups'). */
const upstreamReleases = (r: RenderedStack) => r.units.filter((u) => u.kind === "HelmRelease" && u.chart && !u.chart.chart.startsWith("openkeel-"));

/**
 * Every workload of every upstream chart's deployed release, and the pods of every hook Job of it
 * that ran (`hookPods`: the pod log), into the row chartComponent names; what matches no row is a
 * finding. Returns the rows of those units that nothing of the release made (operators create
 * them at run time: Longhorn's CSI Deployments, its instance managers), for the report.
 */
async function chartGroups(
  kube: Kube,
  r: RenderedStack,
  components: ReadonlyMap<string, Component>,
  groups: Groups,
  hookPods: (namespace: string, job: string) => BoundPod[],
  findings: PlacementFinding[],
): Promise<string[]> {
  const names = [...components.keys()];
  const matched = new Set<string>();
  for (const u of upstreamReleases(r)) {
    const [record] = await releaseRecords(kube, u.namespace!, u.release!, "deployed");
    if (!record) {
      findings.push({ component: u.name, problem: `no deployed Helm release ${u.namespace}/${u.release} in the cluster` });
      continue;
    }
    const place = (name: string) => {
      const m = chartComponent(u.name, u.release!, name, names);
      if ("problem" in m) findings.push({ component: `${u.name}/${name}`, problem: m.problem });
      else matched.add(m.component);
      return "component" in m ? m.component : undefined;
    };
    for (const o of releaseObjects(record).filter((x) => WORKLOAD_KINDS.includes(String(x.kind)))) {
      const c = place(o.metadata.name);
      if (c) await addWorkload(kube, groups.of(c), { kind: String(o.kind), metadata: { ...o.metadata, namespace: o.metadata.namespace ?? u.namespace } });
    }
    for (const h of releaseHooks(record)) {
      for (const job of h.objects.filter((o) => o.kind === "Job")) {
        const pods = hookPods(job.metadata.namespace ?? u.namespace!, job.metadata.name);
        if (pods.length === 0) continue; // a hook of an event that has not happened (pre-upgrade, post-delete …)
        const c = place(job.metadata.name);
        if (!c) continue;
        const g = groups.of(c);
        g.kinds.add(`Job (hook ${h.events.join(", ")})`);
        g.workloads.push({ kind: "Job", metadata: job.metadata, spec: { selector: { matchLabels: {} } } });
        g.pods.push(...pods.map((p) => ({ metadata: { name: p.name, namespace: p.namespace }, spec: { nodeName: p.node }, status: { phase: "Succeeded" } })));
      }
    }
  }
  const units = new Set(upstreamReleases(r).map((u) => u.name));
  return names.filter((n) => units.has(n.split("/")[0]) && !matched.has(n));
}

/** Where a group's pods were bound against the nodes placement.json says it may run on. */
function judge(g: Group, c: Component, checked: string[]): PlacementFinding[] {
  const findings: PlacementFinding[] = [];
  const allowed = [...c.eligible].sort();
  const bound = g.pods.filter((p) => p.spec.nodeName);
  const pending = g.pods.filter((p) => !p.spec.nodeName);
  const where = [...new Set(bound.map((p) => p.spec.nodeName!))].sort();
  const ok = (n: string) => c.eligible.includes(n);
  checked.push(`${g.component} (${[...g.kinds].join("/")}): pods on ${where.join(", ") || "no node"}; placement.json eligible ${allowed.join(", ") || "none"}`);
  // a DaemonSet's misplaced pods are reported once, by the coverage comparison below
  for (const p of g.daemonSets.length > 0 ? [] : bound) {
    if (!ok(p.spec.nodeName!)) {
      findings.push({
        component: g.component,
        problem: `DISAGREEMENT: the scheduler bound ${p.metadata.name} to ${p.spec.nodeName}; placement.json says it may not run there (only on ${allowed.join(", ") || "no node"})`,
      });
    }
  }
  for (const p of pending) {
    findings.push({
      component: g.component,
      problem: `pod ${p.metadata.name} is Pending: ${podReason(p)} (placement.json names no reason; eligible: ${allowed.join(", ") || "no node"})`,
    });
  }
  if (g.daemonSets.length > 0) {
    const extra = where.filter((n) => !allowed.includes(n));
    const missing = allowed.filter((n) => !where.includes(n));
    if (extra.length || missing.length) {
      findings.push({
        component: g.component,
        problem: `DISAGREEMENT: DaemonSet covers ${where.join(", ") || "no node"}; placement.json marks ${allowed.join(", ") || "no node"}${extra.length ? ` (extra: ${extra.join(", ")})` : ""}${missing.length ? ` (missing: ${missing.join(", ")})` : ""}`,
      });
    }
  }
  if (g.workloads.length === 0) findings.push({ component: g.component, problem: "placement.json lists it, the cluster has no such workload" });
  return findings;
}

/**
 * Where the scheduler bound every component's pods, against placement.json. `served` gives the
 * body the mirror served for a remote manifest's URL (undefined: not served, nothing to check).
 */
export async function checkPlacement(
  kube: Kube,
  r: RenderedStack,
  placement: RenderedPlacement,
  served: (url: string) => string | undefined = () => undefined,
  hookPods: (namespace: string, job: string) => BoundPod[] = () => [],
): Promise<PlacementResult> {
  const components = new Map(placement.components.map((x) => [x.name, x]));
  const groups = new Groups();
  const findings: PlacementFinding[] = [];
  const checked: string[] = [];
  const stss = await contractGroups(kube, groups);
  await objectGroups(kube, r, components, groups);
  await manifestGroups(kube, r, served, groups);
  const unmade = await chartGroups(kube, r, components, groups, hookPods, findings);
  for (const g of [...groups.values()].sort((a, b) => a.component.localeCompare(b.component))) {
    const c = components.get(g.component);
    if (c) findings.push(...judge(g, c, checked));
    else {
      findings.push({
        component: g.component,
        problem: `the cluster runs ${g.pods.length} pod(s) of ${[...g.kinds].join("/")} ${g.component}, placement.json has no component of that name`,
      });
    }
  }
  const unexercised = unmade.map(
    (c) =>
      `${c} (${components.get(c)?.kind}): not made by its chart's release here (what its operator creates at run time, or a hook of an event that has not happened)`,
  );
  // OpenKeel workloads of the report that the contract charts did not create ("Pods" rows are no
  // workload: the pods a RuntimeClass or a hook Job admits, which nothing runs in the e2e)
  for (const c of placement.components) {
    if (c.name.startsWith("openkeel-") && WORKLOAD_KINDS.includes(c.kind) && !groups.has(c.name)) {
      findings.push({ component: c.name, problem: `placement.json lists ${c.kind} ${c.name}, the contract chart created no such workload` });
    }
  }
  // StatefulSets record the storage class they would claim: it must exist
  const classes = new Set((await kube.list("/apis/storage.k8s.io/v1/storageclasses")).map((sc) => (sc as { metadata: Meta }).metadata.name));
  const storage = stss
    .filter((st) => st.metadata.annotations?.["e2e.openkeel.io/storage-class"])
    .map((st) => {
      const sc = st.metadata.annotations!["e2e.openkeel.io/storage-class"];
      return { object: `StatefulSet ${st.metadata.namespace}/${st.metadata.name}`, storageClass: sc, exists: classes.has(sc) };
    });
  return { checked, unexercised, findings, storage };
}

/**
 * What the API server kept of each object: every leaf of the object as written (rendered objects,
 * and the objects of the contract charts' Helm releases) must be in the live object with the same
 * value. A structural CRD schema prunes unknown fields silently; this catches it.
 */
export function compareLeaves(written: unknown, live: unknown, at = ""): string[] {
  if (typeof written === "string" && /^<pulumi-secret:/.test(written)) return [];
  if (written === null || typeof written !== "object") {
    if (live === undefined) return [`${at}: missing in the cluster (pruned?)`];
    // the API server normalises quantities and int-or-strings; compare as strings
    return String(written) === String(live) ? [] : [`${at}: written ${JSON.stringify(written)}, cluster has ${JSON.stringify(live)}`];
  }
  if (Array.isArray(written)) {
    if (!Array.isArray(live)) return written.length === 0 ? [] : [`${at}: missing in the cluster (pruned?)`];
    return written.flatMap((w, i) => compareLeaves(w, live[i], `${at}[${i}]`));
  }
  if (live === null || typeof live !== "object") return Object.keys(written as object).length === 0 ? [] : [`${at}: missing in the cluster (pruned?)`];
  return Object.entries(written as Record<string, unknown>).flatMap(([k, v]) => compareLeaves(v, (live as Record<string, unknown>)[k], at ? `${at}.${k}` : k));
}
