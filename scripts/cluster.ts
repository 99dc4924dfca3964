// npm run cluster -- --stack <name> [--stacks-dir stacks]: the cluster each stack is bound to
// (openkeel:cluster: kube context, API server URL, kube-system UID), and whether the kubeconfig
// (KUBECONFIG, else ~/.kube/config) holds that context pointing at that API server, the same test
// pulumi preview/up makes before any change (components/cluster.ts). Reads files only: it never
// contacts a cluster (the UID is the program's to compare). The deploy and drift workflows run it
// before pulumi, so a kubeconfig of the wrong cluster fails there with its fix.
// Exit 0: every named stack's context is there and points at its apiServer; 1: it is missing or
// points elsewhere; 2: bad usage or bad stack config.
import * as fs from "node:fs";
import * as path from "node:path";
import { normalizeServer } from "../config/cluster";
import { kubeconfigFiles, serverOfContext } from "../config/kubeconfig";
import { args, EXIT_CHECKS_FAILED, planStacks, run, UserError } from "./lib/cli";

run(() => {
  const opts = args({
    stack: { type: "string", multiple: true },
    "stacks-dir": { type: "string", default: "stacks" },
  });
  const files = kubeconfigFiles();
  const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8") : undefined);
  const problems: string[] = [];
  for (const s of planStacks(opts.stack, opts["stacks-dir"])) {
    const c = s.plan.cluster;
    console.log(`${s.plan.stack}: context ${c.context}, apiServer ${c.apiServer ?? "(any: bound by context only)"}, kube-system UID ${c.kubeSystemUID ?? "(not pinned)"}`);
    const server = serverOfContext(files, c.context, read);
    const where = files.join(path.delimiter);
    if (server === undefined) {
      problems.push(
        `${s.config.file}: openkeel:cluster.context: the kubeconfig (${where}) has no context '${c.context}'. Fix: use the administrator's kubeconfig of this stack's cluster, or correct openkeel:cluster.context`,
      );
    } else if (c.apiServer !== undefined && normalizeServer(server) !== normalizeServer(c.apiServer)) {
      problems.push(
        `${s.config.file}: openkeel:cluster.apiServer: context '${c.context}' points at ${server}, but this stack is bound to ${c.apiServer}. Fix: use the kubeconfig of this stack's cluster; if its endpoint really moved, change openkeel:cluster.apiServer in a reviewed change`,
      );
    } else {
      console.log(`  the kubeconfig's context '${c.context}' points at ${server}`);
    }
  }
  if (problems.length > 0) throw new UserError(problems.join("\n"), EXIT_CHECKS_FAILED);
});
