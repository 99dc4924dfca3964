// The removal guard (issues 15 and 21): a node leaves the inventory only after it was `retiring` in
// the committed render, and no removal may break what the feasibility model holds (./feasibility.ts:
// quorums, Longhorn replicas, Swift members, gateway chassis, …), judged against that render's
// inventory and the facts its index.yaml recorded (render/rendered.ts). `npm run render` compares
// with the committed render (pipeline/render-command.ts), the preview with the base commit's
// (review/preview.ts), so a pull request that removes such a node fails in CI too.
// Retiring is what makes a removal safe on every topology: NMO has drained the node, Longhorn has
// evicted its replicas, Nova's service was disabled before (its steps: docs/node-lifecycle.md);
// an active node would leave with its pods, its VMs and its data.
import { DEFAULT_STATE, hasTrait, isDrained, LEAVING_STATE, stateWords, type LifecycleFacts, type NodeState } from "../config/lifecycle";
import { isError, type Check } from "../config/problems";
import type { Role } from "../config/roles";
import { drainByHand } from "./checks";
import type { Holding } from "./contributor";
import { feasibilityChecks, joined, removalInventory, statesInventory, type JudgedNode, type NodeConstraint } from "./feasibility";
import { ETCD_QUORUM } from "./quorums";

const NODE_REMOVAL_CODE = "node-removal";

/** A node as an inventory records it: the stack's, or a render's index.yaml. */
interface RecordedNode {
  name: string;
  roles: readonly Role[];
  zone?: string | undefined;
  kubernetesControlPlane?: boolean | undefined;
  /** Absent in renders made before node states existed: active. */
  state?: NodeState | undefined;
}

/** The roles in the order a node's holdings read. */
const HOLDING_ORDER: readonly Role[] = ["storage", "controlPlane", "compute", "network", "containers", "provisioning"];

/**
 * What a node holds that its removal would take away, role by role, as the components say it
 * (`holdings`): a role none of them names anything on holds its pods.
 */
function heldBy(n: RecordedNode, holdings: readonly Holding[]): string {
  const onRole = (r: Role) => holdings.filter((h) => h.role === r).map((h) => h.what);
  const held = [
    ...HOLDING_ORDER.filter((r) => n.roles.includes(r)).map((r) => `${onRole(r).length ? joined(onRole(r)) : "its pods"} (${r})`),
    ...(n.kubernetesControlPlane ? ["an etcd member (Kubernetes control plane)"] : []),
  ];
  return held.length ? held.join(", ") : "its pods";
}

/**
 * `retired`: where its retirement was merged but not deployed (`commit 1a2b3c4d5e6f (subject)`):
 * the fix is then to deploy that first, not to write it again.
 */
function notRetiring(n: RecordedNode, where: string, { holdings = [], drainer }: RemovalJudgement, retired?: string): Check {
  // what retiring moves off the node before it leaves: the holdings its state evicts
  const evicted = hasTrait(LEAVING_STATE, "evictsData") ? holdings.filter((h) => h.evicted && n.roles.includes(h.role)) : [];
  const drain = drainer ? `${drainer} drains it` : `drain it yourself: ${drainByHand(n.name)}`;
  const mechanisms = evicted.length
    ? [...evicted.map((h) => `its ${h.what} are evicted`), drain].join(", ")
    : `${drain}, and the preview lists what to disable first`;
  const done = `${evicted.length ? (evicted.length > 1 ? "all are" : "both are") : "that is"} done`;
  return {
    level: "error",
    code: NODE_REMOVAL_CODE,
    message: `node '${n.name}' holds ${heldBy(n, holdings)} and would be removed while it is ${stateWords(n.state)} in ${where}${retired ? `: its retirement is merged (${retired}) but not deployed` : ""}`,
    fix: retired
      ? `deploy ${retired} first, on its own (the deploy workflow's "Run workflow" with that commit), and let the retirement finish (${mechanisms}: docs/node-lifecycle.md); then deploy the removal`
      : `keep it, set state: retiring on it first, render, merge and pulumi up (${mechanisms}); remove it once ${done} (docs/node-lifecycle.md)`,
    path: "openkeel:nodes",
  };
}

/** What the removal guard judges a change by, besides the two inventories. */
export interface RemovalJudgement {
  /**
   * The feasibility model's constraints, of the stack's environment.
   * @default etcd's alone
   */
  constraints?: readonly NodeConstraint[];
  /**
   * The facts the committed render recorded (else the next one's).
   * @default none
   */
  facts?: Readonly<Record<string, LifecycleFacts>> | undefined;
  /**
   * The commit that merged a node's retirement, where it is merged but not deployed.
   * @default none known
   */
  retiredAt?: ((node: string) => string | undefined) | undefined;
  /**
   * What its components keep on nodes (their `holds`, in their order), which the errors name.
   * @default none
   */
  holdings?: readonly Holding[] | undefined;
  /**
   * Who drains a retiring node, of the components the stack installs (their lifecycles' `drains`).
   * @default none: the fix says to drain it by hand
   */
  drainer?: string | undefined;
}

/** The errors and warnings of going from the committed inventory to the next one; `where` names the committed render. */
export function nodeRemovalChecks(
  previous: readonly RecordedNode[],
  next: readonly { name: string; state?: NodeState | undefined }[],
  where: string,
  judgement: RemovalJudgement = {},
): Check[] {
  const { constraints = [ETCD_QUORUM], facts, retiredAt } = judgement;
  const kept = new Set(next.map((n) => n.name));
  const refused = previous
    .filter((n) => !kept.has(n.name) && !hasTrait(n.state, "leavesInventory"))
    .map((n) => notRetiring(n, where, judgement, retiredAt?.(n.name)));
  return [...refused, ...feasibilityChecks(removalInventory(previous, next, where), constraints, facts)];
}

/**
 * A node drained by this change while another, drained in the reference, comes back with the same
 * deploy (issue 38): at apply time the first is still down — NMO uncordons it, its members start
 * again and re-sync — while the second drains. Judged by the feasibility model with the returning
 * nodes still in their reference state: an error it finds that the next inventory alone does not
 * (a second quorum member, a second storage node) needs the return deployed first.
 */
export function drainSequenceChecks(
  previous: readonly RecordedNode[],
  next: readonly RecordedNode[],
  where: string,
  constraints: readonly NodeConstraint[],
  facts?: Readonly<Record<string, LifecycleFacts>>,
): Check[] {
  const before = new Map(previous.map((n) => [n.name, n.state ?? DEFAULT_STATE]));
  const returning = next.filter((n) => isDrained(before.get(n.name)) && !isDrained(n.state));
  const draining = next.filter((n) => isDrained(n.state) && !isDrained(before.get(n.name)));
  if (returning.length === 0 || draining.length === 0) return [];
  const judged = (n: RecordedNode): JudgedNode => ({
    name: n.name,
    roles: n.roles,
    ...(n.kubernetesControlPlane ? { kubernetesControlPlane: true } : {}),
    state: returning.includes(n) ? before.get(n.name)! : (n.state ?? DEFAULT_STATE),
  });
  const alone = new Set(
    feasibilityChecks(statesInventory(next.map((n) => ({ ...judged(n), state: n.state ?? DEFAULT_STATE }))), constraints, facts)
      .filter(isError)
      .map((c) => c.code),
  );
  const back = returning.map((n) => `'${n.name}' (${before.get(n.name)} in ${where})`).join(", ");
  const names = (nodes: readonly RecordedNode[]) => nodes.map((n) => `'${n.name}'`).join(", ");
  return feasibilityChecks(statesInventory(next.map(judged)), constraints, facts)
    .filter((c) => isError(c) && !alone.has(c.code))
    .map((c) => ({
      level: "error",
      code: DRAIN_SEQUENCE_CODE,
      message: `${names(draining)} would start draining while ${back} is still down: it comes back only with this deploy. ${c.message}`,
      fix: `bring ${names(returning)} back first, in its own change, merged and deployed (and its work finished); then drain ${names(draining)}`,
      path: c.path,
    }));
}

const DRAIN_SEQUENCE_CODE = "drain-sequence";
