// A change to the rule that spreads a running quorum (issue 39): Galera, RabbitMQ and OVN central
// keep one member per node, and in large one per zone (a required zone anti-affinity, § 6.3). A
// member's volume is strict-local (D5): Longhorn pins its PV to the node it was created on, so the
// member can only ever start there again. A change that requires one member per zone — the zone term
// added (medium to large, a stack's zoneAntiAffinity), or a controlPlane node moved to another zone —
// strands for good a member whose node now shares a zone with another member's: the scheduler refuses
// it that node, and its volume refuses it any other. Judged against the committed render (where the
// members may be now: its controlPlane nodes, their zones, its rule; index.yaml records them), as the
// removal guard is (pipeline/render-command.ts against git HEAD, review/preview.ts against the base).
//
// A committed controlPlane node that is cordoned holds no member once the staged procedure has moved
// them off it (below), nor does a retiring one (the retire runbook moves them): the committed
// inventory is how the operator says it was done. That holds only while the other controlPlane nodes
// can take every member.
import { hasTrait, isDrained, type LifecycleFacts, type NodeState } from "../config/lifecycle";
import type { Check } from "../config/problems";
import type { Role } from "../config/roles";
import { joined } from "../lifecycle/feasibility";
import { QUORUMS, ZONE_SPREAD } from "./feasibility";
import { OPENKEEL_NAMESPACE } from "./names";

/** A node as an inventory records it (index.yaml, or the Plan). */
interface RecordedNode {
  name: string;
  roles: readonly Role[];
  zone?: string | undefined;
  state?: NodeState | undefined;
}

/** An inventory and what the feasibility model read of its Plan (`feasibility` of index.yaml). */
export interface RecordedInventory {
  nodes: readonly RecordedNode[];
  feasibility?: Readonly<Record<string, LifecycleFacts>> | undefined;
}

const QUORUM_KEY = "openkeel-quorums";

/**
 * Whether the committed inventory says a node holds no member: cordoned without a drain (the staged
 * procedure below: emptied by hand, no new member lands there), or leaving its quorums (the retire
 * runbook moves them). Not a drain that comes back: a member waits there, Pending, for the node.
 */
const emptied = (state: string | undefined) => hasTrait(state, "leavesQuorums") || (hasTrait(state, "cordons") && !isDrained(state));

/** The committed controlPlane nodes that may hold a member: all, unless the emptied ones can be spared. */
function mayHold(nodes: readonly RecordedNode[], members: number): RecordedNode[] {
  const holders = nodes.filter((n) => n.roles.includes("controlPlane"));
  const open = holders.filter((n) => !emptied(n.state));
  return open.length >= members ? open : holders;
}

/** Pairs of nodes that may both hold a member now and would share a zone after the change. */
function conflicts(
  holders: readonly RecordedNode[],
  members: number,
  spreadBefore: boolean,
  zoneAfter: (n: RecordedNode) => string,
): [RecordedNode, RecordedNode][] {
  const out: [RecordedNode, RecordedNode][] = [];
  for (const [i, a] of holders.entries()) {
    for (const b of holders.slice(i + 1)) {
      // every holder holds one when there are no more of them than members; else a pair may, unless the old rule kept them apart
      const both = holders.length <= members || !spreadBefore || (a.zone ?? "") !== (b.zone ?? "");
      if (both && zoneAfter(a) === zoneAfter(b)) out.push([a, b]);
    }
  }
  return out;
}

/** The nodes to cordon so that one may-hold node per zone (after the change) is left: all but the first of each. */
function toVacate(holders: readonly RecordedNode[], zoneAfter: (n: RecordedNode) => string): RecordedNode[] {
  const seen = new Set<string>();
  return holders.filter((n) => {
    const z = zoneAfter(n);
    if (!seen.has(z)) {
      seen.add(z);
      return false;
    }
    return true;
  });
}

const names = (nodes: readonly RecordedNode[]) => joined(nodes.map((n) => `'${n.name}'`));

/** One quorum's stranding: the pair that shows it, the cause, and the nodes to empty first. */
interface Strand {
  quorum: (typeof QUORUMS)[number];
  members: number;
  pair: [RecordedNode, RecordedNode];
  cause: string;
  vacate: RecordedNode[];
  /** Enough zones are left once `vacate` is cordoned. */
  fits: boolean;
}

function strandOf(
  q: (typeof QUORUMS)[number],
  members: number,
  kept: readonly RecordedNode[],
  spreadBefore: boolean,
  zoneAfter: (n: RecordedNode) => string,
): Strand | undefined {
  const holders = mayHold(kept, members);
  const pairs = conflicts(holders, members, spreadBefore, zoneAfter);
  if (pairs.length === 0) return undefined;
  const moved = holders.filter((n) => zoneAfter(n) !== (n.zone ?? ""));
  const vacate = toVacate(holders, zoneAfter);
  return {
    quorum: q,
    members,
    pair: pairs[0],
    cause: spreadBefore ? `moves ${names(moved)} to another zone` : "requires one member per zone (§ 6.3), which the committed rule does not",
    vacate,
    fits: holders.length - vacate.length >= members,
  };
}

/** The staged procedure: empty the nodes that would share a zone, then the change, then take them back. */
function stages(s: Strand, quorums: string, selectors: string[]): string {
  if (!s.fits) {
    return `stage it, each step its own change: 1. add controlPlane nodes first, so that ${s.members} zones have one (merged and deployed); 2. cordon the others and move the members off them as below; 3. then this change`;
  }
  const list = selectors.map((l) => `kubectl -n ${OPENKEEL_NAMESPACE} get pods -l ${l} -o wide`).join("; ");
  return (
    `stage it, each step its own change, merged and deployed: 1. set state: cordoned on ${names(s.vacate)}; ` +
    `2. move the members of ${quorums} off them, one member at a time (${list}): delete the member's PVC and its pod, it starts empty on a controlPlane node that is not cordoned and re-syncs from the others (§ 2.1); wait until its quorum is healthy before the next; ` +
    "3. then this change (a cordoned node of the committed render counts as emptied); 4. then set them back to active"
  );
}

/**
 * The errors of a change (`next`) against the committed render (`committed`, `where` names it): a
 * quorum the change keeps one per zone whose members may sit, now, on two nodes that share a zone
 * after it. Quorums stranded alike (the same nodes, the same cause) are one finding.
 */
export function quorumMoveChecks(committed: RecordedInventory, next: RecordedInventory, where: string): Check[] {
  const before = committed.feasibility?.[QUORUM_KEY];
  const after = next.feasibility?.[QUORUM_KEY];
  if (!before || !after) return [];
  const spreadBefore = new Set(Array.isArray(before[ZONE_SPREAD]) ? (before[ZONE_SPREAD] as readonly string[]) : []);
  const spreadAfter = new Set(Array.isArray(after[ZONE_SPREAD]) ? (after[ZONE_SPREAD] as readonly string[]) : []);
  const zones = new Map(next.nodes.map((n) => [n.name, n.zone ?? ""]));
  const zoneAfter = (n: RecordedNode) => zones.get(n.name) ?? "";
  // a node the change removes is the removal guard's
  const kept = committed.nodes.filter((n) => zones.has(n.name));
  const strands = QUORUMS.flatMap((q) => {
    const members = before[q.id];
    if (typeof members !== "number" || members < 2 || !spreadAfter.has(q.id)) return [];
    const s = strandOf(q, members, kept, spreadBefore.has(q.id), zoneAfter);
    return s ? [s] : [];
  });
  const groups = new Map<string, Strand[]>();
  for (const s of strands) {
    const key = JSON.stringify([s.pair.map((n) => n.name), s.cause, s.vacate.map((n) => n.name), s.members]);
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  return [...groups.values()].map((alike) => {
    const s = alike[0];
    const quorums = joined(alike.map((x) => x.quorum.what));
    return {
      level: "error",
      code: "quorum-zone-move",
      message: `this change ${s.cause.replace("one member", `one ${quorums} member`)}, while ${where} may run two of the ${s.members} members of ${quorums} on ${names(s.pair)}, which would then share zone ${zoneAfter(s.pair[0]) || "(none)"}: a member's strict-local volume pins it to its node (D5), the new rule refuses it that node, and it stays Pending for good`,
      // the strict-local class of D5 (the stack's storage: platform/context.ts StackStorage) keeps a PV's one replica on its node
      reason: "a running quorum's members cannot move by themselves: the strict-local PV of each (D5) binds it to the node it was created on",
      fix: stages(
        s,
        quorums,
        alike.map((x) => x.quorum.pods),
      ),
      path: "openkeel:nodes",
    };
  });
}
