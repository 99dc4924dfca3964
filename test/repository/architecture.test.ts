// The layout is the architecture: one folder per concern, imports running one way. These are the
// rules docs/where-a-change-goes.md draws; a change that breaks them fails here with the import that does.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../helpers/stacks";

/**
 * Bottom to top: a folder imports only from folders before it (and from itself). The product first
 * (config → components), then the offline tooling built on it: the commands' plumbing, the offline
 * engine that hosts the policy pack, the tools and validators, the review tooling (preview, drift,
 * data-safety guards), the render pipeline's commands, the e2e harness with its stand-ins, the bench.
 */
const LAYERS = [
  "config",
  "topology",
  "plan",
  "placement",
  "render",
  "lifecycle",
  "platform",
  "openkeel",
  "nodes",
  "environments",
  "components",
  "cli",
  "offline-engine",
  "tools",
  "review",
  "pipeline",
  "e2e/standins",
  "e2e/harness",
  "bench",
];
/** On top of every layer: the Pulumi entry, the commands' entry points, the test suites and their helpers, the e2e's mutated program (run as a project's main). */
const TOP = ["index.ts", "scripts", "test", "e2e/fixtures"];
/** The policy pack stands alone and reads only the design's vocabulary. */
const POLICY_MAY_IMPORT = ["config/roles.ts", "config/problems.ts"];
/** The one layer that reads the pack: the offline engine that hosts it (as `pulumi preview --policy-pack` does). */
const PACK_HOST = "offline-engine";

function sources(dir: string): string[] {
  return (fs.readdirSync(path.join(REPO, dir), { recursive: true }) as string[])
    .filter((f) => f.endsWith(".ts"))
    .map((f) => path.join(dir, f).split(path.sep).join("/"));
}

const FILES = [...new Set([...[...LAYERS.map((l) => l.split("/")[0]), "scripts", "test", "policy"].flatMap(sources), "index.ts"])];

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
/** The layer a file belongs to: its top folder, or the part of e2e/ it is in. */
const folder = (file: string) => {
  const e2e = /^e2e\/(harness|standins|fixtures)\//.exec(file);
  if (e2e) return `e2e/${e2e[1]}`;
  return file.includes("/") ? file.slice(0, file.indexOf("/")) : file;
};

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
      if (from < 0) continue; // index.ts, scripts/ and the test suites sit on top
      if (folder(dep) === "policy" && folder(file) === PACK_HOST) continue;
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

/** The one module that writes and reads rendered/<stack>/ (docs/where-a-change-goes.md, "Layout"). */
const RENDERED_MODEL = "render/rendered.ts";
/** Its parts (model, writer, schemas), which only it imports: the model is them together. */
const RENDERED_MODEL_PART = /^render\/rendered-[a-z]+\.ts$/;
/** The files of rendered/<stack>/ only the model may name: reading them is its job (placement.md is drawn from placement.json, never read back). */
const MODEL_FILES = /["'`](index\.yaml|placement\.json|placement\.md|talos\/machines\.yaml)["'`]/;

/** Files outside the model (and outside the test suites, which hold the bytes to account) that name a file of the model. */
function modelFilesNamed(sources: Map<string, string>): string[] {
  return [...sources]
    .filter(
      ([file, text]) => file !== RENDERED_MODEL && !RENDERED_MODEL_PART.test(file) && !/\.test\.ts$|^test\/helpers\//.test(file) && MODEL_FILES.test(text),
    )
    .map(([file, text]) => `${file}: ${MODEL_FILES.exec(text)![0]}`);
}

/** Where the node states are defined: the one file that may compare a state's name. */
const STATES_DEFINITION = "config/lifecycle.ts";

/**
 * Every place outside the states' definition that compares or defaults a node state by its name
 * (`=== "retiring"`, `?? "active"`, `.default("active")`, a set of names): rules read the states'
 * traits instead (config/lifecycle.ts), so a new state is its definition and its docs.
 */
function stateNamesCompared(texts: ReadonlyMap<string, string>, states: readonly string[]): string[] {
  const name = `"(?:${states.join("|")})"`;
  const compared = new RegExp(`(?:[!=]==?|\\?\\?)\\s*${name}|${name}\\s*[!=]==?|\\.default\\(\\s*${name}|(?:Set|includes)\\(\\s*\\[?[^\\]\\n]*${name}`);
  const out: string[] = [];
  for (const [file, text] of texts) {
    if (file === STATES_DEFINITION || file.startsWith("test/")) continue;
    text.split("\n").forEach((line, i) => {
      if (compared.test(line)) out.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  return out;
}

/**
 * Where a test file sits: a suite in test/<layer>/ mirrors the source folder it tests (a layer, the
 * policy pack, scripts/, or repository/ for rules about the repository's own files); a suite that
 * starts a process (a CLI, git, a real tool, a policy pack) or runs the Pulumi program sits in
 * test/integration/<layer>/, and `npm run test:fast` leaves those out. Helpers, fixtures and the
 * run's setup have their folders.
 */
const TEST_LAYERS = [...new Set(LAYERS.map((l) => l.split("/")[0])), "policy", "scripts", "repository"];
const TEST_SUPPORT = ["test/helpers/", "test/fixtures/", "test/setup/"];
/** What only an integration suite may import: a process, a git repository, the Pulumi program under the runtime mocks. */
const STARTS_MORE = /^import [^\n]*from "(?:node:child_process|[./]*helpers\/(?:repos|pulumi)|[./]*offline-engine\/mock-run)"/m;

function misplacedTests(files: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    if (!file.startsWith("test/") || TEST_SUPPORT.some((d) => file.startsWith(d))) continue;
    const m = /^test\/(integration\/)?([^/]+)\/[^/]+\.test\.ts$/.exec(file);
    if (!m || !TEST_LAYERS.includes(m[2])) out.push(`${file}: not in test/<layer>/ or test/integration/<layer>/ (layers: ${TEST_LAYERS.join(", ")})`);
    else if (!m[1] && STARTS_MORE.test(text))
      out.push(`${file}: ${STARTS_MORE.exec(text)![0]}: a suite that starts a process or the program belongs in test/integration/${m[2]}/`);
  }
  return out;
}

describe("architecture", () => {
  it("every source folder is a known layer, and the graph is read", () => {
    for (const f of new Set(FILES.map(folder))) expect([...LAYERS, ...TOP, "policy"]).toContain(f);
    expect(GRAPH.get("environments/index.ts")).toContain("environments/compose.ts");
    expect(GRAPH.get("index.ts")).toContain("components/deploy.ts");
    expect(GRAPH.get("e2e/harness/setup.ts")).toContain("e2e/standins/artifacts.ts");
    expect(FILES).toContain("test/repository/architecture.test.ts");
  });

  it("no folder imports one above it", () => {
    expect(upwardImports(GRAPH)).toEqual([]);
  });

  it("no import cycle between files", () => {
    expect(cycles(GRAPH)).toEqual([]);
  });

  it("rendered/<stack>/ is read through the rendered model only: no other file names index.yaml, placement.json or talos/machines.yaml", () => {
    expect(modelFilesNamed(new Map(FILES.map((f) => [f, fs.readFileSync(path.join(REPO, f), "utf8")])))).toEqual([]);
    for (const reader of ["review/preview.ts", "review/drift-command.ts", "pipeline/render-command.ts", "lifecycle/steps.ts", "e2e/harness/rendered.ts"]) {
      expect(GRAPH.get(reader), reader).toContain(RENDERED_MODEL);
    }
    // its parts are reached through it only: it stays the one entry point
    const parts = FILES.filter((f) => RENDERED_MODEL_PART.test(f));
    expect(parts.length).toBeGreaterThan(0);
    expect(FILES.filter((f) => f !== RENDERED_MODEL && !parts.includes(f) && GRAPH.get(f)!.some((i) => parts.includes(i)))).toEqual([]);
    // and the check trips
    expect(modelFilesNamed(new Map([["review/x.ts", 'const index = parse(tree.get("index.yaml"));']]))).toEqual(['review/x.ts: "index.yaml"']);
    expect(modelFilesNamed(new Map([[RENDERED_MODEL, 'const f = "placement.json";']]))).toEqual([]);
  });

  it("no node state is compared by its name outside its definition: every rule reads the states' traits", async () => {
    const { NODE_STATES } = await import("../../config/lifecycle");
    const texts = new Map(FILES.map((f) => [f, fs.readFileSync(path.join(REPO, f), "utf8")]));
    expect(stateNamesCompared(texts, NODE_STATES)).toEqual([]);
    // and the check trips, on each form
    const bad = new Map([
      ["platform/x.ts", 'if (n.state === "retiring") return;\nconst s = n.state ?? "active";\nconst e = new Set(["cordoned", "retiring"]);'],
      ["config/schema.ts", 'state: z.enum(NODE_STATES).default("active"),'],
      ["openkeel/y.ts", 'const message = `${removal ? "removing" : "retiring"} the node`;'],
    ]);
    expect(stateNamesCompared(bad, NODE_STATES).map((l) => l.replace(/: .*/, ""))).toEqual([
      "platform/x.ts:1",
      "platform/x.ts:2",
      "platform/x.ts:3",
      "config/schema.ts:1",
    ]);
  });

  it("every test file sits in its layer's folder; a suite that starts a process or the program is an integration suite", () => {
    const tests = (fs.readdirSync(path.join(REPO, "test"), { recursive: true }) as string[])
      .filter((f) => f.endsWith(".ts"))
      .map((f) => `test/${f.split(path.sep).join("/")}`);
    expect(tests).toContain("test/repository/architecture.test.ts");
    expect(misplacedTests(new Map(tests.map((f) => [f, fs.readFileSync(path.join(REPO, f), "utf8")])))).toEqual([]);
    // and the check trips
    expect(
      misplacedTests(
        new Map([
          ["test/x.test.ts", ""],
          ["test/widgets/x.test.ts", ""],
          ["test/config/x.test.ts", 'import { git } from "../helpers/repos";'],
          ["test/integration/config/x.test.ts", 'import { git } from "../../helpers/repos";'],
          ["test/helpers/x.ts", 'import { spawnSync } from "node:child_process";'],
        ]),
      ).map((l) => l.replace(/: .*/, "")),
    ).toEqual(["test/x.test.ts", "test/widgets/x.test.ts", "test/config/x.test.ts"]);
  });

  it("the checks trip on an upward import, an import out of the pack, and a cycle", () => {
    const bad = new Map([
      ["config/schema.ts", ["platform/longhorn.ts"]],
      ["policy/rules/d5.ts", ["platform/longhorn.ts"]],
      ["platform/longhorn.ts", ["platform/context.ts"]],
      ["platform/context.ts", ["platform/longhorn.ts"]],
      ["e2e/standins/crds.ts", ["e2e/harness/kube.ts"]],
      ["review/preview.ts", ["test/helpers/stacks.ts"]],
    ]);
    expect(upwardImports(bad)).toEqual([
      "config/schema.ts → platform/longhorn.ts",
      "policy/rules/d5.ts → platform/longhorn.ts (the pack stands alone)",
      "e2e/standins/crds.ts → e2e/harness/kube.ts",
      "review/preview.ts → test/helpers/stacks.ts",
    ]);
    expect(cycles(bad)).toEqual(["platform/longhorn.ts → platform/context.ts → platform/longhorn.ts"]);
  });
});
