// `npm run cluster` as a function of its arguments: the CLI (scripts/cluster.ts) and the tests run
// the same code, the tests in-process with the output captured.
import * as fs from "node:fs";
import * as path from "node:path";
import { normalizeServer } from "../config/cluster";
import { kubeconfigFiles, serverOfContext } from "../config/kubeconfig";
import { args, EXIT_CHECKS_FAILED, planStacks, UserError, type Io } from "../cli/cli";

const CLUSTER_OPTIONS = {
  stack: { type: "string", multiple: true },
  "stacks-dir": { type: "string", default: "stacks" },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const CLUSTER_SCRIPT = path.resolve(__dirname, "../scripts/cluster.ts");

/** `env`: where $KUBECONFIG is read (the process' environment for the CLI). */
export function clusterCommand(argv: string[], io: Io, env: NodeJS.ProcessEnv = process.env): void {
  const opts = args(CLUSTER_OPTIONS, argv, CLUSTER_SCRIPT);
  const files = kubeconfigFiles(env);
  const problems: string[] = [];
  for (const s of planStacks(opts.stack, opts["stacks-dir"])) {
    const c = s.plan.cluster;
    io.out(
      `${s.plan.stack}: context ${c.context}, apiServer ${c.apiServer ?? "(any: bound by context only)"}, kube-system UID ${c.kubeSystemUID ?? "(not pinned)"}\n`,
    );
    const server = serverOfContext(files, c.context);
    const where = files.join(path.delimiter);
    const absent = files.filter((f) => !fs.existsSync(f));
    if (server === undefined && absent.length > 0) {
      problems.push(
        `${s.config.file}: openkeel:cluster.context: the kubeconfig file ${absent.join(", ")} does not exist${env.KUBECONFIG ? " ($KUBECONFIG)" : ""}, so no context '${c.context}' can be found. Fix: set KUBECONFIG to the administrator's kubeconfig of this stack's cluster, or write it to ~/.kube/config`,
      );
    } else if (server === undefined) {
      problems.push(
        `${s.config.file}: openkeel:cluster.context: the kubeconfig (${where}) has no context '${c.context}'. Fix: use the administrator's kubeconfig of this stack's cluster, or correct openkeel:cluster.context`,
      );
    } else if (c.apiServer !== undefined && normalizeServer(server) !== normalizeServer(c.apiServer)) {
      problems.push(
        `${s.config.file}: openkeel:cluster.apiServer: context '${c.context}' points at ${server}, but this stack is bound to ${c.apiServer}. Fix: use the kubeconfig of this stack's cluster; if its endpoint really moved, change openkeel:cluster.apiServer in a reviewed change`,
      );
    } else {
      io.out(`  the kubeconfig's context '${c.context}' points at ${server}\n`);
    }
  }
  if (problems.length > 0) throw new UserError(problems.join("\n"), EXIT_CHECKS_FAILED);
}
