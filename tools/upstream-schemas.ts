// The CRD schemas validation reads where no offline schema folder is (a GitHub runner has no
// ../shared): kubeconform reads datreeio/CRDs-catalog at its pinned commit, and a folder laid out as
// ../shared/schemas, built once from upstream files at release tags, holds what it lacks: the
// medik8s CRDs (the catalog has no medik8s group) converted to strict JSON schemas the way
// ../shared/schemas converted them, and the Talos machine-config schema. The Kubernetes kinds'
// schemas are made from KUBERNETES_VERSION's OpenAPI in every mode (tools/kubernetes-schemas.ts).
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import { CRDS_CATALOG_COMMIT, MEDIK8S_CRDS, TALOS_CONFIG_SCHEMA, TALOS_VERSION } from "../platform/versions";

const REPO = path.resolve(__dirname, "..");

export const UPSTREAM_CRD_LOCATION = `https://raw.githubusercontent.com/datreeio/CRDs-catalog/${CRDS_CATALOG_COMMIT}/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json`;

/** What validation says it reads where no offline folder is. */
export const UPSTREAM_DESCRIPTION =
  `datreeio/CRDs-catalog@${CRDS_CATALOG_COMMIT.slice(0, 12)}, ` +
  `the medik8s CRDs at ${[...new Set(MEDIK8S_CRDS.map((p) => `${p.url.split("/")[4]} ${p.version}`))].join(", ")}`;

/** Every upstream file the built folder is made of: its name changes with any of these pins. */
export const UPSTREAM_FILES = [...MEDIK8S_CRDS, TALOS_CONFIG_SCHEMA].map((p) => p.url);

/** The built folder: in node_modules/.cache (git-ignored, gone with `npm ci`), one per set of pins. */
export function upstreamSchemasDir(): string {
  const key = crypto.createHash("sha256").update(UPSTREAM_FILES.join("\n")).digest("hex").slice(0, 12);
  return path.join(REPO, "node_modules", ".cache", "openkeel-schemas", key);
}

/**
 * The API groups of rendered objects that datreeio/CRDs-catalog serves (its history at the pinned
 * commit's branch holds kubevirt.io/kubevirt_v1.json, cdi.kubevirt.io/cdi_v1beta1.json,
 * operators.coreos.com/operatorgroup_v1.json and subscription_v1alpha1.json,
 * snapshot.storage.k8s.io/volumesnapshotclass_v1.json, metallb.io/ipaddresspool_v1beta1.json and
 * l2advertisement_v1beta1.json, k8s.cni.cncf.io/networkattachmentdefinition_v1.json). A rendered
 * group in neither this list, MEDIK8S_CRDS nor Kube-OVN's (tools/kube-ovn-crds.ts) fails a test:
 * look it up in the catalog, or build it from its CRD, before adding it.
 */
export const CATALOG_GROUPS = ["cdi.kubevirt.io", "k8s.cni.cncf.io", "kubevirt.io", "metallb.io", "operators.coreos.com", "snapshot.storage.k8s.io"];

/** The groups of the built folder: `<group>_<plural>.yaml`, kubebuilder's CRD file names. */
export const BUILT_GROUPS = [...new Set(MEDIK8S_CRDS.map((p) => path.posix.basename(p.url).split("_")[0]))];

type Schema = Record<string, unknown>;
const isSchema = (v: unknown): v is Schema => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * A structural openAPIV3Schema node → JSON Schema that rejects unknown fields, as openapi2jsonschema
 * --strict does: every object that lists its properties gets `additionalProperties: false`, unless
 * it keeps unknown fields (x-kubernetes-preserve-unknown-fields); `nullable` becomes a "null" type;
 * int-or-string becomes anyOf integer/string. Literal values (default, enum, example) and CEL rules
 * are kept as they are.
 */
export function strictSchema(node: Schema): Schema {
  const out: Schema = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "properties" && isSchema(v)) out.properties = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, isSchema(s) ? strictSchema(s) : s]));
    else if ((k === "items" || k === "additionalProperties" || k === "not") && isSchema(v)) out[k] = strictSchema(v);
    else if ((k === "allOf" || k === "anyOf" || k === "oneOf" || k === "items") && Array.isArray(v)) out[k] = v.map((s) => (isSchema(s) ? strictSchema(s) : s));
    else if (k !== "nullable") out[k] = v;
  }
  if (node.nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  if (node["x-kubernetes-int-or-string"] === true && !out.anyOf && !out.oneOf) out.anyOf = [{ type: "integer" }, { type: "string" }];
  if (isSchema(out.properties) && out.additionalProperties === undefined && node["x-kubernetes-preserve-unknown-fields"] !== true) {
    out.additionalProperties = false;
  }
  return out;
}

export interface CrdSchemaFile {
  /** Relative to the schema folder: crds/<group>/<kind>_<version>.json (datreeio/CRDs-catalog layout). */
  file: string;
  schema: Schema;
}

/**
 * The JSON schema of every version of a CustomResourceDefinition. apiVersion and kind accept only
 * the CRD's own; metadata is the API server's (a CRD may not constrain it): any object.
 */
export function crdJsonSchemas(crd: unknown): CrdSchemaFile[] {
  const spec = (isSchema(crd) && isSchema(crd.spec) ? crd.spec : {}) as { group?: string; names?: { kind?: string }; versions?: unknown[] };
  const kind = spec.names?.kind;
  if (!spec.group || !kind || !Array.isArray(spec.versions))
    throw new Error("not a CustomResourceDefinition of apiextensions.k8s.io/v1 (no spec.group, spec.names.kind or spec.versions)");
  return spec.versions.flatMap((v) => {
    const version = v as { name: string; schema?: { openAPIV3Schema?: Schema } };
    const root = version.schema?.openAPIV3Schema;
    if (!root) return [];
    const schema = strictSchema(root);
    schema.properties = {
      ...(isSchema(schema.properties) ? schema.properties : {}),
      apiVersion: { type: "string", enum: [`${spec.group}/${version.name}`] },
      kind: { type: "string", enum: [kind] },
      metadata: { type: "object" },
    };
    schema.additionalProperties = false;
    return [{ file: `crds/${spec.group}/${kind.toLowerCase()}_${version.name}.json`, schema }];
  });
}

/** The CRDs of a manifest (any number of YAML documents), converted. */
export function manifestCrdSchemas(yamlText: string): CrdSchemaFile[] {
  return parseAllDocuments(yamlText)
    .map((d) => d.toJS() as unknown)
    .filter((o) => isSchema(o) && o.kind === "CustomResourceDefinition")
    .flatMap(crdJsonSchemas);
}

export type FetchText = (url: string) => Promise<string>;

async function httpsText(url: string): Promise<string> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`${url}: ${cause?.code ?? cause?.message ?? (e as Error).message}`, { cause: e });
  }
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.text();
}

/** `v1.13.9` → `v1.13`: the schema folder of a Talos release (talos/<minor>/config.schema.json). */
export function talosMinor(version: string): string {
  const m = /^v(\d+)\.(\d+)\./.exec(version);
  if (!m) throw new Error(`Talos version ${version} is not vX.Y.Z`);
  return `v${m[1]}.${m[2]}`;
}

/** One fetched file into the folder: the Talos schema as it is, a CRD manifest converted. */
function writeUpstreamFile(url: string, text: string, write: (rel: string, body: string) => void): void {
  if (url === TALOS_CONFIG_SCHEMA.url) {
    try {
      JSON.parse(text); // a wrong file fails here, not in every Talos test
    } catch {
      throw new Error(`${url}: not JSON`);
    }
    write(`talos/${talosMinor(TALOS_VERSION)}/config.schema.json`, text);
    return;
  }
  const files = manifestCrdSchemas(text);
  if (files.length === 0) throw new Error(`${url}: no CustomResourceDefinition in it`);
  for (const f of files) write(f.file, `${JSON.stringify(f.schema, null, 2)}\n`);
}

/**
 * The folder of upstreamSchemasDir(), built unless it is there: every file fetched first, then
 * written into a temporary folder renamed into place, so a failed or interrupted build leaves
 * nothing half-made. SOURCES.json records each URL with the SHA-256 of what it served.
 */
export async function ensureUpstreamSchemas(dir = upstreamSchemasDir(), fetchText: FetchText = httpsText): Promise<{ dir: string; built: boolean }> {
  if (fs.existsSync(dir)) return { dir, built: false };
  const fetched = await Promise.all(UPSTREAM_FILES.map(async (url) => ({ url, text: await fetchText(url) })));
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  const write = (rel: string, body: string) => {
    fs.mkdirSync(path.dirname(path.join(tmp, rel)), { recursive: true });
    fs.writeFileSync(path.join(tmp, rel), body);
  };
  try {
    for (const { url, text } of fetched) writeUpstreamFile(url, text, write);
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  const sources = fetched.map(({ url, text }) => ({ url, sha256: crypto.createHash("sha256").update(text).digest("hex") }));
  write("SOURCES.json", `${JSON.stringify(sources, null, 2)}\n`);
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  try {
    fs.renameSync(tmp, dir);
  } catch (e) {
    // another process built it meanwhile: the same pins, the same files
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(dir)) throw e;
  }
  return { dir, built: true };
}
