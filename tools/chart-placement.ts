// The placement model against the real platform charts (issue 37, item 2). For every stack and
// every platform Helm release: `helm template` of the chart at its pin with the committed values
// (rendered/<stack>/values/), Helm running the release's post-renderer over the manifests as it does
// on `pulumi up` (the executable components/post-render.ts writes, with rendered/<stack>/postrender/);
// then every workload of the output (hooks included) read by the generic workload reader
// (placement/workloads.ts) and judged on the nodes of rendered/<stack>/placement.json with
// Kubernetes' rules (placement/scheduling.ts). Each must equal the model component its chart's table
// (`charts` of its platform module) maps it to: the nodes it may run on, its kind and replicas, and
// every guarantee the model states of its pods (issue 45; placement/pod-guarantees.ts): required
// anti-affinity and DoNotSchedule spread over its own pods, the PodDisruptionBudgets over them, its
// tolerations and priority class. The model's guarantees are its readers' statements for the stack
// (planStack's components: placement.json records where each may run, not what it promises).
// A workload no table maps, or a component no workload stands for, is a problem too.
//
// Hooks: Helm hands its post-renderer the manifests only. helm.sh/helm/v3@v3.20.2
// pkg/action/action.go renderResources: SortManifests splits the hooks off (lines 169–172) and
// `pr.Run(b)` runs on the manifests' buffer alone (lines 229–234); install.go line 317 and
// upgrade.go line 276 call it with the release's post-renderer; cmd/helm/template.go lines 108–111
// print the manifest and then `rel.Hooks`. So a hook is judged as the chart renders it.
//
// The charts come from the mirror folder beside the clone (OPENKEEL_MIRROR, else ../shared/mirror:
// the Helm repositories of the pins, `files/<host>/<path>/index.yaml`, the archive's digest checked),
// or, where there is none (a GitHub runner), `helm pull` from the pinned repository into
// .tools/charts/ once. That second path cannot run on a machine without the internet; its choice is
// tested, its download is Helm's own.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse } from "yaml";
import { postRenderExecutable } from "../components/post-render";
import { readStack } from "../config/stack-file";
import { planStack } from "../environments";
import { ENVIRONMENTS, STACK_DECLARATIONS } from "../environments/registry";
import type { PlacementComponent, PlacementData, PlacementNode } from "../placement/data";
import { antiAffinityTerms, guaranteeDifferences, modelGuarantees, podGuarantees, type PodGuarantees } from "../placement/pod-guarantees";
import { ineligibility } from "../placement/scheduling";
import { podTemplate, workload, type ChartWorkloads, type Component } from "../placement/workloads";
import type { PostRenderPatch } from "../plan/post-render";
import { manifestsUnit, type ChartPin, type K8sObject } from "../plan/plan";
import { KIND_NODE_IMAGE } from "../platform/versions";
import { readRenderedDir, type RenderedHelmRelease, type RenderedStack } from "../render/rendered";
import { helmPull, helmTemplate } from "./helm";
import { REPO_ROOT, TOOLS_DIR } from "./tools";

/**
 * Capabilities.KubeVersion of the renders: the clusters' Kubernetes (the kind node image's v1.36.1;
 * production's KUBERNETES_VERSION, 1.36.3, is the same minor, a test holds them so). The pinned
 * charts read it only in their kubeVersion gate (no template of the five tests Capabilities.KubeVersion).
 */
export const CHART_KUBE_VERSION = KIND_NODE_IMAGE.tag;
/** Where charts pulled from their repositories are kept (no mirror folder: a GitHub runner). */
export const CHART_CACHE = path.join(TOOLS_DIR, "charts");

// ---- where a chart comes from ----------------------------------------------------------------

export type ChartSource = { from: "mirror"; archive: string; digest: string } | { from: "repository"; cacheDir: string };

/** The file of a mirror folder that holds what `url` serves (`files/<host>/<path>`). */
function mirrored(mirrorDir: string, url: string): string {
  const u = new URL(url);
  return path.join(mirrorDir, "files", u.host, ...u.pathname.split("/").filter(Boolean));
}

interface IndexEntry {
  version?: string;
  urls?: string[];
  digest?: string;
}

/**
 * Where the chart of a pin is read: the mirror folder's archive (its Helm repository's index.yaml
 * names it and its digest), when there is a mirror folder; else the cache a pull fills.
 */
export function chartSource(ref: ChartPin, mirrorDir: string | undefined, cacheRoot = CHART_CACHE): ChartSource {
  if (!mirrorDir || !fs.existsSync(mirrorDir)) return { from: "repository", cacheDir: path.join(cacheRoot, `${ref.chart}-${ref.version}`) };
  const repository = ref.repository.replace(/\/+$/, "");
  const indexFile = mirrored(mirrorDir, `${repository}/index.yaml`);
  const fix = `the mirror folder holds every pinned chart with its repository's index.yaml; add it there, or point OPENKEEL_MIRROR at one that does`;
  if (!fs.existsSync(indexFile)) throw new Error(`${indexFile}: no Helm repository index for ${ref.repository} (${fix})`);
  const entries = (parse(fs.readFileSync(indexFile, "utf8")) as { entries?: Record<string, IndexEntry[]> }).entries?.[ref.chart] ?? [];
  const entry = entries.find((e) => e.version === ref.version);
  if (!entry?.urls?.[0] || !entry.digest) throw new Error(`${indexFile}: no ${ref.chart} ${ref.version} with a URL and a digest (${fix})`);
  const archive = mirrored(mirrorDir, new URL(entry.urls[0], `${repository}/`).href);
  if (!fs.existsSync(archive)) throw new Error(`${archive}: ${ref.chart} ${ref.version}, named by ${indexFile}, is not in the mirror folder (${fix})`);
  return { from: "mirror", archive, digest: entry.digest };
}

/** The archive of a pin's chart: the mirror's, its digest checked; or the cached pull, pulled when missing. */
export function chartArchive(ref: ChartPin, mirrorDir: string | undefined, pull = helmPull, cacheRoot = CHART_CACHE): string {
  const source = chartSource(ref, mirrorDir, cacheRoot);
  if (source.from === "mirror") {
    const sha = createHash("sha256").update(fs.readFileSync(source.archive)).digest("hex");
    if (sha !== source.digest) throw new Error(`${source.archive}: sha256 ${sha}, but its repository's index says ${source.digest}`);
    return source.archive;
  }
  const cached = fs.existsSync(source.cacheDir) ? fs.readdirSync(source.cacheDir).filter((f) => f.endsWith(".tgz")) : [];
  // Helm's download: needs the internet (never taken where a mirror folder is)
  return cached.length === 1 ? path.join(source.cacheDir, cached[0]) : pull(ref, source.cacheDir);
}

// ---- rendering -------------------------------------------------------------------------------

/** One workload of a chart's output, as the generic reader models it, and what it promises its pods. */
export interface ChartWorkload {
  kind: string;
  name: string;
  /** Its `helm.sh/hook` annotation: a hook Helm runs around the release, never post-rendered. */
  hook?: string;
  component: Component;
  guarantees: PodGuarantees;
  /** Its required anti-affinity terms that select none of its own pods, in words (they keep nothing apart). */
  apartMisses?: string;
}

const POD_KINDS = new Set(["Deployment", "StatefulSet", "DaemonSet", "Job", "Pod"]);
const UNMODELLED = new Set(["CronJob", "ReplicaSet", "ReplicationController"]);
const BUDGET = "PodDisruptionBudget";

/** The kind of a YAML document, from its top-level `kind:` line (undefined: none there). */
const kindOf = (doc: string) => /^kind:\s*["']?([A-Za-z]+)/m.exec(doc)?.[1];

/**
 * The workloads of `helm template`'s output, read as the generic reader reads a unit's objects,
 * with what each promises its pods (the budgets of the same output over them); only documents of
 * a workload kind or a budget are parsed (a CRD chart renders megabytes of schema). `namespace`:
 * the release's, where Helm installs what names none.
 */
export function chartWorkloads(output: string, unit: string, namespace: string): ChartWorkload[] {
  const reading = manifestsUnit(unit, "chart", []);
  const objects: K8sObject[] = [];
  for (const text of output.split(/^---[ \t]*$/m)) {
    const kind = kindOf(text);
    if (kind === undefined || (!POD_KINDS.has(kind) && !UNMODELLED.has(kind) && kind !== BUDGET)) continue;
    const o = parse(text) as K8sObject;
    if (UNMODELLED.has(o.kind)) throw new Error(`${unit}: the chart renders ${o.kind} ${o.metadata?.name}, which no placement reader models`);
    objects.push(o);
  }
  const namespaceOf = (o: K8sObject) => o.metadata.namespace ?? namespace;
  const budgets = objects.filter((o) => o.kind === BUDGET);
  return objects
    .filter((o) => o.kind !== BUDGET)
    .map((o) => {
      const hook = o.metadata.annotations?.["helm.sh/hook"];
      const pods = podTemplate(o);
      const misses = antiAffinityTerms(pods, namespaceOf(o)).filter((t) => !t.own);
      return {
        kind: o.kind,
        name: o.metadata.name,
        ...(hook ? { hook } : {}),
        component: workload(reading, o)[0],
        guarantees: podGuarantees(pods, namespaceOf(o), budgets, namespaceOf),
        ...(misses.length > 0
          ? {
              apartMisses: `its terms on ${misses.map((t) => `${t.topologyKey} select ${JSON.stringify(t.selector)}`).join(", ")}, not its own pods (labels ${JSON.stringify(pods.labels)})`,
            }
          : {}),
      };
    });
}

export interface ReleaseRender {
  unit: Pick<RenderedHelmRelease, "name" | "release" | "namespace" | "chart">;
  /** The values file the release installs with. */
  valuesFile: string;
  patches: readonly PostRenderPatch[];
  /** A chart archive or folder. */
  chart: string;
}

/** Renders by their inputs: stacks whose values agree render once. */
const renders = new Map<string, string>();

/** `helm template` of a release, Helm running its post-renderer (the one `pulumi up` gives it) when it has patches. */
export function renderRelease(r: ReleaseRender, helm?: string): string {
  const values = fs.readFileSync(r.valuesFile, "utf8");
  const key = JSON.stringify([r.chart, fs.statSync(r.chart).mtimeMs, r.unit.release, r.unit.namespace, values, r.patches, helm]);
  const done = renders.get(key);
  if (done !== undefined) return done;
  const exe = postRenderExecutable({ release: r.unit.release, postRender: [...r.patches] });
  const output = helmTemplate(
    {
      release: r.unit.release,
      namespace: r.unit.namespace,
      chart: r.chart,
      valuesFile: r.valuesFile,
      kubeVersion: CHART_KUBE_VERSION,
      ...(exe ? { postRenderer: path.join(REPO_ROOT, exe) } : {}),
    },
    helm,
  );
  renders.set(key, output);
  return output;
}

/**
 * The workloads only an upgrade renders (`liveOnly`): the archive unpacked, each gated template's
 * gate made true, rendered again; what that adds to `plain`'s workloads (it must add some: a gate
 * that opens nothing is a table that no longer fits the chart).
 */
export function liveOnlyWorkloads(r: ReleaseRender, liveOnly: NonNullable<ChartWorkloads["liveOnly"]>, plain: ChartWorkload[], helm?: string): ChartWorkload[] {
  const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? os.tmpdir(), "chart-"));
  try {
    const t = spawnSync("tar", ["-xzf", r.chart, "-C", dir], { encoding: "utf8" });
    if (t.status !== 0) throw new Error(`tar -xzf ${r.chart}: ${t.stderr.trim()}`);
    const root = path.join(dir, r.unit.chart.chart);
    for (const file of liveOnly.files) {
      const text = fs.readFileSync(path.join(root, file), "utf8");
      if (!text.startsWith(liveOnly.gate))
        throw new Error(
          `${r.unit.chart.chart} ${r.unit.chart.version} ${file}: does not begin with ${liveOnly.gate} (${liveOnly.why}); read the template again and update liveOnly of the chart's table`,
        );
      fs.writeFileSync(path.join(root, file), `{{- if true -}}${text.slice(liveOnly.gate.length)}`);
    }
    const seen = new Set(plain.map((w) => `${w.kind} ${w.name}`));
    // without the post-renderer: what this render adds are hooks, which Helm never post-renders
    const added = chartWorkloads(renderRelease({ ...r, chart: root, patches: [] }, helm), r.unit.name, r.unit.namespace).filter(
      (w) => !seen.has(`${w.kind} ${w.name}`),
    );
    if (added.length === 0)
      throw new Error(
        `${r.unit.chart.chart} ${r.unit.chart.version}: opening the gates of ${liveOnly.files.join(", ")} renders no workload more; read the templates again and update liveOnly of the chart's table`,
      );
    return added;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---- comparing -------------------------------------------------------------------------------

export interface ChartComparison {
  /** `<stack>: <chart> <version>` (release …): what messages start with. */
  where: string;
  unit: string;
  table: ChartWorkloads;
  workloads: readonly ChartWorkload[];
  model: Pick<PlacementData, "nodes" | "components">;
  /** What the model states of each component's pods, by its name (`<unit>/<id>`). */
  guarantees: ReadonlyMap<string, PodGuarantees>;
}

const describe = (w: ChartWorkload) => `${w.kind} ${w.name}${w.hook ? ` (hook ${w.hook})` : ""}`;

/** The nodes of the model a workload may run on, in node order (placement/report.ts's eligibility). */
function eligibleNodes(w: ChartWorkload, nodes: readonly PlacementNode[]): string[] {
  return nodes.filter((n) => ineligibility({ ...w.component.scheduling, daemonSet: w.kind === "DaemonSet" }, n).length === 0).map((n) => n.name);
}

/** What differs between a rendered workload and its model component (empty when they agree). */
function differences(w: ChartWorkload, m: PlacementComponent, nodes: readonly PlacementNode[], model: PodGuarantees): string[] {
  const out: string[] = [];
  if (w.component.kind !== m.kind) out.push(`kind ${w.component.kind}, the model's ${m.kind}`);
  const eligible = eligibleNodes(w, nodes);
  const lost = m.eligible.filter((n) => !eligible.includes(n));
  const gained = eligible.filter((n) => !m.eligible.includes(n));
  if (lost.length || gained.length) {
    const why = lost.map(
      (n) =>
        `${n}: ${ineligibility(
          { ...w.component.scheduling, daemonSet: w.kind === "DaemonSet" },
          nodes.find((x) => x.name === n)!,
        ).join(", ")}`,
    );
    out.push(
      `runs on ${eligible.join(", ") || "no node"}, the model on ${m.eligible.join(", ") || "no node"}` +
        (gained.length ? `; also on ${gained.join(", ")}` : "") +
        (lost.length ? `; not on ${why.join("; ")}` : ""),
    );
  }
  // the class placement.json records (the same reader's, unless the render is stale)
  const want: PodGuarantees = { ...model, priorityClass: m.priorityClass };
  out.push(...guaranteeDifferences(w.guarantees, want, w.apartMisses ? { apartMisses: w.apartMisses } : {}));
  if (w.component.replicas !== undefined && w.component.replicas !== m.replicas)
    out.push(`${w.component.replicas} replica(s), the model's ${m.replicas ?? "(unstated)"}`);
  return out;
}

/** Every way the chart's workloads and the model disagree, each naming the workload or the component. */
export function compareChart(c: ChartComparison): string[] {
  const problems: string[] = [];
  const model = new Map(c.model.components.filter((m) => m.unit === c.unit).map((m) => [m.name.slice(c.unit.length + 1), m]));
  const standsFor = new Set<string>();
  for (const w of c.workloads) {
    const id = c.table.rendered[`${w.kind} ${w.name}`];
    if (id === undefined) {
      problems.push(
        `${c.where}: renders ${describe(w)}, which no component of the model stands for; map it in the chart's table (charts of its module in platform/) and model it in the release's reader`,
      );
      continue;
    }
    standsFor.add(id);
    const m = model.get(id);
    if (!m) {
      problems.push(`${c.where}: ${describe(w)} maps to ${c.unit}/${id}, which the model does not have`);
      continue;
    }
    const stated = c.guarantees.get(m.name);
    if (!stated) throw new Error(`${c.where}: the model states no guarantees of ${m.name}, which placement.json has: render again`);
    for (const d of differences(w, m, c.model.nodes, stated)) problems.push(`${c.where}: ${describe(w)} (model ${m.name}): ${d}`);
  }
  for (const [id, m] of model) {
    const why = c.table.notRendered?.[id];
    if (why !== undefined && standsFor.has(id))
      problems.push(`${c.where}: ${m.name} is listed as not rendered (${why}), but the chart renders a workload it stands for`);
    if (why === undefined && !standsFor.has(id)) {
      problems.push(`${c.where}: the model's ${m.name} stands for no workload the chart renders; map the workload, or list it under notRendered with why`);
    }
  }
  return problems;
}

// ---- every stack -----------------------------------------------------------------------------

export interface ChartCase {
  stack: string;
  render: RenderedStack;
  unit: RenderedHelmRelease;
}

/** Every platform Helm release of every render under `renderedDir` (rendered/), in stack and unit order. */
export function chartCases(renderedDir = path.join(REPO_ROOT, "rendered")): ChartCase[] {
  const stacks = fs
    .readdirSync(renderedDir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return stacks.flatMap((stack) => {
    const render = readRenderedDir(path.join(renderedDir, stack));
    return render
      .units()
      .filter((u): u is RenderedHelmRelease => u.kind === "HelmRelease" && u.type.startsWith("openkeel:platform:"))
      .map((unit) => ({ stack, render, unit }));
  });
}

/** Every platform module's chart tables, by chart name (a chart two modules map is a bug). */
export function chartTables(): Map<string, ChartWorkloads> {
  const out = new Map<string, ChartWorkloads>();
  for (const component of new Set(Object.values(ENVIRONMENTS).flatMap((e) => e.platform))) {
    for (const [chart, table] of Object.entries(component.charts ?? {})) {
      if (out.has(chart) && out.get(chart) !== table) throw new Error(`chart ${chart}: two platform modules map its workloads`);
      out.set(chart, table);
    }
  }
  return out;
}

const planned = new Map<string, ReadonlyMap<string, PodGuarantees>>();

/** What the model states of every component's pods in a stack (its stack file planned, once), by component name. */
export function stackGuarantees(stack: string, stacksDir = path.join(REPO_ROOT, "stacks")): ReadonlyMap<string, PodGuarantees> {
  const key = path.join(stacksDir, stack);
  const done = planned.get(key);
  if (done) return done;
  const { placement } = planStack(readStack(stack, stacksDir, STACK_DECLARATIONS));
  if (!placement) throw new Error(`stack ${stack}: no placement (its plan fails): run npm run plan -- --stack ${stack}`);
  const out = new Map(placement.placements.map((p) => [p.component.name, modelGuarantees(p.component)]));
  planned.set(key, out);
  return out;
}

/** A case's values file and post-render patches, from its render. */
export function releaseInputs(c: ChartCase): { valuesFile: string; patches: PostRenderPatch[] } {
  const patches = c.unit.postRender ? (c.render.documents(c.unit.postRender)[0] as PostRenderPatch[]) : [];
  return { valuesFile: path.join(c.render.where, c.unit.values), patches };
}

/**
 * One case rendered and compared: the problems (empty when the chart and the model agree) and the
 * workloads read. `chart`: an archive to render instead of the pin's (a test's modified chart).
 */
export function checkChartCase(
  c: ChartCase,
  tables: ReadonlyMap<string, ChartWorkloads>,
  o: { mirrorDir: string | undefined; helm?: string; inputs?: { valuesFile: string; patches: PostRenderPatch[] }; chart?: string },
): { problems: string[]; workloads: ChartWorkload[] } {
  const where = `${c.stack}: ${c.unit.chart.chart} ${c.unit.chart.version} (release ${c.unit.release})`;
  const table = tables.get(c.unit.chart.chart);
  if (!table) return { problems: [`${where}: no table of its workloads; add it to charts of the chart's module in platform/`], workloads: [] };
  const r: ReleaseRender = { unit: c.unit, ...(o.inputs ?? releaseInputs(c)), chart: o.chart ?? chartArchive(c.unit.chart, o.mirrorDir) };
  const plain = chartWorkloads(renderRelease(r, o.helm), c.unit.name, c.unit.namespace);
  const workloads = table.liveOnly ? [...plain, ...liveOnlyWorkloads(r, table.liveOnly, plain, o.helm)] : plain;
  const model = c.render.placement;
  if (!model) return { problems: [`${where}: ${c.render.where} has no placement.json; run npm run render`], workloads };
  return { problems: compareChart({ where, unit: c.unit.name, table, workloads, model, guarantees: stackGuarantees(c.stack) }), workloads };
}
