// The JSON schemas kubeconform judges Kubernetes' own kinds by, for the Kubernetes version the
// clusters run (KUBERNETES_VERSION), made offline from that release's OpenAPI: the module
// k8s.io/kubernetes at v<KUBERNETES_VERSION> through the Go module proxy (`go mod download`,
// checked against sum.golang.org like the tools), its api/openapi-spec/swagger.json converted into
// `v<version>-standalone-strict/<kind>-<group>-<version>.json` (kubeconform's
// `{{.ResourceKind}}{{.KindSuffix}}.json`) as yannh/kubernetes-json-schema's files are: its build.sh
// runs openapi2jsonschema --expanded --kubernetes --stand-alone --strict (its fork's image); the
// rules here are instrumenta/openapi2jsonschema's command.py and util.py, the nullable and
// int-or-string passes applied after the $refs are inlined, as yannh's files and ../shared/schemas
// show them (nullable types inside inlined definitions). test/integration/tools/kubernetes-schemas.test.ts
// holds the result to ../shared/schemas' v1.32.2 folder. `npm run tools` builds the folder into
// .tools/ (never committed); validation reads it in every mode (tools/kubeconform.ts).
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { KUBERNETES_VERSION } from "../platform/versions";
import { goModDownload, ToolError, TOOLS_DIR, type ModuleDownload } from "./tools";
import { isPlainObject, type PlainObject } from "../config/plain";

export const KUBERNETES_MODULE = "k8s.io/kubernetes";
/** The OpenAPI v2 document of the release, inside the module. */
export const KUBERNETES_OPENAPI_FILE = "api/openapi-spec/swagger.json";
/** What openapi2jsonschema puts in every file. */
const SCHEMA_DIALECT = "http://json-schema.org/schema#";
const INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/** `v1.36.3-standalone-strict`: the folder kubeconform's `{{.NormalizedKubernetesVersion}}-standalone{{.StrictSuffix}}` names. */
export function strictFolder(version: string): string {
  return `v${version}-standalone-strict`;
}

/** `.tools/kubernetes-v<version>/`: schemas/kubernetes/<strictFolder>/*.json and SOURCES.json. */
export function kubernetesSchemasRoot(toolsDir = TOOLS_DIR, version = KUBERNETES_VERSION): string {
  return path.join(toolsDir, `kubernetes-v${version}`);
}

/** The folder laid out as ../shared/schemas (kubernetes/v<version>-standalone-strict/): what kubeconform is pointed at. */
export function kubernetesSchemasDir(toolsDir = TOOLS_DIR, version = KUBERNETES_VERSION): string {
  return path.join(kubernetesSchemasRoot(toolsDir, version), "schemas");
}

type Json = unknown;

/** Python's `needle in container` for what a schema holds: a key of a dict, an element of a list, a substring. */
function pyIn(needle: string, container: Json): boolean {
  if (Array.isArray(container)) return container.includes(needle);
  if (isPlainObject(container)) return Object.hasOwn(container, needle);
  return typeof container === "string" && container.includes(needle);
}

/** util.py additional_properties: every object with `properties` below `data`, through objects only, rejects others. */
function additionalProperties(data: PlainObject): void {
  for (const v of Object.values(data)) {
    if (!isPlainObject(v)) continue;
    if (Object.hasOwn(v, "properties") && !Object.hasOwn(v, "additionalProperties")) v.additionalProperties = false;
    additionalProperties(v);
  }
}

/** util.py replace_int_or_string: an object of format int-or-string, as the value of a key, becomes string or integer. */
function replaceIntOrString(data: Json): Json {
  if (!isPlainObject(data)) return data;
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => {
      if (isPlainObject(v)) return [k, v.format === "int-or-string" ? { oneOf: [{ type: "string" }, { type: "integer" }] } : replaceIntOrString(v)];
      return [k, Array.isArray(v) ? v.map(replaceIntOrString) : v];
    }),
  );
}

/**
 * util.py allow_null_optional_fields: every `type` also admits null unless its object is a field
 * its owner requires (`key` in the grandparent's `required`); the kind's own fields are never
 * seen as required (the walk starts at its properties, without a grandparent).
 */
function allowNull(data: Json, parent?: Json, grandParent?: Json, key?: string): Json {
  if (!isPlainObject(data)) return data;
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => {
      if (isPlainObject(v)) return [k, allowNull(v, data, parent, k)];
      if (Array.isArray(v)) return [k, v.map((x) => allowNull(x, v, parent, k))];
      const required = key !== undefined && pyIn("required", grandParent) && pyIn(key, (grandParent as PlainObject).required);
      if (typeof v === "string" && k === "type" && v !== "null" && !required) return [k, [v, "null"]];
      return [k, v];
    }),
  );
}

/** The names of the definitions a schema refers to. */
function refsOf(o: Json, out = new Set<string>()): Set<string> {
  if (Array.isArray(o)) for (const x of o) refsOf(x, out);
  else if (isPlainObject(o))
    for (const [k, v] of Object.entries(o)) {
      if (k === "$ref" && typeof v === "string") out.add(refName(v));
      else refsOf(v, out);
    }
  return out;
}

/** The definitions that reach themselves through $refs (JSONSchemaProps): they cannot be inlined. */
function recursiveDefinitions(defs: PlainObject): Set<string> {
  const graph = new Map(Object.entries(defs).map(([t, d]) => [t, refsOf(d)]));
  const reachesItself = (start: string): boolean => {
    const seen = new Set<string>();
    const todo = [...(graph.get(start) ?? [])];
    for (let t = todo.pop(); t !== undefined; t = todo.pop()) {
      if (t === start) return true;
      if (seen.has(t)) continue;
      seen.add(t);
      todo.push(...(graph.get(t) ?? []));
    }
    return false;
  };
  return new Set([...graph.keys()].filter(reachesItself));
}

const refName = (ref: string) => ref.slice(ref.lastIndexOf("/") + 1);

/**
 * `$ref`s replaced by what they name, as jsonref does for --stand-alone (the referring object's other
 * keys go with it). A recursive definition cannot be inlined: it becomes any object, as the
 * strict folder of ../shared/schemas has it (openapi2jsonschema skips those kinds instead).
 */
function inline(o: Json, defs: PlainObject, recursive: Set<string>): Json {
  if (Array.isArray(o)) return o.map((x) => inline(x, defs, recursive));
  if (!isPlainObject(o)) return o;
  const ref = o.$ref;
  if (typeof ref === "string") {
    const name = refName(ref);
    if (recursive.has(name)) return { type: "object" };
    if (!Object.hasOwn(defs, name)) throw new Error(`$ref ${ref}: no such definition`);
    return inline(defs[name], defs, recursive);
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, inline(v, defs, recursive)]));
}

/** `io.k8s.api.apps.v1.Deployment` → `deployment-apps-v1.json`, the core group's `io.k8s.api.core.v1.ConfigMap` → `configmap-v1.json` (--expanded). */
export function schemaFileName(title: string): string {
  const parts = title.split(".");
  const [group, version, kind] = parts.slice(-3).map((p) => p.toLowerCase());
  return group === "core" || group === "api" ? `${kind}-${version}.json` : `${kind}-${group}-${version}.json`;
}

/** Python's json.dumps(indent=2): ensure_ascii escapes everything outside printable ASCII, no newline at the end. */
export function pythonJson(v: Json): string {
  return JSON.stringify(v, null, 2).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** JavaScript objects put integer-like keys first: such a key would not keep its place. */
function assertOrderable(o: Json, where: string): void {
  if (Array.isArray(o)) o.forEach((x) => assertOrderable(x, where));
  else if (isPlainObject(o))
    for (const [k, v] of Object.entries(o)) {
      if (/^(0|[1-9]\d*)$/.test(k)) throw new Error(`${where}: key ${k} is integer-like; its order cannot be kept`);
      assertOrderable(v, where);
    }
}

/**
 * Kubernetes' OpenAPI v2 (swagger.json of a release) → file name → the file's text, for every kind
 * an object can be (x-kubernetes-group-version-kind, with metadata, not a *List: the kinds of the
 * strict folder of ../shared/schemas), converted as openapi2jsonschema --expanded --kubernetes
 * --stand-alone --strict does, in its order: IntOrString and Quantity as string-or-number
 * definitions, apiVersion and kind enums from the group-version-kinds, additionalProperties false on
 * every object with properties; per kind the dialect, the $refs inlined, then int-or-string
 * replaced and optional fields made nullable.
 */
export function kubernetesJsonSchemas(openapi: Json): Map<string, string> {
  if (!isPlainObject(openapi) || !isPlainObject(openapi.definitions) || typeof openapi.swagger !== "string")
    throw new Error("not a Kubernetes OpenAPI v2 document (no swagger, no definitions)");
  const defs = structuredClone(openapi.definitions);
  assertOrderable(defs, "definitions");
  defs[INT_OR_STRING] = { oneOf: [{ type: "string" }, { type: "integer" }] };
  defs[QUANTITY] = { oneOf: [{ type: "string" }, { type: "number" }] };
  for (const def of Object.values(defs)) {
    const gvks = isPlainObject(def) ? def["x-kubernetes-group-version-kind"] : undefined;
    const props = isPlainObject(def) ? def.properties : undefined;
    if (!Array.isArray(gvks) || !isPlainObject(props)) continue;
    for (const { group, version, kind } of gvks as { group: string; version: string; kind: string }[]) {
      if (isPlainObject(props.apiVersion)) appendOnce(props.apiVersion, "enum", group ? `${group}/${version}` : version);
      if (isPlainObject(props.kind)) appendOnce(props.kind, "enum", kind);
    }
  }
  additionalProperties(defs);
  const recursive = recursiveDefinitions(defs);
  const out = new Map<string, string>();
  for (const [title, def] of Object.entries(defs)) {
    if (!isKind(title, def)) continue;
    const spec = structuredClone(def) as PlainObject;
    spec.$schema = SCHEMA_DIALECT;
    if (!Object.hasOwn(spec, "type")) spec.type = "object";
    spec.additionalProperties = false;
    const standalone = inline(spec, defs, recursive) as PlainObject;
    const properties = standalone.properties as PlainObject;
    additionalProperties(properties);
    standalone.properties = allowNull(replaceIntOrString(properties));
    out.set(schemaFileName(title), pythonJson(standalone));
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)));
}

function appendOnce(o: PlainObject, key: string, value: string): void {
  const list = Array.isArray(o[key]) ? (o[key] as unknown[]) : (o[key] = []);
  if (!list.includes(value)) list.push(value);
}

function isKind(title: string, def: Json): boolean {
  return (
    isPlainObject(def) &&
    Array.isArray(def["x-kubernetes-group-version-kind"]) &&
    isPlainObject(def.properties) &&
    "metadata" in def.properties &&
    !title.endsWith("List")
  );
}

export interface KubernetesSchemas {
  dir: string;
  built: boolean;
}

/**
 * The folder of kubernetesSchemasDir(), built unless it is there: the module downloaded, its
 * OpenAPI converted, written into a temporary folder renamed into place (an interrupted build
 * leaves nothing half-made), with SOURCES.json (module, go.sum hash, SHA-256 of swagger.json).
 */
export function ensureKubernetesSchemas(
  toolsDir = TOOLS_DIR,
  download: ModuleDownload = (m, v) => goModDownload(m, v, "Kubernetes' OpenAPI (kubeconform's schemas)"),
  version = KUBERNETES_VERSION,
): KubernetesSchemas {
  const root = kubernetesSchemasRoot(toolsDir, version);
  const dir = kubernetesSchemasDir(toolsDir, version);
  if (fs.existsSync(path.join(root, "SOURCES.json"))) return { dir, built: false };
  const mod = download(KUBERNETES_MODULE, `v${version}`);
  const source = path.join(mod.dir, KUBERNETES_OPENAPI_FILE);
  if (!fs.existsSync(source))
    throw new ToolError(`${KUBERNETES_MODULE}@v${version} has no ${KUBERNETES_OPENAPI_FILE}. Fix: check KUBERNETES_VERSION in platform/versions.ts`);
  const text = fs.readFileSync(source, "utf8");
  const files = kubernetesJsonSchemas(JSON.parse(text));
  const tmp = `${root}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  const folder = path.join(tmp, "schemas", "kubernetes", strictFolder(version));
  fs.mkdirSync(folder, { recursive: true });
  for (const [name, body] of files) fs.writeFileSync(path.join(folder, name), body);
  const sha256 = crypto.createHash("sha256").update(text).digest("hex");
  const sources = { module: `${KUBERNETES_MODULE}@v${version}`, sum: mod.sum, file: KUBERNETES_OPENAPI_FILE, sha256, kinds: files.size };
  fs.writeFileSync(path.join(tmp, "SOURCES.json"), `${JSON.stringify(sources, null, 2)}\n`);
  fs.rmSync(root, { recursive: true, force: true });
  fs.renameSync(tmp, root);
  return { dir, built: true };
}

/** The schema folder at the pin, or a ToolError saying to run `npm run tools`. */
export function requireKubernetesSchemas(toolsDir = TOOLS_DIR): string {
  if (!fs.existsSync(path.join(kubernetesSchemasRoot(toolsDir), "SOURCES.json")))
    throw new ToolError(
      `${kubernetesSchemasDir(toolsDir)}: the schemas of Kubernetes ${KUBERNETES_VERSION} (made from ${KUBERNETES_MODULE}@v${KUBERNETES_VERSION}'s OpenAPI) are not there. Fix: run \`npm run tools\`.`,
    );
  return kubernetesSchemasDir(toolsDir);
}
