// What a component contributes to the life of a node, from its own module, the way it contributes
// its node metadata: the requests it writes about a node (a drain, an eviction), whether it drains
// nodes at all, and the steps a transition needs because of it — Longhorn its eviction, Medik8s
// its NodeMaintenance, Kube-OVN its RAFT members, Nova its compute service. ./steps.ts collects
// them with its own (Kubernetes, Talos) in the order of STEP_SLOTS; the preview shows the result.
import type { NodeState, NodeStateTaint } from "../config/lifecycle";
import type { Role, Taint } from "../config/roles";
import type { K8sObject } from "../plan/plan";
import type { TalosMachine } from "../render/rendered";
import type { NodeConstraint } from "./feasibility";

/**
 * Where a step goes in a node's transition, in this order. A changed node's state steps come
 * first, then those of its other changes; a node that joins or leaves has only its own.
 */
export const STEP_SLOTS = [
  // a change of state (docs/node-lifecycle.md, runbooks)
  "stop-work", // before: nothing new lands on it
  "clear-drain", // before: what would hold its drain for ever (a VM that cannot live-migrate) is dealt with
  // the drain first: it finishes once the strict-local members are evicted (Longhorn's drain
  // policy); their replicas go with their PVCs, and only then can the eviction finish (issue 21)
  "await-drain", // after: the drain pulumi up asked for is done, or the drain by hand
  "move-members", // after: members whose volumes cannot follow it start elsewhere (D5)
  "await-eviction", // after: the data pulumi up asked to move has moved
  "leave-clusters", // after: it leaves the clusters it was a member of
  "call-off", // after: what withdrawing a request leaves undone
  "re-cordon", // after: a cordon that the end of a drain lifted
  "resume-work", // after: it takes work again
  // a node that stays with other roles or configuration, joins or leaves
  "evacuate", // before: its data moves off a node that loses what holds it, or leaves
  "drain", // before: its pods move
  "retire-services", // before: services registered on a leaving node let it go
  "configure", // before: its node configuration (install, reinstall, apply-config, upgrade, taints)
  "uncordon", // after: it takes pods again
  "wipe", // after: the machine is reset
  "delete", // after: its Node object goes
  "forget", // after: what components keep of it goes
] as const;
export type StepSlot = (typeof STEP_SLOTS)[number];

export interface NodeStep {
  /** Before `pulumi up` (the cluster must be ready for the new labels) or after it. */
  when: "before" | "after";
  what: string;
  command: string;
  why: string;
}

export interface SlottedStep extends NodeStep {
  slot: StepSlot;
}

/** A node as one render shows it. */
export interface NodeView {
  roles: Role[];
  state: NodeState;
  kubernetesControlPlane: boolean;
  /** The labels the node-roles phase puts on it (its Node object in the render). */
  labels: Readonly<Record<string, string>>;
  /** The objects of the render that this contributor writes about the node (its `requestFor`). */
  requests: readonly K8sObject[];
  /** Talos: its machine, and the documents of its patches in order (comments and file names aside). */
  machine?: TalosMachine;
  config?: unknown[];
  address?: string;
  /** `key=value:Effect` of registerWithTaints (workers). */
  registerTaints: string[];
}

/** One node from one render to the next: absent before when it joins, after when it leaves. */
export interface NodeTransition {
  node: string;
  before?: NodeView | undefined;
  after?: NodeView | undefined;
}

/** What a node of a role holds because of a component, which the node's removal would take away. */
export interface Holding {
  role: Role;
  /** In a few words, as the removal guard's message says it (./guards.ts): `VMs`. */
  what: string;
  /**
   * A state that evicts data (`evictsData`, config/lifecycle.ts) moves it off the node before it leaves.
   * @default false: it leaves with the node
   */
  evicted?: true;
  /**
   * The members whose volumes these are, where they are strict-local (D5: the one replica on the
   * node, which no eviction moves), as a step names them (`Galera and RabbitMQ`): a state that
   * evicts data has them moved by hand, in the storage's step (its `steps` reads `held`).
   * @default none: nothing of it is on a strict-local volume
   */
  strictLocalMembers?: string;
}

export interface NodeLifecycle {
  /**
   * It drains a node in a drained state (maintenance, retiring) when `pulumi up` applies it: who
   * does, as messages name it (the removal guard's fix: `NMO drains it`).
   * @default it drains no node
   */
  drains?: string;
  /**
   * What it keeps on a node of a role, in the order its message reads them (the removal guard's, ./guards.ts).
   * @default nothing
   */
  holds?: readonly Holding[];
  /**
   * The taints a node's state makes it carry because of this component (NMO's drain taint), for the
   * placement report's view of the nodes.
   * @default none
   */
  stateTaints?(node: { roles: readonly Role[]; state: NodeState }): Taint[];
  /**
   * The taints this component puts on a node in a state that every node agent must tolerate, or a
   * rollout leaves the node without it (config/lifecycle.ts NODE_STATE_TAINTS has the repository's
   * own): every stack's agents tolerate those of every component of the registry, installed or not
   * (environments/resolve.ts nodeAgentTaints), and the placement check of a stack that installs the
   * component holds every DaemonSet to them.
   * @default none
   */
  agentTaints?: readonly NodeStateTaint[];
  /**
   * What must still hold when nodes are drained, retiring or removed (./feasibility.ts): its replicas, its quorum.
   * @default none
   */
  constraints?: readonly NodeConstraint[];
  /** The node an object this component writes is a request about, or undefined. */
  requestFor?(o: K8sObject): string | undefined;
  /**
   * Its steps of a transition, each in its slot. `held`: what every contributor keeps on nodes
   * (their `holds`, in their order), for a step it takes for what another keeps on its volumes.
   */
  steps(t: NodeTransition, held: readonly Holding[]): SlottedStep[];
}

/** Entered a state, left it (or the other way round), on a node in both renders. */
export function stateChange(t: NodeTransition): { from: NodeState; to: NodeState } | undefined {
  if (!t.before || !t.after || t.before.state === t.after.state) return undefined;
  return { from: t.before.state, to: t.after.state };
}
