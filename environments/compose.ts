// The Plan of a stack whose checks passed: the node-roles phase, its components' units (the
// platform's, then OpenKeel's), each unit's dependencies (derived from what its objects use:
// plan/needs.ts), the node-level configuration, and the problems of the stack's values (the values
// contract's). No placement report yet (tests compose Plans to trip the placement checks on them).
import type { Check, Problem } from "../config/problems";
import { nodeRolesUnit } from "../plan/node-roles";
import { withMirror } from "../plan/mirror";
import { assertPlanInvariants, emptyPhases, phase, type Plan } from "../plan/plan";
import { addComponents, hostContractOf, kindOffersOf, nodeMetadataOf } from "../platform/component";
import { mergeHostContracts } from "../plan/host";
import { feasibilityFacts } from "../lifecycle/feasibility";
import { withDependencies, type ClusterFacts } from "../plan/needs";
import type { ResolvedStack } from "./resolve";

export interface ComposedPlan {
  plan: Plan;
  /** What the stack's values break of the OpenKeel values contract: no Plan to apply while there are any. */
  problems: Problem[];
}

/** What a stack's cluster has before any unit: the environment's own pod network (kind's) and classes. */
export function clusterFacts(stack: Pick<ResolvedStack, "env" | "ctx">): ClusterFacts {
  return { podNetwork: stack.env.podNetwork === undefined, storageClasses: stack.ctx.storage.provided.map((c) => c.name) };
}

export function composePlan(stack: ResolvedStack, warnings: Check[]): ComposedPlan {
  const { cfg, env, topology, components, ctx } = stack;
  const plan: Plan = {
    stack: cfg.stack,
    environment: cfg.environment,
    topology: cfg.topology,
    labelProfile: topology.profile,
    taintedRoles: topology.taintedRoles,
    nodes: cfg.nodes.map((n) => ({
      name: n.name,
      roles: n.roles,
      ...(n.zone !== undefined ? { zone: n.zone } : {}),
      ...(n.kubernetesControlPlane ? { kubernetesControlPlane: true as const } : {}),
      state: n.state,
    })),
    cluster: env.cluster(cfg),
    phases: emptyPhases(),
    warnings,
    ...(cfg.allowRemoval.length ? { allowRemoval: [...cfg.allowRemoval].sort() } : {}),
  };
  phase(plan, "node-roles").units.push(nodeRolesUnit(cfg.nodes, topology.profile, nodeMetadataOf(ctx, components)));
  const problems = addComponents(plan, ctx, components, env.podNetwork);
  plan.nodeConfig = env.nodeConfig(cfg, topology);
  // what the workloads need of their nodes' hosts, and what the node agents install there
  plan.host = mergeHostContracts([hostContractOf(ctx, components), env.host?.(cfg) ?? {}]);
  const { plan: out, unmet } = withDependencies(withMirror(plan, cfg.mirror), clusterFacts(stack), kindOffersOf(components));
  // a class nothing offers may be the stack's own mistake: its check names the key (./storage.ts, ./priority.ts)
  const bugs = unmet.filter((u) => !/^(storageclass|priorityclass) /.test(u.fact));
  if (bugs.length > 0)
    throw new Error(`dependencies of stack ${cfg.stack}: ${bugs.map((u) => `unit ${u.unit} uses ${u.fact}, which no unit before it offers`).join("; ")}`);
  // what the feasibility model reads of this Plan, recorded in index.yaml for the removal guard
  out.feasibility = feasibilityFacts(out, cfg, stack.constraints);
  assertPlanInvariants(out);
  return { plan: out, problems };
}
