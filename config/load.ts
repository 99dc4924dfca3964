// Raw config → Config: the one loader of both sources (the Pulumi config map in index.ts, a stack
// file in the offline scripts), turning every schema issue into a problem that names the key path,
// the node it is about by name, and how to fix it (the closest valid key or value when one is near).
// The schema holds what every stack must be; what an environment asks beyond it (production
// stacks name their cluster, a lab has no Talos machines) are its config rules (environments/),
// whose issues become problems worded the same way (configIssueProblems).
import type { z } from "zod";
import { ConfigError, formatPath, valueAt, type ConfigIssue, type Problem } from "./problems";
import { settingsCatalog } from "./platform";
import { configSchemaOf, PROJECT, type ConfigSource, type LoadedConfig, type StackDeclarations } from "./schema";
import { serviceCatalog, type ServiceDeclaration } from "./services";
import { closest } from "./suggest";

/** What zod keeps of a schema: its kind and the parts that lead further down. */
interface SchemaDef {
  type: string;
  shape?: Record<string, { _zod: { def: SchemaDef } }>;
  element?: { _zod: { def: SchemaDef } };
  innerType?: { _zod: { def: SchemaDef } };
  in?: { _zod: { def: SchemaDef } };
  valueType?: { _zod: { def: SchemaDef } };
  options?: readonly { _zod: { def: SchemaDef } }[];
}

/** The keys a map at `path` of the schema may have, for a "did you mean"; undefined when it takes any key. */
function keysAt(def: SchemaDef, path: readonly PropertyKey[]): string[] | undefined {
  const inner = def.innerType ?? def.in;
  if (inner) return keysAt(inner._zod.def, path);
  if (def.type === "union") {
    const keys = (def.options ?? []).flatMap((o) => keysAt(o._zod.def, path) ?? []);
    return keys.length ? [...new Set(keys)] : undefined;
  }
  if (path.length === 0) return def.type === "object" && def.shape ? Object.keys(def.shape) : undefined;
  const [head, ...rest] = path;
  if (def.type === "object" && def.shape && typeof head === "string" && def.shape[head]) return keysAt(def.shape[head]._zod.def, rest);
  if (def.type === "array" && def.element && typeof head === "number") return keysAt(def.element._zod.def, rest);
  if (def.type === "record" && def.valueType) return keysAt(def.valueType._zod.def, rest);
  return undefined;
}

/**
 * `node 'cmp-02': ` for a problem inside `nodes[i]`: the index is exact, the name is what the
 * operator knows the node by. Not for the name itself, nor when the entry has no usable name.
 */
function nodePrefix(raw: unknown, path: readonly PropertyKey[]): string {
  if (path[0] !== "nodes" || typeof path[1] !== "number" || (path.length === 3 && path[2] === "name")) return "";
  const name = valueAt(raw, ["nodes", path[1], "name"]);
  return typeof name === "string" && name !== "" ? `node '${name}': ` : "";
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a map";
  return `${typeof value} ${JSON.stringify(value)}`;
}

/** How to write a value of a zod type, for a Fix. */
const WRITE: Record<string, string> = {
  array: "a list, e.g. [a, b]",
  int: "a whole number",
  number: "a number",
  boolean: "true or false, unquoted",
  string: "a string, quoted if it could read as a number",
  object: "a map of key: value",
  record: "a map of key: value",
};

function issueToProblem(issue: z.core.$ZodIssue, raw: unknown, file: string, schema: z.ZodType, services: readonly ServiceDeclaration[]): Problem[] {
  return issueProblems(issue, raw, file, schema, services).map((p) => ({ ...p, message: nodePrefix(raw, issue.path) + p.message }));
}

/** `openkeel:nodes[2].roles[0]` for the path [nodes, 2, roles, 0] of the config. */
function keyPathOf(path: readonly PropertyKey[]): { keyPath: (string | number)[]; text: string } {
  const keyPath = [`${PROJECT}:${String(path[0] ?? "")}`, ...path.slice(1).map((s) => (typeof s === "number" ? s : String(s)))];
  return { keyPath, text: path.length === 0 ? "" : formatPath(keyPath) };
}

/** `nodes[i].state`: a node's state. */
const isNodeState = (path: readonly PropertyKey[]) => path.length === 3 && path[0] === "nodes" && path[2] === "state";

/** A custom issue's problem: its message is `what. Fix: how`. */
function customProblem(message: string, path: string, file: string): Problem {
  const [what, fix] = message.split(". Fix: ");
  return { file, path, message: what, fix: fix ?? "correct the value" };
}

/** `openkeel:services`: its keys are the services' names, which the fix lists (the registry's, openkeel/services/). */
const isServices = (path: readonly PropertyKey[]) => path.length === 1 && path[0] === "services";

/** What to do instead of writing `state: <value>`, when a service says (its `notStates`). */
function notAState(services: readonly ServiceDeclaration[], value: string): string | undefined {
  return services.find((s) => s.notStates && Object.hasOwn(s.notStates, value))?.notStates?.[value];
}

function issueProblems(issue: z.core.$ZodIssue, raw: unknown, file: string, schema: z.ZodType, services: readonly ServiceDeclaration[]): Problem[] {
  const { keyPath, text: path } = keyPathOf(issue.path);
  const got = valueAt(raw, issue.path);
  switch (issue.code) {
    case "unrecognized_keys":
      return issue.keys.map((key) => {
        const isTop = issue.path.length === 0;
        const valid = (keysAt(schema._zod.def as unknown as SchemaDef, issue.path) ?? []).filter((k) => !issue.keys.includes(k));
        const near = closest(key, valid);
        const where = isServices(issue.path) ? `the OpenKeel services are ${valid.join(", ")}` : "stacks/README.md lists every key";
        return {
          file,
          path: isTop ? `${PROJECT}:${key}` : formatPath([...keyPath, key]),
          message: "unknown key",
          fix: near ? `did you mean '${isTop ? `${PROJECT}:${near}` : near}'? ${where}` : `remove it or correct its spelling; ${where}`,
        };
      });
    case "invalid_type":
      if (got === undefined) {
        return [{ file, path, message: `is required (${issue.expected})`, fix: "add it; stacks/README.md describes it" }];
      }
      // YAML reads 1e309 as Infinity: a number, but none the config can use
      if (issue.expected === "number" && typeof got === "number" && !Number.isFinite(got)) {
        return [{ file, path, message: `is ${got}: not a finite number`, fix: "write a number within range, e.g. 3" }];
      }
      return [{ file, path, message: `must be ${issue.expected}, got ${describe(got)}`, fix: `write ${WRITE[issue.expected] ?? `a ${issue.expected}`}` }];
    case "invalid_value": {
      const values = issue.values.map((v) => String(v));
      const near = typeof got === "string" ? closest(got, values) : undefined;
      // a node state an operator reaches for that the design answers otherwise: a service's act
      const instead = isNodeState(issue.path) && typeof got === "string" ? notAState(services, got) : undefined;
      return [
        {
          file,
          path,
          message: `is ${describe(got)}, not one of ${values.join(", ")}`,
          fix: instead ?? (near ? `use one of the listed values: did you mean '${near}'?` : "use one of the listed values"),
        },
      ];
    }
    case "too_small": {
      const [text, fix] = issue.message.split(". Fix: ");
      const minimum = Number(issue.minimum);
      const defaultFix = issue.origin === "array" ? `list at least ${minimum} entr${minimum === 1 ? "y" : "ies"}` : `use a value of at least ${minimum}`;
      return [{ file, path, message: text.replace(/^Too small: /, "is too small: "), fix: fix ?? defaultFix }];
    }
    case "custom":
      return [customProblem(issue.message, path, file)];
    default: {
      const [text, fix] = issue.message.split(". Fix: ");
      const message = got === undefined ? text : `is ${describe(got)}: ${text}`;
      return [{ file, path, message, fix: fix ?? "correct the value; stacks/README.md describes the key" }];
    }
  }
}

/** A URL with a user name or password before its host: `https://user:pass@host/…`. */
const URL_WITH_CREDENTIALS = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#\s]*@/;

/**
 * Every string of the config that is a URL carrying credentials, by key path. A stack file is
 * committed, and URLs are rendered into rendered/<stack>/index.yaml: such a value would publish the
 * credential twice, so it is refused, and never echoed.
 */
function credentialPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value === "string") return URL_WITH_CREDENTIALS.test(value) ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => credentialPaths(v, [...path, i]));
  if (value !== null && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => credentialPaths(v, [...path, k]));
  return [];
}

function credentialProblem(path: (string | number)[], file: string): Problem {
  return {
    file,
    path: formatPath([`${PROJECT}:${String(path[0])}`, ...path.slice(1)]),
    message: "is a URL with a user name or password in it, which would be committed with the stack file and rendered into rendered/<stack>/index.yaml",
    fix: "remove the credentials from the URL; keep them in Pulumi secrets (pulumi config set --secret), or log the machine that runs pulumi in to the registry (helm registry login)",
  };
}

const startsWith = (path: readonly PropertyKey[], prefix: readonly PropertyKey[]) => prefix.every((seg, i) => String(path[i]) === String(seg));

/**
 * Validate a raw config map (keys without the `openkeel:` prefix) against the declarations given
 * (the services of the registry, the components' settings: environments/registry.ts). Throws
 * ConfigError with one problem per issue.
 */
export function loadConfig(raw: Record<string, unknown>, source: ConfigSource, declarations: StackDeclarations): LoadedConfig {
  const secrets = credentialPaths(raw);
  const schema = configSchemaOf(declarations);
  const result = schema.safeParse(raw);
  if (secrets.length > 0 || !result.success) {
    // a schema issue at a credential's key would echo it (a map or list above it is only named)
    const issues = result.success ? [] : result.error.issues.filter((i) => !secrets.some((s) => startsWith(i.path, s)));
    const problems = [
      ...secrets.map((p) => credentialProblem(p, source.file)),
      ...issues.flatMap((i) => issueToProblem(i, raw, source.file, schema, declarations.services)),
    ];
    throw new ConfigError(problems);
  }
  return {
    ...(result.data as Omit<LoadedConfig, "serviceCatalog" | "platformCatalog" | "stack" | "file">),
    serviceCatalog: serviceCatalog(declarations.services),
    platformCatalog: settingsCatalog(declarations.platform),
    stack: source.stack,
    file: source.file,
  };
}

/** An environment's config issues as problems, worded like the schema's (file, key path, the node by name, Fix). */
export function configIssueProblems(cfg: LoadedConfig, issues: readonly ConfigIssue[]): Problem[] {
  return issues.map((issue) => {
    const p = customProblem(issue.message, keyPathOf(issue.path).text, cfg.file);
    return { ...p, message: nodePrefix(cfg, issue.path) + p.message };
  });
}

/**
 * Pulumi hands config over as strings keyed `<project>:<key>`; structured values are JSON.
 * Keys of other namespaces (e.g. `kubernetes:context`) belong to providers and are ignored.
 */
export function rawFromPulumiConfig(all: Record<string, string>): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const [fullKey, value] of Object.entries(all)) {
    const prefix = `${PROJECT}:`;
    if (!fullKey.startsWith(prefix)) continue;
    raw[fullKey.slice(prefix.length).replace(/^config:/, "")] = configValue(value);
  }
  return raw;
}

/**
 * A top-level config value as the program reads it. Pulumi keeps top-level scalars as strings
 * (`pulumi config set`, and `pulumi stack init` rewriting a stack file, turn `taints: false` into
 * `"false"`), so a string that is JSON is read as that JSON, from either source.
 */
export function configValue(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
