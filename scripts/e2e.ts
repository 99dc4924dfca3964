// npm run e2e [-- --stack <name>]… [--kubeconfig <file>] [--keep] [--cluster-script <file>] [--schemas <dir>] [--no-interrupt] [--no-policy-mutations] [--time-preview <tries>]:
// the real Pulumi engine against a real Kubernetes control plane, per stack (default lab and
// prod-medium): up with the policy pack, an API server restart mid-way, an idempotent preview, a
// day-2 node, destroy; placement proven by the real scheduler (test/e2e/README.md). Binaries from
// PATH: pulumi, kubectl, pulumi-resource-kubernetes, pulumi-resource-random (../shared/engine
// builds them; released ones work the same). The cluster: --kubeconfig (e.g. the kind lab), else
// cluster.sh of the engine kit (--cluster-script, env OPENKEEL_E2E_CLUSTER_SCRIPT). Reports:
// .e2e/<stack>/report.md. --time-preview <tries>: only what timing `pulumi preview --policy-pack policy` of
// the deployed stack needs (setup, one pulumi up without the restart, <tries> timed previews, each
// exit 0 with no change; `npm run bench` uses it); reports in .e2e/preview-timing/<stack>/.
// Exit 0: every step and check passed; 1: something failed; 2: bad usage or a missing binary.
import * as path from "node:path";
import { args, EXIT_BAD_CONFIG, run, UserError } from "./lib/cli";
import { defaultClusterScript, runE2E } from "./lib/e2e/driver";
import { schemasDir } from "./lib/kubeconform";

run(async () => {
  const opts = args({
    stack: { type: "string", multiple: true },
    kubeconfig: { type: "string" },
    keep: { type: "boolean", default: false },
    "cluster-script": { type: "string" },
    schemas: { type: "string" },
    "no-interrupt": { type: "boolean", default: false },
    "no-policy-mutations": { type: "boolean", default: false },
    "time-preview": { type: "string" },
  });
  const repoRoot = path.resolve(__dirname, "..");
  const tries = opts["time-preview"] === undefined ? undefined : Number(opts["time-preview"]);
  if (tries !== undefined && (!Number.isInteger(tries) || tries < 1)) throw new UserError(`--time-preview takes a whole number of tries ≥ 1, not ${opts["time-preview"]}`, EXIT_BAD_CONFIG);
  return runE2E({
    repoRoot,
    stacks: opts.stack?.length ? opts.stack : ["lab", "prod-medium"],
    kubeconfig: opts.kubeconfig,
    keep: opts.keep!,
    clusterScript: opts["cluster-script"] ? path.resolve(opts["cluster-script"]) : defaultClusterScript(repoRoot),
    schemasDir: opts.schemas !== undefined ? path.resolve(opts.schemas) : schemasDir(),
    outRoot: path.join(repoRoot, ".e2e"),
    interrupt: !opts["no-interrupt"],
    policyMutations: !opts["no-policy-mutations"],
    previewTiming: tries === undefined ? undefined : { tries },
    log: (line) => process.stdout.write(`${line}\n`),
  });
});
