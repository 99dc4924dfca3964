// rendered/<stack>/ as one typed, versioned model: what `npm run render` writes there, and the one
// way to read it back. Every reader of a render goes through here — the render's own guards
// (the previous index), the preview (both sides), drift, the e2e harness — so the shape of each
// file is declared once: index.yaml (RenderedIndex), placement.json (the placement data that
// placement.md and placement.svg are drawn from, placement/data.ts), the node configuration
// (talos/machines.yaml and the files index.yaml lists), objects/ and values/ as YAML documents.
//
// index.yaml carries `schemaVersion`. A render without one was written before this model (the
// preview renders its base commit with the base's own code): its index reads the same, but it has
// no placement.json, so `placement` is undefined and the preview shows no placement delta for it.
// A render of a newer schema than this code knows is refused with a message naming both.
//
// Its parts are modules of their own, imported from here only: the model (./rendered-model.ts:
// file names, schema version, types), the writer (./rendered-write.ts) and the schemas the reader
// holds a render to (./rendered-schema.ts); this module is the reader.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, parseAllDocuments } from "yaml";
import type { z } from "zod";
import { formatPath } from "../config/problems";
import {
  INDEX_FILE,
  PLACEMENT_DATA_FILE,
  RENDERED_SCHEMA_VERSION,
  TALOS_MACHINES_FILE,
  type ReasonGroup,
  type RenderedIndex,
  type RenderedPlacement,
  type RenderedUnit,
  type TalosMachine,
  type TalosMachinesFile,
} from "./rendered-model";
import { indexSchema, machinesSchema, placementSchema } from "./rendered-schema";
import { makeReader } from "./yaml";

// the model and the writer, from here: the one entry point of a render
export { RENDERED_SCHEMA_VERSION, INDEX_FILE, PLACEMENT_DATA_FILE, PLACEMENT_MD_FILE, PLACEMENT_SVG_FILE, TALOS_MACHINES_FILE } from "./rendered-model";
export type {
  RenderedFile,
  RenderedHelmRelease,
  RenderedManifests,
  RenderedRemoteManifest,
  RenderedUnit,
  RenderedNode,
  RenderedWarning,
  RenderedIndex,
  RenderedPlacement,
  TalosMachine,
  TalosMachinesFile,
} from "./rendered-model";
export { postRenderFile, renderedIndex, placementJson, renderPlan } from "./rendered-write";

/** Reasons per node again, in the order of the placement's nodes (as placementData keys them). */
function reasonsOf(groups: ReasonGroup[], nodeOrder: Map<string, number>): Record<string, string[]> {
  const pairs = groups.flatMap((g) => g.nodes.map((n): [string, string[]] => [n, g.why]));
  pairs.sort(([a], [b]) => (nodeOrder.get(a) ?? Infinity) - (nodeOrder.get(b) ?? Infinity));
  return Object.fromEntries(pairs);
}

const FIX_RENDER_AGAIN = "render it again with this checkout's code (npm run render)";

/** A file of a render that this code cannot read: where and what (`problem`), and how to get a readable one. */
export class RenderedFormatError extends Error {
  constructor(
    readonly problem: string,
    readonly fix: string = FIX_RENDER_AGAIN,
  ) {
    super(`${problem}. Fix: ${fix}`);
    this.name = "RenderedFormatError";
  }
}

/** Reads what the render writes without the yaml library, else declines (render/yaml.ts). */
const fastRead = makeReader();

/**
 * The YAML documents of a rendered file, in order. The reader's documents one by one when it reads
 * every one of them (a Talos node's patch holds two: a large inventory has thousands), else the
 * library's for the whole file.
 */
export function yamlDocuments(text: string): unknown[] {
  const parts = text.split(/^---\n/m);
  // only comments before the first `---`: the library reads no document there, leave it to it
  if (parts.length > 1 && parts[0].split("\n").every((l) => l.trim() === "" || l.trimStart().startsWith("#"))) return library(text);
  const docs = parts.map((p) => fastRead(p));
  return docs.every((d) => d !== undefined) ? docs : library(text);
}

const library = (text: string) => parseAllDocuments(text).map((d) => d.toJS() as unknown);

function checked<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const at = formatPath(issue.path.map((p) => (typeof p === "symbol" ? String(p) : p)));
  throw new RenderedFormatError(`${where}: ${at ? `${at}: ` : ""}${issue.message}: not what this repository's render writes`);
}

function yamlOf(text: string, where: string): unknown {
  try {
    return fastRead(text) ?? parse(text);
  } catch (e) {
    throw new RenderedFormatError(`${where}: is not YAML (${(e as Error).message.split("\n")[0]})`);
  }
}

/** index.yaml's text, read; `where` names it in messages (a path, `git HEAD:<path>`). */
export function readIndex(text: string, where: string): RenderedIndex {
  const index = checked(indexSchema, yamlOf(text, where), where);
  const version = index.schemaVersion ?? 0;
  if (version > RENDERED_SCHEMA_VERSION) {
    throw new RenderedFormatError(
      `${where}: schemaVersion ${version} is newer than this code reads (${RENDERED_SCHEMA_VERSION})`,
      "read it with the code that wrote it, or bring this checkout up to date (git rebase onto it)",
    );
  }
  return index;
}

/** placement.json's text, read. */
export function readPlacement(text: string, where: string): RenderedPlacement {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new RenderedFormatError(`${where}: is not JSON (${(e as Error).message})`);
  }
  const data = checked(placementSchema, value, where);
  const order = new Map(data.nodes.map((n, i) => [n.name, i]));
  return { ...data, components: data.components.map((c) => ({ ...c, reasons: Array.isArray(c.reasons) ? reasonsOf(c.reasons, order) : c.reasons })) };
}

/** The files of one stack's render: a folder's (read when asked for) or an in-memory tree's. */
export interface RenderedFiles {
  get(path: string): string | undefined;
  keys(): Iterable<string>;
}

/**
 * One stack's render, read. Each file is read and parsed once, when first asked for, whatever
 * asks (the preview asks for the same objects and node configuration in several places). Renders
 * compared with each other may share `parsed` (text → documents): a file with the same text on
 * both sides, most of them in a large inventory, is then parsed once, and its documents are the
 * same objects on both sides. Readers never change them.
 */
export class RenderedStack {
  private cachedIndex?: RenderedIndex;
  private cachedPlacement?: { data?: RenderedPlacement };
  private readonly docs = new Map<string, unknown[]>();
  private cachedMachines?: Pick<TalosMachinesFile, "kubernetesVersion" | "machines">;

  /** `where`: the folder, or what the render is (`the base`), for messages. */
  constructor(
    readonly files: RenderedFiles,
    readonly where: string,
    private readonly parsed?: Map<string, unknown[]>,
  ) {}

  /** index.yaml; a render without one (a stack that is not there) reads as empty. */
  get index(): RenderedIndex {
    if (!this.cachedIndex) {
      const text = this.files.get(INDEX_FILE);
      this.cachedIndex = text === undefined ? emptyIndex() : readIndex(text, `${this.where}/${INDEX_FILE}`);
    }
    return this.cachedIndex;
  }

  /** The model version the render was written with: 0 before index.yaml recorded one. */
  get schemaVersion(): number {
    return this.index.schemaVersion ?? 0;
  }

  /** placement.json; undefined when the render has none (no placement report, or written before it existed). */
  get placement(): RenderedPlacement | undefined {
    if (!this.cachedPlacement) {
      const text = this.files.get(PLACEMENT_DATA_FILE);
      this.cachedPlacement = text === undefined ? {} : { data: readPlacement(text, `${this.where}/${PLACEMENT_DATA_FILE}`) };
    }
    return this.cachedPlacement.data;
  }

  units(): RenderedUnit[] {
    return this.index.phases.flatMap((p) => p.units);
  }

  /** The YAML documents of a file (none when it is absent). */
  documents(path: string): unknown[] {
    let docs = this.docs.get(path);
    if (!docs) {
      const text = this.files.get(path);
      try {
        docs = text === undefined ? [] : (this.parsed?.get(text) ?? yamlDocuments(text));
        if (text !== undefined) this.parsed?.set(text, docs);
      } catch (e) {
        throw new RenderedFormatError(`${this.where}/${path}: is not YAML (${(e as Error).message.split("\n")[0]})`);
      }
      this.docs.set(path, docs);
    }
    return docs;
  }

  /** talos/machines.yaml's nodes (none in a stack without Talos). */
  talosMachines(): Record<string, TalosMachine> {
    return this.machinesFile().machines;
  }

  /** talos/machines.yaml's Kubernetes version (none in a stack without Talos, or rendered before it was pinned). */
  talosKubernetesVersion(): string | undefined {
    return this.machinesFile().kubernetesVersion;
  }

  private machinesFile(): Pick<TalosMachinesFile, "kubernetesVersion" | "machines"> {
    if (!this.cachedMachines) {
      const absent = this.files.get(TALOS_MACHINES_FILE) === undefined;
      this.cachedMachines = absent ? { machines: {} } : checked(machinesSchema, this.documents(TALOS_MACHINES_FILE)[0], `${this.where}/${TALOS_MACHINES_FILE}`);
    }
    return this.cachedMachines;
  }
}

function emptyIndex(): RenderedIndex {
  return { stack: "", environment: "", topology: "", labelProfile: "default", taintedRoles: [], nodes: [], warnings: [], phases: [] };
}

/** A `rendered/`-shaped tree (`<stack>/<path>`), as one render per stack. */
export function renderedStacks(tree: ReadonlyMap<string, string>, where: string, parsed?: Map<string, unknown[]>): Map<string, RenderedStack> {
  const files = new Map<string, Map<string, string>>();
  for (const [file, content] of tree) {
    const slash = file.indexOf("/");
    if (slash < 0 || file.startsWith(".")) continue;
    const stack = file.slice(0, slash);
    if (!files.has(stack)) files.set(stack, new Map());
    files.get(stack)!.set(file.slice(slash + 1), content);
  }
  return new Map([...files].map(([stack, f]) => [stack, new RenderedStack(f, `${where}/${stack}`, parsed)]));
}

/** A render on disk, `<dir>` = rendered/<stack>/: each file read when first asked for. */
export function readRenderedDir(dir: string): RenderedStack {
  const files: RenderedFiles = {
    get: (file) => {
      const p = path.join(dir, ...file.split("/"));
      return fs.existsSync(p) && fs.statSync(p).isFile() ? fs.readFileSync(p, "utf8") : undefined;
    },
    keys: () =>
      (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
        .filter((e) => e.isFile())
        .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join("/"))
        .sort(),
  };
  return new RenderedStack(files, dir);
}
