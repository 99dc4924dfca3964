// rendered/<stack>/ as one typed, versioned model: what `npm run render` writes there, and the one
// way to read it back. Every reader of a render goes through here — the render's own guards
// (the previous index), the preview (both sides), drift, the e2e harness — so the shape of each
// file is declared once: index.yaml (RenderedIndex), placement.json (the placement data that
// placement.md and placement.svg are drawn from, placement/data.ts), the node configuration
// (talos/machines.yaml and the files index.yaml lists), objects/ and values/ as YAML documents.
//
// index.yaml carries `schemaVersion`. A render without one was written before this model (the
// preview renders its base commit with the base's own code): its index reads the same, but it has
// no placement.json, so `placement` is undefined and the preview shows no placement delta for it.
// A render of a newer schema than this code knows is refused with a message naming both.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { z } from "zod";
import { NODE_STATES, type LifecycleFacts, type NodeState } from "../config/lifecycle";
import { formatPath, problemPath } from "../config/problems";
import { LABEL_PROFILES, ROLES, type LabelProfile, type Role } from "../config/roles";
import { placementData, type PlacementData } from "../placement/data";
import { HOST_CAPABILITY_KINDS } from "../plan/host";
import { LOSS_KINDS, type FailureDomainTable } from "../placement/failure-table";
import { placementMarkdown, placementSvg } from "../placement/picture";
import type { PlacementReport } from "../placement/report";
import { PHASES, type ChartPin, type Plan, type Unit } from "../plan/plan";
import type { DeployGraph } from "../plan/needs";
import { GENERATED_HEADER, nodeConfigContent, objectFileName, toYaml } from "./render";
import { makeReader } from "./yaml";

/**
 * The version of this model index.yaml records; a reader reads it and every earlier one. 3:
 * placement.json groups a component's unreachable nodes by their reasons (reasonGroups). 4: it
 * holds the host contract: what each node's host has (`hosts`), what each component needs of it. 5:
 * a component's priority class (`priorityClass`), where its reader says. 6: the failure-domain
 * table (`failureDomains`: what losing a node, a zone or the drained nodes costs).
 */
export const RENDERED_SCHEMA_VERSION = 6;

export const INDEX_FILE = "index.yaml";
export const PLACEMENT_DATA_FILE = "placement.json";
export const PLACEMENT_MD_FILE = "placement.md";
export const PLACEMENT_SVG_FILE = "placement.svg";
/** Per Talos node: its machine type, patches, schematic and installer image (nodes/talos.ts writes it). */
export const TALOS_MACHINES_FILE = "talos/machines.yaml";

/** A file of rendered/<stack>/. */
export interface RenderedFile {
  /** Relative to rendered/<stack>/, always with forward slashes. */
  path: string;
  content: string;
}

// ---- the types ------------------------------------------------------------------------------

interface RenderedUnitBase {
  name: string;
  /** Its ComponentResource's type token, `openkeel:<area>:<Name>`. */
  type: string;
  /** Owns data: protected and retained on delete. */
  protect?: boolean | undefined;
  /** The units it waits for: derived from what its objects use, and its hand-written edges (plan/needs.ts). */
  dependsOn?: string[] | undefined;
  /** Its hand-written edges, each with why no object shows the need: for the reviewer. */
  waitsFor?: { unit: string; why: string }[] | undefined;
}

/** The fields of the other kinds are absent: readers may ask any unit for them. */
interface NoFieldsOf {
  release?: never;
  namespace?: never;
  chart?: never;
  values?: never;
  objects?: never;
  urls?: never;
  version?: never;
}

export interface RenderedHelmRelease extends RenderedUnitBase, Omit<NoFieldsOf, "release" | "namespace" | "chart" | "values"> {
  kind: "HelmRelease";
  release: string;
  namespace: string;
  chart: ChartPin;
  /** Its values file, `values/<unit>.yaml`. */
  values: string;
  /** Its post-render patches, `postrender/<unit>.yaml` (plan/post-render.ts), when it has any. */
  postRender?: string | undefined;
}

export interface RenderedManifests extends RenderedUnitBase, Omit<NoFieldsOf, "objects"> {
  kind: "Manifests";
  /** Its object files, `objects/<phase>/<unit>/<kind>-[<namespace>-]<name>.yaml`, sorted. */
  objects: string[];
}

export interface RenderedRemoteManifest extends RenderedUnitBase, Omit<NoFieldsOf, "urls" | "version"> {
  kind: "RemoteManifest";
  urls: string[];
  version: string;
  /** Its objects applied with force on field conflicts (RemoteManifestUnit.forceConflicts). */
  forceConflicts?: string[] | undefined;
  /** Fields of its objects left to a patch unit (RemoteManifestUnit.patchedFields). */
  patchedFields?: { object: string; fields: string[] }[] | undefined;
}

export type RenderedUnit = RenderedHelmRelease | RenderedManifests | RenderedRemoteManifest;

/** A node of the inventory, as the removal guard and the preview read it. */
export interface RenderedNode {
  name: string;
  roles: Role[];
  zone?: string | undefined;
  kubernetesControlPlane?: boolean | undefined;
  /** Absent in renders made before node states existed: active. */
  state?: NodeState | undefined;
}

/** A plan-check warning of the render. */
/** A plan-check warning of the stack. `path` and `reason` are absent in renders made before them (issue 38). */
export interface RenderedWarning {
  code: string;
  /** The key path of the stack file it is about (`openkeel:nodes[3].state`): with the code, what it means (the preview pairs a base's and a head's by them). */
  path?: string | undefined;
  message: string;
  /** Why it matters, the same for every stack that has it. */
  reason?: string | undefined;
  remediation?: string | undefined;
}

export interface RenderedIndex {
  /** Absent in renders made before this model (read as version 0: no placement.json). */
  schemaVersion?: number | undefined;
  /**
   * How its program deploys the units: each after its dependsOn only (issue 46). Absent in renders of
   * programs before it, which made every unit also wait for the whole phase before its own.
   */
  deployGraph?: DeployGraph | undefined;
  stack: string;
  environment: string;
  topology: string;
  labelProfile: LabelProfile;
  taintedRoles: Role[];
  /** The cluster binding (`openkeel:cluster`); absent in renders made before it existed. */
  cluster?: { context?: string | undefined; apiServer?: string | undefined; kubeSystemUID?: string | undefined } | undefined;
  nodes: RenderedNode[];
  warnings: RenderedWarning[];
  /** The node-configuration files (Talos, kind), when the environment renders any. */
  nodeConfig?: string[] | undefined;
  /**
   * What the feasibility model's constraints read of the Plan (lifecycle/feasibility.ts), by
   * constraint: what the removal guard judges a removal with. Absent before schema 2.
   */
  feasibility?: Record<string, LifecycleFacts> | undefined;
  /** The protected units whose removal the stack allows (`openkeel:allowRemoval`); absent: none. */
  allowRemoval?: string[] | undefined;
  phases: { name: string; units: RenderedUnit[] }[];
}

export type RenderedPlacement = PlacementData;

/** A node of talos/machines.yaml (nodes/talos.ts writes it). */
export interface TalosMachine {
  machineType: "controlplane" | "worker";
  roles: Role[];
  group: string;
  /** Patch files in the order to apply them, relative to rendered/<stack>/talos/. */
  patches: string[];
  schematic: string;
  schematicId: string;
  installerImage: string;
  /** The machine it is: its facts, stacks/facts/<stack>/<machine>.yaml. */
  machine?: string | undefined;
  /** The interfaces Open vSwitch takes on it (the chassis' external NIC), and their NICs: none of its Talos documents names them. */
  ovs?: { name: string; nics: string[] }[] | undefined;
}

/** talos/machines.yaml: the versions every node's configuration is for, and its nodes. */
export interface TalosMachinesFile {
  talosVersion: string;
  /** KUBERNETES_VERSION, the images of the patches (absent in renders made before it was pinned). */
  kubernetesVersion?: string | undefined;
  imageFactory: string;
  machines: Record<string, TalosMachine>;
}

// ---- writing --------------------------------------------------------------------------------

/** The file of a release's post-render patches: reviewable beside its values. */
export function postRenderFile(unit: string): string {
  return `postrender/${unit}.yaml`;
}

function phaseDir(name: (typeof PHASES)[number]): string {
  return `${String(PHASES.indexOf(name) + 1).padStart(2, "0")}-${name}`;
}

function unitIndex(unit: Unit, dir: string): RenderedUnit {
  const base = {
    name: unit.name,
    type: unit.type,
    ...(unit.protect ? { protect: true } : {}),
    ...(unit.dependsOn?.length ? { dependsOn: [...unit.dependsOn].sort() } : {}),
    ...(unit.waitsFor?.length ? { waitsFor: unit.waitsFor.map((w) => ({ unit: w.unit, why: w.why })) } : {}),
  };
  switch (unit.kind) {
    case "HelmRelease":
      return {
        kind: unit.kind,
        ...base,
        release: unit.release,
        namespace: unit.namespace,
        chart: unit.chart,
        values: `values/${unit.name}.yaml`,
        ...(unit.postRender ? { postRender: postRenderFile(unit.name) } : {}),
      };
    case "Manifests":
      return { kind: unit.kind, ...base, objects: unit.objects.map((o) => `${dir}/${unit.name}/${objectFileName(o)}`).sort() };
    case "RemoteManifest":
      return {
        kind: unit.kind,
        ...base,
        urls: unit.urls,
        version: unit.version,
        ...(unit.forceConflicts ? { forceConflicts: unit.forceConflicts } : {}),
        ...(unit.patchedFields ? { patchedFields: unit.patchedFields } : {}),
      };
  }
}

/** What index.yaml records of a Plan. */
export function renderedIndex(plan: Plan): RenderedIndex {
  return {
    schemaVersion: RENDERED_SCHEMA_VERSION,
    deployGraph: "dependencies",
    stack: plan.stack,
    environment: plan.environment,
    topology: plan.topology,
    labelProfile: plan.labelProfile,
    taintedRoles: plan.taintedRoles,
    cluster: plan.cluster,
    nodes: plan.nodes,
    warnings: plan.warnings.map((w) => ({
      code: w.code,
      ...(problemPath(w) ? { path: problemPath(w) } : {}),
      message: w.message,
      ...(w.reason ? { reason: w.reason } : {}),
      remediation: w.fix,
    })),
    ...(plan.nodeConfig ? { nodeConfig: plan.nodeConfig.files.map((f) => f.path).sort() } : {}),
    ...(plan.feasibility ? { feasibility: plan.feasibility } : {}),
    ...(plan.allowRemoval?.length ? { allowRemoval: plan.allowRemoval } : {}),
    phases: plan.phases.map((ph) => ({ name: ph.name, units: ph.units.map((u) => unitIndex(u, `objects/${phaseDir(ph.name)}`)) })),
  };
}

/** Nodes that share their reasons, in node order: what placement.json writes for `reasons`. */
interface ReasonGroup {
  why: string[];
  nodes: string[];
}

/**
 * A component's reasons grouped by what they say: most nodes a component cannot run on share one
 * reason (a missing role label), and writing it per node made placement.json grow with components
 * × nodes (23 MB for 2000 nodes, most of a large preview's reading: npm run bench).
 */
function reasonGroups(reasons: Record<string, string[]>): ReasonGroup[] {
  const groups = new Map<string, ReasonGroup>();
  for (const [node, why] of Object.entries(reasons)) {
    const key = JSON.stringify(why);
    const g = groups.get(key);
    if (g) g.nodes.push(node);
    else groups.set(key, { why, nodes: [node] });
  }
  return [...groups.values()];
}

/** Reasons per node again, in the order of the placement's nodes (as placementData keys them). */
function reasonsOf(groups: ReasonGroup[], nodeOrder: Map<string, number>): Record<string, string[]> {
  const pairs = groups.flatMap((g) => g.nodes.map((n): [string, string[]] => [n, g.why]));
  pairs.sort(([a], [b]) => (nodeOrder.get(a) ?? Infinity) - (nodeOrder.get(b) ?? Infinity));
  return Object.fromEntries(pairs);
}

/** The failure-domain table in placement.json: one line per row. */
function failureJson(t: FailureDomainTable): string {
  const { rows, ...head } = t;
  const fields = [
    ...Object.entries(head).map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`),
    `    "rows": ${rows.length === 0 ? "[]" : `[\n${rows.map((r) => `      ${JSON.stringify(r)}`).join(",\n")}\n    ]`}`,
  ];
  return `{\n${fields.join(",\n")}\n  }`;
}

/**
 * placement.json: one line per node and per component, so that a change shows as the lines of
 * what changed in a diff of rendered/.
 */
export function placementJson(d: RenderedPlacement): string {
  const { nodes, components, hosts, failureDomains, ...head } = d;
  const list = (items: unknown[]) => (items.length === 0 ? "[]" : `[\n${items.map((x) => `    ${JSON.stringify(x)}`).join(",\n")}\n  ]`);
  const fields = [
    ...Object.entries(head).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`),
    `  "nodes": ${list(nodes)}`,
    `  "components": ${list(components.map((c) => ({ ...c, reasons: reasonGroups(c.reasons) })))}`,
    ...(hosts ? [`  "hosts": ${list(hosts)}`] : []),
    ...(failureDomains ? [`  "failureDomains": ${failureJson(failureDomains)}`] : []),
  ];
  return `{\n${fields.join(",\n")}\n}\n`;
}

/** Node-level config lives beside the Kubernetes objects, never among them (kubeconform reads objects/). */
const NODE_CONFIG_PATH = /^(?!objects\/|values\/|postrender\/)[a-z0-9][a-z0-9-]*(\/[A-Za-z0-9][A-Za-z0-9.+_-]*)+\.yaml$/;

/**
 * The files of rendered/<stack>/ for a Plan, sorted by path: objects/ and values/, the node
 * configuration, index.yaml, and, when the placement report is given, placement.json with the
 * placement.md and placement.svg drawn from it.
 */
export function renderPlan(plan: Plan, placement?: PlacementReport): RenderedFile[] {
  const files: RenderedFile[] = [];
  const seen = new Set<string>();
  const push = (path: string, content: string) => {
    if (seen.has(path)) throw new Error(`render of ${plan.stack}: two files at ${path}`);
    seen.add(path);
    files.push({ path, content });
  };
  const add = (path: string, body: unknown) => push(path, GENERATED_HEADER + toYaml(body));
  for (const ph of plan.phases) {
    const dir = `objects/${phaseDir(ph.name)}`;
    for (const unit of ph.units) {
      if (unit.kind === "Manifests") for (const o of unit.objects) add(`${dir}/${unit.name}/${objectFileName(o)}`, o);
      else if (unit.kind === "HelmRelease") {
        add(`values/${unit.name}.yaml`, unit.values);
        if (unit.postRender) add(postRenderFile(unit.name), unit.postRender);
      }
    }
  }
  for (const f of plan.nodeConfig?.files ?? []) {
    if (!NODE_CONFIG_PATH.test(f.path) || f.path.split("/").includes("..")) {
      throw new Error(`render of ${plan.stack}: node config path ${f.path} is not <dir>/…/<name>.yaml outside objects/ and values/`);
    }
    push(f.path, nodeConfigContent(f));
  }
  add(INDEX_FILE, renderedIndex(plan));
  if (placement) {
    const data = placementData(placement);
    push(PLACEMENT_DATA_FILE, placementJson(data));
    push(PLACEMENT_MD_FILE, placementMarkdown(data));
    push(PLACEMENT_SVG_FILE, placementSvg(data));
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

// ---- reading --------------------------------------------------------------------------------

const FIX_RENDER_AGAIN = "render it again with this checkout's code (npm run render)";

/** A file of a render that this code cannot read: where and what (`problem`), and how to get a readable one. */
export class RenderedFormatError extends Error {
  constructor(
    readonly problem: string,
    readonly fix: string = FIX_RENDER_AGAIN,
  ) {
    super(`${problem}. Fix: ${fix}`);
    this.name = "RenderedFormatError";
  }
}

const unitBase = {
  name: z.string(),
  type: z.string(),
  protect: z.boolean().optional(),
  dependsOn: z.array(z.string()).optional(),
  waitsFor: z.array(z.object({ unit: z.string(), why: z.string() })).optional(),
};
const unitSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("HelmRelease"),
    ...unitBase,
    release: z.string(),
    namespace: z.string(),
    chart: z.object({ chart: z.string(), repository: z.string(), version: z.string() }),
    values: z.string(),
    postRender: z.string().optional(),
  }),
  z.object({ kind: z.literal("Manifests"), ...unitBase, objects: z.array(z.string()) }),
  z.object({
    kind: z.literal("RemoteManifest"),
    ...unitBase,
    urls: z.array(z.string()),
    version: z.string(),
    forceConflicts: z.array(z.string()).optional(),
    patchedFields: z.array(z.object({ object: z.string(), fields: z.array(z.string()) })).optional(),
  }),
]);

const roleSchema = z.enum(ROLES);
const indexSchema: z.ZodType<RenderedIndex> = z.object({
  schemaVersion: z.number().int().nonnegative().optional(),
  deployGraph: z.enum(["dependencies", "phase-barriers"]).optional(),
  stack: z.string(),
  environment: z.string(),
  topology: z.string(),
  labelProfile: z.enum(LABEL_PROFILES),
  taintedRoles: z.array(roleSchema),
  cluster: z.object({ context: z.string().optional(), apiServer: z.string().optional(), kubeSystemUID: z.string().optional() }).optional(),
  nodes: z.array(
    z.object({
      name: z.string(),
      roles: z.array(roleSchema),
      zone: z.string().optional(),
      kubernetesControlPlane: z.boolean().optional(),
      state: z.enum(NODE_STATES).optional(),
    }),
  ),
  warnings: z.array(
    z.object({ code: z.string(), path: z.string().optional(), message: z.string(), reason: z.string().optional(), remediation: z.string().optional() }),
  ),
  nodeConfig: z.array(z.string()).optional(),
  feasibility: z.record(z.string(), z.record(z.string(), z.union([z.number(), z.string(), z.array(z.string())]))).optional(),
  allowRemoval: z.array(z.string()).optional(),
  phases: z.array(z.object({ name: z.string(), units: z.array(unitSchema) })),
});

const taintSchema = z.object({ key: z.string(), value: z.string().optional(), effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]) });
const placementSchema = z.object({
  stack: z.string(),
  topology: z.string(),
  profile: z.string(),
  taintedRoles: z.array(roleSchema),
  nodes: z.array(
    z.object({
      name: z.string(),
      roles: z.array(roleSchema),
      zone: z.string().optional(),
      kubernetesControlPlane: z.boolean(),
      state: z.enum(NODE_STATES),
      labels: z.record(z.string(), z.string()),
      taints: z.array(taintSchema),
    }),
  ),
  components: z.array(
    z.object({
      name: z.string(),
      source: z.enum(["platform", "openkeel"]),
      unit: z.string(),
      kind: z.string(),
      replicas: z.number().optional(),
      // schema 5
      priorityClass: z.string().optional(),
      designRoles: z.union([z.array(roleSchema), z.literal("all"), z.literal("allNodes"), z.literal("kubernetesControlPlane")]),
      eligible: z.array(z.string()),
      // grouped (schema 3), or per node (before)
      reasons: z.union([z.array(z.object({ why: z.array(z.string()), nodes: z.array(z.string()) })), z.record(z.string(), z.array(z.string()))]),
      reaches: z.array(roleSchema),
      heldOff: z.record(z.string(), z.array(z.string())).optional(),
      hostNeeds: z.array(z.string()).optional(),
    }),
  ),
  // schema 4
  hosts: z.array(z.object({ nodes: z.array(z.string()), has: z.partialRecord(z.enum(HOST_CAPABILITY_KINDS), z.array(z.string())) })).optional(),
  podNeeds: z.array(z.string()).optional(),
  // schema 6
  failureDomains: z
    .object({
      zones: z.array(z.string()),
      drained: z.array(z.string()),
      required: z.array(z.enum(LOSS_KINDS)),
      rows: z.array(
        z.object({
          kind: z.enum(LOSS_KINDS),
          zone: z.string().optional(),
          nodes: z.array(z.string()),
          findings: z.array(z.object({ what: z.string(), level: z.enum(["fatal", "degraded", "holds"]), message: z.string(), fix: z.string().optional() })),
        }),
      ),
    })
    .optional(),
});

const machinesSchema = z.object({
  kubernetesVersion: z.string().optional(),
  machines: z.record(
    z.string(),
    z.object({
      machineType: z.enum(["controlplane", "worker"]),
      roles: z.array(roleSchema),
      group: z.string(),
      patches: z.array(z.string()),
      schematic: z.string(),
      schematicId: z.string(),
      installerImage: z.string(),
      machine: z.string().optional(),
      ovs: z.array(z.object({ name: z.string(), nics: z.array(z.string()) })).optional(),
    }),
  ),
});

/** Reads what the render writes without the yaml library, else declines (render/yaml.ts). */
const fastRead = makeReader();

/**
 * The YAML documents of a rendered file, in order. The reader's documents one by one when it reads
 * every one of them (a Talos node's patch holds two: a large inventory has thousands), else the
 * library's for the whole file.
 */
export function yamlDocuments(text: string): unknown[] {
  const parts = text.split(/^---\n/m);
  // only comments before the first `---`: the library reads no document there, leave it to it
  if (parts.length > 1 && parts[0].split("\n").every((l) => l.trim() === "" || l.trimStart().startsWith("#"))) return library(text);
  const docs = parts.map((p) => fastRead(p));
  return docs.every((d) => d !== undefined) ? docs : library(text);
}

const library = (text: string) => parseAllDocuments(text).map((d) => d.toJS() as unknown);

function checked<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const at = formatPath(issue.path.map((p) => (typeof p === "symbol" ? String(p) : p)));
  throw new RenderedFormatError(`${where}: ${at ? `${at}: ` : ""}${issue.message}: not what this repository's render writes`);
}

function yamlOf(text: string, where: string): unknown {
  try {
    return fastRead(text) ?? parse(text);
  } catch (e) {
    throw new RenderedFormatError(`${where}: is not YAML (${(e as Error).message.split("\n")[0]})`);
  }
}

/** index.yaml's text, read; `where` names it in messages (a path, `git HEAD:<path>`). */
export function readIndex(text: string, where: string): RenderedIndex {
  const index = checked(indexSchema, yamlOf(text, where), where);
  const version = index.schemaVersion ?? 0;
  if (version > RENDERED_SCHEMA_VERSION) {
    throw new RenderedFormatError(
      `${where}: schemaVersion ${version} is newer than this code reads (${RENDERED_SCHEMA_VERSION})`,
      "read it with the code that wrote it, or bring this checkout up to date (git rebase onto it)",
    );
  }
  return index;
}

/** placement.json's text, read. */
export function readPlacement(text: string, where: string): RenderedPlacement {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new RenderedFormatError(`${where}: is not JSON (${(e as Error).message})`);
  }
  const data = checked(placementSchema, value, where);
  const order = new Map(data.nodes.map((n, i) => [n.name, i]));
  return { ...data, components: data.components.map((c) => ({ ...c, reasons: Array.isArray(c.reasons) ? reasonsOf(c.reasons, order) : c.reasons })) };
}

/** The files of one stack's render: a folder's (read when asked for) or an in-memory tree's. */
export interface RenderedFiles {
  get(path: string): string | undefined;
  keys(): Iterable<string>;
}

/**
 * One stack's render, read. Each file is read and parsed once, when first asked for, whatever
 * asks (the preview asks for the same objects and node configuration in several places). Renders
 * compared with each other may share `parsed` (text → documents): a file with the same text on
 * both sides, most of them in a large inventory, is then parsed once, and its documents are the
 * same objects on both sides. Readers never change them.
 */
export class RenderedStack {
  private cachedIndex?: RenderedIndex;
  private cachedPlacement?: { data?: RenderedPlacement };
  private readonly docs = new Map<string, unknown[]>();
  private cachedMachines?: Pick<TalosMachinesFile, "kubernetesVersion" | "machines">;

  /** `where`: the folder, or what the render is (`the base`), for messages. */
  constructor(
    readonly files: RenderedFiles,
    readonly where: string,
    private readonly parsed?: Map<string, unknown[]>,
  ) {}

  /** index.yaml; a render without one (a stack that is not there) reads as empty. */
  get index(): RenderedIndex {
    if (!this.cachedIndex) {
      const text = this.files.get(INDEX_FILE);
      this.cachedIndex = text === undefined ? emptyIndex() : readIndex(text, `${this.where}/${INDEX_FILE}`);
    }
    return this.cachedIndex;
  }

  /** The model version the render was written with: 0 before index.yaml recorded one. */
  get schemaVersion(): number {
    return this.index.schemaVersion ?? 0;
  }

  /** placement.json; undefined when the render has none (no placement report, or written before it existed). */
  get placement(): RenderedPlacement | undefined {
    if (!this.cachedPlacement) {
      const text = this.files.get(PLACEMENT_DATA_FILE);
      this.cachedPlacement = text === undefined ? {} : { data: readPlacement(text, `${this.where}/${PLACEMENT_DATA_FILE}`) };
    }
    return this.cachedPlacement.data;
  }

  units(): RenderedUnit[] {
    return this.index.phases.flatMap((p) => p.units);
  }

  /** The YAML documents of a file (none when it is absent). */
  documents(path: string): unknown[] {
    let docs = this.docs.get(path);
    if (!docs) {
      const text = this.files.get(path);
      try {
        docs = text === undefined ? [] : (this.parsed?.get(text) ?? yamlDocuments(text));
        if (text !== undefined) this.parsed?.set(text, docs);
      } catch (e) {
        throw new RenderedFormatError(`${this.where}/${path}: is not YAML (${(e as Error).message.split("\n")[0]})`);
      }
      this.docs.set(path, docs);
    }
    return docs;
  }

  /** talos/machines.yaml's nodes (none in a stack without Talos). */
  talosMachines(): Record<string, TalosMachine> {
    return this.machinesFile().machines;
  }

  /** talos/machines.yaml's Kubernetes version (none in a stack without Talos, or rendered before it was pinned). */
  talosKubernetesVersion(): string | undefined {
    return this.machinesFile().kubernetesVersion;
  }

  private machinesFile(): Pick<TalosMachinesFile, "kubernetesVersion" | "machines"> {
    if (!this.cachedMachines) {
      const absent = this.files.get(TALOS_MACHINES_FILE) === undefined;
      this.cachedMachines = absent ? { machines: {} } : checked(machinesSchema, this.documents(TALOS_MACHINES_FILE)[0], `${this.where}/${TALOS_MACHINES_FILE}`);
    }
    return this.cachedMachines;
  }
}

function emptyIndex(): RenderedIndex {
  return { stack: "", environment: "", topology: "", labelProfile: "default", taintedRoles: [], nodes: [], warnings: [], phases: [] };
}

/** A `rendered/`-shaped tree (`<stack>/<path>`), as one render per stack. */
export function renderedStacks(tree: ReadonlyMap<string, string>, where: string, parsed?: Map<string, unknown[]>): Map<string, RenderedStack> {
  const files = new Map<string, Map<string, string>>();
  for (const [file, content] of tree) {
    const slash = file.indexOf("/");
    if (slash < 0 || file.startsWith(".")) continue;
    const stack = file.slice(0, slash);
    if (!files.has(stack)) files.set(stack, new Map());
    files.get(stack)!.set(file.slice(slash + 1), content);
  }
  return new Map([...files].map(([stack, f]) => [stack, new RenderedStack(f, `${where}/${stack}`, parsed)]));
}

/** A render on disk, `<dir>` = rendered/<stack>/: each file read when first asked for. */
export function readRenderedDir(dir: string): RenderedStack {
  const files: RenderedFiles = {
    get: (file) => {
      const p = path.join(dir, ...file.split("/"));
      return fs.existsSync(p) && fs.statSync(p).isFile() ? fs.readFileSync(p, "utf8") : undefined;
    },
    keys: () =>
      (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
        .filter((e) => e.isFile())
        .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join("/"))
        .sort(),
  };
  return new RenderedStack(files, dir);
}
