// What every environment's Plan starts with: the stack's identity and the node-roles phase.
import type { LoadedConfig } from "../config/schema";
import { nodeRolesUnit, type NodeMetadataContributor } from "../plan/node-roles";
import { emptyPhases, phase, type Plan } from "../plan/plan";
import type { PlanCheck, Topology } from "../topology/topology";

export function basePlan(
  cfg: LoadedConfig,
  topo: Topology,
  warnings: PlanCheck[],
  nodeMetadata: NodeMetadataContributor[] = [],
): Plan {
  const plan: Plan = {
    stack: cfg.stack,
    environment: cfg.environment,
    topology: cfg.topology,
    labelProfile: topo.profile,
    taintedRoles: topo.taintedRoles,
    nodes: cfg.nodes.map((n) => ({ name: n.name, roles: n.roles, ...(n.zone !== undefined ? { zone: n.zone } : {}) })),
    phases: emptyPhases(),
    warnings,
  };
  phase(plan, "node-roles").units.push(nodeRolesUnit(cfg.nodes, topo.profile, nodeMetadata));
  return plan;
}
