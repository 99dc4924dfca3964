// The offline source of the config: a stack file `stacks/Pulumi.<stack>.yaml`, read the way the
// Pulumi CLI reads it (keys `<project>:<key>`, bare keys belong to the project).
import * as fs from "node:fs";
import * as path from "node:path";
import {
  isAlias,
  isCollection,
  isPair,
  isScalar,
  LineCounter,
  parseDocument,
  visit,
  type Alias,
  type Document,
  type Scalar,
  type YAMLMap,
  type YAMLSeq,
} from "yaml";
import { configValue, loadConfig } from "./load";
import { PROJECT, type LoadedConfig, type StackDeclarations } from "./schema";
import { ConfigError, type Problem } from "./problems";
import { readStackFacts } from "./facts";

export const STACKS_DIR = "stacks";
const STACK_FILE = /^Pulumi\.([A-Za-z0-9_.-]+)\.yaml$/;
/** Keys the Pulumi CLI accepts at the top of a stack file. */
const STACK_FILE_KEYS = new Set(["config", "secretsprovider", "encryptedkey", "encryptionsalt", "environment"]);

export function stackFilePath(stack: string, stacksDir = STACKS_DIR): string {
  return path.join(stacksDir, `Pulumi.${stack}.yaml`);
}

/** Every stack that has a file in `stacksDir`, sorted. */
export function listStacks(stacksDir = STACKS_DIR): string[] {
  // a relative folder is read from where the command was started: say where that was
  if (!fs.existsSync(stacksDir)) {
    throw new ConfigError([
      {
        file: stacksDir,
        path: "",
        message: `no such folder: looked in ${path.resolve(stacksDir)} (relative to ${process.cwd()}, where the command was started)`,
        fix: "run the command from the repository's root (npm run does), or pass --stacks-dir with the folder of the stack files",
      },
    ]);
  }
  return fs
    .readdirSync(stacksDir)
    .map((f) => STACK_FILE.exec(f)?.[1])
    .filter((s): s is string => s !== undefined)
    .sort();
}

/** Aliases may expand a document to this many times the values it writes, plus ALIAS_ALLOWANCE. */
const MAX_ALIAS_EXPANSION = 10;
const ALIAS_ALLOWANCE = 10_000;

/** What an alias can stand for. */
type Anchored = Scalar | YAMLMap | YAMLSeq;

/**
 * What every alias of a document stands for, found in one pass in document order: an alias names
 * the latest anchor of its name before it (YAML 1.2 § 3.2.2.2). `Alias.resolve` would search the
 * document from its start for each alias, which made an inventory of 2000 `labels: *hypervisor`
 * nodes take minutes (issue 25). An alias without an anchor before it maps to undefined.
 */
function aliasTargets(doc: Document): Map<Alias, Anchored | undefined> {
  const anchors = new Map<string, Anchored>();
  const targets = new Map<Alias, Anchored | undefined>();
  visit(doc, (_, node) => {
    if (isAlias(node)) targets.set(node, anchors.get(node.source));
    else if ((isCollection(node) || isScalar(node)) && node.anchor) anchors.set(node.anchor, node);
  });
  return targets;
}

/**
 * How many values (scalars, maps, lists, keys) a document holds: as written, or with every alias
 * replaced by what it stands for. An alias inside its own anchor expands without end (Infinity).
 */
function expandedSize(doc: Document, targets: Map<Alias, Anchored | undefined> | undefined): number {
  const sizes = new Map<unknown, number>();
  const open = new Set<unknown>();
  const size = (node: unknown): number => {
    if (node === null || node === undefined) return 0;
    if (isAlias(node)) return targets ? size(targets.get(node)) : 1;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (open.has(node)) return Infinity;
    open.add(node);
    let n = 1;
    if (isCollection(node)) for (const item of node.items) n += isPair(item) ? size(item.key) + size(item.value) : size(item);
    else if (!isScalar(node)) n = 0;
    open.delete(node);
    sizes.set(node, n);
    return n;
  };
  return size(doc.contents);
}

/**
 * The document's values, as `doc.toJS()` gives them, each alias resolved through `targets`: yaml's
 * own `Alias.resolve` walks the document's anchors and aliases from the start up to the alias, for
 * each alias, which is quadratic again (about a quarter of a second of reading a 2000-node
 * inventory whose compute nodes share `labels: *hypervisor`, by hand). An anchor is turned into a
 * value before its aliases (document order); where it was not, yaml resolves.
 */
function valuesOf(doc: Document, targets: Map<Alias, Anchored | undefined>): unknown {
  for (const [alias, target] of targets) {
    const resolve = alias.resolve.bind(alias);
    alias.resolve = (d, ctx) => (target && ctx?.anchors.has(target) ? target : resolve(d, ctx));
  }
  return doc.toJS({ maxAliasCount: -1 });
}

/** Parse stack file text into the raw `openkeel:` config map (keys without the prefix). */
export function rawFromStackYaml(text: string, file: string): Record<string, unknown> {
  const lines = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false, lineCounter: lines });
  // a tab in the indentation makes the parser misread every line after it: that one error says it all
  const tab = doc.errors.find((e) => e.code === "TAB_AS_INDENT");
  const problems: Problem[] = (tab ? [tab] : doc.errors).map((e) => ({
    file,
    path: `line ${lines.linePos(e.pos[0]).line}, column ${lines.linePos(e.pos[0]).col}`,
    message: `is not valid YAML (${e.message.split("\n")[0]})`,
    fix: e === tab ? "indent with spaces, not a tab" : "correct the YAML syntax (indentation, quoting, duplicate keys)",
  }));
  if (problems.length > 0) throw new ConfigError(problems);
  // An alias whose anchor is missing, or aliases that expand beyond reason (a "billion laughs"
  // document), only fail when the document is turned into values: still the file's fault.
  const targets = aliasTargets(doc);
  for (const [alias, target] of targets) {
    if (target === undefined && alias.range) {
      const at = lines.linePos(alias.range[0]);
      problems.push({
        file,
        path: `line ${at.line}, column ${at.col}`,
        message: `is not valid YAML (alias *${alias.source} has no anchor &${alias.source} before it)`,
        fix: `define the anchor &${alias.source} before the alias, or write the value out`,
      });
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  // Anchors are how inventories share blocks (`labels: *hypervisor` on 200 nodes): what is bounded
  // is the size the aliases expand the document to, not how many there are.
  const written = expandedSize(doc, undefined);
  const expanded = expandedSize(doc, targets);
  if (expanded > written * MAX_ALIAS_EXPANSION + ALIAS_ALLOWANCE) {
    throw new ConfigError([
      {
        file,
        path: "",
        message: `is not valid YAML (its aliases expand ${written} written values to ${Number.isFinite(expanded) ? expanded : "infinitely many"}: a "billion laughs" document)`,
        fix: "write the values out instead of nesting aliases (*name) that expand the document many times over, and never alias a value inside itself",
      },
    ]);
  }
  let root: unknown;
  try {
    root = valuesOf(doc, targets);
  } catch (e) {
    // what the document holds, not this program, fails to become values
    throw new ConfigError([
      {
        file,
        path: "",
        message: `is not valid YAML (${(e as Error).message.split("\n")[0]})`,
        fix: "correct the YAML; stacks/README.md shows the expected shape",
      },
    ]);
  }
  if (root === null || typeof root !== "object" || Array.isArray(root)) {
    throw new ConfigError([{ file, path: "", message: "is not a map with a config: key", fix: "start the file with 'config:'" }]);
  }
  for (const key of Object.keys(root)) {
    if (!STACK_FILE_KEYS.has(key)) {
      problems.push({ file, path: key, message: "is not a stack file key", fix: "put settings under config: as openkeel:<key>" });
    }
  }
  const config = (root as Record<string, unknown>).config;
  if (config === undefined || config === null || typeof config !== "object" || Array.isArray(config)) {
    problems.push({ file, path: "config", message: "is missing or not a map", fix: "add a config: map with the openkeel:* keys" });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const raw: Record<string, unknown> = {};
  for (const [fullKey, value] of Object.entries(config as Record<string, unknown>)) {
    const colon = fullKey.indexOf(":");
    if (colon < 0) raw[fullKey] = configValue(value);
    else if (fullKey.slice(0, colon) === PROJECT) raw[fullKey.slice(colon + 1)] = configValue(value);
    // other namespaces (kubernetes:context, …) configure providers, not this program
  }
  return raw;
}

/** Read and validate one stack, with its machines' facts, against the declarations given (environments/registry.ts). Throws ConfigError for every user mistake. */
export function readStack(stack: string, stacksDir: string, declarations: StackDeclarations): LoadedConfig {
  const { raw, file } = readStackRaw(stack, stacksDir);
  return withFacts(loadConfig(raw, { stack, file }, declarations), stacksDir);
}

/** The config with the facts of its machines (stacks/facts/<stack>/); a facts file that cannot be read is the stack's mistake. */
export function withFacts(cfg: LoadedConfig, stacksDir = STACKS_DIR): LoadedConfig {
  const { facts, problems } = readStackFacts(cfg.stack, stacksDir);
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.keys(facts).length > 0 ? { ...cfg, facts } : cfg;
}

/** One stack's file and its `openkeel:` keys as read, not yet validated. Throws ConfigError for a missing file or bad YAML. */
export function readStackRaw(stack: string, stacksDir = STACKS_DIR): { raw: Record<string, unknown>; file: string } {
  const file = stackFilePath(stack, stacksDir);
  if (!fs.existsSync(file)) {
    const known = listStacks(stacksDir);
    throw new ConfigError([
      {
        file,
        path: "",
        message: `stack '${stack}' has no stack file`,
        fix: known.length ? `use one of: ${known.join(", ")}` : `create ${file}`,
      },
    ]);
  }
  return { raw: rawFromStackYaml(fs.readFileSync(file, "utf8"), file), file };
}
