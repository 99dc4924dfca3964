// What a change does to every stack, for a reviewer: two renders (base and head, as file trees)
// compared stack by stack. Per object and release the action `pulumi up` takes — create, update,
// replace (with the field that forces it, review/replace-rules.ts) or delete — and the ones it
// would refuse (a protected unit replaced or deleted, a field the API server will not change) as
// errors; per node the steps outside Kubernetes, in order (review/node-steps.ts); the
// placement delta (review/placement-delta.ts); a service that goes away or a quorum whose
// member count changes as warnings with their reason; Helm values, units and chart pins field by
// field; new and resolved plan-check warnings; other rendered files, leaving out those whose only
// change is a comment; and policy results when given. Pure: trees in, a model out, in a stable order
// with no timestamps, so the PR comment only changes when the render does (Markdown:
// review/preview-markdown.ts).
import { parse, parseAllDocuments } from "yaml";
import type { Role } from "../config/roles";
import type { ServiceName } from "../config/schema";
import { SERVICE_CATALOG } from "../openkeel/catalog";
import { INFRASTRUCTURE_UNIT, QUORUM_MEMBERS } from "../openkeel/infrastructure";
import { releaseName } from "../openkeel/services";
import { APPLY_AS_PATCH_ANNOTATION } from "../plan/plan";
import { SERVICE_REQUIRED_ROLE } from "../topology/services";
import { nodeSteps, type NodeSteps } from "./node-steps";
import { indexNodes, nodeRemovalChecks } from "./node-guard";
import { isEmptyDelta, placementDelta, type PlacementDelta } from "./placement-delta";
import { inPlace } from "./replace-rules";
import { diff, formatPath, type Change } from "./ydiff";

export type Tree = Map<string, string>;

interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  /** The file under rendered/<stack>/ (the head's, or the base's for a removed object). */
  file: string;
  /** The unit the object belongs to (index.yaml), and whether that unit owns data (protect). */
  unit?: string;
  protected: boolean;
  /** Applied as a patch (Node role labels, objects an operator owns): never created, replaced or deleted as a whole. */
  patch: boolean;
}

/** An added object, with its body: a reviewer reads a new object whole. */
interface AddedObject extends ObjectRef {
  body: unknown;
}

interface ObjectChange {
  ref: ObjectRef;
  changes: Change[];
  action: "update" | "replace";
  /** Changed fields that make `pulumi up` replace the object. */
  replaces: string[];
  /** Changed fields the API server refuses to update (and the provider does not replace). */
  refused: string[];
}

interface ValuesChange {
  /** The unit's name (values/<unit>.yaml). */
  unit: string;
  release?: string;
  namespace?: string;
  op: "add" | "remove" | "change";
  changes: Change[];
}

interface UnitChange {
  name: string;
  op: "add" | "remove" | "change";
  changes: Change[];
}

/** What `pulumi up` does with one resource of the stack. */
interface Action {
  action: "create" | "update" | "replace" | "delete";
  /** `StorageClass longhorn-vm`, `HelmRelease openkeel-swift`, `Node cmp-04 (patch)`. */
  resource: string;
  unit?: string;
  protected: boolean;
  /** Why: the fields forcing a replacement, the values that change. */
  detail?: string;
}

/** Something a reviewer must act on (error: `pulumi up` would refuse or fail) or weigh (warning). */
export interface Finding {
  level: "error" | "warning";
  code: string;
  message: string;
  /** Why it matters. */
  reason?: string;
  fix?: string;
}

interface Warning {
  code: string;
  message: string;
  remediation?: string;
}

interface FileChange {
  file: string;
  op: "add" | "remove" | "change";
  /** Field-level, for YAML files. */
  changes?: Change[];
  /** Line-level, for other text files (lines prefixed "-" or "+"). */
  lines?: string[];
  /** What the change is shown as elsewhere in the preview, instead of its body here. */
  seeAlso?: string;
}

interface PolicyViolation {
  policy: string;
  /** `mandatory` or `advisory` when the report says. */
  level?: string;
  resource?: string;
  message: string;
}

/**
 * `--policy <file>.json`: what `npm run policy -- --json` found, per stack (`passed`: no mandatory
 * violation); or `{"error": "…"}` when the policy run itself failed, so the report says so.
 */
export interface PolicyReport {
  stacks?: Record<string, { violations: PolicyViolation[]; passed?: boolean }>;
  error?: string;
}

interface StackPolicy {
  violations: PolicyViolation[];
  passed: boolean;
  /** The policy run failed: no result. */
  error?: string;
}

export interface StackPreview {
  stack: string;
  status: "added" | "removed" | "changed" | "unchanged";
  /** `<environment>/<topology>` of the head (or the base, for a removed stack). */
  title: string;
  settings: Change[];
  actions: Action[];
  findings: Finding[];
  objects: { added: AddedObject[]; removed: ObjectRef[]; changed: ObjectChange[] };
  values: ValuesChange[];
  units: UnitChange[];
  nodes: NodeSteps[];
  /** Undefined: placement.md did not change (or one side has none). */
  placement?: PlacementDelta;
  warnings: { added: Warning[]; resolved: Warning[] };
  other: FileChange[];
  /** Undefined: no policy results were given for this stack. */
  policy?: StackPolicy;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** `rendered/`-shaped tree (`<stack>/<path>`) → one tree per stack. */
function byStack(tree: Tree): Map<string, Tree> {
  const out = new Map<string, Tree>();
  for (const [file, content] of tree) {
    const slash = file.indexOf("/");
    if (slash < 0) continue;
    const stack = file.slice(0, slash);
    if (stack.startsWith(".")) continue;
    if (!out.has(stack)) out.set(stack, new Map());
    out.get(stack)!.set(file.slice(slash + 1), content);
  }
  return out;
}

function apiGroup(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

interface IndexUnit {
  phase: string;
  kind?: string;
  type?: string;
  release?: string;
  namespace?: string;
  protect: boolean;
  objects: string[];
  /** What the unit section of the preview compares: everything but the object list and values file. */
  fields: Record<string, unknown>;
}

interface Index {
  title: string;
  settings: Record<string, unknown>;
  units: Map<string, IndexUnit>;
  /** object file → its unit */
  unitOf: Map<string, string>;
  nodes: { name: string; roles: string[] }[];
  warnings: Warning[];
}

/**
 * index.yaml: the parts the preview reports (nodes show as Node objects, objects as objects; the
 * list of node-configuration files as those files).
 */
function indexOf(tree: Tree): Index {
  const raw = tree.has("index.yaml") ? ((parse(tree.get("index.yaml")!) ?? {}) as Record<string, any>) : {};
  const { stack: _s, nodes, phases, warnings, nodeConfig: _c, ...settings } = raw;
  const units = new Map<string, IndexUnit>();
  const unitOf = new Map<string, string>();
  for (const ph of (phases ?? []) as { name: string; units?: Record<string, any>[] }[]) {
    for (const u of ph.units ?? []) {
      const { objects, values: _v, ...rest } = u;
      const name = String(u.name);
      const files = Array.isArray(objects) ? objects.map(String) : [];
      for (const f of files) unitOf.set(f, name);
      units.set(name, {
        phase: ph.name,
        kind: u.kind,
        type: u.type,
        release: u.release,
        namespace: u.namespace,
        protect: u.protect === true,
        objects: files,
        fields: { phase: ph.name, ...rest },
      });
    }
  }
  return {
    title: [raw.environment, raw.topology].filter(Boolean).join("/"),
    settings,
    units,
    unitOf,
    nodes: ((nodes ?? []) as { name: string; roles?: string[] }[]).map((n) => ({ name: String(n.name), roles: (n.roles ?? []).map(String) })),
    warnings: ((warnings ?? []) as Warning[]).map((w) => ({
      code: String(w.code),
      message: String(w.message),
      ...(w.remediation ? { remediation: String(w.remediation) } : {}),
    })),
  };
}

interface ParsedObject {
  ref: ObjectRef;
  body: unknown;
}

function objectsOf(tree: Tree, index: Index): Map<string, ParsedObject> {
  const out = new Map<string, ParsedObject>();
  for (const [file, content] of tree) {
    if (!file.startsWith("objects/")) continue;
    parseAllDocuments(content).forEach((doc, i) => {
      const body = doc.toJS() as Record<string, any> | null;
      if (body === null || body === undefined) return;
      const meta = (body.metadata ?? {}) as Record<string, any>;
      const apiVersion = String(body.apiVersion ?? "");
      const kind = String(body.kind ?? "");
      const unit = index.unitOf.get(file);
      const ref: ObjectRef = {
        apiVersion,
        kind,
        ...(meta.namespace ? { namespace: String(meta.namespace) } : {}),
        name: String(meta.name ?? `${file}#${i}`),
        file,
        ...(unit ? { unit } : {}),
        protected: unit !== undefined && index.units.get(unit)?.protect === true,
        patch: (apiVersion === "v1" && kind === "Node") || meta.annotations?.[APPLY_AS_PATCH_ANNOTATION] === "patch",
      };
      out.set(`${apiGroup(ref.apiVersion)}|${ref.kind}|${ref.namespace ?? ""}|${ref.name}`, { ref, body });
    });
  }
  return out;
}

function lineDiff(a: string, b: string): string[] {
  const x = a.split("\n");
  const y = b.split("\n");
  if (x.length * y.length > 4_000_000) return ["(too large for a line diff)"];
  const n = x.length;
  const m = y.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      i++;
      j++;
    } else if (i < n && (j >= m || lcs[i + 1][j] >= lcs[i][j + 1])) out.push(`-${x[i++]}`);
    else out.push(`+${y[j++]}`);
  }
  return out;
}

function isYaml(file: string): boolean {
  return /\.ya?ml$/.test(file);
}

/** A comment line of a text file of this kind (`#` for config files, `<!-- -->` for Markdown). */
function isComment(file: string, line: string): boolean {
  const l = line.trim();
  if (/\.md$/.test(file)) return /^<!--.*-->$/.test(l);
  if (/\.(conf|toml|ini|txt)$/.test(file)) return l.startsWith("#") || l.startsWith(";");
  return false;
}

/**
 * A changed file as the preview shows it, or undefined when nothing but comments changed: a YAML
 * file whose documents are equal, a text file whose differing lines are all comments.
 */
function fileChange(file: string, before: string | undefined, after: string | undefined): FileChange | undefined {
  if (before === after) return undefined;
  const op = before === undefined ? "add" : after === undefined ? "remove" : "change";
  if (op !== "change") return { file, op };
  if (isYaml(file)) {
    try {
      const pa = parseAllDocuments(before!).map((d) => d.toJS());
      const pb = parseAllDocuments(after!).map((d) => d.toJS());
      const changes = diff(pa.length === 1 ? pa[0] : pa, pb.length === 1 ? pb[0] : pb);
      return changes.length ? { file, op, changes } : undefined;
    } catch {
      // not YAML after all: fall through to lines
    }
  }
  if (/\.(md|txt|json|conf|toml|ini)$/.test(file)) {
    const lines = lineDiff(before!, after!);
    return lines.every((l) => isComment(file, l.slice(1))) ? undefined : { file, op, lines };
  }
  return { file, op };
}

function warningKey(w: Warning): string {
  return `${w.code}\u0000${w.message}`;
}

function objectName(r: ObjectRef): string {
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}${r.patch ? " (patch)" : ""}`;
}

const FIX_PROTECTED_REPLACE = 'leave the field as it is, or replace the object deliberately (docs/operating.md, "Replacing an object that owns data")';
const FIX_PROTECTED_DELETE = 'keep it in the stack, or let it go deliberately (docs/operating.md, "Removing a unit that owns data")';

/** Objects, releases and manifests: the action `pulumi up` takes on each, and what it would refuse. */
function actionsOf(
  objects: StackPreview["objects"],
  units: UnitChange[],
  values: ValuesChange[],
  bi: Index,
  hi: Index,
): { actions: Action[]; findings: Finding[] } {
  const actions: Action[] = [];
  const findings: Finding[] = [];
  // a unit gone as a whole is one finding, not one per object
  const goneUnits = new Set(units.filter((u) => u.op === "remove").map((u) => u.name));

  for (const o of objects.added) actions.push({ action: "create", resource: objectName(o), ...(o.unit ? { unit: o.unit } : {}), protected: o.protected });
  for (const c of objects.changed) {
    const r = c.ref;
    const protectedBefore = r.unit !== undefined && bi.units.get(r.unit)?.protect === true;
    actions.push({
      action: c.action,
      resource: objectName(r),
      ...(r.unit ? { unit: r.unit } : {}),
      protected: protectedBefore,
      detail: c.action === "replace" ? `${c.replaces.join(", ")} cannot change in place` : shortList(c.changes.map((x) => formatPath(x.path))),
    });
    if (c.action === "replace" && protectedBefore) {
      findings.push({
        level: "error",
        code: "protected-replace",
        message: `${objectName(r)} of unit ${r.unit} would be replaced: ${c.replaces.join(", ")} cannot change in place, and the unit is protected, so \`pulumi up\` refuses`,
        reason: "the unit owns data (protect + retainOnDelete): a replacement deletes the object and creates it again",
        fix: FIX_PROTECTED_REPLACE,
      });
    }
    if (c.refused.length) {
      findings.push({
        level: "error",
        code: "update-refused",
        message: `${objectName(r)}: ${c.refused.join(", ")} cannot be updated, and \`pulumi up\` would try (the Kubernetes API refuses it)`,
        reason: "the provider updates this field in place, and the API server forbids that",
        fix: `keep ${c.refused.join(", ")} as it is, or delete the object by hand and let \`pulumi up\` create it again (docs/operating.md, "Replacing an object that owns data")`,
      });
    }
  }
  for (const o of objects.removed) {
    actions.push({ action: "delete", resource: objectName(o), ...(o.unit ? { unit: o.unit } : {}), protected: o.protected });
    if (o.protected && !o.patch && !(o.unit && goneUnits.has(o.unit))) {
      findings.push({
        level: "error",
        code: "protected-delete",
        message: `${objectName(o)} of unit ${o.unit} would be deleted, and the unit is protected, so \`pulumi up\` refuses`,
        reason: "the unit owns data (protect + retainOnDelete)",
        fix: FIX_PROTECTED_DELETE,
      });
    }
  }

  // releases and remote manifests (objects of Manifests units are listed above)
  const valuesOf = new Map(values.map((v) => [v.unit, v]));
  for (const u of units) {
    const unit = (u.op === "remove" ? bi : hi).units.get(u.name)!;
    if (unit.kind === "Manifests") {
      if (u.op === "remove" && unit.protect) findings.push(protectedUnitGone(u.name, `${unit.objects.length} object(s)`));
      continue;
    }
    const resource = `${unit.kind === "HelmRelease" ? "HelmRelease" : "Manifest"} ${u.name}`;
    if (u.op === "add") actions.push({ action: "create", resource, unit: u.name, protected: unit.protect });
    else if (u.op === "remove") {
      actions.push({ action: "delete", resource, unit: u.name, protected: unit.protect });
      if (unit.protect) findings.push(protectedUnitGone(u.name, unit.kind === "HelmRelease" ? `release ${unit.release}` : "its manifest"));
    } else {
      // the provider replaces a Helm release whose name or namespace changes (pulumi-kubernetes
      // provider/pkg/provider/helm_release.go, Diff: forceNewFields .name and .namespace)
      const forced = u.changes.filter((c) => c.path[0] === "release" || c.path[0] === "namespace").map((c) => formatPath(c.path));
      const protectedBefore = bi.units.get(u.name)?.protect === true;
      const action = unit.kind === "HelmRelease" && forced.length ? "replace" : "update";
      const v = valuesOf.get(u.name);
      const detail =
        action === "replace"
          ? `${forced.join(", ")} cannot change in place`
          : [...u.changes.map((c) => formatPath(c.path)), ...(v ? [valuesDetail(v)] : [])].join("; ");
      actions.push({ action, resource, unit: u.name, protected: protectedBefore, detail });
      if (action === "replace" && protectedBefore) {
        findings.push({
          level: "error",
          code: "protected-replace",
          message: `HelmRelease ${u.name} would be replaced (${forced.join(", ")} changes), and the unit is protected, so \`pulumi up\` refuses`,
          reason: "the release owns data: a replacement uninstalls it and installs it again",
          fix: FIX_PROTECTED_REPLACE,
        });
      }
    }
  }
  // releases whose values change and nothing else
  for (const v of values) {
    if (v.op !== "change" || units.some((u) => u.name === v.unit)) continue;
    actions.push({
      action: "update",
      resource: `HelmRelease ${v.unit}`,
      unit: v.unit,
      protected: bi.units.get(v.unit)?.protect === true,
      detail: valuesDetail(v),
    });
  }
  const order = { delete: 0, replace: 1, update: 2, create: 3 };
  actions.sort((p, q) => order[p.action] - order[q.action] || cmp(p.resource, q.resource));
  return { actions, findings };
}

/** `a, b, c and 2 more` */
function shortList(items: string[], max = 3): string {
  return `${items.slice(0, max).join(", ")}${items.length > max ? ` and ${items.length - max} more` : ""}`;
}

function valuesDetail(v: ValuesChange): string {
  return `values ${shortList(v.changes.map((c) => formatPath(c.path)))}`;
}

function protectedUnitGone(unit: string, what: string): Finding {
  return {
    level: "error",
    code: "protected-delete",
    message: `unit ${unit} (${what}) would be deleted, and it is protected, so \`pulumi up\` refuses`,
    reason: "the unit owns data (protect + retainOnDelete)",
    fix: FIX_PROTECTED_DELETE,
  };
}

// ---- warnings: a service that goes, a quorum whose member count changes ----

/** Galera, RabbitMQ, OVN central: where their member counts are in the values, and what a change of it does. */
interface QuorumValue {
  unit: string;
  path: string[];
  name: string;
  note: string;
}

const QUORUM_NOTES: Record<string, { name: string; note: string }> = {
  mariadb: { name: "Galera (MariaDB)", note: "a Galera cluster keeps working while a majority of its members is up" },
  rabbitmq: {
    name: "RabbitMQ",
    note: "quorum queues need a majority of their replicas, and the RabbitMQ cluster operator refuses to scale a cluster down (rabbitmq/cluster-operator controllers/reconcile_scale_down.go)",
  },
  ovnCentral: {
    name: "OVN central",
    note: "the northbound and southbound databases are RAFT clusters, and a member the StatefulSet stops still counts until it leaves the cluster (ovs-appctl cluster/leave): after a scale-down the members left may be no majority of the cluster they know",
  },
};

function quorumValues(): QuorumValue[] {
  const out: QuorumValue[] = QUORUM_MEMBERS.map((m) => ({ unit: INFRASTRUCTURE_UNIT, path: ["infrastructure", m, "replicas"], ...QUORUM_NOTES[m] }));
  for (const [service, spec] of Object.entries(SERVICE_CATALOG) as [ServiceName, (typeof SERVICE_CATALOG)[ServiceName]][]) {
    for (const [component, c] of Object.entries(spec.components)) {
      if (c.replicas !== "quorum") continue;
      const known = QUORUM_NOTES[component] ?? { name: `${service} ${component}`, note: "its members replicate their state and need a majority up" };
      out.push({ unit: releaseName(service), path: [component, "replicas"], ...known });
    }
  }
  return out;
}

/** Failures a quorum of `n` members survives. */
const tolerates = (n: number) => Math.max(0, Math.floor((n - 1) / 2));

function quorumFindings(values: ValuesChange[]): Finding[] {
  const out: Finding[] = [];
  for (const q of quorumValues()) {
    const v = values.find((x) => x.unit === q.unit && x.op === "change");
    const c = v?.changes.find((x) => x.op === "change" && formatPath(x.path) === formatPath(q.path));
    if (!c || typeof c.before !== "number" || typeof c.after !== "number") continue;
    const even = c.after > 1 && c.after % 2 === 0 ? "; an even count can split into two halves that both stop" : "";
    out.push({
      level: "warning",
      code: "quorum-members",
      message: `${q.name}: ${c.before} → ${c.after} members (${formatPath(q.path)} of ${q.unit})`,
      reason: `it survives ${tolerates(c.before)} failed member(s) before and ${tolerates(c.after)} after; ${q.note}${even}`,
    });
  }
  return out;
}

function serviceFindings(units: UnitChange[], bi: Index, hi: Index): Finding[] {
  const out: Finding[] = [];
  for (const u of units) {
    const unit = bi.units.get(u.name);
    if (u.op !== "remove" || unit?.type !== "openkeel:openkeel:Release") continue;
    const service = u.name.replace(/^openkeel-/, "") as ServiceName;
    const role = SERVICE_REQUIRED_ROLE[service] as Role | undefined;
    const had = (idx: Index) => idx.nodes.filter((n) => role !== undefined && n.roles.includes(role)).map((n) => n.name);
    let why = "the stack no longer enables it (openkeel:services)";
    if (role && had(hi).length === 0 && had(bi).length > 0) {
      const lost = had(bi).map((n) => (hi.nodes.some((x) => x.name === n) ? `${n} lost it` : `${n} left the inventory`));
      why = `no node has the ${role} role any more (${lost.join(", ")}), and ${service} runs only where one has it (topology/services.ts)`;
    }
    out.push({
      level: "warning",
      code: "service-removed",
      message: `service ${service} goes away: \`pulumi up\` uninstalls release ${unit.release ?? u.name}`,
      reason: `${why}; its API leaves the cloud`,
    });
  }
  return out;
}

// ---- one stack ----

/** Compare one stack's base and head trees (either may be absent). */
/**
 * The stack bound to another cluster: the context, the API server or a pinned kube-system UID
 * changes (pinning a UID for the first time is no move). Worth a reviewer's second look.
 */
function bindingFindings(base: Tree, head: Tree): Finding[] {
  const binding = (tree: Tree) =>
    ((tree.has("index.yaml") ? (parse(tree.get("index.yaml")!) ?? {}) : {}) as { cluster?: Record<string, unknown> }).cluster ?? {};
  const b = binding(base);
  const h = binding(head);
  const moved = ["context", "apiServer", "kubeSystemUID"].filter((k) => b[k] !== undefined && b[k] !== h[k]);
  if (moved.length === 0) return [];
  return [
    {
      level: "warning",
      code: "cluster-binding",
      message: `the stack is bound to another cluster: ${moved.map((k) => `openkeel:cluster.${k} ${String(b[k])} → ${h[k] === undefined ? "(unset)" : String(h[k])}`).join(", ")}`,
      reason: "pulumi up of the merge will talk to that cluster, with this stack's state",
      fix: "make sure the new binding is the cluster this stack's state describes (a rebuilt cluster: pulumi refresh after the merge)",
    },
  ];
}

/** A node that holds data leaving without having been retiring in the base, or a quorum left short (review/node-guard.ts). */
function nodeFindings(base: Tree, head: Tree): Finding[] {
  const nodes = (tree: Tree) => indexNodes(tree.has("index.yaml") ? parse(tree.get("index.yaml")!) : undefined);
  return nodeRemovalChecks(nodes(base), nodes(head), "the base").map((c) => ({ level: c.level, code: c.code, message: c.message, fix: c.fix }));
}

export function previewStack(stack: string, base: Tree | undefined, head: Tree | undefined, policy?: PolicyReport): StackPreview {
  const b = base ?? new Map<string, string>();
  const h = head ?? new Map<string, string>();
  const bi = indexOf(b);
  const hi = indexOf(h);

  const bo = objectsOf(b, bi);
  const ho = objectsOf(h, hi);
  const keys = [...new Set([...bo.keys(), ...ho.keys()])].sort(cmp);
  const objects: StackPreview["objects"] = { added: [], removed: [], changed: [] };
  for (const k of keys) {
    const x = bo.get(k);
    const y = ho.get(k);
    if (!x) objects.added.push({ ...y!.ref, body: y!.body });
    else if (!y) objects.removed.push(x.ref);
    else {
      const changes = diff(x.body, y.body);
      if (changes.length === 0) continue;
      const { replaces, refused } = inPlace(y.ref.apiVersion, y.ref.kind, changes, y.ref.patch);
      objects.changed.push({ ref: y.ref, changes, action: replaces.length ? "replace" : "update", replaces, refused });
    }
  }

  const valuesFiles = [...new Set([...b.keys(), ...h.keys()])].filter((f) => /^values\/[^/]+\.ya?ml$/.test(f)).sort(cmp);
  const values: ValuesChange[] = [];
  for (const f of valuesFiles) {
    const unit = f.replace(/^values\//, "").replace(/\.ya?ml$/, "");
    const x = b.get(f);
    const y = h.get(f);
    if (x === y) continue;
    const meta = hi.units.get(unit) ?? bi.units.get(unit);
    const op = x === undefined ? "add" : y === undefined ? "remove" : "change";
    const changes = diff(x === undefined ? undefined : parse(x), y === undefined ? undefined : parse(y));
    if (op === "change" && changes.length === 0) continue;
    values.push({
      unit,
      ...(meta?.release ? { release: String(meta.release) } : {}),
      ...(meta?.namespace ? { namespace: String(meta.namespace) } : {}),
      op,
      changes: op === "change" ? changes : [],
    });
  }

  const units: UnitChange[] = [];
  for (const name of [...new Set([...bi.units.keys(), ...hi.units.keys()])].sort(cmp)) {
    const x = bi.units.get(name)?.fields;
    const y = hi.units.get(name)?.fields;
    if (!x) units.push({ name, op: "add", changes: diff({}, y) });
    else if (!y) units.push({ name, op: "remove", changes: [] });
    else {
      const changes = diff(x, y);
      if (changes.length) units.push({ name, op: "change", changes });
    }
  }

  const bw = new Set(bi.warnings.map(warningKey));
  const hw = new Set(hi.warnings.map(warningKey));
  const sortW = (ws: Warning[]) => ws.sort((p, q) => cmp(p.code, q.code) || cmp(p.message, q.message));
  const warnings = {
    added: sortW(hi.warnings.filter((w) => !bw.has(warningKey(w)))),
    resolved: sortW(bi.warnings.filter((w) => !hw.has(warningKey(w)))),
  };

  const both = base !== undefined && head !== undefined;
  const placement =
    both && b.has("placement.md") && h.has("placement.md") && b.get("placement.md") !== h.get("placement.md")
      ? placementDelta(b.get("placement.md")!, h.get("placement.md")!)
      : undefined;
  const nodes = both ? nodeSteps(b, h) : [];

  const other: FileChange[] = [];
  for (const f of [...new Set([...b.keys(), ...h.keys()])].sort(cmp)) {
    if (f === "index.yaml" || f.startsWith("objects/") || /^values\/[^/]+\.ya?ml$/.test(f)) continue;
    if (f === "placement.md" && placement) continue;
    const c = fileChange(f, b.get(f), h.get(f));
    if (!c) continue;
    if (f === "placement.svg" && placement) other.push({ file: f, op: c.op, seeAlso: "the picture of the placement delta" });
    else if (f === "talos/machines.yaml" && nodes.length && c.op === "change") other.push({ file: f, op: c.op, seeAlso: "node steps" });
    else other.push(c);
  }

  const { actions, findings: refused } = actionsOf(objects, units, values, bi, hi);
  const findings = [
    ...refused,
    ...serviceFindings(units, bi, hi),
    ...quorumFindings(values),
    ...(both ? [...nodeFindings(b, h), ...bindingFindings(b, h)] : []),
  ];

  const settings = both ? diff(bi.settings, hi.settings) : [];
  const changed =
    settings.length +
      actions.length +
      values.length +
      units.length +
      warnings.added.length +
      warnings.resolved.length +
      other.length +
      (placement && !isEmptyDelta(placement) ? 1 : 0) >
    0;
  return {
    stack,
    status: !base ? "added" : !head ? "removed" : changed ? "changed" : "unchanged",
    title: (head ? hi.title : bi.title) || stack,
    settings,
    actions,
    findings,
    objects,
    values,
    units,
    nodes,
    ...(placement && !isEmptyDelta(placement) ? { placement } : {}),
    warnings,
    other,
    ...policyOf(stack, policy),
  };
}

function policyOf(stack: string, policy: PolicyReport | undefined): { policy?: StackPolicy } {
  if (!policy) return {};
  if (policy.error !== undefined) return { policy: { violations: [], passed: false, error: policy.error } };
  const s = policy.stacks?.[stack];
  if (!s) return {};
  const violations = [...s.violations].sort((p, q) => cmp(p.policy, q.policy) || cmp(p.resource ?? "", q.resource ?? "") || cmp(p.message, q.message));
  return { policy: { violations, passed: s.passed ?? !violations.some((v) => v.level === "mandatory") } };
}

/** Every stack present in either render (optionally only some), sorted by name. */
export function previewAll(base: Tree, head: Tree, opts: { stacks?: string[]; policy?: PolicyReport } = {}): StackPreview[] {
  const bs = byStack(base);
  const hs = byStack(head);
  const names = [...new Set([...bs.keys(), ...hs.keys()])].filter((s) => !opts.stacks?.length || opts.stacks.includes(s)).sort(cmp);
  return names.map((s) => previewStack(s, bs.get(s), hs.get(s), opts.policy));
}

/** Errors anywhere: `pulumi up` would refuse or fail on this change. */
export function hasErrors(stacks: StackPreview[]): boolean {
  return stacks.some((s) => s.findings.some((f) => f.level === "error"));
}
