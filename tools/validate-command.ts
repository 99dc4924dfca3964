// `npm run validate` as a function of its arguments: the CLI (scripts/validate.ts) and the tests run
// the same code, the tests in-process with the output captured (kubeconform is a child process).
import * as fs from "node:fs";
import * as path from "node:path";
import { KUBERNETES_VERSION, TOOLS } from "../platform/versions";
import { args, EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, UserError, type Io } from "../cli/cli";
import {
  DEFAULT_SCHEMAS_DIR,
  downloadFailures,
  failed,
  formatFinding,
  offlineSchemasDir,
  runKubeconformPerTarget,
  SCHEMAS_ENV,
  schemasDirProblem,
  schemasFix,
  UPSTREAM_PROBE_URL,
  upstreamUnreachable,
} from "./kubeconform";
import { requireKubernetesSchemas } from "./kubernetes-schemas";
import { REPO_ROOT, requireTool } from "./tools";
import { ensureUpstreamSchemas, UPSTREAM_DESCRIPTION, UPSTREAM_FILES } from "./upstream-schemas";

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

/**
 * The offline folder and where it was named (--schemas, $OPENKEEL_SCHEMAS, or ../shared/schemas
 * found beside the checkout), or undefined: upstream at the pinned commits. A folder named on
 * purpose must be a schema folder (exit 2 otherwise); one beside the checkout is simply used.
 */
export function pickSchemas(flag: string | undefined, env: NodeJS.ProcessEnv, beside?: string): { dir: string; from: string } | undefined {
  const from = flag !== undefined ? "--schemas" : env[SCHEMAS_ENV] ? `$${SCHEMAS_ENV}` : undefined;
  const dir = flag ?? (from ? env[SCHEMAS_ENV] : offlineSchemasDir({}, beside));
  if (dir === undefined) return undefined;
  const problem = schemasDirProblem(dir);
  if (problem && from) {
    throw new UserError(
      `${problem} (from ${from}). Fix: point ${from} at a schema folder laid out as ../shared/schemas, or unset it to use the upstream schemas.`,
      EXIT_BAD_CONFIG,
    );
  }
  if (problem) throw new UserError(`${problem} (found beside this checkout). Fix: complete it, or pass --schemas <dir>.`, EXIT_BAD_CONFIG);
  return { dir, from: from ?? `${DEFAULT_SCHEMAS_DIR}, beside this checkout` };
}

/** Upstream, before kubeconform: it answers, and the folder of what the catalogs lack is built. */
async function prepareUpstream(io: Io): Promise<void> {
  const why = await upstreamUnreachable(UPSTREAM_PROBE_URL, 5000);
  if (why) {
    throw new UserError(`no schema folder given, and the upstream schemas cannot be reached (${why}). Fix: ${schemasFix(sharedSchemas())}`, EXIT_BAD_CONFIG);
  }
  try {
    const { dir, built } = await ensureUpstreamSchemas();
    if (built) io.progress?.(`built ${path.relative(process.cwd(), dir)} from ${UPSTREAM_FILES.length} upstream files (the medik8s CRDs, the Talos schema)`);
  } catch (e) {
    throw new UserError(
      `the schemas the upstream catalogs lack cannot be built: ${(e as Error).message}. Fix: ${schemasFix(sharedSchemas())}`,
      EXIT_BAD_CONFIG,
    );
  }
}

function countFiles(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).length;
}

/**
 * `env`: where $OPENKEEL_SCHEMAS is read (the process' environment for the CLI); `besideDir`: the
 * folder looked for beside the checkout (../shared/schemas; the tests name another).
 */
export async function validateCommand(argv: string[], io: Io, env: NodeJS.ProcessEnv = process.env, besideDir?: string): Promise<number> {
  const opts = args(VALIDATE_OPTIONS, argv, VALIDATE_SCRIPT);
  const renderedDir = opts.rendered!;
  const picked = pickSchemas(opts.schemas, env, besideDir);
  const schemas = picked?.dir;
  const kubeconform = requireTool("kubeconform");
  const kubernetesSchemas = requireKubernetesSchemas();
  if (schemas === undefined) await prepareUpstream(io);

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
    `kubeconform ${TOOLS.kubeconform.version} -strict, Kubernetes ${KUBERNETES_VERSION} (from its OpenAPI: ${path.relative(process.cwd(), kubernetesSchemas)}), CRD schemas: ` +
      `${picked ? `${picked.dir} (${picked.from})` : `upstream: ${UPSTREAM_DESCRIPTION}`}\n`,
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
