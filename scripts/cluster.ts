// npm run cluster -- --stack <name> [--stacks-dir stacks]: the cluster each stack is bound to
// (openkeel:cluster: kube context, API server URL, kube-system UID), and whether the kubeconfig
// (KUBECONFIG, else ~/.kube/config) holds that context pointing at that API server, the same test
// pulumi preview/up makes before any change (components/cluster.ts). Reads files only: it never
// contacts a cluster (the UID is the program's to compare). The deploy and drift workflows run it
// before pulumi, so a kubeconfig of the wrong cluster fails there with its fix.
// Exit 0: every named stack's context is there and points at its apiServer; 1: it is missing or
// points elsewhere; 2: bad usage or bad stack config.
//
// The command itself is pipeline/cluster-command.ts, which the tests call in-process.
import { processIo, run } from "../cli/cli";
import { clusterCommand } from "../pipeline/cluster-command";

run(() => clusterCommand(process.argv.slice(2), processIo));
