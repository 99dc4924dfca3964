// The quorums a node can hold a member of: the OpenKeel control plane's (Galera, RabbitMQ, OVN
// central: one member per controlPlane node, required anti-affinity; 3 members from 3 nodes on,
// else 1, the rule of openkeel/context.ts) and etcd's (every Kubernetes control-plane node is a
// member). As constraints of the feasibility model (./feasibility.ts), the same rules judge the
// node states (quorum-drain, retiring-quorum-member) and removals (quorum-removal): etcd's here,
// the OpenKeel control plane's from its owner (openkeel/feasibility.ts).
import { hasTrait, isDrained } from "../config/lifecycle";
import type { Check } from "../config/problems";
import type { LossFinding } from "../placement/failure-table";
import { worstLost, type JudgedNode, type Loss, type NodeConstraint } from "./feasibility";

/** What the quorums need to know of a node: the inventory's, or index.yaml's record of it. */
export interface QuorumNode {
  roles: readonly string[];
  kubernetesControlPlane?: boolean;
}

interface Quorum<N extends QuorumNode> {
  name: string;
  holds: string;
  nodes: N[];
  /** Members the quorum keeps from these nodes. */
  members: number;
}

/** Members an OpenKeel quorum (Galera, RabbitMQ, OVN central) keeps from `eligible` nodes: three from three on, else one. */
export function quorumMembers(eligible: number): number {
  return eligible >= 3 ? 3 : Math.min(1, eligible);
}

/** The quorums of an inventory and the nodes that hold their members. */
export function quorumsOf<N extends QuorumNode>(nodes: readonly N[]): Quorum<N>[] {
  const controlPlane = nodes.filter((n) => n.roles.includes("controlPlane"));
  const etcd = nodes.filter((n) => n.kubernetesControlPlane);
  return [
    { name: "the OpenKeel control plane", holds: "Galera, RabbitMQ and OVN central", nodes: controlPlane, members: quorumMembers(controlPlane.length) },
    { name: "the Kubernetes control plane", holds: "etcd", nodes: etcd, members: Math.min(3, etcd.length) },
  ];
}

/** A quorum as a constraint of the feasibility model (./feasibility.ts): which nodes hold its members, how many it keeps. */
export interface QuorumSpec {
  key: string;
  name: string;
  holds: string;
  /** The nodes that may hold a member. */
  holder(n: JudgedNode): boolean;
  /** Members it keeps from that many nodes. */
  members(nodes: number): number;
  /** What its replacement node needs, for the fix. */
  replacement: string;
}

/**
 * At most one member drained at a time (two of three gone is a lost majority); a retiring member
 * leaves as many nodes as members; a removal never leaves fewer nodes than the members the
 * committed render has.
 */
export function quorumConstraint(q: QuorumSpec): NodeConstraint {
  return {
    key: q.key,
    judge(inv) {
      const nodes = inv.all().filter(q.holder);
      const members = q.members(nodes.length);
      const checks: Check[] = [];
      if (inv.judging === "removal") {
        const left = nodes.filter((n) => !n.removed);
        if (left.length < nodes.length && left.length < members) {
          checks.push({
            level: "error",
            code: "quorum-removal",
            message: `removing ${nodes
              .filter((n) => n.removed)
              .map((n) => `'${n.name}'`)
              .join(", ")} leaves ${left.length} node(s) for the ${members} member(s) of ${q.name} (${q.holds}) that ${inv.where} has`,
            fix: `add the replacement (${q.replacement}) and deploy it before removing a member`,
            path: inv.path([]),
          });
        }
        return checks;
      }
      const drained = nodes.filter((n) => isDrained(n.state));
      if (drained.length > 1) {
        checks.push({
          level: "error",
          code: "quorum-drain",
          message: `nodes ${drained.map((n) => `'${n.name}'`).join(", ")} hold ${q.name} (${q.holds}) and would be drained at once: a quorum loses its majority when more than one member of 3 is gone`,
          fix: "put one node of the quorum at a time into maintenance or retiring; set the others back to active (or cordoned)",
          path: inv.path([drained[1]]),
        });
      }
      const retiring = nodes.filter((n) => hasTrait(n.state, "leavesQuorums"));
      const staying = nodes.length - retiring.length;
      if (retiring.length > 0 && staying < members) {
        checks.push({
          level: "error",
          code: "retiring-quorum-member",
          message: `node '${retiring[0].name}' is retiring, which leaves ${staying} node(s) for the ${members} member(s) of ${q.name} (${q.holds})`,
          fix: `add its replacement to the inventory (${q.replacement}) and deploy it before retiring this node`,
          path: inv.path([retiring[0]]),
        });
      }
      return checks;
    },
  };
}

/** A quorum as a loss judges it (./failure-domains.ts). */
export interface QuorumLoss {
  /** Galera, etcd, … */
  what: string;
  /** The nodes that may hold a member. */
  holders: readonly JudgedNode[];
  members: number;
  /** At most one member per zone (a required zone anti-affinity). */
  perZone: boolean;
  /** What its lost majority costs. */
  costs: string;
  /** What makes the loss survivable. */
  fix: string;
}

/** Members lost at worst against the majority: none of the quorum's nodes lost is no finding (untouched). */
export function quorumLoss(loss: Loss, q: QuorumLoss): LossFinding[] {
  if (q.members === 0 || !q.holders.some((n) => loss.lost.has(n.name))) return [];
  const lost = worstLost(loss, q.holders, q.members, q.perZone);
  const left = q.members - lost;
  const majority = Math.floor(q.members / 2) + 1;
  const at = q.holders.length > q.members ? `at worst (${q.members} members on ${q.holders.length} nodes${q.perZone ? ", one per zone" : ""}) ` : "";
  const finding = (level: LossFinding["level"], message: string): LossFinding[] => [
    { what: q.what, level, message, ...(level === "holds" ? {} : { fix: q.fix }) },
  ];
  if (left < majority) return finding("fatal", `${at}${lost} of its ${q.members} member(s) lost, ${left} left: no majority (${majority}), ${q.costs}`);
  if (left === majority)
    return finding("degraded", `${at}${lost} of its ${q.members} members lost: the ${left} left are a bare majority, one more failure loses it`);
  return finding("holds", `${at}${lost} of its ${q.members} members lost, ${left} left: a majority with ${left - majority} failure(s) to spare`);
}

/** etcd: every Kubernetes control-plane node is a member (Talos), up to 3 kept by the feasibility rules. The model's own constraint. */
export const ETCD_QUORUM: NodeConstraint = {
  ...quorumConstraint({
    key: "etcd",
    name: "the Kubernetes control plane",
    holds: "etcd",
    holder: (n) => n.kubernetesControlPlane === true,
    members: (nodes) => Math.min(3, nodes),
    replacement: "kubernetesControlPlane: true",
  }),
  loss: (loss) => {
    const holders = loss.all().filter((n) => n.kubernetesControlPlane === true);
    return quorumLoss(loss, {
      what: "etcd",
      holders,
      members: holders.length,
      perZone: false,
      costs: "the Kubernetes API stops: nothing is scheduled, healed or changed",
      fix: "make 3 nodes kubernetesControlPlane (3 etcd members survive one loss), one per zone where the stack has zones",
    });
  },
};
