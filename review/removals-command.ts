// `npm run removals` as a function of its arguments: the CLI (scripts/removals.ts) and the tests run
// the same code. The deploy's half of openkeel:allowRemoval (docs/operating.md, "Removing a unit
// that owns data"): the units a stack allows to go, and, given the stack's Pulumi state
// (`pulumi stack export`), the URNs of their protected resources, which the deploy unprotects
// (`pulumi state unprotect`) before `pulumi up`: without that, `pulumi up` refuses to delete a
// protected resource, and the merge that was reviewed to remove it fails. `pulumi up` protects again
// whatever the program still declares protected; what it no longer declares it forgets, and
// retainOnDelete leaves it in the cluster.
import * as fs from "node:fs";
import * as path from "node:path";
import { args, EXIT_BAD_CONFIG, UserError, type Io } from "../cli/cli";
import { ConfigError } from "../config/problems";
import { loadConfig } from "../config/load";
import { readStackRaw } from "../config/stack-file";
import { isPlainObject } from "../config/plain";
import { STACK_DECLARATIONS } from "../environments/registry";

const REMOVALS_OPTIONS = {
  stack: { type: "string" },
  "stacks-dir": { type: "string", default: "stacks" },
  /** The stack's state as `pulumi stack export --file` wrote it. */
  state: { type: "string" },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const REMOVALS_SCRIPT = path.resolve(__dirname, "../scripts/removals.ts");

/** A resource of a `pulumi stack export`, as far as this reads it. */
interface StateResource {
  urn: string;
  custom?: boolean;
  parent?: string;
  protect?: boolean;
}

/** The resources of an export (`{"version": 3, "deployment": {"resources": [...]}}`), or undefined when it is not one. */
function resourcesOf(data: unknown): StateResource[] | undefined {
  if (!isPlainObject(data) || !isPlainObject(data.deployment)) return undefined;
  // a stack that holds nothing yet has no resources
  const resources = data.deployment.resources ?? [];
  if (!Array.isArray(resources) || !resources.every((r) => isPlainObject(r) && typeof r.urn === "string")) return undefined;
  return resources as StateResource[];
}

/** A URN's name: what follows its last `::` (a unit's ComponentResource is named as the unit). */
const nameOf = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);

/**
 * The protected resources of the units `units` in a state: each unit's ComponentResource (a
 * resource that is no custom resource, named as the unit) and everything under it.
 */
export function protectedUrns(resources: readonly StateResource[], units: readonly string[]): string[] {
  const wanted = new Set(units);
  const roots = new Set(resources.filter((r) => r.custom !== true && wanted.has(nameOf(r.urn))).map((r) => r.urn));
  const parentOf = new Map(resources.map((r) => [r.urn, r.parent]));
  const under = (urn: string): boolean => {
    for (let at: string | undefined = urn; at !== undefined; at = parentOf.get(at)) if (roots.has(at)) return true;
    return false;
  };
  return resources.filter((r) => r.protect === true && under(r.urn)).map((r) => r.urn);
}

function allowedUnits(stack: string, stacksDir: string): string[] {
  try {
    const { raw, file } = readStackRaw(stack, stacksDir);
    return loadConfig(raw, { stack, file }, STACK_DECLARATIONS).allowRemoval;
  } catch (e) {
    if (e instanceof ConfigError) throw new UserError(e.message, EXIT_BAD_CONFIG);
    throw e;
  }
}

function readState(file: string): StateResource[] {
  if (!fs.existsSync(file))
    throw new UserError(`${file}: no such file (--state). Fix: pass the file \`pulumi stack export --file <file>\` wrote`, EXIT_BAD_CONFIG);
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    throw new UserError(`${file}: not JSON (${(e as Error).message}). Fix: pass the file \`pulumi stack export --file <file>\` wrote`, EXIT_BAD_CONFIG);
  }
  const resources = resourcesOf(data);
  if (!resources)
    throw new UserError(
      `${file}: not a Pulumi state export ({"deployment": {"resources": [{"urn", …}]}}). Fix: pass the file \`pulumi stack export --file <file>\` wrote`,
      EXIT_BAD_CONFIG,
    );
  return resources;
}

export function removalsCommand(argv: string[], io: Io): number {
  const opts = args(REMOVALS_OPTIONS, argv, REMOVALS_SCRIPT);
  if (!opts.stack) throw new UserError("--stack <name> is required.", EXIT_BAD_CONFIG);
  const units = allowedUnits(opts.stack, opts["stacks-dir"]!);
  const lines = opts.state === undefined ? units : protectedUrns(readState(opts.state), units);
  for (const l of lines) io.out(`${l}\n`);
  return 0;
}
