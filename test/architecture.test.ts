// The layout is the architecture: one folder per concern, imports running one way. These are the
// rules README.md draws; a change that breaks them fails here with the import that does.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "./helpers/stacks";

/** Bottom to top: a folder imports only from folders before it (and from itself). */
const LAYERS = ["config", "topology", "plan", "placement", "render", "platform", "openkeel", "nodes", "environments", "components"];
/** On top of every layer; the policy pack stands alone and reads only the design's vocabulary. */
const TOP = ["index.ts", "scripts"];
const POLICY_MAY_IMPORT = ["config/roles.ts", "config/problems.ts"];

function sources(dir: string): string[] {
  return (fs.readdirSync(path.join(REPO, dir), { recursive: true }) as string[])
    .filter((f) => f.endsWith(".ts"))
    .map((f) => path.join(dir, f).split(path.sep).join("/"));
}

const FILES = [...[...LAYERS, "scripts", "policy"].flatMap(sources), "index.ts"];

/** The repository files a file imports (relative imports only, resolved to .ts or index.ts). */
function imports(file: string): string[] {
  const text = fs.readFileSync(path.join(REPO, file), "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]));
    const hit = [`${base}.ts`, `${base}/index.ts`, base].find((c) => FILES.includes(c));
    if (hit) out.push(hit);
  }
  return out;
}

const GRAPH = new Map(FILES.map((f) => [f, imports(f)]));
const folder = (file: string) => (file.includes("/") ? file.slice(0, file.indexOf("/")) : file);

/** Imports that run up the layers, or out of the policy pack. */
function upwardImports(graph: Map<string, string[]>): string[] {
  const wrong: string[] = [];
  for (const [file, deps] of graph) {
    const from = LAYERS.indexOf(folder(file));
    for (const dep of deps) {
      if (folder(file) === "policy") {
        if (folder(dep) !== "policy" && !POLICY_MAY_IMPORT.includes(dep)) wrong.push(`${file} → ${dep} (the pack stands alone)`);
        continue;
      }
      if (from < 0) continue; // index.ts and scripts/ sit on top
      const to = LAYERS.indexOf(folder(dep));
      if (to < 0 || to > from) wrong.push(`${file} → ${dep}`);
    }
  }
  return wrong;
}

/** Every import cycle between files, as `a → b → a`. */
function cycles(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, "open");
    stack.push(f);
    for (const d of graph.get(f) ?? []) {
      if (state.get(d) === "open") found.push([...stack.slice(stack.indexOf(d)), d].join(" → "));
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(f, "done");
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return found;
}

describe("architecture", () => {
  it("every source folder is a known layer, and the graph is read", () => {
    for (const f of new Set(FILES.map(folder))) expect([...LAYERS, ...TOP, "policy"]).toContain(f);
    expect(GRAPH.get("environments/index.ts")).toContain("environments/compose.ts");
    expect(GRAPH.get("index.ts")).toContain("components/deploy.ts");
  });

  it("no folder imports one above it", () => {
    expect(upwardImports(GRAPH)).toEqual([]);
  });

  it("no import cycle between files", () => {
    expect(cycles(GRAPH)).toEqual([]);
  });

  it("the checks trip on an upward import, an import out of the pack, and a cycle", () => {
    const bad = new Map([
      ["config/schema.ts", ["platform/longhorn.ts"]],
      ["policy/rules/d5.ts", ["platform/longhorn.ts"]],
      ["platform/longhorn.ts", ["platform/context.ts"]],
      ["platform/context.ts", ["platform/longhorn.ts"]],
    ]);
    expect(upwardImports(bad)).toEqual(["config/schema.ts → platform/longhorn.ts", "policy/rules/d5.ts → platform/longhorn.ts (the pack stands alone)"]);
    expect(cycles(bad)).toEqual(["platform/longhorn.ts → platform/context.ts → platform/longhorn.ts"]);
  });
});
