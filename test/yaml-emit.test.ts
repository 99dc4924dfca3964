// The fast YAML path writes exactly what the yaml library writes (or declines): on every file a
// render of the shipped stacks and of a generated inventory holds, and on arbitrary values.
import fc from "fast-check";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../config/load";
import { YAML_OPTIONS } from "../render/render";
import { makeEmitter } from "../render/yaml";
import { planStack } from "../environments";
import { generatedProductionStack } from "../scripts/lib/generate";
import { PROPERTY_SEED, runs } from "./helpers/topologies";
import { SHIPPED_STACKS, shippedConfig } from "./helpers/stacks";
import { renderPlan } from "../render/render";
import { parseAllDocuments } from "yaml";

const library = (v: unknown) => stringify(v, YAML_OPTIONS);

describe("the fast YAML path", () => {
  it("writes every rendered document as the library does", () => {
    const emit = makeEmitter(YAML_OPTIONS);
    const g = generatedProductionStack(40);
    const plans = [...SHIPPED_STACKS.map((s) => planStack(shippedConfig(s)).plan!), planStack(loadConfig(g.raw, { stack: g.stack, file: "g" })).plan!];
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
      fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,5}$/),
      fc.constantFrom("Y", "N", "YES", "No", "oN", "ON", "Off", "NULL", "Null", "nULL", "True", "tRUE", "Inf", "NaN", "nan", "e5", "E5", "e-5", "e5x", "e_5", "E05"),
      fc.constantFrom("on", "off", "yes", "no", "y", "n", "true", "null", "~", "", " ", "-", "- a", "a: b", "#x", "1:20", "0o17", "017", "0x1F", "1e3", ".inf", "---", "'", '"', "a\nb", "a ", "@x", "`x", "%x", "&a", "*a", "!t", "{a}", "[a]", "x,y", "é", "\u0000"),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: "small" }, word, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), tie("list"), tie("map")),
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
