// A structural diff of two renders' documents for reviewers (the preview, drift, the node steps):
// field paths (`spec.template.spec.nodeSelector`, `containers[name=api].image`, `tolerations[1]`,
// written by config/problems.ts formatPath) with the value before and after. Maps are compared
// key by key; lists whose items all carry a unique `name` are matched by name (Kubernetes lists of
// containers, volumes, env); other lists are aligned by a longest common subsequence, so inserting
// one item reports one added item rather than every later index as changed.
import { isDeepStrictEqual } from "node:util";
import type { PathSegment } from "../config/problems";
import { isPlainObject } from "../config/plain";

type Segment = PathSegment;

export interface Change {
  path: PathSegment[];
  op: "add" | "remove" | "change" | "reorder";
  before?: unknown;
  after?: unknown;
}

function namesOf(list: unknown[]): string[] | undefined {
  const names: string[] = [];
  for (const item of list) {
    if (!isPlainObject(item) || (typeof item.name !== "string" && typeof item.name !== "number")) return undefined;
    names.push(String(item.name));
  }
  return new Set(names).size === names.length ? names : undefined;
}

function diffNamed(a: unknown[], b: unknown[], an: string[], bn: string[], at: Segment[], out: Change[]): void {
  const byName = (list: unknown[], names: string[]) => new Map(names.map((n, i) => [n, list[i]]));
  const am = byName(a, an);
  const bm = byName(b, bn);
  for (const n of an) if (!bm.has(n)) out.push({ path: [...at, { name: n }], op: "remove", before: am.get(n) });
  for (const n of bn) {
    if (!am.has(n)) out.push({ path: [...at, { name: n }], op: "add", after: bm.get(n) });
    else walk(am.get(n), bm.get(n), [...at, { name: n }], out);
  }
  const common = (names: string[], other: Map<string, unknown>) => names.filter((n) => other.has(n));
  const ao = common(an, bm);
  const bo = common(bn, am);
  if (!isDeepStrictEqual(ao, bo)) out.push({ path: at, op: "reorder", before: ao, after: bo });
}

/** Edit script of a → b by longest common subsequence of deep-equal items. */
function align(a: unknown[], b: unknown[]): { op: "keep" | "remove" | "add"; i: number; j: number }[] {
  const n = a.length;
  const m = b.length;
  if (n * m > 4_000_000) {
    // Too long to align: compare position by position.
    const steps: { op: "keep" | "remove" | "add"; i: number; j: number }[] = [];
    for (let k = 0; k < Math.max(n, m); k++) {
      if (k < n && k < m && isDeepStrictEqual(a[k], b[k])) steps.push({ op: "keep", i: k, j: k });
      else {
        if (k < n) steps.push({ op: "remove", i: k, j: k });
        if (k < m) steps.push({ op: "add", i: k, j: k });
      }
    }
    return steps;
  }
  const eq = (i: number, j: number) => isDeepStrictEqual(a[i], b[j]);
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i][j] = eq(i, j) ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const steps: { op: "keep" | "remove" | "add"; i: number; j: number }[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && eq(i, j)) steps.push({ op: "keep", i: i++, j: j++ });
    else if (j < m && (i >= n || lcs[i][j + 1] >= lcs[i + 1][j])) steps.push({ op: "add", i, j: j++ });
    else steps.push({ op: "remove", i: i++, j });
  }
  return steps;
}

function diffList(a: unknown[], b: unknown[], at: Segment[], out: Change[]): void {
  const an = namesOf(a);
  const bn = namesOf(b);
  if (an && bn && (a.length > 0 || b.length > 0)) return diffNamed(a, b, an, bn, at, out);
  const steps = align(a, b);
  // A run of removals next to a run of additions is an edit in place: pair them up by position so
  // a changed field inside a list item is reported as that field.
  for (let k = 0; k < steps.length;) {
    if (steps[k].op === "keep") {
      k++;
      continue;
    }
    const removed: number[] = [];
    const added: number[] = [];
    while (k < steps.length && steps[k].op !== "keep") {
      if (steps[k].op === "remove") removed.push(steps[k].i);
      else added.push(steps[k].j);
      k++;
    }
    const paired = Math.min(removed.length, added.length);
    for (let p = 0; p < paired; p++) walk(a[removed[p]], b[added[p]], [...at, added[p]], out);
    for (const i of removed.slice(paired)) out.push({ path: [...at, i], op: "remove", before: a[i] });
    for (const j of added.slice(paired)) out.push({ path: [...at, j], op: "add", after: b[j] });
  }
}

function walk(a: unknown, b: unknown, at: Segment[], out: Change[]): void {
  if (isDeepStrictEqual(a, b)) return;
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      if (!(k in a)) out.push({ path: [...at, k], op: "add", after: b[k] });
      else if (!(k in b)) out.push({ path: [...at, k], op: "remove", before: a[k] });
      else walk(a[k], b[k], [...at, k], out);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) return diffList(a, b, at, out);
  out.push({ path: at, op: "change", before: a, after: b });
}

/** Every difference from `before` to `after`, in document order (map keys sorted). */
export function diff(before: unknown, after: unknown): Change[] {
  const out: Change[] = [];
  walk(before, after, [], out);
  return out;
}

/**
 * What an empty change path reads as (config/problems.ts formatPath(path, WHOLE_DOCUMENT)): the
 * document itself changed, e.g. from a map to a list.
 */
export const WHOLE_DOCUMENT = "(whole document)";
