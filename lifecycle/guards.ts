// The guard of nodes that hold data (issue 15): a node whose removal would lose data or a quorum
// member is refused, judged against the previous render's inventory (index.yaml records each node's
// roles and state, render/rendered.ts). `npm run render` compares with the committed render
// (pipeline/render-command.ts), the preview with the base commit's (review/preview.ts), so a pull
// request that removes such a node fails in CI too.
// - A node with the storage role (Longhorn replicas, Swift devices), the controlPlane role (the
//   strict-local volumes of Galera, RabbitMQ and OVN central, D5) or that runs etcd may only leave
//   the inventory after it was `retiring` there: Longhorn has then evicted its replicas and NMO
//   drained it (docs/node-lifecycle.md).
// - No removal may leave a quorum fewer nodes than it has members (./quorums.ts).
import type { Check } from "../config/problems";
import { quorumsOf } from "./quorums";

const NODE_REMOVAL_CODE = "node-removal";
const QUORUM_REMOVAL_CODE = "quorum-removal";

/** A node as an inventory records it: the stack's, or a render's index.yaml. */
interface RecordedNode {
  name: string;
  roles: readonly string[];
  kubernetesControlPlane?: boolean;
  /** Absent in renders made before node states existed: active. */
  state?: string;
}

/** What a node holds that its removal would lose, or undefined. */
function dataOf(n: RecordedNode): string | undefined {
  const held = [
    ...(n.roles.includes("storage") ? ["Longhorn replicas and Swift devices (storage)"] : []),
    ...(n.roles.includes("controlPlane") ? ["the strict-local volumes of Galera, RabbitMQ and OVN central (controlPlane)"] : []),
    ...(n.kubernetesControlPlane ? ["an etcd member (Kubernetes control plane)"] : []),
  ];
  return held.length ? held.join(", ") : undefined;
}

/** The errors of going from the previous inventory to the next one; `where` names the previous render. */
export function nodeRemovalChecks(previous: readonly RecordedNode[], next: readonly RecordedNode[], where: string): Check[] {
  const kept = new Set(next.map((n) => n.name));
  const checks: Check[] = [];
  for (const n of previous) {
    if (kept.has(n.name)) continue;
    const data = dataOf(n);
    const state = n.state ?? "active";
    if (data && state !== "retiring") {
      checks.push({
        level: "error",
        code: NODE_REMOVAL_CODE,
        message: `node '${n.name}' holds ${data} and would be removed while it is ${state} in ${where}`,
        fix: `keep it, set state: retiring on it first, render, merge and pulumi up (Longhorn evicts its replicas, NMO drains it); remove it once both are done (docs/node-lifecycle.md)`,
        path: "openkeel:nodes",
      });
    }
  }
  const before = quorumsOf(previous);
  const after = quorumsOf(next);
  before.forEach((q, i) => {
    const left = after[i].nodes.length;
    if (left < q.nodes.length && left < q.members) {
      const gone = q.nodes.filter((n) => !kept.has(n.name)).map((n) => `'${n.name}'`);
      checks.push({
        level: "error",
        code: QUORUM_REMOVAL_CODE,
        message: `removing ${gone.join(", ")} leaves ${left} node(s) for the ${q.members} member(s) of ${q.name} (${q.holds}) that ${where} has`,
        fix: `add the replacement (${q.holds === "etcd" ? "kubernetesControlPlane: true" : "the controlPlane role"}) and deploy it before removing a member`,
        path: "openkeel:nodes",
      });
    }
  });
  return checks;
}
