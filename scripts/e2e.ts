// npm run e2e [-- --stack <name>]… [--kubeconfig <file>] [--keep] [--cluster-script <file>]
//             [--schemas <dir>] [--no-interrupt] [--no-policy-mutations]
// The real Pulumi engine and a real Kubernetes control plane, per stack (default lab and
// prod-medium): see test/e2e/README.md. Binaries come from PATH: pulumi, kubectl,
// pulumi-resource-kubernetes, pulumi-resource-random (the engine of ../shared/engine puts them in
// $HOME/.cache/openkeel-engine/bin; released ones work the same). Reports: .e2e/<stack>/report.md.
// Exit 0: every step and check passed; 1: something failed; 2: bad usage or missing binaries.
import * as path from "node:path";
import { parseArgs } from "node:util";
import { runE2E } from "./lib/e2e/driver";

const HELP = `npm run e2e -- [options]

  --stack <name>            stack to run (repeatable; default: lab, prod-medium)
  --kubeconfig <file>       use an existing cluster (e.g. the kind lab) instead of starting one;
                            its nodes must not exist yet (the e2e registers them) unless they are
                            the stack's own (a kind cluster made from rendered/lab/kind/cluster.yaml)
  --keep                    leave the cluster and the temporary project up (prints where)
  --cluster-script <file>   cluster.sh of the engine kit (env OPENKEEL_E2E_CLUSTER_SCRIPT;
                            default ../shared/engine/cluster.sh)
  --schemas <dir>           offline JSON schemas for the stand-in CRDs (env OPENKEEL_SCHEMAS;
                            default ../shared/schemas)
  --no-interrupt            do not restart kube-apiserver during the first pulumi up
  --no-policy-mutations     skip the D1–D8 mutated stacks
  --help                    this text

Binaries from PATH: pulumi, kubectl, pulumi-resource-kubernetes, pulumi-resource-random.
Reports: .e2e/<stack>/report.md (logs in .e2e/<stack>/logs/). Exit 0 = every check passed.
`;

(async () => {
  let opts;
  try {
    opts = parseArgs({
      options: {
        stack: { type: "string", multiple: true },
        kubeconfig: { type: "string" },
        keep: { type: "boolean", default: false },
        "cluster-script": { type: "string" },
        schemas: { type: "string" },
        "no-interrupt": { type: "boolean", default: false },
        "no-policy-mutations": { type: "boolean", default: false },
        help: { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${HELP}`);
    process.exitCode = 2;
    return;
  }
  if (opts.help) {
    process.stdout.write(HELP);
    return;
  }
  const repoRoot = path.resolve(__dirname, "..");
  process.exitCode = await runE2E({
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
})();
