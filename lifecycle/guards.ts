// The removal guard (issues 15 and 21): a node leaves the inventory only after it was `retiring` in
// the committed render, and no removal may break what the feasibility model holds (./feasibility.ts:
// quorums, Longhorn replicas, Swift members, gateway chassis, …), judged against that render's
// inventory and the facts its index.yaml recorded (render/rendered.ts). `npm run render` compares
// with the committed render (pipeline/render-command.ts), the preview with the base commit's
// (review/preview.ts), so a pull request that removes such a node fails in CI too.
// Retiring is what makes a removal safe on every topology: NMO has drained the node, Longhorn has
// evicted its replicas, Nova's service was disabled before (its steps: docs/node-lifecycle.md);
// an active node would leave with its pods, its VMs and its data.
import type { LifecycleFacts, NodeState } from "../config/lifecycle";
import type { Check } from "../config/problems";
import type { Role } from "../config/roles";
import { feasibilityChecks, removalInventory, type NodeConstraint } from "./feasibility";
import { ETCD_QUORUM } from "./quorums";

const NODE_REMOVAL_CODE = "node-removal";

/** A node as an inventory records it: the stack's, or a render's index.yaml. */
interface RecordedNode {
  name: string;
  roles: readonly Role[];
  zone?: string;
  kubernetesControlPlane?: boolean;
  /** Absent in renders made before node states existed: active. */
  state?: NodeState;
}

/** What each role puts on a node that its removal would take away. */
const HELD_BY_ROLE: Record<Role, string> = {
  storage: "Longhorn replicas and Swift devices (storage)",
  controlPlane: "the strict-local volumes of Galera, RabbitMQ and OVN central (controlPlane)",
  compute: "VMs and a nova-compute service (compute)",
  network: "a gateway chassis (network)",
  containers: "Zun containers (containers)",
  provisioning: "an Ironic conductor (provisioning)",
};

/** What a node holds that its removal would take away. */
function heldBy(n: RecordedNode): string {
  const held = [
    ...(["storage", "controlPlane", "compute", "network", "containers", "provisioning"] as const)
      .filter((r) => n.roles.includes(r))
      .map((r) => HELD_BY_ROLE[r]),
    ...(n.kubernetesControlPlane ? ["an etcd member (Kubernetes control plane)"] : []),
  ];
  return held.length ? held.join(", ") : "its pods";
}

function notRetiring(n: RecordedNode, where: string): Check {
  const mechanisms = n.roles.includes("storage") ? "Longhorn evicts its replicas, NMO drains it" : "NMO drains it, and the preview lists what to disable first";
  return {
    level: "error",
    code: NODE_REMOVAL_CODE,
    message: `node '${n.name}' holds ${heldBy(n)} and would be removed while it is ${n.state ?? "active"} in ${where}`,
    fix: `keep it, set state: retiring on it first, render, merge and pulumi up (${mechanisms}); remove it once ${n.roles.includes("storage") ? "both are" : "that is"} done (docs/node-lifecycle.md)`,
    path: "openkeel:nodes",
  };
}

/**
 * The errors and warnings of going from the committed inventory to the next one; `where` names the
 * committed render. `constraints`: the feasibility model's, of the stack's environment (etcd's
 * alone by default); `facts`: those the committed render recorded (else the next one's).
 */
export function nodeRemovalChecks(
  previous: readonly RecordedNode[],
  next: readonly { name: string; state?: NodeState }[],
  where: string,
  constraints: readonly NodeConstraint[] = [ETCD_QUORUM],
  facts?: Readonly<Record<string, LifecycleFacts>>,
): Check[] {
  const kept = new Set(next.map((n) => n.name));
  const refused = previous.filter((n) => !kept.has(n.name) && n.state !== "retiring").map((n) => notRetiring(n, where));
  return [...refused, ...feasibilityChecks(removalInventory(previous, next, where), constraints, facts)];
}
