// The feasibility model of node states (issue 21): whether every transition the inventory asks for
// can finish, judged as a whole. A node in `maintenance` or `retiring` is drained, a `cordoned` one
// takes no new pods, a retiring one is leaving, and a node the change removes is gone. Each
// constraint belongs to the component that owns it and says, from the nodes that remain, whether
// it still holds: an error when a step can never finish or a quorum or data would be lost, a
// warning when the cloud runs degraded; each with the fix, naming the nodes. Longhorn judges its
// replicas (platform/longhorn.ts), OpenKeel its quorums, Swift members, gateway chassis, Ironic
// conductors, ingress and hypervisors (openkeel/feasibility.ts), and this module etcd.
//
// The same constraints judge two things:
// - the states of a stack's inventory (a plan check, environments/index.ts): every node with its
//   state, the facts (replica counts, policies) of the stack being planned;
// - a removal, against the committed render (lifecycle/guards.ts): the nodes it had, those this
//   change keeps with their new states, the removed ones marked, and the facts it recorded in
//   index.yaml (`feasibility`), which are what the cluster runs. Nodes this change adds are not
//   counted: they are not deployed yet ("add a storage node first").
import {
  DEFAULT_STATE,
  hasTrait,
  isDrained,
  LEAVING_STATE,
  MAINTENANCE_STATE,
  stateWords,
  STATE_TRAITS,
  type LifecycleFacts,
  type NodeState,
} from "../config/lifecycle";
import type { Check } from "../config/problems";
import type { Role } from "../config/roles";
import type { Plan } from "../plan/plan";
import type { Config } from "../config/schema";
import type { LossFinding } from "../placement/failure-table";

/** A node as the model judges it. */
export interface JudgedNode {
  name: string;
  roles: readonly Role[];
  kubernetesControlPlane?: boolean | undefined;
  state: NodeState;
  /** Its zone (topology.kubernetes.io/zone), when the inventory gives one: what the loss of a zone takes (./failure-domains.ts). */
  zone?: string | undefined;
  /** It leaves the inventory with this change (a removal judged against the committed render). */
  removed?: boolean | undefined;
}

/** What is judged: a stack's states (a plan check) or a removal against the committed render. */
export type Judging = "states" | "removal";

/** The nodes judged, and the ways a constraint asks for them (each optionally of one role). */
export class Inventory {
  constructor(
    readonly nodes: readonly JudgedNode[],
    readonly judging: Judging,
    /** The key path of each node's state in the stack (a plan check's), by name. */
    private readonly statePaths: ReadonlyMap<string, string> = new Map(),
    /** The committed render a removal is judged against, as findings name it. */
    readonly where = "the committed render",
  ) {}

  private of(role: Role | undefined, keep: (n: JudgedNode) => boolean): JudgedNode[] {
    return this.nodes.filter((n) => (role === undefined || n.roles.includes(role)) && keep(n));
  }

  /** Every node (of the role), removed ones included. */
  all(role?: Role): JudgedNode[] {
    return this.of(role, () => true);
  }

  /** Up and taking new pods: active. */
  schedulable(role?: Role): JudgedNode[] {
    return this.of(role, (n) => !n.removed && !hasTrait(n.state, "cordons"));
  }

  /** Running what runs there now: active or cordoned (a cordon moves nothing). */
  up(role?: Role): JudgedNode[] {
    return this.of(role, (n) => !n.removed && !isDrained(n.state));
  }

  /** Drained (maintenance, retiring) or removed: what ran there runs elsewhere, or not at all. */
  down(role?: Role): JudgedNode[] {
    return this.of(role, (n) => n.removed === true || isDrained(n.state));
  }

  /** Leaving the cluster: retiring, or removed. */
  leaving(role?: Role): JudgedNode[] {
    return this.of(role, (n) => n.removed === true || hasTrait(n.state, "leavesInventory"));
  }

  /** Still in the cluster once every node leaving has left. */
  staying(role?: Role): JudgedNode[] {
    return this.of(role, (n) => !n.removed && !hasTrait(n.state, "leavesInventory"));
  }

  removed(role?: Role): JudgedNode[] {
    return this.of(role, (n) => n.removed === true);
  }

  /** The key path a finding about these nodes points at: the first one's state, or the inventory for a removal. */
  path(nodes: readonly JudgedNode[]): string {
    const first = nodes.find((n) => this.statePaths.has(n.name));
    return this.judging === "removal" || !first ? "openkeel:nodes" : this.statePaths.get(first.name)!;
  }
}

/** One loss (./failure-domains.ts): the nodes out (failed, or drained by the inventory), as the constraints ask for them. */
export class Loss {
  private readonly zones: ReadonlyMap<string, string>;

  constructor(
    readonly nodes: readonly JudgedNode[],
    /** Out in this loss: failed, or drained (`drained`). */
    readonly lost: ReadonlySet<string>,
    /** Out because the inventory drains them (maintenance, retiring). */
    readonly drained: ReadonlySet<string> = new Set(),
  ) {
    this.zones = new Map(nodes.map((n) => [n.name, n.zone ?? ""]));
  }

  private of(role: Role | undefined, keep: (n: JudgedNode) => boolean): JudgedNode[] {
    return this.nodes.filter((n) => (role === undefined || n.roles.includes(role)) && keep(n));
  }

  all(role?: Role): JudgedNode[] {
    return this.of(role, () => true);
  }

  out(role?: Role): JudgedNode[] {
    return this.of(role, (n) => this.lost.has(n.name));
  }

  up(role?: Role): JudgedNode[] {
    return this.of(role, (n) => !this.lost.has(n.name));
  }

  /** A node's zone; "" for none (Kubernetes' and Longhorn's view: nodes without the label share one). */
  zoneOf(n: Pick<JudgedNode, "name">): string {
    return this.zones.get(n.name) ?? "";
  }

  /** How many distinct zones these nodes span. */
  zoneCount(nodes: readonly JudgedNode[]): number {
    return new Set(nodes.map((n) => this.zoneOf(n))).size;
  }
}

/**
 * At worst, how many of `members` instances sit on the lost nodes among `holders`, one per holder
 * (required host anti-affinity) and, with `perZone`, at most one per zone: every holder holds one
 * when there are no more holders than members; else any lost holder may, up to the zone cap.
 */
export function worstLost(loss: Loss, holders: readonly JudgedNode[], members: number, perZone: boolean): number {
  const out = holders.filter((n) => loss.lost.has(n.name));
  if (holders.length <= members) return Math.min(members, out.length + (members - holders.length));
  return Math.min(members, perZone ? loss.zoneCount(out) : out.length);
}

/** `1 of 3` */
export const ofTotal = (part: number, total: number) => `${part} of ${total}`;

/**
 * A constraint of the model, contributed by the component that owns it (its NodeLifecycle's
 * `constraints`, ./contributor.ts), with the facts it reads of a Plan: what the render holds,
 * so that the committed render's record is what the cluster runs.
 */
export interface NodeConstraint {
  /** Its key in index.yaml's `feasibility` record. */
  key: string;
  /**
   * What it needs of the Plan besides the nodes; undefined: the component is not in it (nothing to judge).
   * `cfg`: the stack's config, for what only it says (a count the stack set, not the topology).
   * @default none: it judges the nodes alone (a quorum)
   */
  facts?(plan: Plan, cfg: Config): LifecycleFacts | undefined;
  /**
   * Its findings; `facts`: what `facts` read (of the committed render, for a removal).
   * @default none: it only says what a loss costs (`loss`)
   */
  judge?(inventory: Inventory, facts: LifecycleFacts | undefined): Check[];
  /**
   * What losing nodes at once (a node, a zone, the drained ones; ./failure-domains.ts) costs of
   * what it owns: each finding fatal, degraded, or what still holds.
   * @default nothing it owns is lost with a node
   */
  loss?(loss: Loss, facts: LifecycleFacts | undefined): LossFinding[];
}

/** The facts of a Plan, by constraint key: what index.yaml records (`feasibility`). */
export function feasibilityFacts(plan: Plan, cfg: Config, constraints: readonly NodeConstraint[]): Record<string, LifecycleFacts> {
  const out: Record<string, LifecycleFacts> = {};
  for (const c of constraints) {
    const facts = c.facts?.(plan, cfg);
    if (facts !== undefined) out[c.key] = facts;
  }
  return out;
}

/** `a, b and c`: a list as a finding says it. */
export function joined(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "none") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

/** `'a', 'b' and 'c'`: nodes as a finding names them. */
export function nodeList(nodes: readonly Pick<JudgedNode, "name">[]): string {
  return joined(nodes.map((n) => `'${n.name}'`));
}

/** How a node is out of service: `retiring`, `in maintenance`, `removed`. */
export function howDown(n: JudgedNode): string {
  return n.removed ? "removed" : stateWords(n.state);
}

/** `'cmp-01' (in maintenance) and 'cmp-02' (retiring)` */
export function downList(nodes: readonly JudgedNode[]): string {
  return joined(nodes.map((n) => `'${n.name}' (${howDown(n)})`));
}

/** What the change does to these nodes, as a fix says it: `retire 'cmp-02'`, `put 'cmp-01' into maintenance`. */
export function transition(nodes: readonly JudgedNode[]): string {
  const list = nodeList(nodes);
  const removed = nodes.some((n) => n.removed);
  const state = removed || nodes.some((n) => hasTrait(n.state, "leavesInventory")) ? LEAVING_STATE : MAINTENANCE_STATE;
  const verb = STATE_TRAITS[state].verb;
  return removed ? `${verb.replace(" $", "")} and remove ${list}` : verb.replace("$", list);
}

/**
 * The first step of the fix that makes a role hold what it must while these nodes are out: a node
 * of the role, added and deployed before (`add a storage node first, …, then retire 'cmp-02'`).
 */
export function addFirst(what: string, nodes: readonly JudgedNode[]): string {
  return `add ${what} first (its own change, merged and deployed), then ${transition(nodes)}`;
}

/** Every constraint's findings on an inventory, each judged with its facts. */
export function feasibilityChecks(
  inventory: Inventory,
  constraints: readonly NodeConstraint[],
  facts: Readonly<Record<string, LifecycleFacts>> | undefined,
): Check[] {
  return constraints.flatMap((c) => c.judge?.(inventory, facts?.[c.key]) ?? []);
}

/** A stack's inventory with its states, for the plan check. */
export function statesInventory(nodes: readonly (JudgedNode & { name: string })[]): Inventory {
  return new Inventory(nodes, "states", new Map(nodes.map((n, i) => [n.name, `openkeel:nodes[${i}].state`])));
}

/**
 * A removal judged against the committed render: its nodes, with the state this change gives
 * those it keeps, the others removed. Nodes only this change has are left out: not deployed yet.
 */
export function removalInventory(
  committed: readonly {
    name: string;
    roles: readonly Role[];
    zone?: string | undefined;
    kubernetesControlPlane?: boolean | undefined;
    state?: NodeState | undefined;
  }[],
  next: readonly { name: string; state?: NodeState | undefined }[],
  where: string,
): Inventory {
  const kept = new Map(next.map((n) => [n.name, n]));
  return new Inventory(
    committed.map((n) => {
      const now = kept.get(n.name);
      return {
        name: n.name,
        roles: n.roles,
        ...(n.kubernetesControlPlane ? { kubernetesControlPlane: true } : {}),
        ...(n.zone !== undefined ? { zone: n.zone } : {}),
        state: now?.state ?? n.state ?? DEFAULT_STATE,
        ...(now ? {} : { removed: true }),
      };
    }),
    "removal",
    new Map(),
    where,
  );
}

/** Whether a constraint has anything to judge: in a removal only what the removal takes away counts. */
export function concerned(inventory: Inventory, nodes: readonly JudgedNode[]): boolean {
  return inventory.judging === "states" ? nodes.length > 0 : nodes.some((n) => n.removed);
}
