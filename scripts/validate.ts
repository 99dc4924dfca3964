// npm run validate [-- --stack <name>]… [--schemas <dir>] [--rendered <dir>]: kubeconform -strict
// over every Kubernetes object of every rendered stack (rendered/<stack>/objects/ only: values files,
// index.yaml and node-level configuration are not Kubernetes objects). Schemas come from --schemas
// or $OPENKEEL_SCHEMAS (an offline folder laid out as ../shared/schemas), else from upstream.
// Without either, it first checks that upstream answers, and stops with one line and the fix if not.
// Exit 0: every object valid; 1: an object is invalid or has no schema; 2: bad usage or setup
// (schemas that cannot be had included).
import * as fs from "node:fs";
import * as path from "node:path";
import { KUBERNETES_SCHEMA_VERSION, TOOLS } from "../platform/versions";
import { args, EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, progress, run, UserError } from "./lib/cli";
import {
  downloadFailures,
  failed,
  formatFinding,
  runKubeconformPerTarget,
  SCHEMAS_ENV,
  schemasDirProblem,
  schemasFix,
  UPSTREAM_PROBE_URL,
  upstreamUnreachable,
} from "./lib/kubeconform";
import { REPO_ROOT, requireTool } from "./lib/tools";

/** ../shared/schemas beside this checkout (what npm test uses), as the user would type it, if present. */
function sharedSchemas(): string | undefined {
  const dir = path.resolve(REPO_ROOT, "..", "shared", "schemas");
  return schemasDirProblem(dir) === undefined ? path.relative(process.cwd(), dir) || "." : undefined;
}

function countFiles(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).length;
}

run(async () => {
  const opts = args({
    stack: { type: "string", multiple: true },
    schemas: { type: "string" },
    rendered: { type: "string", default: "rendered" },
  });
  const renderedDir = opts.rendered!;
  const schemasFrom = opts.schemas !== undefined ? "--schemas" : process.env[SCHEMAS_ENV] ? `$${SCHEMAS_ENV}` : undefined;
  const schemas = opts.schemas ?? (process.env[SCHEMAS_ENV] || undefined);
  if (schemas !== undefined) {
    const problem = schemasDirProblem(schemas);
    if (problem) {
      throw new UserError(
        `${problem} (from ${schemasFrom}). Fix: point ${schemasFrom} at a schema folder laid out as ../shared/schemas, or unset it to use the upstream schemas.`,
        EXIT_BAD_CONFIG,
      );
    }
  }
  const kubeconform = requireTool("kubeconform");
  if (schemas === undefined) {
    const why = await upstreamUnreachable(UPSTREAM_PROBE_URL, 5000);
    if (why) {
      throw new UserError(`no schema folder given, and the upstream schemas cannot be reached (${why}). Fix: ${schemasFix(sharedSchemas())}`, EXIT_BAD_CONFIG);
    }
  }

  const present = fs.existsSync(renderedDir)
    ? fs.readdirSync(renderedDir, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith(".")).map((e) => e.name).sort()
    : [];
  const stacks = opts.stack?.length ? opts.stack : present;
  const unknown = stacks.filter((s) => !present.includes(s));
  if (unknown.length > 0 || stacks.length === 0) {
    const which = unknown.length ? unknown.map((s) => `${renderedDir}/${s}/`).join(", ") : `${renderedDir}/<stack>/`;
    throw new UserError(`${which}: not rendered. Fix: run \`npm run render\` first.`, EXIT_BAD_CONFIG);
  }

  console.log(
    `kubeconform ${TOOLS.kubeconform.version} -strict, Kubernetes ${KUBERNETES_SCHEMA_VERSION}, schemas: ` +
      (schemas ? `${schemas} (${schemasFrom})` : "upstream (kubeconform default + datreeio/CRDs-catalog)"),
  );
  let total = 0;
  let bad = 0;
  // schemas kubeconform could not download: one line for all, not one per object
  let missingSchemas = 0;
  const withObjects = stacks.filter((stack) => countFiles(path.join(renderedDir, stack, "objects")) > 0);
  progress(`kubeconform over ${withObjects.length} stack(s): ${withObjects.join(", ")}`);
  const results = runKubeconformPerTarget(kubeconform, Object.fromEntries(withObjects.map((s) => [s, path.join(renderedDir, s, "objects")])), schemas);
  for (const stack of stacks) {
    if (!withObjects.includes(stack)) {
      console.log(`${stack}: no objects`);
      continue;
    }
    const result = results[stack];
    const checked = result.valid + result.invalid + result.errors + result.skipped;
    total += checked;
    if (failed(result)) {
      bad += result.invalid + result.errors + result.skipped;
      console.log(
        `${stack}: ${checked} objects: ${result.valid} valid, ${result.invalid} invalid, ${result.errors} errors` +
          (result.skipped ? `, ${result.skipped} skipped` : ""),
      );
      const unfetched = new Set(downloadFailures(result.findings));
      for (const f of result.findings) if (!unfetched.has(f)) for (const line of formatFinding(f)) console.error(`  ${line}`);
      missingSchemas += unfetched.size;
    } else {
      console.log(`${stack}: ${checked} objects valid`);
    }
  }
  console.log(`validated ${stacks.length} stack(s), ${total} object(s), ${bad} failed`);
  if (missingSchemas > 0) {
    throw new UserError(`kubeconform could not download the schemas of ${missingSchemas} object(s): the network went away, or upstream is down. Fix: ${schemasFix(sharedSchemas())}`, EXIT_BAD_CONFIG);
  }
  return bad > 0 ? EXIT_CHECKS_FAILED : 0;
});
