// npm run e2e [-- --stack <name>]… [--kubeconfig <file>] [--keep] [--cluster-script <file>] [--schemas <dir>] [--no-interrupt] [--no-policy-mutations]:
// the real Pulumi engine against a real Kubernetes control plane, per stack (default lab and
// prod-medium): up with the policy pack, an API server restart mid-way, an idempotent preview, a
// day-2 node, destroy; placement proven by the real scheduler (test/e2e/README.md). Binaries from
// PATH: pulumi, kubectl, pulumi-resource-kubernetes, pulumi-resource-random (../shared/engine
// builds them; released ones work the same). The cluster: --kubeconfig (e.g. the kind lab), else
// cluster.sh of the engine kit (--cluster-script, env OPENKEEL_E2E_CLUSTER_SCRIPT). Reports:
// .e2e/<stack>/report.md.
// Exit 0: every step and check passed; 1: something failed; 2: bad usage or a missing binary.
import * as path from "node:path";
import { args, run } from "./lib/cli";
import { runE2E } from "./lib/e2e/driver";

run(async () => {
  const opts = args({
    stack: { type: "string", multiple: true },
    kubeconfig: { type: "string" },
    keep: { type: "boolean", default: false },
    "cluster-script": { type: "string" },
    schemas: { type: "string" },
    "no-interrupt": { type: "boolean", default: false },
    "no-policy-mutations": { type: "boolean", default: false },
  });
  const repoRoot = path.resolve(__dirname, "..");
  return runE2E({
    repoRoot,
    stacks: opts.stack?.length ? opts.stack : ["lab", "prod-medium"],
    kubeconfig: opts.kubeconfig,
    keep: opts.keep!,
    clusterScript: path.resolve(opts["cluster-script"] ?? process.env.OPENKEEL_E2E_CLUSTER_SCRIPT ?? path.join(repoRoot, "..", "shared", "engine", "cluster.sh")),
    schemasDir: path.resolve(opts.schemas ?? process.env.OPENKEEL_SCHEMAS ?? path.join(repoRoot, "..", "shared", "schemas")),
    outRoot: path.join(repoRoot, ".e2e"),
    interrupt: !opts["no-interrupt"],
    policyMutations: !opts["no-policy-mutations"],
    log: (line) => process.stdout.write(`${line}\n`),
  });
});
