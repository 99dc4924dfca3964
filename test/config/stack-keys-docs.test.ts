// Every key of the stack schema is documented in stacks/README.md, and every key it documents exists.
// Both lists are read, never written here: a new schema key, or a README row that outlives its key,
// fails this test by name.
//
// The schema's keys: config/schema.ts `configSchemaOf` the registry's services, walked through zod's definitions (optional,
// default, prefault and pipe unwrapped; every option of a union). A key path is written as a stack
// file nests it, without `openkeel:`: `[]` after a list whose entries have keys (`nodes[].name`),
// `<service>` for the services of a map keyed by every service (`openkeel:services`,
// `openkeel:charts.versions`), `<key>` for an entry of a map that takes any key (node labels, host
// networks, a service's replicas and placement).
//
// The README's keys: the rows of every table whose first column is `key`. A row's keys are the
// backticked words of its first cell outside parentheses (`replicas.storage` (`swift` only)); one
// that starts with `.` replaces the last part of the key before it (`medik8s.maxUnhealthy.compute`,
// `.containers`). A key written `openkeel:…` is whole; the others are relative to
//   - the `openkeel:` keys the paragraph just above the table opens with (`openkeel:talos.compute`
//     — …; `openkeel:a` and `openkeel:b` have one shape …), else
//   - the `openkeel:` key of the table's section heading (### `openkeel:nodes[]`), else
//   - every key whose row's type links to that section ([secondary network](#secondary-networks)).
//
// A schema key counts as documented when
//   1. a row documents it, or
//   2. a row documents a key inside it (`openkeel:talos.compute.systemReserved` by
//      `systemReserved.memory`), or
//   3. its name is backticked, or listed in a `{…}` of fields in the type cell, in the row of the key
//      it belongs to (`bonds[]` | `{name, members, mode, …}`), or
//   4. it is `<key>`, an entry of a map that takes any key, and the map is documented.
// Keys match part by part, `[]` left out; a part the README writes `<…>` matches any one part
// (`versions.<chart>` documents `charts.versions.infrastructure` and `charts.versions.<service>`).
// A documented key exists when it matches a schema key, or names an entry of one of its maps
// (`replicas.storage`, an entry of `services.<service>.replicas.<key>`).
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { configSchemaOf } from "../../config/schema";
import { OPENKEEL_SERVICES } from "../../openkeel/services";
import { STACK_DECLARATIONS } from "../../environments/registry";

const SERVICES: readonly string[] = OPENKEEL_SERVICES.map((s) => s.name);
const configSchema = configSchemaOf(STACK_DECLARATIONS);

const README_PATH = path.resolve(__dirname, "../../stacks/README.md");
const README = fs.readFileSync(README_PATH, "utf8");

// ---- the schema's keys ----

/** What zod keeps of a schema: its kind and the parts that lead further down. */
interface SchemaDef {
  type: string;
  shape?: Record<string, Schema>;
  innerType?: Schema;
  in?: Schema;
  out?: Schema;
  element?: Schema;
  valueType?: Schema;
  options?: readonly Schema[];
  left?: Schema;
  right?: Schema;
}
interface Schema {
  _zod: { def: SchemaDef };
}

/** Kinds without keys below them. A kind the walk does not know stops it: a key it skipped would go unchecked. */
const LEAVES = new Set([
  "string",
  "number",
  "boolean",
  "bigint",
  "enum",
  "literal",
  "template_literal",
  "unknown",
  "any",
  "null",
  "undefined",
  "date",
  "transform",
  "custom",
]);

const join = (prefix: string, part: string) => (prefix === "" ? part : `${prefix}.${part}`);

/**
 * The keys of an object. In a map keyed by every service, `<service>` stands for them where every
 * service has the key (`services.<service>.enabled`), and the service is named where only some do
 * (`services.ironic.bmcNetworks`).
 */
function objectKeys(shape: Record<string, Schema>, prefix: string): string[] {
  const services = SERVICES.every((s) => s in shape) ? SERVICES : [];
  const own = Object.entries(shape)
    .filter(([key]) => !services.includes(key))
    .flatMap(([key, value]) => [join(prefix, key), ...schemaKeys(value, join(prefix, key))]);
  if (services.length === 0) return own;
  const any = join(prefix, "<service>");
  const each = services.map((s) => ({ s, keys: schemaKeys(shape[s], any) }));
  const shared = each[0].keys.filter((k) => each.every((e) => e.keys.includes(k)));
  const some = each.flatMap(({ s, keys }) => keys.filter((k) => !shared.includes(k)).map((k) => join(prefix, s) + k.slice(any.length)));
  return [any, ...shared, ...own, ...some];
}

/** The key paths below `schema`, whose own path is `prefix`: each once, sorted. */
function schemaKeys(schema: Schema, prefix = ""): string[] {
  const def = schema._zod.def;
  const below = (s: Schema | undefined, at = prefix) => schemaKeys(s!, at);
  let keys: string[];
  if (def.innerType) keys = below(def.innerType); // optional, default, prefault, nullable, readonly, catch
  else if (def.type === "pipe") keys = [...below(def.in), ...below(def.out)];
  else if (def.type === "object") keys = objectKeys(def.shape!, prefix);
  else if (def.type === "array") keys = below(def.element, `${prefix}[]`);
  else if (def.type === "record") keys = [join(prefix, "<key>"), ...below(def.valueType, join(prefix, "<key>"))];
  else if (def.type === "union") keys = def.options!.flatMap((o) => below(o));
  else if (def.type === "intersection") keys = [...below(def.left), ...below(def.right)];
  else if (LEAVES.has(def.type)) keys = [];
  else throw new Error(`${prefix || "the schema"}: a zod ${def.type}, which this test's key walk does not know. Fix: teach schemaKeys where its keys are`);
  return [...new Set(keys)].sort();
}

// ---- the README's keys ----

/** A key the README documents, with the words of its row. */
interface DocRow {
  key: string;
  /** Backticked words anywhere in the row, and the fields of a `{…}` in its type cell. */
  names: Set<string>;
  /** The sections its type cell links to (`#secondary-networks`). */
  links: string[];
}
/** A table of keys as written: its section, the keys it is relative to, its rows' own keys. */
interface KeyTable {
  heading: string;
  slug: string;
  prefixes: string[];
  rows: { keys: string[]; names: Set<string>; links: string[] }[];
}
type Block = { kind: "heading" | "table" | "text" | "code"; lines: string[] };

const backticked = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
const PROJECT_KEY = "openkeel:";
const projectKeys = (text: string) => backticked(text).filter((t) => t.startsWith(PROJECT_KEY));

/** The markdown's headings, tables, paragraphs and code blocks, in order. */
function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  let open: Block | undefined;
  for (const line of markdown.split("\n")) {
    if (open?.kind === "code") {
      open.lines.push(line);
      if (line.startsWith("```")) open = undefined;
      continue;
    }
    const kind = line.startsWith("```") ? "code" : line.startsWith("#") ? "heading" : line.startsWith("|") ? "table" : line.trim() === "" ? undefined : "text";
    if (kind === undefined || kind !== open?.kind || kind === "heading") {
      open = kind === undefined ? undefined : { kind, lines: [] };
      if (open) out.push(open);
    }
    open?.lines.push(line);
  }
  return out;
}

/** A table row's cells; `\|` is a pipe inside a cell. */
const cells = (line: string) =>
  line
    .trim()
    .replace(/^\||\|$/g, "")
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());

/** GitHub's anchor of a heading. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");

/** The keys of a row's first cell: backticked, outside parentheses, `.x` relative to the key before it. */
function rowKeys(cell: string): string[] {
  let text = cell;
  while (/\([^()]*\)/.test(text)) text = text.replace(/\([^()]*\)/g, "");
  const keys: string[] = [];
  for (const token of backticked(text))
    keys.push(token.startsWith(".") && keys.length > 0 ? join(keys.at(-1)!.replace(/\.[^.]*$/, ""), token.slice(1)) : token);
  return keys;
}

/** A row of a key table: its keys, the words it mentions, the sections its type links to. */
function keyRow(line: string): KeyTable["rows"][number] {
  const [first, type = ""] = cells(line);
  const fields = [...type.matchAll(/\{([^}]*)\}/g)].flatMap((m) => m[1].split(",").map((f) => /^\s*([\w-]+)/.exec(f)?.[1] ?? ""));
  return {
    keys: rowKeys(first),
    names: new Set([...cells(line).flatMap(backticked), ...fields].filter((n) => n !== "")),
    links: [...type.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]),
  };
}

/** The `openkeel:` keys a paragraph opens with (`openkeel:a` and `openkeel:b` — …). */
function introKeys(paragraph: Block | undefined): string[] {
  const text = paragraph?.kind === "text" ? paragraph.lines.join(" ") : "";
  const opening = /^(`openkeel:[^`]+`(,? and |, )?)+/.exec(text)?.[0] ?? "";
  return projectKeys(opening).map((k) => k.slice(PROJECT_KEY.length));
}

/** The tables whose first column is `key`, each with its section and the keys it is relative to. */
function keyTables(markdown: string): KeyTable[] {
  const tables: KeyTable[] = [];
  let heading = "";
  let above: Block | undefined;
  for (const block of blocks(markdown)) {
    if (block.kind === "heading") heading = block.lines[0].replace(/^#+\s*/, "");
    if (block.kind === "table" && cells(block.lines[0])[0] === "key") {
      const sectionKey = projectKeys(heading)[0]?.slice(PROJECT_KEY.length);
      const intro = introKeys(above);
      const prefixes = intro.length > 0 ? intro : sectionKey !== undefined ? [sectionKey] : [];
      tables.push({ heading, slug: slug(heading), prefixes, rows: block.lines.slice(2).map(keyRow) });
    }
    above = block.kind === "heading" ? undefined : block;
  }
  return tables;
}

/** A table's rows, one per key and prefix; a relative key with no prefix is an error of the README. */
function resolve(table: KeyTable, prefixes: readonly string[]): DocRow[] {
  return table.rows.flatMap(({ keys, names, links }) =>
    keys.flatMap((key) => {
      if (key.startsWith(PROJECT_KEY)) return [{ key: key.slice(PROJECT_KEY.length), names, links }];
      if (prefixes.length === 0) {
        throw new Error(
          `stacks/README.md, the table under "${table.heading}": \`${key}\` is relative to no openkeel: key. Fix: write the key whole (openkeel:…), name it in the section's heading, open the paragraph above the table with it (\`openkeel:…\` — …), or link the section from the type of the key whose fields it lists`,
        );
      }
      return prefixes.map((p) => ({ key: join(p, key), names, links }));
    }),
  );
}

/** Every key the README documents; a section without a key of its own documents the fields of each key whose type links to it. */
function documentedRows(markdown: string): DocRow[] {
  const tables = keyTables(markdown);
  const placed = (t: KeyTable) => t.prefixes.length > 0 || t.rows.every((r) => r.keys.every((k) => k.startsWith(PROJECT_KEY)));
  const direct = tables.filter(placed).flatMap((t) => resolve(t, t.prefixes));
  const linked = tables
    .filter((t) => !placed(t))
    .flatMap((t) =>
      resolve(
        t,
        direct.filter((r) => r.links.includes(t.slug)).map((r) => r.key),
      ),
    );
  return [...direct, ...linked];
}

// ---- the judgement ----

const parts = (key: string) => key.replaceAll("[]", "").split(".");
const wild = (part: string) => part.startsWith("<");

/** `pattern` is `key` (or, `inside`, a key inside `key`), part by part; a `<…>` part of the pattern matches any part. */
function fits(pattern: string, key: string, inside = false): boolean {
  const p = parts(pattern);
  const k = parts(key);
  return (inside ? p.length > k.length : p.length === k.length) && k.every((part, i) => part === p[i] || wild(p[i]));
}

/** The rules of the header comment, 1 to 4. */
function documented(key: string, rows: readonly DocRow[]): boolean {
  const parent = key.includes(".") ? key.slice(0, key.lastIndexOf(".")) : undefined;
  const name = parts(key).at(-1)!;
  const byRow = rows.some((r) => fits(r.key, key) || fits(r.key, key, true) || (parent !== undefined && fits(r.key, parent) && r.names.has(name)));
  return byRow || (name === "<key>" && parent !== undefined && documented(parent, rows));
}

/** The schema keys stacks/README.md does not document, and the keys it documents that the schema does not have. */
function judge(schema: Schema, markdown: string): { undocumented: string[]; stale: string[] } {
  const keys = schemaKeys(schema);
  const rows = documentedRows(markdown);
  return {
    undocumented: keys.filter((k) => !documented(k, rows)).map((k) => PROJECT_KEY + k),
    stale: [...new Set(rows.map((r) => r.key))].filter((d) => !keys.some((k) => fits(d, k) || fits(k, d))).map((d) => PROJECT_KEY + d),
  };
}

describe("stacks/README.md documents the stack schema", () => {
  const found = judge(configSchema, README);

  it("every key of the schema", () => {
    expect(found.undocumented, "schema keys stacks/README.md does not document (a row of their own, or their name in their map's row)").toEqual([]);
  });

  it("and no key the schema does not have", () => {
    expect(found.stale, "keys stacks/README.md documents that the schema does not have").toEqual([]);
  });
});

describe("the judgement fails by name", () => {
  const shape = configSchema.shape;

  it("on a schema key stacks/README.md does not document, top-level or nested", () => {
    const grown = z.strictObject({
      ...shape,
      rackAware: z.boolean().optional(),
      nodes: z.array(shape.nodes.element.extend({ rack: z.string().optional() })),
    });
    expect(judge(grown, README)).toEqual({ undocumented: ["openkeel:nodes[].rack", "openkeel:rackAware"], stale: [] });
  });

  it("on a row whose key the schema no longer has", () => {
    const renamed = README.replace("| `zone` |", "| `rack` |");
    expect(renamed).not.toBe(README);
    expect(judge(configSchema, renamed)).toEqual({ undocumented: ["openkeel:nodes[].zone"], stale: ["openkeel:nodes[].rack"] });
  });

  it("on a stale row of a table several keys share, once for each of them", () => {
    const renamed = README.replace("| `excludeIps` |", "| `excludedIps` |");
    expect(renamed).not.toBe(README);
    expect(judge(configSchema, renamed).stale).toEqual([
      "openkeel:platform.longhorn.storageNetwork.excludedIps",
      "openkeel:services.ironic.provisioningNetwork.excludedIps",
    ]);
  });

  it("on a row for a key of a map's entry that the entries do not have", () => {
    const table = "| `nodeAddress.link` |";
    const withRow = README.replace(table, `| \`mtu\` | integer | none | the link's MTU |\n${table}`);
    expect(judge(configSchema, withRow).stale).toEqual(["openkeel:hostNetworks.<name>.mtu"]);
  });

  it("on a field a row's type no longer lists", () => {
    const dropped = README.replace("`{name, members, mode, xmitHashPolicy?, miimon?,", "`{name, members, mode, miimon?,").replace(
      "`xmitHashPolicy` one of",
      "one of",
    );
    expect(judge(configSchema, dropped).undocumented).toEqual(["openkeel:hostNetworks.<key>.bonds[].xmitHashPolicy"]);
  });
});

describe("the README's rules", () => {
  const table = (...rows: string[]) => ["| key | type | default | meaning |", "|---|---|---|---|", ...rows].join("\n");
  const keysOf = (markdown: string) => documentedRows(markdown).map((r) => r.key);

  it("a row's keys: backticked outside parentheses, `.x` after the key before it, `openkeel:` ones whole", () => {
    const md = ["## `openkeel:a`", "", table("| `b.c`, `.d` (`e` only) | map | | `f` |", "| `openkeel:g` | | | |")].join("\n");
    expect(keysOf(md)).toEqual(["a.b.c", "a.b.d", "g"]);
  });

  it("a table's keys are relative to the keys its paragraph opens with, else to its heading's", () => {
    const md = [
      "## `openkeel:a`",
      "",
      table("| `b` | | | |"),
      "",
      "`openkeel:a.c` and `openkeel:a.d` — their fields, not `openkeel:x`:",
      "",
      table("| `e` | | | |"),
    ].join("\n");
    expect(keysOf(md)).toEqual(["a.b", "a.c.e", "a.d.e"]);
  });

  it("a section without a key documents the fields of each key whose type links to it", () => {
    const md = ["## `openkeel:a`", "", table("| `b` | [shape](#a-shape) | | |", "| `c` | map | | |"), "", "## A shape", "", table("| `d` | | | |")].join("\n");
    expect(keysOf(md)).toEqual(["a.b", "a.c", "a.b.d"]);
  });

  it("tables of other things, and code blocks, are not read", () => {
    const md = [
      "## `openkeel:a`",
      "",
      "```yaml",
      "# not a heading",
      "| `x` | not a row |",
      "```",
      "",
      "| check | level |",
      "|---|---|",
      "| `y` | error |",
      "",
      table("| `b` | | | |"),
    ].join("\n");
    expect(keysOf(md)).toEqual(["a.b"]);
  });

  it("a table whose keys are relative to nothing is an error naming its section", () => {
    expect(() => documentedRows(["## Elsewhere", "", table("| `b` | | | |")].join("\n"))).toThrow(
      'stacks/README.md, the table under "Elsewhere": `b` is relative to no openkeel: key',
    );
  });

  it("the walk stops at a kind of schema it does not know, rather than miss its keys", () => {
    expect(() => schemaKeys(z.strictObject({ a: z.map(z.string(), z.strictObject({ b: z.string() })) }))).toThrow("a: a zod map");
  });
});
