// Child process of review/urn-graph.ts: `review/urn-graph-child.ts <checkout> [<stack>…]` runs the
// checkout's own program (its index.ts, any commit of this repository) on each of its stacks (or
// the named ones) under this repository's runtime mocks, and prints every registration as JSON on
// stdout: type, name, parent, protect, aliases, transforms, and what names the object it manages
// (never a property value otherwise). The program's own log lines go to stderr.
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT } from "../config/schema";
import { listStacks, rawFromStackYaml, stackFilePath } from "../config/stack-file";
import { runProgram, type Program, type Registered } from "../offline-engine/mock-run";
import { pulumiConfigMap } from "../offline-engine/policy-run";
import { HELM_RELEASE, type Registration } from "./urn-graph";
import { isPlainObject } from "../config/plain";

const str = (v: unknown) => (typeof v === "string" ? v : undefined);

/** A Helm release's chart without its version: its repository and name, or its OCI reference. */
function chartOf(inputs: Record<string, unknown>): string | undefined {
  const chart = str(inputs.chart);
  const repo = isPlainObject(inputs.repositoryOpts) ? str(inputs.repositoryOpts.repo) : undefined;
  return chart && repo ? `${repo.replace(/\/$/, "")}/${chart}` : chart;
}

/** What names the object a registration manages: Kubernetes metadata, a Helm release's name and chart, a remote manifest's files. */
function namesOf(r: Registered): Registration["names"] {
  const inputs = r.inputs;
  const meta = isPlainObject(inputs.metadata) ? inputs.metadata : {};
  const release = r.type === HELM_RELEASE;
  const files =
    typeof inputs.file === "string" ? [inputs.file] : Array.isArray(inputs.files) ? inputs.files.filter((f): f is string => typeof f === "string") : undefined;
  const name = str(meta.name) ?? (release ? str(inputs.name) : undefined);
  const namespace = str(meta.namespace) ?? (release ? str(inputs.namespace) : undefined);
  const chart = release ? chartOf(inputs) : undefined;
  const out = { ...(name ? { name } : {}), ...(namespace ? { namespace } : {}), ...(files ? { files } : {}), ...(chart ? { chart } : {}) };
  return Object.keys(out).length ? out : undefined;
}

function registration(r: Registered): Registration {
  return {
    type: r.type,
    name: r.name,
    urn: r.urn,
    parent: r.parent,
    protect: r.protect,
    custom: r.custom,
    ...(r.aliases ? { aliases: r.aliases } : {}),
    ...(r.transforms ? { transforms: r.transforms } : {}),
    ...(namesOf(r) ? { names: namesOf(r) } : {}),
  };
}

async function main(): Promise<void> {
  const [checkout, ...named] = process.argv.slice(2);
  const stacksDir = path.join(checkout, "stacks");
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the program of another checkout, known at run time only
  const loaded = require(path.join(checkout, "index.ts")) as Program | { default: Program };
  const program = typeof loaded === "function" ? loaded : loaded.default;
  const stacks = [];
  for (const stack of named.length ? named : listStacks(stacksDir)) {
    const file = stackFilePath(stack, stacksDir);
    const config = pulumiConfigMap(rawFromStackYaml(fs.readFileSync(file, "utf8"), file));
    const run = await runProgram(stack, config, program);
    stacks.push({ stack, registrations: run.resources.map(registration) });
  }
  process.stdout.write(`${JSON.stringify({ project: PROJECT, stacks })}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
