// A fast path for toYaml (render/render.ts): block-style YAML of plain data, byte-identical to
// the yaml library's `stringify` with the render's options, at a fraction of its cost (it builds a
// document tree per file; a 5000-node render writes 10 000 files, npm run bench). The layout (block
// maps with sorted keys, block sequences, `{}`/`[]` when empty) is written here; every scalar and
// key is formatted by the library itself, once per distinct value, so quoting and YAML 1.1 rules stay
// the library's. Anything else (multi-line strings, undefined in a list, non-plain objects, very
// long keys) returns undefined and the caller uses the library for the whole document.
// test/render/yaml-emit.test.ts checks the equivalence on every rendered file and on arbitrary values.
import { parse, stringify, type ToStringOptions, type CreateNodeOptions, type DocumentOptions, type SchemaOptions } from "yaml";
import { byCodePoint } from "../config/plain";

export type YamlOptions = DocumentOptions & SchemaOptions & CreateNodeOptions & ToStringOptions;

const BAIL = Symbol("bail");

/**
 * Words every position writes as they are: a letter or '/', then letters, digits, '-', '_', '.',
 * '/', '@', and ':' or a space before one of those (no YAML indicator, number, date or special
 * float can start with a letter or '/'; ':' is an indicator only before a space or at the end, a
 * space only before '#' or at the end), except the YAML 1.1 booleans and nulls and an exponent
 * alone (`e5` is a float: the mantissa is optional), which the library quotes. Saves a library call
 * per distinct name, path, URL and sentence (node names, object files…): most of a render's first
 * run, when the library's code is still cold (npm run bench).
 */
const EXPONENT = /^[eE]-?[0-9]+$/;
const PLAIN_WORD = /^[A-Za-z/](?:[A-Za-z0-9_./@-]|[: ](?=[A-Za-z0-9_./@-]))*$/;
const YAML_1_1_WORDS = new Set(
  ["y", "yes", "n", "no", "true", "false", "on", "off", "null"].flatMap((w) => [w, w.toUpperCase(), w[0].toUpperCase() + w.slice(1)]),
);
/** A word the emitter writes, and the reader reads, as itself: plain YAML in every position, in 1.1 and 1.2 alike. */
const isPlainWord = (text: string) => PLAIN_WORD.test(text) && !YAML_1_1_WORDS.has(text) && !EXPONENT.test(text);

/** Keys the library writes as `? key` (explicit) past this length; left to the library. */
const MAX_KEY_LENGTH = 1000;

/**
 * How the library writes `v` in a position: `top` (a line that starts at column 0, where e.g.
 * `---` would end the document) or nested, as a map value, a map key or a list item. Each form is
 * cut out of the library's own output for a tiny document holding `v` in that position; a form
 * that takes more than one line is BAIL.
 */
const TEMPLATES = {
  topValue: { wrap: (v: unknown) => ({ k: v }), prefix: "k: ", suffix: "" },
  value: { wrap: (v: unknown) => ({ k: { k: v } }), prefix: "k:\n  k: ", suffix: "" },
  topItem: { wrap: (v: unknown) => [v], prefix: "- ", suffix: "" },
  item: { wrap: (v: unknown) => ({ k: [v] }), prefix: "k:\n  - ", suffix: "" },
  topKey: { wrap: (v: unknown) => ({ [v as string]: 0 }), prefix: "", suffix: ": 0" },
  key: { wrap: (v: unknown) => ({ k: { [v as string]: 0 } }), prefix: "k:\n  ", suffix: ": 0" },
} as const;

/** A plain object (not a class instance): what the emitter writes as a block map. */
const isMap = (v: unknown): v is Record<string, unknown> => {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

const isScalar = (v: unknown) => v === null || typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));

export function makeEmitter(options: YamlOptions): (value: unknown) => string | undefined {
  /** Caches hold distinct scalars only; a long-lived process (the property tests) starts them over now and then. */
  const CACHE_LIMIT = 200_000;
  const caches = new Map<string, Map<string, string>>();

  const form = (position: keyof typeof TEMPLATES, v: unknown): string | typeof BAIL => {
    if (typeof v === "string" && isPlainWord(v)) return v;
    // an integer is written in decimal in every position (-0 is not: the library writes it as such)
    if (typeof v === "number" && Number.isSafeInteger(v) && !Object.is(v, -0) && position !== "topKey" && position !== "key") return String(v);
    const cacheKey = typeof v === "string" ? `s${v}` : `${typeof v}:${Object.is(v, -0) ? "-0" : String(v)}`;
    let cache = caches.get(position);
    if (!cache) caches.set(position, (cache = new Map()));
    let s = cache.get(cacheKey);
    if (s === undefined) {
      const t = TEMPLATES[position];
      const text = stringify(t.wrap(v), options);
      const body = text.endsWith(`${t.suffix}\n`) && text.startsWith(t.prefix) ? text.slice(t.prefix.length, text.length - t.suffix.length - 1) : "\n";
      s = body.includes("\n") ? "\n" : body;
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(cacheKey, s);
    }
    return s === "\n" ? BAIL : s;
  };
  const scalar = (v: unknown, top: boolean, item: boolean) => form(item ? (top ? "topItem" : "item") : top ? "topValue" : "value", v);
  const key = (k: string, top: boolean) => (k.length > MAX_KEY_LENGTH ? BAIL : form(top ? "topKey" : "key", k));

  /** Lines of a non-empty collection at `indent`; the first line's indent may be replaced by the caller. */
  const collection = (v: unknown, indent: string, out: string[]): void => {
    if (Array.isArray(v)) {
      for (const item of v) {
        if (item === undefined) throw BAIL;
        const start = out.length;
        if (isScalar(item)) {
          const s = scalar(item, indent === "", true);
          if (s === BAIL) throw BAIL;
          out.push(`${indent}- ${s}`);
        } else if (Array.isArray(item) && item.length === 0) out.push(`${indent}- []`);
        else if (isMap(item) && Object.keys(item).every((k) => item[k] === undefined)) out.push(`${indent}- {}`);
        else if (Array.isArray(item) || isMap(item)) {
          collection(item, `${indent}  `, out);
          out[start] = `${indent}- ${out[start].slice(indent.length + 2)}`;
        } else throw BAIL;
      }
      return;
    }
    if (!isMap(v)) throw BAIL;
    const entries = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort(byCodePoint);
    for (const k of entries) {
      const ks = key(k, indent === "");
      if (ks === BAIL) throw BAIL;
      const item = v[k];
      if (isScalar(item)) {
        const s = scalar(item, indent === "", false);
        if (s === BAIL) throw BAIL;
        out.push(`${indent}${ks}: ${s}`);
      } else if (Array.isArray(item) && item.length === 0) out.push(`${indent}${ks}: []`);
      else if (isMap(item) && Object.keys(item).every((x) => item[x] === undefined)) out.push(`${indent}${ks}: {}`);
      else if (Array.isArray(item) || isMap(item)) {
        out.push(`${indent}${ks}:`);
        collection(item, `${indent}  `, out);
      } else throw BAIL;
    }
  };

  return (value: unknown) => {
    // documents that are scalars or empty are rare: the library writes them
    if (!(Array.isArray(value) ? value.length > 0 : isMap(value) && Object.values(value).some((x) => x !== undefined))) return undefined;
    const out: string[] = [];
    try {
      collection(value, "", out);
    } catch (e) {
      if (e === BAIL) return undefined;
      throw e;
    }
    return `${out.join("\n")}\n`;
  };
}

/**
 * Reads one scalar or key as the library would, in its position: `k: <text>` (value), `- <text>`
 * (item) or `<text>: 0` (key); BAIL on what the subset never writes. Cached per distinct text.
 */
function scalarReader(): (position: "value" | "item" | "key", text: string) => unknown {
  const CACHE_LIMIT = 200_000;
  const cache = new Map<string, unknown>();
  const INTEGER = /^(?:0|-?[1-9][0-9]{0,14})$/;
  return (position, text) => {
    if (INTEGER.test(text) && position !== "key") return Number(text);
    if (isPlainWord(text)) return text;
    // a start the subset never writes: an anchor, alias, tag, block scalar, flow collection, comment…
    if (/^[&*!|>[{#%@`]/.test(text) || text.startsWith("---") || text.startsWith("...")) throw BAIL;
    const cacheKey = `${position}:${text}`;
    if (cache.has(cacheKey)) return cache.get(cacheKey);
    let doc: unknown;
    try {
      doc = parse(position === "value" ? `k: ${text}\n` : position === "item" ? `- ${text}\n` : `${text}: 0\n`);
    } catch {
      throw BAIL;
    }
    let v: unknown;
    if (position === "value") v = (doc as { k: unknown }).k;
    else if (position === "item") v = (doc as unknown[])[0];
    else {
      if (doc === null || typeof doc !== "object" || Array.isArray(doc)) throw BAIL;
      const keys = Object.keys(doc);
      if (keys.length !== 1 || (doc as Record<string, unknown>)[keys[0]] !== 0) throw BAIL;
      v = keys[0];
    }
    if (v !== null && typeof v === "object") throw BAIL;
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(cacheKey, v);
    return v;
  };
}

/** The content lines of a document (the header's comments and blank lines left out), or undefined when the subset does not hold it. */
function contentLines(text: string): { indent: number; body: string }[] | undefined {
  if (/[\t\r]/.test(text)) return undefined;
  const lines: { indent: number; body: string }[] = [];
  let content = false;
  for (const line of text.split("\n")) {
    const body = line.trimStart();
    // comments before the content only (the header), and blank lines
    if (body === "" && line === "") continue;
    if (body.startsWith("#") && !content) continue;
    if (body === "" || body.startsWith("#")) return undefined;
    content = true;
    lines.push({ indent: line.length - body.length, body });
  }
  return lines.length === 0 ? undefined : lines;
}

/**
 * A fast path for the yaml library's `parse` (default options: YAML 1.2, core schema) of what the
 * emitter writes: block maps and sequences indented by spaces, `{}`/`[]`, one-line scalars
 * (`npm run render` reads every previous index.yaml back: with the library, most of a render's
 * first run, npm run bench). A plain word (PLAIN_WORD, not a core-schema boolean or null) is read
 * as it is, a canonical integer as a number; every other scalar and key is read by the library
 * itself, once per distinct text, in the same position. Anything else (comments after content,
 * anchors, tags, block or multi-line scalars, flow collections, tabs, duplicate keys, an indent it
 * does not expect) returns undefined and the caller uses the library for the whole document.
 * test/render/yaml-emit.test.ts checks the equivalence.
 */
export function makeReader(): (text: string) => unknown {
  const library = scalarReader();

  return (text: string) => {
    const lines = contentLines(text);
    if (!lines) return undefined;
    let i = 0;

    /** The block whose first line is lines[i], at `indent` (an item's content starts after its `- `). */
    const block = (indent: number): unknown => {
      if (lines[i].body.startsWith("- ") || lines[i].body === "-") {
        const out: unknown[] = [];
        while (i < lines.length && lines[i].indent === indent && (lines[i].body.startsWith("- ") || lines[i].body === "-")) {
          const rest = lines[i].body.slice(2);
          if (rest === "" || rest.startsWith(" ")) throw BAIL;
          // the item's own content: its first line read as if its `- ` were spaces
          lines[i] = { indent: indent + 2, body: rest };
          out.push(itemOrValue(indent + 2, "item"));
        }
        return out;
      }
      const out: Record<string, unknown> = {};
      while (i < lines.length && lines[i].indent === indent && !lines[i].body.startsWith("- ")) {
        const body = lines[i].body;
        const colon = body.endsWith(":") && !body.includes(": ") ? body.length - 1 : body.indexOf(": ");
        if (colon <= 0) throw BAIL;
        const k = library("key", body.slice(0, colon));
        if (typeof k !== "string" || k === "__proto__" || Object.prototype.hasOwnProperty.call(out, k)) throw BAIL;
        const rest = body.slice(colon + 1);
        if (rest === "") {
          i++;
          if (i >= lines.length || lines[i].indent <= indent) throw BAIL; // `k:` alone is null: never written
          out[k] = block(lines[i].indent);
        } else {
          lines[i] = { indent: indent + colon + 2, body: rest.slice(1) };
          out[k] = itemOrValue(indent + colon + 2, "value");
        }
      }
      return out;
    };

    /** A scalar, `{}`, `[]` or a block (an item's nested map or list) on line i. */
    const itemOrValue = (indent: number, position: "value" | "item"): unknown => {
      const { body } = lines[i];
      if (body === "{}" || body === "[]") {
        i++;
        return body === "{}" ? {} : [];
      }
      if (position === "item" && (body.startsWith("- ") || /^[^'"]*?(: |:$)/.test(body))) return block(indent);
      i++;
      return library(position, body);
    };

    try {
      if (lines[0].indent !== 0) return undefined;
      const value = block(0);
      // every line read, each where the layout expects it
      return i === lines.length ? value : undefined;
    } catch (e) {
      if (e === BAIL) return undefined;
      throw e;
    }
  };
}
