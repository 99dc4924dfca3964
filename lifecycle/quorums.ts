// The quorums a node can hold a member of: the OpenKeel control plane's (Galera, RabbitMQ, OVN
// central: one member per controlPlane node, required anti-affinity; 3 members from 3 nodes on,
// else 1, the rule of openkeel/context.ts) and etcd's (every Kubernetes control-plane node is a
// member). The state checks (./checks.ts) and the removal guard (./guards.ts) count on them.

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
