// `npm run validate` as a function of its arguments: the CLI (scripts/validate.ts) and the tests run
// the same code, the tests in-process with the output captured (kubeconform is a child process).
import * as fs from "node:fs";
import * as path from "node:path";
import { KUBERNETES_SCHEMA_VERSION, TOOLS } from "../platform/versions";
import { args, EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, UserError, type Io } from "../cli/cli";
import {
  DEFAULT_SCHEMAS_DIR,
  downloadFailures,
  failed,
  formatFinding,
  runKubeconformPerTarget,
  SCHEMAS_ENV,
  schemasDirProblem,
  schemasFix,
  UPSTREAM_PROBE_URL,
  upstreamUnreachable,
} from "./kubeconform";
import { REPO_ROOT, requireTool } from "./tools";

const VALIDATE_OPTIONS = {
  stack: { type: "string", multiple: true },
  schemas: { type: "string" },
  rendered: { type: "string", default: "rendered" },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const VALIDATE_SCRIPT = path.resolve(__dirname, "../scripts/validate.ts");

/** ../shared/schemas beside this checkout (what npm test uses), as the user would type it, if present. */
function sharedSchemas(): string | undefined {
  const dir = path.resolve(REPO_ROOT, DEFAULT_SCHEMAS_DIR);
  return schemasDirProblem(dir) === undefined ? path.relative(process.cwd(), dir) || "." : undefined;
}

function countFiles(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).length;
}

/** `env`: where $OPENKEEL_SCHEMAS is read (the process' environment for the CLI). */
export async function validateCommand(argv: string[], io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const opts = args(VALIDATE_OPTIONS, argv, VALIDATE_SCRIPT);
  const renderedDir = opts.rendered!;
  const schemasFrom = opts.schemas !== undefined ? "--schemas" : env[SCHEMAS_ENV] ? `$${SCHEMAS_ENV}` : undefined;
  const schemas = opts.schemas ?? (env[SCHEMAS_ENV] || undefined);
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
    ? fs
        .readdirSync(renderedDir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && !e.name.startsWith("."))
        .map((e) => e.name)
        .sort()
    : [];
  const stacks = opts.stack?.length ? opts.stack : present;
  const unknown = stacks.filter((s) => !present.includes(s));
  if (unknown.length > 0 || stacks.length === 0) {
    const which = unknown.length ? unknown.map((s) => `${renderedDir}/${s}/`).join(", ") : `${renderedDir}/<stack>/`;
    throw new UserError(`${which}: not rendered. Fix: run \`npm run render\` first.`, EXIT_BAD_CONFIG);
  }

  io.out(
    `kubeconform ${TOOLS.kubeconform.version} -strict, Kubernetes ${KUBERNETES_SCHEMA_VERSION}, schemas: ` +
      `${schemas ? `${schemas} (${schemasFrom})` : "upstream (kubeconform default + datreeio/CRDs-catalog)"}\n`,
  );
  let total = 0;
  let bad = 0;
  // schemas kubeconform could not download: one line for all, not one per object
  let missingSchemas = 0;
  const withObjects = stacks.filter((stack) => countFiles(path.join(renderedDir, stack, "objects")) > 0);
  io.progress?.(`kubeconform over ${withObjects.length} stack(s): ${withObjects.join(", ")}`);
  const results = runKubeconformPerTarget(kubeconform, Object.fromEntries(withObjects.map((s) => [s, path.join(renderedDir, s, "objects")])), schemas);
  for (const stack of stacks) {
    if (!withObjects.includes(stack)) {
      io.out(`${stack}: no objects\n`);
      continue;
    }
    const result = results[stack];
    const checked = result.valid + result.invalid + result.errors + result.skipped;
    total += checked;
    if (failed(result)) {
      bad += result.invalid + result.errors + result.skipped;
      io.out(
        `${stack}: ${checked} objects: ${result.valid} valid, ${result.invalid} invalid, ${result.errors} errors` +
          `${result.skipped ? `, ${result.skipped} skipped` : ""}\n`,
      );
      const unfetched = new Set(downloadFailures(result.findings));
      for (const f of result.findings) if (!unfetched.has(f)) for (const line of formatFinding(f)) io.err(`  ${line}\n`);
      missingSchemas += unfetched.size;
    } else {
      io.out(`${stack}: ${checked} objects valid\n`);
    }
  }
  io.out(`validated ${stacks.length} stack(s), ${total} object(s), ${bad} failed\n`);
  if (missingSchemas > 0) {
    throw new UserError(
      `kubeconform could not download the schemas of ${missingSchemas} object(s): the network went away, or upstream is down. Fix: ${schemasFix(sharedSchemas())}`,
      EXIT_BAD_CONFIG,
    );
  }
  return bad > 0 ? EXIT_CHECKS_FAILED : 0;
}
