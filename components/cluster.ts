// The cluster a stack deploys to (openkeel:cluster, config/cluster.ts), checked before the program
// registers any unit: the Kubernetes provider is an explicit one, configured with the stack's
// context rather than the kubeconfig's current one, and
//   1. the kubeconfig must hold that context, pointing at the stack's API server URL (read here
//      the way the provider reads it: $KUBECONFIG, a list of files where the first to name a
//      context or cluster wins, else ~/.kube/config; client-go clientcmd loading rules);
//   2. when the stack names its kube-system Namespace UID, the live cluster's must be the same:
//      read through the provider (a read, not a change) and awaited before the units register.
// A mismatch is a RunError naming the stack file key, what the stack expects, what was found and
// the fix. Under the runtime mocks (tests, npm run policy) there is no cluster: the facts are
// whatever a test hands setClusterFactsUnderMocks, and without them the checks are skipped.
import * as path from "node:path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { MockMonitor } from "@pulumi/pulumi/runtime/mocks";
import { normalizeServer, type ClusterConfig } from "../config/cluster";
import { kubeconfigFiles, serverOfContext } from "../config/kubeconfig";

/** What the program learns of the cluster it is about to change. */
export interface ClusterFacts {
  /** The server the kubeconfig gives a context (undefined when no file names the context), and which files were read. */
  contextServer(context: string): { server?: string | undefined; where: string };
  /** The live cluster's kube-system Namespace UID, read through the stack's provider. */
  kubeSystemUID(provider: k8s.Provider): Promise<string | undefined>;
}

export const liveClusterFacts: ClusterFacts = {
  contextServer(context) {
    const files = kubeconfigFiles();
    return { server: serverOfContext(files, context), where: files.join(path.delimiter) };
  },
  kubeSystemUID(provider) {
    const ns = k8s.core.v1.Namespace.get("cluster-identity", "kube-system", { provider });
    // a read runs in previews too, so its outputs are known
    return new Promise((resolve) => ns.metadata.apply((m) => resolve(m?.uid)));
  },
};

let underMocks: ClusterFacts | undefined;

/** The facts the program uses while the runtime mocks stand in for the engine; undefined: skip the checks. */
export function setClusterFactsUnderMocks(facts: ClusterFacts | undefined): void {
  underMocks = facts;
}

function currentFacts(): ClusterFacts | undefined {
  return pulumi.runtime.getMonitor() instanceof MockMonitor ? underMocks : liveClusterFacts;
}

/**
 * The stack's Kubernetes provider, once the cluster it reaches is the stack's. Its
 * clusterIdentifier is the stack: the provider (and with it every resource) is never replaced
 * because the context was renamed or the binding gained a UID; which cluster it reaches is this
 * check's to prove.
 *
 * It creates by upsert (`upsertExistingObjects`; pulumi-kubernetes#4278 made a client-side create,
 * which fails with AlreadyExists, the default): an upgrade adopts objects the releases of an
 * earlier program created (platform/priority-classes.ts, cert-manager's CRDs). The hazard upsert
 * opens, a resource renamed without an alias whose create takes the live object over before the
 * old URN's delete removes it (#2926), is refused before merge by `npm run urns`
 * (review/urn-graph.ts: an object that moves to another URN without an alias).
 */
export async function bindCluster(stack: string, binding: ClusterConfig, file: string): Promise<k8s.Provider> {
  const facts = currentFacts();
  const fail = (key: string, what: string, fix: string) => new pulumi.RunError(`${file}: openkeel:cluster.${key}: ${what}. Fix: ${fix}`);
  if (facts) {
    const { server, where } = facts.contextServer(binding.context);
    if (server === undefined) {
      throw fail(
        "context",
        `the kubeconfig (${where}) has no context '${binding.context}', so this stack's cluster cannot be reached`,
        `point KUBECONFIG at the administrator's kubeconfig of this stack's cluster (kubectl config get-contexts lists its contexts; kind create cluster writes kind-<cluster>), or correct openkeel:cluster.context`,
      );
    }
    if (binding.apiServer !== undefined && normalizeServer(server) !== normalizeServer(binding.apiServer)) {
      throw fail(
        "apiServer",
        `context '${binding.context}' points at ${server}, but this stack is bound to ${binding.apiServer}: the kubeconfig reaches another cluster`,
        `use the kubeconfig of this stack's cluster; if the cluster's endpoint really moved, set openkeel:cluster.apiServer to ${server} in a reviewed change`,
      );
    }
  }
  const provider = new k8s.Provider("cluster", { context: binding.context, clusterIdentifier: `openkeel-${stack}`, upsertExistingObjects: true });
  if (facts && binding.kubeSystemUID !== undefined) {
    const found = await facts.kubeSystemUID(provider);
    if (found !== binding.kubeSystemUID) {
      throw fail(
        "kubeSystemUID",
        `the cluster behind context '${binding.context}' has kube-system UID ${found ?? "(none read)"}, but this stack is bound to ${binding.kubeSystemUID}: it is another cluster (or this one was rebuilt)`,
        "use the kubeconfig of this stack's cluster; if the cluster was rebuilt on purpose, set openkeel:cluster.kubeSystemUID to the new UID in a reviewed change",
      );
    }
  }
  return provider;
}
