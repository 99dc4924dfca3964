// Plan checks of the node states (config/lifecycle.ts): what a state asks of the components the
// stack installs (something must drain a node that is to be drained), and whether every state
// change can finish with the nodes that remain (the feasibility model, ./feasibility.ts: quorums,
// replicas, members, gateways, hypervisors, judged with the facts of the stack's Plan).
import type { LifecycleFacts } from "../config/lifecycle";
import { isDrained } from "../config/lifecycle";
import type { Check } from "../config/problems";
import type { Config, NodeConfig } from "../config/schema";
import type { NodeLifecycle } from "./contributor";
import { feasibilityChecks, statesInventory, type NodeConstraint } from "./feasibility";

/** The drain an operator runs by hand where no component of the stack drains nodes. */
export const drainByHand = (node: string) => `kubectl drain ${node} --ignore-daemonsets --delete-emptydir-data`;

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
        message: `node '${node.name}' is ${node.state}, but no component this stack installs drains nodes: it is only cordoned, not drained`,
        fix: `drain it yourself after pulumi up: ${drainByHand(node.name)}`,
        path: path(node),
      });
    }
  }
  return checks;
}

/** Whether the stack's node states can all finish at once, judged with the facts of its Plan (`facts`, by constraint). */
export function stateFeasibilityChecks(
  cfg: Config,
  constraints: readonly NodeConstraint[],
  facts: Readonly<Record<string, LifecycleFacts>> | undefined,
): Check[] {
  return feasibilityChecks(statesInventory(cfg.nodes), constraints, facts);
}
