// The fast YAML path writes exactly what the yaml library writes (or declines): on every file a
// render of the shipped stacks and of a generated inventory holds, and on arbitrary values.
import fc from "fast-check";
import { parse, parseAllDocuments, stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../config/load";
import { YAML_OPTIONS } from "../../render/render";
import { makeEmitter, makeReader } from "../../render/yaml";
import { planStack } from "../../environments";
import { generatedProductionStack } from "../../bench/generate";
import { PROPERTY_SEED, runs } from "../helpers/topologies";
import { SHIPPED_STACKS } from "../helpers/stacks";
import { shippedPlan } from "../helpers/plans";
import { renderPlan, yamlDocuments } from "../../render/rendered";
import { isDeepStrictEqual } from "node:util";
import { STACK_DECLARATIONS } from "../../environments/registry";

const library = (v: unknown) => stringify(v, YAML_OPTIONS);

describe("the fast YAML path", () => {
  it("writes every rendered document as the library does", () => {
    const emit = makeEmitter(YAML_OPTIONS);
    const g = generatedProductionStack(40);
    const plans = [...SHIPPED_STACKS.map((s) => shippedPlan(s).plan!), planStack(loadConfig(g.raw, { stack: g.stack, file: "g" }, STACK_DECLARATIONS)).plan!];
    let fast = 0;
    for (const plan of plans) {
      for (const f of renderPlan(plan)) {
        for (const doc of parseAllDocuments(f.content)) {
          const value = doc.toJS();
          const out = emit(value);
          if (out !== undefined) fast++;
          expect(out ?? library(value), f.path).toBe(library(value));
        }
      }
    }
    expect(fast).toBeGreaterThan(100);
  });

  it("agrees where the position matters: a key or value at column 0, -0", () => {
    const emit = makeEmitter(YAML_OPTIONS);
    for (const v of [{ "": { "---": null } }, { "---": { a: "---" } }, [{ on: -0 }, { on: 0 }], [["---", "- a"], "%x"]]) {
      expect(emit(v)).toBe(library(v));
    }
  });

  it("declines or agrees on arbitrary values (YAML 1.1 words, quotes, colons, unicode, numbers)", () => {
    const emit = makeEmitter(YAML_OPTIONS);
    const word = fc.oneof(
      fc.string({ unit: "binary" }),
      fc.stringMatching(/^[A-Za-z/][A-Za-z0-9_./@: #-]{0,6}$/),
      fc.constantFrom(
        "Y",
        "N",
        "YES",
        "No",
        "oN",
        "ON",
        "Off",
        "NULL",
        "Null",
        "nULL",
        "True",
        "tRUE",
        "Inf",
        "NaN",
        "nan",
        "e5",
        "E5",
        "e-5",
        "e5x",
        "e_5",
        "E05",
      ),
      fc.constantFrom(
        "on",
        "off",
        "yes",
        "no",
        "y",
        "n",
        "true",
        "null",
        "~",
        "",
        " ",
        "-",
        "- a",
        "a: b",
        "#x",
        "1:20",
        "0o17",
        "017",
        "0x1F",
        "1e3",
        ".inf",
        "---",
        "'",
        '"',
        "a\nb",
        "a ",
        "@x",
        "`x",
        "%x",
        "&a",
        "*a",
        "!t",
        "{a}",
        "[a]",
        "x,y",
        "é",
        "\u0000",
        "a:",
        "a:b",
        "a::b",
        "a: b",
        "https://10.0.0.1:6443",
        "a/b.yaml",
        "a@b",
        "e.5",
        "a#b",
        "/",
        "/a b",
        "a b",
        "a  b",
        "a b ",
        "a #b",
        "a :b",
        "//",
        "/#",
        "/:",
      ),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        word,
        fc.integer(),
        fc.maxSafeInteger(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
        tie("list"),
        tie("map"),
      ),
      list: fc.array(tie("node"), { maxLength: 4 }),
      map: fc.dictionary(word, tie("node"), { maxKeys: 4 }),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        const out = emit(v);
        if (out !== undefined) expect(out).toBe(library(v));
      }),
      { seed: PROPERTY_SEED, numRuns: runs(2000) },
    );
  });
});

/** The reader returns what the library's parse returns, or declines (undefined); never a value for a text the library refuses. */
function agreesOrDeclines(read: (text: string) => unknown, text: string): boolean {
  let expected: unknown;
  try {
    expected = parse(text);
  } catch {
    expect(read(text), text).toBeUndefined();
    return false;
  }
  const got = read(text);
  if (got === undefined) return false;
  expect(isDeepStrictEqual(got, expected), text).toBe(true);
  return true;
}

describe("the fast YAML reader", () => {
  it("reads every rendered file as the library does, every index.yaml without it", () => {
    const read = makeReader();
    const g = generatedProductionStack(40);
    const plans = [...SHIPPED_STACKS.map((s) => shippedPlan(s).plan!), planStack(loadConfig(g.raw, { stack: g.stack, file: "g" }, STACK_DECLARATIONS)).plan!];
    let fast = 0;
    for (const plan of plans) {
      for (const f of renderPlan(plan)) {
        if (agreesOrDeclines(read, f.content)) fast++;
        if (f.path === "index.yaml") expect(read(f.content), `${plan.stack}/index.yaml`).toBeDefined();
      }
    }
    expect(fast).toBeGreaterThan(100);
  });

  it("reads a file of several documents (a Talos node's patch) document by document as the library does", () => {
    const g = generatedProductionStack(40);
    const plans = [...SHIPPED_STACKS.map((s) => shippedPlan(s).plan!), planStack(loadConfig(g.raw, { stack: g.stack, file: "g" }, STACK_DECLARATIONS)).plan!];
    const read = makeReader();
    let multi = 0;
    for (const plan of plans) {
      for (const f of renderPlan(plan).filter((x) => /\.ya?ml$/.test(x.path))) {
        const lib = parseAllDocuments(f.content).map((d) => d.toJS());
        expect(yamlDocuments(f.content), `${plan.stack}/${f.path}`).toEqual(lib);
        // the node patches read without the library: each of their documents is the reader's
        if (lib.length > 1 && f.content.split(/^---\n/m).every((part) => read(part) !== undefined)) multi++;
      }
    }
    expect(multi).toBeGreaterThan(30);
    // a `---` inside a block scalar, comments before the first document, an empty last one: as the library
    for (const t of ["a: 1\n---\nb: 2\n", "# c\n---\na: 1\n", "a: 1\n---\n", "---\na: 1\n---\nb: 2\n", "a: |\n  x\n  ---\n  y\n", "a: 1\n--- # c\nb: 2\n"])
      expect(yamlDocuments(t), JSON.stringify(t)).toEqual(parseAllDocuments(t).map((d) => d.toJS()));
  });

  it("declines or agrees on what the layout does not hold: comments, anchors, tags, flow, indents, duplicates", () => {
    const read = makeReader();
    const texts = [
      "a: 1\n# c\nb: 2\n",
      "a: x # c\n",
      "a: &x 1\nb: *x\n",
      "a: !!str 1\n",
      "a: |\n  x\n",
      "a: [1, 2]\n",
      "a: {b: 1}\n",
      "a:\n- 1\n",
      "a:\n  b: 1\n   c: 2\n",
      "a: x\n  y\n",
      "a: 1\na: 2\n",
      "a:\n",
      "---\na: 1\n",
      "a: 1\n---\nb: 2\n",
      "- a: 1\n  b: 2\n- - x\n  - y\n",
      "__proto__: 1\n",
      "'a: b': 1\n",
      "- 'a: b'\n- \"x\": 1\n",
      "a: 007\nb: -0\nc: 1e3\nd: .inf\ne: ~\nf: True\ng: yes\nh: 0x1F\n",
      "a:\tb\n",
      "a: 1\r\n",
      "  a: 1\n",
      "a: 'x\n  y'\n",
      "x #: y\n",
      "- x #: y\n",
    ];
    for (const t of texts) agreesOrDeclines(read, t);
    // the layout the render writes is read without the library
    expect(read("# header\na:\n  - b: c/d.yaml\n    e: https://x:1\n  - []\nf: {}\ng: 3\n")).toStrictEqual({
      a: [{ b: "c/d.yaml", e: "https://x:1" }, []],
      f: {},
      g: 3,
    });
  });

  it("reads what the emitter writes of arbitrary values, and declines or agrees on its lines reshuffled", () => {
    const emit = makeEmitter(YAML_OPTIONS);
    const read = makeReader();
    const word = fc.oneof(
      fc.string({ unit: "binary" }),
      fc.stringMatching(/^[A-Za-z/][A-Za-z0-9_./@: #-]{0,6}$/),
      fc.constantFrom(
        "on",
        "yes",
        "True",
        "null",
        "~",
        "",
        " ",
        "- a",
        "a: b",
        "a:",
        "#x",
        "x #y",
        "1:20",
        "007",
        "-0",
        "1e3",
        ".inf",
        "---",
        "'",
        '"',
        "a\nb",
        "a ",
        "&a",
        "*a",
        "!t",
        "{a}",
        "[a]",
        "é",
        "__proto__",
      ),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        word,
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
        tie("list"),
        tie("map"),
      ),
      list: fc.array(tie("node"), { maxLength: 4 }),
      map: fc.dictionary(word, tie("node"), { maxKeys: 4 }),
    })).node;
    let fast = 0;
    fc.assert(
      fc.property(value, fc.array(fc.nat(), { maxLength: 3 }), (v, cuts) => {
        const text = emit(v);
        if (text === undefined) return;
        if (agreesOrDeclines(read, text)) fast++;
        // lines dropped, doubled or indented: a text the layout may not hold
        const lines = text.split("\n");
        for (const c of cuts) {
          const at = c % lines.length;
          if (c % 3 === 0) lines.splice(at, 1);
          else if (c % 3 === 1) lines.splice(at, 0, lines[at]);
          else lines[at] = ` ${lines[at]}`;
        }
        agreesOrDeclines(read, lines.join("\n"));
      }),
      { seed: PROPERTY_SEED, numRuns: runs(2000) },
    );
    expect(fast).toBeGreaterThan(100);
  });
});
