// The body of `scripts/e2e.ts` (its header comment is the command's --help).
import * as path from "node:path";
import { args, EXIT_BAD_CONFIG, UserError } from "../../cli/cli";
import { defaultClusterScript, runE2E, runMirrorDir } from "./driver";
import { schemasDir } from "../../tools/kubeconform";
import { resolveUpgradeFrom } from "./upgrade";
import { READINESS_DELAYS } from "./readiness";

export async function e2eCommand(): Promise<number | void> {
  const opts = args({
    stack: { type: "string", multiple: true },
    kubeconfig: { type: "string" },
    keep: { type: "boolean", default: false },
    "cluster-script": { type: "string" },
    schemas: { type: "string" },
    mirror: { type: "string" },
    "no-interrupt": { type: "boolean", default: false },
    "no-policy-mutations": { type: "boolean", default: false },
    "no-transitions": { type: "boolean", default: false },
    "time-preview": { type: "string" },
    "time-first-up": { type: "boolean", default: false },
    "deploy-graph": { type: "string" },
    "no-readiness-delays": { type: "boolean", default: false },
    "upgrade-from": { type: "string" },
    "from-predecessors": { type: "boolean", default: false },
    "port-offset": { type: "string" },
  });
  const repoRoot = path.resolve(__dirname, "../..");
  const tries = opts["time-preview"] === undefined ? undefined : Number(opts["time-preview"]);
  if (tries !== undefined && (!Number.isInteger(tries) || tries < 1))
    throw new UserError(`--time-preview takes a whole number of tries ≥ 1, not ${opts["time-preview"]}`, EXIT_BAD_CONFIG);
  if (tries !== undefined && opts["upgrade-from"] !== undefined)
    throw new UserError("--upgrade-from and --time-preview do not go together: the preview timing deploys the current program only", EXIT_BAD_CONFIG);
  if (opts["from-predecessors"] && (opts["upgrade-from"] !== undefined || tries !== undefined))
    throw new UserError(
      "--from-predecessors deploys the current program at the predecessor pins, then today's: it goes with neither --upgrade-from nor --time-preview",
      EXIT_BAD_CONFIG,
    );
  const portOffset = opts["port-offset"] === undefined ? undefined : Number(opts["port-offset"]);
  if (portOffset !== undefined && (!Number.isInteger(portOffset) || portOffset < 1 || portOffset > 40000))
    throw new UserError(`--port-offset takes a whole number from 1 to 40000, not ${opts["port-offset"]}`, EXIT_BAD_CONFIG);
  const graph = opts["deploy-graph"];
  if (graph !== undefined && graph !== "dependencies" && graph !== "phase-barriers")
    throw new UserError(`--deploy-graph takes dependencies or phase-barriers, not ${graph}`, EXIT_BAD_CONFIG);
  if (opts["time-first-up"] && (tries !== undefined || opts["upgrade-from"] !== undefined || opts["from-predecessors"]))
    throw new UserError(
      "--time-first-up times the current program's first up alone: it goes with neither --time-preview, --upgrade-from nor --from-predecessors",
      EXIT_BAD_CONFIG,
    );
  const upgradeFrom = opts["upgrade-from"] === undefined ? undefined : resolveUpgradeFrom(repoRoot, opts["upgrade-from"]);
  return runE2E({
    repoRoot,
    stacks: opts.stack?.length ? opts.stack : ["lab", "prod-medium"],
    kubeconfig: opts.kubeconfig,
    keep: opts.keep!,
    clusterScript: opts["cluster-script"] ? path.resolve(opts["cluster-script"]) : defaultClusterScript(repoRoot),
    schemasDir: opts.schemas !== undefined ? path.resolve(opts.schemas) : schemasDir(),
    mirrorDir: runMirrorDir(repoRoot, opts.mirror, opts.kubeconfig),
    outRoot: path.join(repoRoot, ".e2e"),
    interrupt: !opts["no-interrupt"],
    policyMutations: !opts["no-policy-mutations"],
    transitions: !opts["no-transitions"],
    previewTiming: tries === undefined ? undefined : { tries },
    upgradeFrom,
    fromPredecessors: opts["from-predecessors"],
    portOffset,
    ...(graph ? { deployGraph: graph } : {}),
    ...(opts["no-readiness-delays"] ? {} : { readinessDelays: READINESS_DELAYS }),
    ...(opts["time-first-up"] ? { firstUpTiming: true } : {}),
    log: (line) => process.stdout.write(`${line}\n`),
  });
}
