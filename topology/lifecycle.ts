// Plan checks of the node states (config/lifecycle.ts): what a state asks of the rest of the
// inventory. The quorums are the OpenKeel control plane's (Galera, RabbitMQ, OVN central: one
// member per controlPlane node, required anti-affinity; 3 members from 3 nodes on, else 1, the rule
// of openkeel/context.ts) and etcd's (every Kubernetes control-plane node is a member).
import { isDrained } from "../config/lifecycle";
import type { Check } from "../config/problems";
import type { Config, NodeConfig } from "../config/schema";
import type { Topology } from "./topology";

/** What the quorums need to know of a node: the inventory's, or index.yaml's record of it. */
interface QuorumNode {
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

export function lifecycleChecks(cfg: Config, topo: Pick<Topology, "environment">): Check[] {
  const checks: Check[] = [];
  const path = (node: NodeConfig) => `openkeel:nodes[${cfg.nodes.indexOf(node)}].state`;
  for (const node of cfg.nodes) {
    if (!topo.environment.drainsNodes && isDrained(node.state)) {
      checks.push({
        level: "warning",
        code: "lab-node-state",
        message: `node '${node.name}' is ${node.state}, but the lab has no Node Maintenance Operator: it is only cordoned, not drained`,
        fix: `drain it yourself after pulumi up: kubectl drain ${node.name} --ignore-daemonsets --delete-emptydir-data`,
        path: path(node),
      });
    }
  }
  for (const q of quorumsOf(cfg.nodes)) {
    const drained = q.nodes.filter((n) => isDrained(n.state));
    if (drained.length > 1) {
      checks.push({
        level: "error",
        code: "quorum-drain",
        message: `nodes ${drained.map((n) => `'${n.name}'`).join(", ")} hold ${q.name} (${q.holds}) and would be drained at once: a quorum loses its majority when more than one member of 3 is gone`,
        fix: "put one node of the quorum at a time into maintenance or retiring; set the others back to active (or cordoned)",
        path: path(drained[1]),
      });
    }
    const retiring = q.nodes.filter((n) => n.state === "retiring");
    const staying = q.nodes.length - retiring.length;
    if (retiring.length > 0 && staying < q.members) {
      checks.push({
        level: "error",
        code: "retiring-quorum-member",
        message: `node '${retiring[0].name}' is retiring, which leaves ${staying} node(s) for the ${q.members} member(s) of ${q.name} (${q.holds})`,
        fix: `add its replacement to the inventory (${q.holds === "etcd" ? "kubernetesControlPlane: true" : "the controlPlane role"}) and deploy it before retiring this node`,
        path: path(retiring[0]),
      });
    }
  }
  return checks;
}
