// Two shapes every layer reads: a plain object (a map of a YAML or JSON document, a chart's values),
// and the order of strings by code point, which sorts rendered output the same on every machine and
// in every locale (String.prototype.localeCompare does not).

export type PlainObject = Record<string, unknown>;

/** A map: an object that is neither null nor an array. */
export function isPlainObject(v: unknown): v is PlainObject {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** `a` before `b` by code point: a comparator for Array.prototype.sort. */
export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
