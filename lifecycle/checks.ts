// Plan checks of the node states (config/lifecycle.ts): what a state asks of the rest of the
// inventory (its quorums, ./quorums.ts) and of the components the stack installs (something must
// drain a node that is to be drained).
import { isDrained } from "../config/lifecycle";
import type { Check } from "../config/problems";
import type { Config, NodeConfig } from "../config/schema";
import type { NodeLifecycle } from "./contributor";
import { quorumsOf } from "./quorums";

/** `lifecycles`: the contributions of the components the stack installs. */
export function lifecycleChecks(cfg: Config, lifecycles: readonly NodeLifecycle[]): Check[] {
  const checks: Check[] = [];
  const path = (node: NodeConfig) => `openkeel:nodes[${cfg.nodes.indexOf(node)}].state`;
  const drains = lifecycles.some((l) => l.drains);
  for (const node of cfg.nodes) {
    if (!drains && isDrained(node.state)) {
      checks.push({
        level: "warning",
        code: "lab-node-state",
        message: `node '${node.name}' is ${node.state}, but nothing in this stack drains nodes (the lab has no Node Maintenance Operator): it is only cordoned, not drained`,
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
