// What a change does to every stack, for a reviewer: two renders (base and head, read through the
// rendered model, render/rendered.ts: each file parsed once per side) compared stack by stack. Per
// object and release the action `pulumi up` takes — create, update, replace (with the field that
// forces it, review/replace-rules.ts) or delete — and the ones it would refuse (a protected unit
// replaced or deleted, a field the API server will not change) as errors; per node the steps
// outside Kubernetes, in order (lifecycle/steps.ts, with what the components contribute); the
// placement delta (review/placement-delta.ts, from both sides' placement.json); a service that goes
// away, a quorum whose member count changes or a health check NHC's webhook may refuse to change as
// warnings with their reason; Helm values, units
// and chart pins field by field; plan-check warnings new, resolved or changed (review/preview-warnings.ts); other rendered files, leaving
// out those whose only change is a comment; and policy results when given. Pure: trees in, a model
// out, in a stable order with no timestamps, so the PR comment only changes when the render does
// (Markdown: review/preview-markdown.ts).
import type { NodeState } from "../config/lifecycle";
import { formatPath, type Check } from "../config/problems";
import type { Role } from "../config/roles";
import { resolveEnvironment } from "../environments";
import { drainSequenceChecks, nodeRemovalChecks } from "../lifecycle/guards";
import { nodeSteps, type NodeSteps } from "../lifecycle/steps";
import { OPENKEEL_SERVICES } from "../openkeel/services";
import { INFRASTRUCTURE_UNIT, QUORUM_MEMBERS } from "../openkeel/infrastructure";
import { quorumMoveChecks } from "../openkeel/quorum-moves";
import { releaseService } from "../openkeel/registry";
import { APPLY_AS_PATCH_ANNOTATION } from "../plan/plan";
import { classReplacement, immutableChanges, isPriorityClass } from "../platform/priority-classes";
import { heldChangeFinding, heldFields, NHC_API_GROUP, NHC_KIND, type HeldChange } from "../platform/medik8s-webhook";
import { diff, WHOLE_DOCUMENT, type Change } from "../render/diff";
import {
  INDEX_FILE,
  PLACEMENT_DATA_FILE,
  PLACEMENT_MD_FILE,
  PLACEMENT_SVG_FILE,
  RenderedStack,
  renderedStacks,
  TALOS_MACHINES_FILE,
  type RenderedIndex,
  type RenderedWarning,
} from "../render/rendered";
import { failureDomainFindings } from "./failure-delta";
import { isEmptyDelta, placementDelta, type PlacementDelta } from "./placement-delta";
import { inPlace, OPERATOR_IMMUTABLE } from "./replace-rules";
import { stackUpgradeViews, type UpgradePins, type UpgradeView } from "./preview-upgrades";
import { warningChanges, type WarningChanges } from "./preview-warnings";
import { byCodePoint, isPlainObject } from "../config/plain";
import { RELEASE_TYPE, releaseName } from "../openkeel/names";

export type Tree = Map<string, string>;

/**
 * What the components of every environment contribute to a node's life: each decides from the
 * renders whether its steps apply (an eviction only where one was requested), so all are asked.
 */
const LIFECYCLES = resolveEnvironment().lifecycles;

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
  /** The replacement deletes the object first (nothing of its name exists in between). */
  deleteFirst?: true;
  /** What the replacement means beyond the object itself (a PriorityClass: the pods that use it). */
  finding?: Check;
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
  /** What the findings were judged against: the base, or what is deployed (review/reference.ts). */
  judged: string;
  settings: Change[];
  /** Components whose pins moved, as upgrades (review/preview-upgrades.ts); empty without both sides' pins. */
  upgrades: UpgradeView[];
  actions: Action[];
  /** What a reviewer must act on (error: `pulumi up` would refuse or fail) or weigh (warning), with its reason. */
  findings: Check[];
  objects: { added: AddedObject[]; removed: ObjectRef[]; changed: ObjectChange[] };
  values: ValuesChange[];
  units: UnitChange[];
  nodes: NodeSteps[];
  /** Undefined: the placement did not change (or one side has no placement data). */
  placement?: PlacementDelta;
  /** Why there is no placement delta although placement.md changed: a side has no placement data. */
  placementNote?: string;
  /** Plan-check warnings new, resolved, or changed (the same code and subject, another text: review/preview-warnings.ts). */
  warnings: WarningChanges;
  other: FileChange[];
  /** Undefined: no policy results were given for this stack. */
  policy?: StackPolicy;
}

const cmp = byCodePoint;

function apiGroup(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

interface IndexUnit {
  phase: string;
  kind: string;
  type: string;
  release?: string | undefined;
  namespace?: string | undefined;
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
  nodes: { name: string; roles: Role[]; zone?: string | undefined; state?: NodeState | undefined; kubernetesControlPlane?: boolean | undefined }[];
  warnings: RenderedWarning[];
  environment: string;
  /** What the feasibility model read of the Plan (absent in a render before schema 2). */
  feasibility?: RenderedIndex["feasibility"];
  /** openkeel:allowRemoval of the stack. */
  allowRemoval: string[];
}

/**
 * index.yaml: the parts the preview reports (nodes show as Node objects, objects as objects; the
 * list of node-configuration files as those files; the model's version is no setting of the stack).
 */
function indexOf(render: RenderedStack): Index {
  // the feasibility facts are what the removal guard reads, not a setting of the stack
  // nor how the program deploys its units (deployGraph: the render's model, issue 46)
  const { stack: _s, schemaVersion: _v, deployGraph: _g, nodes, phases, warnings, nodeConfig: _c, feasibility, ...settings } = render.index;
  const units = new Map<string, IndexUnit>();
  const unitOf = new Map<string, string>();
  for (const ph of phases) {
    for (const u of ph.units) {
      const { objects, values: _values, ...rest } = u;
      for (const f of objects ?? []) unitOf.set(f, u.name);
      units.set(u.name, {
        phase: ph.name,
        kind: u.kind,
        type: u.type,
        release: u.release,
        namespace: u.namespace,
        protect: u.protect === true,
        objects: objects ?? [],
        fields: { phase: ph.name, ...rest },
      });
    }
  }
  return {
    title: [render.index.environment, render.index.topology].filter(Boolean).join("/"),
    settings,
    units,
    unitOf,
    nodes,
    warnings,
    environment: render.index.environment,
    ...(feasibility ? { feasibility } : {}),
    allowRemoval: render.index.allowRemoval ?? [],
  };
}

interface ParsedObject {
  ref: ObjectRef;
  body: unknown;
}

/** The objects of the files `only` names (the object files that differ between the two sides: the others hold the same objects). */
function objectsOf(render: RenderedStack, index: Index, only: ReadonlySet<string>): Map<string, ParsedObject> {
  const out = new Map<string, ParsedObject>();
  for (const file of only) {
    if (render.files.get(file) === undefined) continue;
    render.documents(file).forEach((body, i) => {
      if (body === null || body === undefined) return;
      const doc = isPlainObject(body) ? body : {};
      const meta = isPlainObject(doc.metadata) ? doc.metadata : {};
      const annotations = isPlainObject(meta.annotations) ? meta.annotations : {};
      const apiVersion = String(doc.apiVersion ?? "");
      const kind = String(doc.kind ?? "");
      const unit = index.unitOf.get(file);
      const ref: ObjectRef = {
        apiVersion,
        kind,
        ...(meta.namespace ? { namespace: String(meta.namespace) } : {}),
        name: String(meta.name ?? `${file}#${i}`),
        file,
        ...(unit ? { unit } : {}),
        protected: unit !== undefined && index.units.get(unit)?.protect === true,
        patch: (apiVersion === "v1" && kind === "Node") || annotations[APPLY_AS_PATCH_ANNOTATION] === "patch",
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
function fileChange(file: string, b: RenderedStack, h: RenderedStack): FileChange | undefined {
  const before = b.files.get(file);
  const after = h.files.get(file);
  if (before === after) return undefined;
  const op = before === undefined ? "add" : after === undefined ? "remove" : "change";
  if (before === undefined || after === undefined) return { file, op };
  if (isYaml(file)) {
    try {
      const pa = b.documents(file);
      const pb = h.documents(file);
      const changes = diff(pa.length === 1 ? pa[0] : pa, pb.length === 1 ? pb[0] : pb);
      return changes.length ? { file, op, changes } : undefined;
    } catch {
      // not YAML after all: fall through to lines
    }
  }
  if (/\.(md|txt|json|conf|toml|ini)$/.test(file)) {
    const lines = lineDiff(before, after);
    return lines.every((l) => isComment(file, l.slice(1))) ? undefined : { file, op, lines };
  }
  return { file, op };
}

function objectName(r: ObjectRef): string {
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}${r.patch ? " (patch)" : ""}`;
}

const FIX_PROTECTED_REPLACE = 'leave the field as it is, or replace the object deliberately (docs/operating.md, "Replacing an object that owns data")';
const FIX_PROTECTED_DELETE =
  'keep it in the stack, or, if its data may go, add the unit to openkeel:allowRemoval in this change (docs/operating.md, "Removing a unit that owns data")';

/** What the actions of a change find: the actions, what `pulumi up` refuses, and the data-owning units it loses (openkeel:allowRemoval may allow those). */
interface Acting {
  actions: Action[];
  findings: Check[];
  losses: { unit: string; finding: Check }[];
}

/** Objects of Manifests units: the action `pulumi up` takes on each, and what it would refuse. */
function objectActions(objects: StackPreview["objects"], goneUnits: ReadonlySet<string>, bi: Index, out: Acting): void {
  for (const o of objects.added) out.actions.push({ action: "create", resource: objectName(o), ...(o.unit ? { unit: o.unit } : {}), protected: o.protected });
  for (const c of objects.changed) {
    const r = c.ref;
    const protectedBefore = r.unit !== undefined && bi.units.get(r.unit)?.protect === true;
    out.actions.push({
      action: c.action,
      resource: objectName(r),
      ...(r.unit ? { unit: r.unit } : {}),
      protected: protectedBefore,
      detail:
        c.action === "replace"
          ? `${c.replaces.join(", ")} cannot change in place${c.deleteFirst ? ": deleted, then created again" : ""}`
          : shortList(c.changes.map((x) => formatPath(x.path, WHOLE_DOCUMENT))),
    });
    if (c.finding) out.findings.push(c.finding);
    if (c.action === "replace" && protectedBefore) {
      out.findings.push({
        level: "error",
        code: "protected-replace",
        message: `${objectName(r)} of unit ${r.unit} would be replaced: ${c.replaces.join(", ")} cannot change in place, and the unit is protected, so \`pulumi up\` refuses`,
        reason: "the unit owns data (protect + retainOnDelete): a replacement deletes the object and creates it again",
        fix: FIX_PROTECTED_REPLACE,
      });
    }
    if (c.refused.length) {
      out.findings.push({
        level: "error",
        code: "update-refused",
        message: `${objectName(r)}: ${c.refused.join(", ")} cannot be updated, and \`pulumi up\` would try (the Kubernetes API refuses it)`,
        reason: "the provider updates this field in place, and the API server forbids that",
        fix: `keep ${c.refused.join(", ")} as it is, or delete the object by hand and let \`pulumi up\` create it again (docs/operating.md, "Replacing an object that owns data")`,
      });
    }
  }
  for (const o of objects.removed) {
    out.actions.push({ action: "delete", resource: objectName(o), ...(o.unit ? { unit: o.unit } : {}), protected: o.protected });
    // a unit gone as a whole is one finding, not one per object
    if (o.protected && !o.patch && o.unit && !goneUnits.has(o.unit)) {
      out.losses.push({
        unit: o.unit,
        finding: {
          level: "error",
          code: "protected-delete",
          message: `${objectName(o)} of unit ${o.unit} would be deleted, and the unit is protected, so \`pulumi up\` refuses`,
          reason: "the unit owns data (protect + retainOnDelete)",
          fix: FIX_PROTECTED_DELETE,
        },
      });
    }
  }
}

/** A release or remote manifest whose unit changes: updated, or replaced when its name or namespace changes. */
/**
 * What a unit waits for (`dependsOn`, `waitsFor`): the engine orders its steps by it and never
 * updates a resource for it (dependencies are no input), so a change of it alone is no action; the
 * units section still shows it.
 */
const ORDER_ONLY = new Set(["dependsOn", "waitsFor"]);

function changedUnitAction(u: UnitChange, unit: IndexUnit, v: ValuesChange | undefined, bi: Index, out: Acting): void {
  const changes = u.changes.filter((c) => !ORDER_ONLY.has(String(c.path[0])));
  if (changes.length === 0 && !v) return;
  u = { ...u, changes };
  const resource = `${unit.kind === "HelmRelease" ? "HelmRelease" : "Manifest"} ${u.name}`;
  // the provider replaces a Helm release whose name or namespace changes (pulumi-kubernetes
  // provider/pkg/provider/helm_release.go, Diff: forceNewFields .name and .namespace)
  const forced = u.changes.filter((c) => c.path[0] === "release" || c.path[0] === "namespace").map((c) => formatPath(c.path, WHOLE_DOCUMENT));
  const protectedBefore = bi.units.get(u.name)?.protect === true;
  const action = unit.kind === "HelmRelease" && forced.length ? "replace" : "update";
  const detail =
    action === "replace"
      ? `${forced.join(", ")} cannot change in place`
      : [...u.changes.map((c) => formatPath(c.path, WHOLE_DOCUMENT)), ...(v ? [valuesDetail(v)] : [])].join("; ");
  out.actions.push({ action, resource, unit: u.name, protected: protectedBefore, detail });
  if (action === "replace" && protectedBefore) {
    out.findings.push({
      level: "error",
      code: "protected-replace",
      message: `HelmRelease ${u.name} would be replaced (${forced.join(", ")} changes), and the unit is protected, so \`pulumi up\` refuses`,
      reason: "the release owns data: a replacement uninstalls it and installs it again",
      fix: FIX_PROTECTED_REPLACE,
    });
  }
  if (protectedBefore && !unit.protect) {
    out.losses.push({
      unit: u.name,
      finding: {
        level: "error",
        code: "protected-unprotect",
        message: `unit ${u.name} owns data and would lose its protection (protect + retainOnDelete): \`pulumi up\` unprotects it, and any later change may then delete it`,
        reason: "the protection is what makes pulumi up refuse to delete the data",
        fix: FIX_PROTECTED_DELETE,
      },
    });
  }
}

/** Releases and remote manifests (objects of Manifests units are objectActions'). */
function unitActions(units: UnitChange[], values: ValuesChange[], bi: Index, hi: Index, out: Acting): void {
  const valuesOf = new Map(values.map((v) => [v.unit, v]));
  for (const u of units) {
    const unit = (u.op === "remove" ? bi : hi).units.get(u.name)!;
    if (unit.kind === "Manifests") {
      if (u.op === "remove" && unit.protect) out.losses.push({ unit: u.name, finding: protectedUnitGone(u.name, `${unit.objects.length} object(s)`) });
      continue;
    }
    const resource = `${unit.kind === "HelmRelease" ? "HelmRelease" : "Manifest"} ${u.name}`;
    if (u.op === "add") out.actions.push({ action: "create", resource, unit: u.name, protected: unit.protect });
    else if (u.op === "remove") {
      out.actions.push({ action: "delete", resource, unit: u.name, protected: unit.protect });
      if (unit.protect)
        out.losses.push({ unit: u.name, finding: protectedUnitGone(u.name, unit.kind === "HelmRelease" ? `release ${unit.release}` : "its manifest") });
    } else changedUnitAction(u, unit, valuesOf.get(u.name), bi, out);
  }
  // releases whose values change and nothing else
  for (const v of values) {
    if (v.op !== "change" || units.some((u) => u.name === v.unit)) continue;
    out.actions.push({
      action: "update",
      resource: `HelmRelease ${v.unit}`,
      unit: v.unit,
      protected: bi.units.get(v.unit)?.protect === true,
      detail: valuesDetail(v),
    });
  }
}

/** Objects, releases and manifests: the action `pulumi up` takes on each, and what it would refuse. */
function actionsOf(objects: StackPreview["objects"], units: UnitChange[], values: ValuesChange[], bi: Index, hi: Index): Acting {
  const out: Acting = { actions: [], findings: [], losses: [] };
  objectActions(objects, new Set(units.filter((u) => u.op === "remove").map((u) => u.name)), bi, out);
  unitActions(units, values, bi, hi, out);
  const order = { delete: 0, replace: 1, update: 2, create: 3 };
  out.actions.sort((p, q) => order[p.action] - order[q.action] || cmp(p.resource, q.resource));
  return out;
}

interface PatchDoc {
  target?: { kind?: string; name?: string };
  patch?: unknown;
}

const fieldAt = (v: unknown, path: string) =>
  path.split(".").reduce<unknown>((cur, k) => (typeof cur === "object" && cur !== null ? (cur as Record<string, unknown>)[k] : undefined), v);

/**
 * A post-render patch that changes a field the CR's operator refuses to update (OPERATOR_IMMUTABLE)
 * of a release the base already has: its CR exists, so `pulumi up` fails on the release's upgrade.
 */
function postRenderFindings(b: RenderedStack, h: RenderedStack, bi: Index): Check[] {
  const findings: Check[] = [];
  const patchesOf = (r: RenderedStack, file: string | undefined) => (file ? ((r.documents(file)[0] as PatchDoc[] | null) ?? []) : []);
  for (const hu of h.units()) {
    if (hu.kind !== "HelmRelease" || !bi.units.has(hu.name)) continue;
    const bu = b.units().find((u) => u.name === hu.name);
    const before = patchesOf(b, bu?.kind === "HelmRelease" ? bu.postRender : undefined);
    for (const p of patchesOf(h, hu.postRender)) {
      const fields = OPERATOR_IMMUTABLE[p.target?.kind ?? ""] ?? [];
      const old = before.find((x) => x.target?.kind === p.target?.kind && x.target?.name === p.target?.name);
      for (const f of fields) {
        const [x, y] = [fieldAt(old?.patch, f), fieldAt(p.patch, f)];
        if (JSON.stringify(x) === JSON.stringify(y)) continue;
        findings.push({
          level: "error",
          code: "operator-immutable",
          message: `${p.target?.kind} ${p.target?.name} of release ${hu.name}: ${f} changes (${JSON.stringify(x) ?? "unset"} → ${JSON.stringify(y) ?? "unset"}), which its operator refuses to update: the CR must be replaced, and \`pulumi up\` fails on the release's upgrade`,
          reason: "mariadb-operator's webhook marks the field immutable; only a new CR takes it",
          fix: 'recreate the CR deliberately (docs/design-decisions.md, "What the charts read no value for"), or leave the field as it is',
        });
      }
    }
  }
  return findings;
}

/** `a, b, c and 2 more` */
function shortList(items: string[], max = 3): string {
  return `${items.slice(0, max).join(", ")}${items.length > max ? ` and ${items.length - max} more` : ""}`;
}

function valuesDetail(v: ValuesChange): string {
  return `values ${shortList(v.changes.map((c) => formatPath(c.path, WHOLE_DOCUMENT)))}`;
}

function protectedUnitGone(unit: string, what: string): Check {
  return {
    level: "error",
    code: "protected-delete",
    message: `unit ${unit} (${what}) would be deleted, and it is protected, so \`pulumi up\` refuses`,
    reason: "the unit owns data (protect + retainOnDelete)",
    fix: FIX_PROTECTED_DELETE,
  };
}

/**
 * The data-owning units the change loses: each an error, but for a unit the stack's
 * openkeel:allowRemoval lists (reviewed in the pull request that adds it), which is said, with what
 * the deploy does; an entry that lets nothing go is said too, so that it does not stay to let a
 * later removal through unreviewed.
 */
function removalFindings(losses: Acting["losses"], hi: Index, where: string): Check[] {
  const allowed = new Set(hi.allowRemoval);
  const out: Check[] = losses.map(({ unit, finding }) =>
    allowed.has(unit)
      ? {
          level: "warning",
          code: "removal-allowed",
          message: `${finding.message}: allowed, openkeel:allowRemoval lists ${unit}`,
          reason:
            "the deploy unprotects its resources in the stack's state first, and pulumi up then forgets them and leaves them in the cluster (retainOnDelete)",
          fix: `after the deploy, delete what should go with kubectl, deliberately, then remove ${unit} from openkeel:allowRemoval`,
          path: "openkeel:allowRemoval",
        }
      : finding,
  );
  for (const unit of hi.allowRemoval) {
    if (losses.some((l) => l.unit === unit)) continue;
    out.push({
      level: "warning",
      code: "allow-removal-unused",
      message: `openkeel:allowRemoval lists ${unit}, which loses nothing against ${where}`,
      reason: "an entry left in place would let a later removal of the unit through without its own review",
      fix: `remove ${unit} from openkeel:allowRemoval (once its removal is deployed, nothing needs it)`,
      path: "openkeel:allowRemoval",
    });
  }
  return out;
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
  for (const { name: service, components } of OPENKEEL_SERVICES) {
    for (const [component, c] of Object.entries(components)) {
      if (c.replicas !== "quorum") continue;
      const known = QUORUM_NOTES[component] ?? { name: `${service} ${component}`, note: "its members replicate their state and need a majority up" };
      out.push({ unit: releaseName(service), path: [component, "replicas"], ...known });
    }
  }
  return out;
}

/** Failures a quorum of `n` members survives. */
const tolerates = (n: number) => Math.max(0, Math.floor((n - 1) / 2));

function quorumFindings(values: ValuesChange[]): Check[] {
  const out: Check[] = [];
  for (const q of quorumValues()) {
    const at = formatPath(q.path);
    const v = values.find((x) => x.unit === q.unit && x.op === "change");
    const c = v?.changes.find((x) => x.op === "change" && formatPath(x.path) === at);
    if (!c || typeof c.before !== "number" || typeof c.after !== "number") continue;
    const even = c.after > 1 && c.after % 2 === 0 ? "; an even count can split into two halves that both stop" : "";
    out.push({
      level: "warning",
      code: "quorum-members",
      message: `${q.name}: ${c.before} → ${c.after} members (${at} of ${q.unit})`,
      reason: `it survives ${tolerates(c.before)} failed member(s) before and ${tolerates(c.after)} after; ${q.note}${even}`,
      fix: `if ${q.name} is not meant to have ${c.after} member(s), restore what sets the count: a replicas override in openkeel:services, or the controlPlane nodes it follows (3 from 3 on, else 1)`,
    });
  }
  return out;
}

function serviceFindings(units: UnitChange[], bi: Index, hi: Index): Check[] {
  const out: Check[] = [];
  for (const u of units) {
    const unit = bi.units.get(u.name);
    if (u.op !== "remove" || unit?.type !== RELEASE_TYPE) continue;
    const service = u.name.replace(/^openkeel-/, "");
    const role = releaseService(u.name)?.requiredRole;
    const had = (idx: Index) => idx.nodes.filter((n) => role !== undefined && n.roles.includes(role)).map((n) => n.name);
    let why = "the stack no longer enables it (openkeel:services)";
    let fix = `if the cloud still needs it, enable it again (openkeel:services.${service})`;
    if (role && had(hi).length === 0 && had(bi).length > 0) {
      const lost = had(bi).map((n) => (hi.nodes.some((x) => x.name === n) ? `${n} lost it` : `${n} left the inventory`));
      why = `no node has the ${role} role any more (${lost.join(", ")}), and ${service} runs only where one has it (topology/services.ts)`;
      fix = `if the cloud still needs it, give a node the ${role} role`;
    }
    out.push({
      level: "warning",
      code: "service-removed",
      message: `service ${service} goes away: \`pulumi up\` uninstalls release ${unit.release ?? u.name}`,
      reason: `${why}; its API leaves the cloud`,
      fix,
    });
  }
  return out;
}

// ---- one stack ----

/**
 * The stack bound to another cluster: the context, the API server or a pinned kube-system UID
 * changes (pinning a UID for the first time is no move). Worth a reviewer's second look.
 */
function bindingFindings(base: RenderedStack, head: RenderedStack): Check[] {
  const b: Record<string, string | undefined> = base.index.cluster ?? {};
  const h: Record<string, string | undefined> = head.index.cluster ?? {};
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

/** What a transition is judged against (review/reference.ts), as its findings name it. */
export interface Judged {
  /** `deployed/prod-medium, the last deployed commit (1a2b3c4d5e6f)`, `the base`. */
  where: string;
  /** Where the retirement of a node not retiring in the reference was merged, if it was: `commit 1a2b3c4d5e6f (subject)`. */
  retiredAt?(node: string): string | undefined;
}

/**
 * A node leaving without having been retiring in the reference, a removal that breaks what the
 * feasibility model holds, a drain that starts while another node comes back (lifecycle/guards.ts),
 * judged with the facts of the reference's render.
 */
function nodeFindings(bi: Index, hi: Index, judged: Judged): Check[] {
  const constraints = resolveEnvironment(bi.environment || hi.environment).constraints;
  const removal = nodeRemovalChecks(bi.nodes, hi.nodes, judged.where, constraints, bi.feasibility ?? hi.feasibility, judged.retiredAt);
  const sequence = drainSequenceChecks(bi.nodes, hi.nodes, judged.where, constraints, hi.feasibility ?? bi.feasibility);
  // a running quorum's zone spread changed under members its strict-local volumes pin (issue 39)
  const moves = quorumMoveChecks(bi, hi, judged.where);
  return [...removal, ...sequence, ...moves].map((c) => ({
    level: c.level,
    code: c.code,
    message: c.message,
    ...(c.reason ? { reason: c.reason } : {}),
    fix: c.fix,
    ...(c.path ? { path: c.path } : {}),
  }));
}

/** Each service's own checks of a change (`changeFindings` of its descriptor: Swift's rings), in install order. */
function serviceChangeFindings(bi: Index, hi: Index, where: string): Check[] {
  return OPENKEEL_SERVICES.flatMap((s) => s.changeFindings?.(bi, hi, where) ?? []);
}

/**
 * Our NodeHealthChecks deleted, or their selector or template changed: NHC's webhook refuses that
 * while the check remediates a node, and `pulumi up` would stop halfway (platform/medik8s-webhook.ts).
 */
function heldCheckFindings(objects: StackPreview["objects"]): Check[] {
  const isCheck = (r: ObjectRef) => apiGroup(r.apiVersion) === NHC_API_GROUP && r.kind === NHC_KIND && !r.patch;
  const held: HeldChange[] = [
    ...objects.removed.filter(isCheck).map((r): HeldChange => ({ name: r.name, change: "deleted" })),
    ...objects.changed
      .filter((c) => isCheck(c.ref))
      .flatMap((c): HeldChange[] => {
        const fields = heldFields(c.changes);
        return fields.length > 0 ? [{ name: c.ref.name, change: fields }] : [];
      }),
  ];
  return heldChangeFinding(held);
}

function objectChanges(bo: Map<string, ParsedObject>, ho: Map<string, ParsedObject>): StackPreview["objects"] {
  const objects: StackPreview["objects"] = { added: [], removed: [], changed: [] };
  for (const k of [...new Set([...bo.keys(), ...ho.keys()])].sort(cmp)) {
    const x = bo.get(k);
    const y = ho.get(k);
    if (!x) objects.added.push({ ...y!.ref, body: y!.body });
    else if (!y) objects.removed.push(x.ref);
    else if (x.body !== y.body) {
      // the same document on both sides (a file unchanged, parsed once) has no change
      const changes = diff(x.body, y.body);
      if (changes.length === 0) continue;
      const { replaces, refused, deleteFirst } = inPlace(y.ref.apiVersion, y.ref.kind, changes, y.ref.patch);
      const replaced =
        replaces.length > 0 && isPriorityClass(y.ref)
          ? classReplacement(y.ref.name, immutableChanges(isPlainObject(x.body) ? x.body : {}, isPlainObject(y.body) ? y.body : {}))
          : undefined;
      objects.changed.push({
        ref: y.ref,
        changes,
        action: replaces.length ? "replace" : "update",
        replaces,
        refused,
        ...(deleteFirst ? { deleteFirst } : {}),
        ...(replaced ? { finding: replaced } : {}),
      });
    }
  }
  return objects;
}

const VALUES_FILE = /^values\/[^/]+\.ya?ml$/;

function allFiles(b: RenderedStack, h: RenderedStack): string[] {
  return [...new Set([...b.files.keys(), ...h.files.keys()])].sort(cmp);
}

function valuesChanges(b: RenderedStack, h: RenderedStack, bi: Index, hi: Index): ValuesChange[] {
  const values: ValuesChange[] = [];
  const doc = (r: RenderedStack, f: string) => {
    const docs = r.documents(f);
    return docs.length ? docs[0] : null;
  };
  for (const f of allFiles(b, h).filter((x) => VALUES_FILE.test(x))) {
    const unit = f.replace(/^values\//, "").replace(/\.ya?ml$/, "");
    const x = b.files.get(f);
    const y = h.files.get(f);
    if (x === y) continue;
    const meta = hi.units.get(unit) ?? bi.units.get(unit);
    const op = x === undefined ? "add" : y === undefined ? "remove" : "change";
    const changes = diff(x === undefined ? undefined : doc(b, f), y === undefined ? undefined : doc(h, f));
    if (op === "change" && changes.length === 0) continue;
    values.push({
      unit,
      ...(meta?.release ? { release: meta.release } : {}),
      ...(meta?.namespace ? { namespace: meta.namespace } : {}),
      op,
      changes: op === "change" ? changes : [],
    });
  }
  return values;
}

function unitChanges(bi: Index, hi: Index): UnitChange[] {
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
  return units;
}

/**
 * The placement delta from both sides' placement data. A render of schema 0 (before the model)
 * has none: then the files are compared as files, and the note says why there is no delta.
 */
function placementOf(b: RenderedStack, h: RenderedStack): { delta?: PlacementDelta; note?: string } {
  const [x, y] = [b.placement, h.placement];
  if (x && y) {
    if (b.files.get(PLACEMENT_DATA_FILE) === h.files.get(PLACEMENT_DATA_FILE)) return {};
    const delta = placementDelta(x, y);
    return isEmptyDelta(delta) ? {} : { delta };
  }
  if (b.files.get(PLACEMENT_MD_FILE) === h.files.get(PLACEMENT_MD_FILE)) return {};
  const old = [!x ? `the base (render schema ${b.schemaVersion})` : "", !y ? `this change (render schema ${h.schemaVersion})` : ""]
    .filter(Boolean)
    .join(" and ");
  return old ? { note: `No placement delta: ${old} has no ${PLACEMENT_DATA_FILE}, so ${PLACEMENT_MD_FILE} is compared line by line below` } : {};
}

/** Files outside index.yaml, objects/ and values/; those another section shows point there. */
function otherFiles(b: RenderedStack, h: RenderedStack, placement: PlacementDelta | undefined, nodes: NodeSteps[]): FileChange[] {
  const other: FileChange[] = [];
  const bothData = b.placement !== undefined && h.placement !== undefined;
  for (const f of allFiles(b, h)) {
    if (f === INDEX_FILE || f.startsWith("objects/") || VALUES_FILE.test(f)) continue;
    // placement.json is what placement.md and the delta show
    if (bothData && f === PLACEMENT_DATA_FILE) continue;
    if (placement && f === PLACEMENT_MD_FILE) continue;
    const c = fileChange(f, b, h);
    if (!c) continue;
    if (f === PLACEMENT_SVG_FILE && placement) other.push({ file: f, op: c.op, seeAlso: "the picture of the placement delta" });
    else if (f === TALOS_MACHINES_FILE && nodes.length && c.op === "change") other.push({ file: f, op: c.op, seeAlso: "node steps" });
    else other.push(c);
  }
  return other;
}

/** Compare one stack's two renders (either may be absent), judged against the base. */
export function previewStack(stack: string, base: Tree | undefined, head: Tree | undefined, policy?: PolicyReport, pins?: UpgradePins): StackPreview {
  // the two sides share their parses: a file unchanged by the change is parsed once
  const parsed = new Map<string, unknown[]>();
  const read = (tree: Tree | undefined, where: string) => tree && new RenderedStack(tree, `${where}/${stack}`, parsed);
  return compare(stack, read(base, "the base"), read(head, "this change"), policy, pins, { where: "the base" });
}

/** What both the preview and the verdict read of two renders: the changes of objects, values and units, and the actions on them. */
interface Changes {
  b: RenderedStack;
  h: RenderedStack;
  bi: Index;
  hi: Index;
  objects: StackPreview["objects"];
  values: ValuesChange[];
  units: UnitChange[];
  acting: Acting;
}

function changesOf(base: RenderedStack | undefined, head: RenderedStack | undefined): Changes {
  const b = base ?? new RenderedStack(new Map<string, string>(), "(none)");
  const h = head ?? new RenderedStack(new Map<string, string>(), "(none)");
  const bi = indexOf(b);
  const hi = indexOf(h);
  // an object file with the same text on both sides holds the same objects: only the others are read
  const differ = new Set(allFiles(b, h).filter((f) => f.startsWith("objects/") && b.files.get(f) !== h.files.get(f)));
  const objects = objectChanges(objectsOf(b, bi, differ), objectsOf(h, hi, differ));
  const values = valuesChanges(b, h, bi, hi);
  const units = unitChanges(bi, hi);
  return { b, h, bi, hi, objects, values, units, acting: actionsOf(objects, units, values, bi, hi) };
}

/**
 * What the change finds against `c.b`, the render it is judged against: what `pulumi up` would
 * refuse or fail on (errors), and what a reviewer weighs (warnings). `both`: the stack is on both
 * sides (a stack added or removed has no transition of its nodes, binding or upgrades).
 */
function findingsOf(c: Changes, both: boolean, pins: UpgradePins | undefined, judged: Judged): Check[] {
  const { b, h, bi, hi } = c;
  return [
    ...(both && pins ? stackUpgradeViews(pins, h).findings : []),
    ...c.acting.findings,
    ...removalFindings(c.acting.losses, hi, judged.where),
    ...serviceFindings(c.units, bi, hi),
    ...heldCheckFindings(c.objects),
    ...quorumFindings(c.values),
    ...(both
      ? [...postRenderFindings(b, h, bi), ...nodeFindings(bi, hi, judged), ...serviceChangeFindings(bi, hi, judged.where), ...bindingFindings(b, h)]
      : []),
    // a loss of nodes this change makes worse (lifecycle/failure-domains.ts, ./failure-delta.ts)
    ...(both ? failureDomainFindings(b.placement?.failureDomains, h.placement?.failureDomains) : []),
  ];
}

/**
 * The verdict's transition checks of one stack (review/verdict.ts): the preview's findings of going
 * from `reference` (what the stack is judged against) to `head`; none without a reference.
 */
export function transitionFindings(reference: RenderedStack | undefined, head: RenderedStack, judged: Judged): Check[] {
  return reference ? findingsOf(changesOf(reference, head), true, undefined, judged) : [];
}

function compare(
  stack: string,
  base: RenderedStack | undefined,
  head: RenderedStack | undefined,
  policy: PolicyReport | undefined,
  pins: UpgradePins | undefined,
  judged: Judged,
): StackPreview {
  const both = base !== undefined && head !== undefined;
  const c = changesOf(base, head);
  const { b, h, bi, hi, objects, values, units } = c;
  const warnings = warningChanges(bi, hi);
  const { delta: placement, note: placementNote } = both ? placementOf(b, h) : {};
  const nodes = both ? nodeSteps(b, h, LIFECYCLES) : [];
  const other = otherFiles(b, h, placement, nodes);
  const actions = c.acting.actions;
  const upgrades = both && pins ? stackUpgradeViews(pins, h).views : [];
  const settings = both ? diff(bi.settings, hi.settings) : [];
  const changed =
    settings.length +
      upgrades.length +
      actions.length +
      values.length +
      units.length +
      warnings.added.length +
      warnings.resolved.length +
      warnings.changed.length +
      other.length +
      (placement ? 1 : 0) >
    0;
  return {
    stack,
    status: !base ? "added" : !head ? "removed" : changed ? "changed" : "unchanged",
    title: (head ? hi.title : bi.title) || stack,
    judged: judged.where,
    settings,
    upgrades,
    actions,
    findings: findingsOf(c, both, pins, judged),
    objects,
    values,
    units,
    nodes,
    ...(placement ? { placement } : {}),
    ...(placementNote ? { placementNote } : {}),
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

/** What a stack is judged against (review/reference.ts), and what only the reference can say. */
export interface StackReference {
  /** As the report says it: `deployed/prod-medium, the last deployed commit (…)`. */
  where: string;
  judged: Judged;
  /** What is deployed: its render (undefined: none) and pins. Absent: the stack was never deployed, and the base is the reference. */
  deployed?: { render?: RenderedStack; pins?: UpgradePins };
  /** The deploy order's findings (review/verdict.ts). */
  findings: Check[];
}

/**
 * Every stack present in either render (optionally only some), sorted by name. The changes shown
 * are the base's to the head's; the findings are judged against each stack's reference
 * (`references`: what is deployed, else the base).
 */
export function previewAll(
  base: Tree,
  head: Tree,
  opts: {
    stacks?: string[] | undefined;
    policy?: PolicyReport | undefined;
    pins?: UpgradePins | undefined;
    references?: ReadonlyMap<string, StackReference> | undefined;
  } = {},
): StackPreview[] {
  // the two sides share their parses: a file unchanged by the change is parsed once
  const parsed = new Map<string, unknown[]>();
  const bs = renderedStacks(base, "the base", parsed);
  const hs = renderedStacks(head, "this change", parsed);
  const names = [...new Set([...bs.keys(), ...hs.keys()])].filter((s) => !opts.stacks?.length || opts.stacks.includes(s)).sort(cmp);
  return names.map((s) => {
    const ref = opts.references?.get(s);
    const shown = compare(s, bs.get(s), hs.get(s), opts.policy, opts.pins, ref && !ref.deployed ? ref.judged : { where: "the base" });
    const h = hs.get(s);
    if (!ref || !h) return shown;
    const against = ref.deployed
      ? findingsOf(changesOf(ref.deployed.render, h), ref.deployed.render !== undefined, ref.deployed.pins, ref.judged)
      : shown.findings;
    return { ...shown, judged: ref.where, findings: [...ref.findings, ...against] };
  });
}

/** Errors anywhere: `pulumi up` would refuse or fail on this change. */
export function hasErrors(stacks: StackPreview[]): boolean {
  return stacks.some((s) => s.findings.some((f) => f.level === "error"));
}
