// The diff of two renders of a stack (review/preview.ts compares them): each side's Index, the
// objects added, removed and changed (whether `pulumi up` updates or replaces each: ./replace-rules.ts;
// a PriorityClass's replacement, with what it means: platform/priority-classes.ts), the Helm values
// and units field by field, the placement delta, and the other files, leaving out those whose only
// change is a comment. Only the object files whose text differs are parsed.
import { byCodePoint, isPlainObject } from "../config/plain";
import type { NodeSteps } from "../lifecycle/steps";
import { APPLY_AS_PATCH_ANNOTATION } from "../plan/plan";
import { classReplacement, immutableChanges, isPriorityClass } from "../platform/priority-classes";
import { diff } from "../render/diff";
import { INDEX_FILE, PLACEMENT_DATA_FILE, PLACEMENT_MD_FILE, PLACEMENT_SVG_FILE, RenderedStack, TALOS_MACHINES_FILE } from "../render/rendered";
import { isEmptyDelta, placementDelta, type PlacementDelta } from "./placement-delta";
import { apiGroup, indexOf, type FileChange, type Index, type ObjectRef, type StackPreview, type UnitChange, type ValuesChange } from "./preview-model";
import { inPlace } from "./replace-rules";

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

function objectChanges(bo: Map<string, ParsedObject>, ho: Map<string, ParsedObject>): StackPreview["objects"] {
  const objects: StackPreview["objects"] = { added: [], removed: [], changed: [] };
  for (const k of [...new Set([...bo.keys(), ...ho.keys()])].sort(byCodePoint)) {
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
  return [...new Set([...b.files.keys(), ...h.files.keys()])].sort(byCodePoint);
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
  for (const name of [...new Set([...bi.units.keys(), ...hi.units.keys()])].sort(byCodePoint)) {
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
export function placementOf(b: RenderedStack, h: RenderedStack): { delta?: PlacementDelta; note?: string } {
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
export function otherFiles(b: RenderedStack, h: RenderedStack, placement: PlacementDelta | undefined, nodes: NodeSteps[]): FileChange[] {
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

/** What both the preview and the verdict read of two renders: their indexes, and the changes of objects, values and units. */
export interface Changes {
  b: RenderedStack;
  h: RenderedStack;
  bi: Index;
  hi: Index;
  objects: StackPreview["objects"];
  values: ValuesChange[];
  units: UnitChange[];
}

export function changesOf(base: RenderedStack | undefined, head: RenderedStack | undefined): Changes {
  const b = base ?? new RenderedStack(new Map<string, string>(), "(none)");
  const h = head ?? new RenderedStack(new Map<string, string>(), "(none)");
  const bi = indexOf(b);
  const hi = indexOf(h);
  // an object file with the same text on both sides holds the same objects: only the others are read
  const differ = new Set(allFiles(b, h).filter((f) => f.startsWith("objects/") && b.files.get(f) !== h.files.get(f)));
  const objects = objectChanges(objectsOf(b, bi, differ), objectsOf(h, hi, differ));
  const values = valuesChanges(b, h, bi, hi);
  const units = unitChanges(bi, hi);
  return { b, h, bi, hi, objects, values, units };
}
