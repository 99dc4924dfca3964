// kubeconform over a folder of rendered objects: the arguments (always -strict, never
// -ignore-missing-schemas), the schema locations (Kubernetes' kinds from KUBERNETES_VERSION's
// OpenAPI; the CRDs from an offline mirror, or upstream at pinned commits), and its JSON report
// turned into one result per stack.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as https from "node:https";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import { APPLY_AS_PATCH_ANNOTATION } from "../plan/plan";
import { KUBERNETES_VERSION } from "../platform/versions";
import { kubeOvnSchemasDir } from "./kube-ovn-crds";
import { kubernetesSchemasDir } from "./kubernetes-schemas";
import { UPSTREAM_CRD_LOCATION, upstreamSchemasDir } from "./upstream-schemas";

/** The environment variable naming an offline schema folder (the layout of ../shared/schemas). */
export const SCHEMAS_ENV = "OPENKEEL_SCHEMAS";
/** The offline schema folder beside this checkout, relative to the repository root. */
export const DEFAULT_SCHEMAS_DIR = "../shared/schemas";
const REPO = path.resolve(__dirname, "..");

/** The schema folder: $OPENKEEL_SCHEMAS, else ../shared/schemas; relative paths from the repository root. */
export function schemasDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(REPO, env[SCHEMAS_ENV] || DEFAULT_SCHEMAS_DIR);
}

/**
 * The offline folder validation uses unless told: $OPENKEEL_SCHEMAS, else ../shared/schemas when it
 * is there; undefined: none (upstream, at the pins of platform/versions.ts).
 */
export function offlineSchemasDir(env: NodeJS.ProcessEnv = process.env, beside = path.resolve(REPO, DEFAULT_SCHEMAS_DIR)): string | undefined {
  if (env[SCHEMAS_ENV]) return path.resolve(REPO, env[SCHEMAS_ENV]);
  return fs.existsSync(beside) ? beside : undefined;
}

/**
 * Schema locations, tried in order: Kubernetes kinds, then CRDs by API group. The kinds' schemas are
 * always the ones made from KUBERNETES_VERSION's OpenAPI (tools/kubernetes-schemas.ts, built by
 * `npm run tools`). The CRDs offline come from one folder laid out as datreeio/CRDs-catalog (crds/
 * of ../shared/schemas); without one, from what upstreamSchemasDir() holds (the medik8s CRDs, built
 * by ensureUpstreamSchemas), then the catalog at its pinned commit. A kind a location lacks is looked
 * up in the next; one no location has is an error.
 */
export function schemaLocations(schemasDir: string | undefined, kubeOvn = kubeOvnSchemasDir(), kubernetes = kubernetesSchemasDir()): string[] {
  const kubernetesLocation = `${kubernetes}/kubernetes/{{.NormalizedKubernetesVersion}}-standalone{{.StrictSuffix}}/{{.ResourceKind}}{{.KindSuffix}}.json`;
  // Kube-OVN's kubeovn.io, which neither source has: converted from the pinned module by `npm run tools`
  const kubeOvnLocation = `${kubeOvn}/crds/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json`;
  if (!schemasDir)
    return [
      kubernetesLocation,
      `${upstreamSchemasDir()}/crds/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json`,
      kubeOvnLocation,
      UPSTREAM_CRD_LOCATION,
    ];
  return [kubernetesLocation, `${schemasDir}/crds/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json`, kubeOvnLocation];
}

/** What is wrong with an offline schema folder, or undefined when it holds the CRD schemas (crds/). */
export function schemasDirProblem(schemasDir: string): string | undefined {
  if (!fs.existsSync(schemasDir)) return `${schemasDir}: no such folder`;
  if (!fs.existsSync(path.join(schemasDir, "crds"))) return `${schemasDir}: no crds/ (the CRD schemas, crds/<group>/<kind>_<version>.json)`;
  return undefined;
}

/** One schema of the pinned datreeio/CRDs-catalog, to learn whether upstream answers. */
export const UPSTREAM_PROBE_URL = UPSTREAM_CRD_LOCATION.replace("{{.Group}}", "kubevirt.io")
  .replace("{{.ResourceKind}}", "kubevirt")
  .replace("{{.ResourceAPIVersion}}", "v1");

/**
 * Why `url` cannot be reached (DNS, connection, timeout), or undefined when it answers at all. Only
 * asked without an offline schema folder: kubeconform would otherwise try every object's schema,
 * three times each, and print one download error per object (~150 over the shipped stacks). Behind
 * a proxy (HTTPS_PROXY, which kubeconform honours and Node's https does not) the answer would be
 * wrong, so it is not asked there.
 */
export function upstreamUnreachable(url: string, timeoutMs: number, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  if (["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"].some((k) => env[k])) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const req = https.request(url, { method: "HEAD", timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(undefined);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.on("error", (e: NodeJS.ErrnoException) => {
      const what = e.message.replace(/^(getaddrinfo|connect) /, "");
      resolve(`${new URL(url).host}: ${e.code && !what.includes(e.code) ? `${e.code} ` : ""}${what}`);
    });
    req.end();
  });
}

/** The Fix of a validate that cannot have its schemas: one line, naming the folder this checkout has if it has one. */
export function schemasFix(sharedSchemas: string | undefined): string {
  return `pass --schemas <dir> or set ${SCHEMAS_ENV}=<dir>, an offline schema folder laid out as ../shared/schemas${
    sharedSchemas ? ` (this checkout has one: --schemas ${sharedSchemas})` : ""
  }`;
}

/** Findings that are kubeconform failing to fetch a schema, not an object failing one. */
export function downloadFailures(findings: Finding[]): Finding[] {
  return findings.filter((f) => f.status === "error" && f.messages.some((m) => /failed downloading schema/.test(m)));
}

export function kubeconformArgs(target: string | string[], schemasDir: string | undefined, kubernetesVersion = KUBERNETES_VERSION): string[] {
  return [
    "-strict",
    "-summary",
    "-output",
    "json",
    "-kubernetes-version",
    kubernetesVersion,
    ...schemaLocations(schemasDir).flatMap((l) => ["-schema-location", l]),
    ...(Array.isArray(target) ? target : [target]),
  ];
}

export interface Finding {
  file: string;
  kind: string;
  name: string;
  apiVersion: string;
  status: "invalid" | "error" | "skipped";
  /** kubeconform's messages: one per validation error (with its path), or its single message. */
  messages: string[];
}

export interface KubeconformResult {
  valid: number;
  invalid: number;
  errors: number;
  skipped: number;
  findings: Finding[];
}

export interface RawResource {
  filename: string;
  kind?: string;
  name?: string;
  version?: string;
  status: string;
  msg?: string;
  validationErrors?: { path: string; msg: string }[];
}

const STATUS: Record<string, Finding["status"] | undefined> = {
  statusInvalid: "invalid",
  statusError: "error",
  statusSkipped: "skipped",
};

/** kubeconform's `-output json -summary` report → counts and the findings, sorted by file. */
function parseKubeconform(stdout: string): KubeconformResult {
  const report = JSON.parse(stdout) as { resources?: RawResource[]; summary?: Partial<Record<"valid" | "invalid" | "errors" | "skipped", number>> };
  const s = report.summary ?? {};
  const findings: Finding[] = [];
  for (const r of report.resources ?? []) {
    const status = STATUS[r.status];
    if (!status) continue;
    const messages = r.validationErrors?.length ? r.validationErrors.map((e) => `at ${e.path || "/"}: ${e.msg}`) : [r.msg || r.status];
    findings.push({ file: r.filename, kind: r.kind ?? "", name: r.name ?? "", apiVersion: r.version ?? "", status, messages });
  }
  findings.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name)));
  return { valid: s.valid ?? 0, invalid: s.invalid ?? 0, errors: s.errors ?? 0, skipped: s.skipped ?? 0, findings };
}

export function failed(r: KubeconformResult): boolean {
  return r.invalid + r.errors + r.skipped > 0 || r.findings.length > 0;
}

export function formatFinding(f: Finding): string[] {
  const what = [f.kind, f.name].filter(Boolean).join(" ") + (f.apiVersion ? ` (${f.apiVersion})` : "");
  return f.messages.map((m) => `${f.file}: ${what}: ${f.status}: ${m}`);
}

/** How kubeconform words a required field the object lacks. */
const MISSING_PROPERTY = /^missing propert(y|ies) /;

/**
 * A patch of an object another writes (plan/plan.ts APPLY_AS_PATCH_ANNOTATION: an operator's CSV, a
 * Longhorn node) carries only the fields it sets; the object's owner holds the ones the schema
 * requires. Its only findings being required fields it lacks, it is valid as a patch; an unknown
 * field or a wrong type still fails it.
 */
function validPatch(res: RawResource): boolean {
  if (res.status !== "statusInvalid" || !res.validationErrors?.length || !res.validationErrors.every((e) => MISSING_PROPERTY.test(e.msg))) return false;
  const docs = parseAllDocuments(fs.readFileSync(res.filename, "utf8")).map(
    (d) => d.toJS() as { metadata?: { name?: string; annotations?: Record<string, string> } } | null,
  );
  return docs.some((d) => d?.metadata?.name === res.name && d?.metadata?.annotations?.[APPLY_AS_PATCH_ANNOTATION] === "patch");
}

/**
 * The resources of a kubeconform `-output json` report that fail it: invalid, errors and skipped,
 * a patch of an object another writes (validPatch) not among them.
 */
export function failedResources(stdout: string): RawResource[] {
  const report = JSON.parse(stdout) as { resources?: RawResource[] };
  return (report.resources ?? []).filter((r) => r.status !== "statusValid" && !validPatch(r));
}

/**
 * kubeconform once over several folders, the result split per folder. One run instead of one per
 * stack: kubeconform loads and compiles each schema once per run, which is most of its time on a
 * few hundred objects (npm run bench). `-verbose` lists every resource, valid ones included.
 */
export function runKubeconformPerTarget(binary: string, targets: Record<string, string>, schemasDir: string | undefined): Record<string, KubeconformResult> {
  const names = Object.keys(targets);
  const out: Record<string, KubeconformResult> = Object.fromEntries(names.map((n) => [n, { valid: 0, invalid: 0, errors: 0, skipped: 0, findings: [] }]));
  if (names.length === 0) return out;
  const args = kubeconformArgs(
    names.map((n) => targets[n]),
    schemasDir,
  );
  const r = spawnSync(binary, ["-verbose", ...args], { encoding: "utf8", maxBuffer: 1024 * 1024 * 1024 });
  if (r.error) throw r.error;
  let report: { resources?: RawResource[] };
  try {
    report = JSON.parse(r.stdout);
  } catch {
    throw new Error(`kubeconform exited ${r.status} without a JSON report:\n${r.stdout}\n${r.stderr}`);
  }
  const prefixes = names.map((n) => [n, targets[n].endsWith(path.sep) ? targets[n] : targets[n] + path.sep] as const);
  for (const res of report.resources ?? []) {
    const owner = prefixes.find(([, prefix]) => res.filename.startsWith(prefix))?.[0];
    if (!owner) throw new Error(`kubeconform reported ${res.filename}, outside ${names.map((n) => targets[n]).join(", ")}`);
    const counts = out[owner];
    if (res.status === "statusValid" || validPatch(res)) {
      counts.valid++;
      continue;
    }
    if (res.status === "statusInvalid") counts.invalid++;
    else if (res.status === "statusError") counts.errors++;
    else if (res.status === "statusSkipped") counts.skipped++;
    counts.findings.push(...parseKubeconform(JSON.stringify({ resources: [res] })).findings);
  }
  for (const n of names)
    out[n].findings.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name)));
  return out;
}
