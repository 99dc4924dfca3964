// The Plan of a stack whose checks passed: the node-roles phase, the environment's platform
// components, the OpenKeel releases, the node-level configuration, and the problems of the stack's
// values (the values contract's). No placement report yet (tests compose Plans to trip the
// placement checks on them).
import type { Check, Problem } from "../config/problems";
import type { LoadedConfig } from "../config/schema";
import { addOpenKeel, openkeelNodeMetadata } from "../openkeel";
import { nodeRolesUnit } from "../plan/node-roles";
import { withMirror } from "../plan/mirror";
import { assertPlanInvariants, emptyPhases, phase, type Plan } from "../plan/plan";
import { addPlatform, hostContractOf, nodeMetadataOf } from "../platform/component";
import { openkeelHostContract } from "../openkeel/host";
import { mergeHostContracts } from "../plan/host";
import { stackContext } from "../platform/context";
import type { Topology } from "../topology/topology";
import { installed } from "./environment";
import { ENVIRONMENTS, stackConstraints } from "./registry";
import { feasibilityFacts } from "../lifecycle/feasibility";

export interface ComposedPlan {
  plan: Plan;
  /** What the stack's values break of the OpenKeel values contract: no Plan to apply while there are any. */
  problems: Problem[];
}

export function composePlan(cfg: LoadedConfig, topology: Topology, warnings: Check[]): ComposedPlan {
  const env = ENVIRONMENTS[cfg.environment];
  const components = installed(env, cfg);
  // one context for every builder of the Plan, the platform components' and the OpenKeel releases'
  const ctx = stackContext(cfg, topology, env.storage(cfg), components);
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
  phase(plan, "node-roles").units.push(nodeRolesUnit(cfg.nodes, topology.profile, [...nodeMetadataOf(ctx, components), openkeelNodeMetadata(cfg, topology)]));
  addPlatform(plan, ctx, components, env.podNetwork);
  const problems = addOpenKeel(plan, ctx);
  plan.nodeConfig = env.nodeConfig(cfg, topology);
  // what the workloads need of their nodes' hosts, and what the node agents install there
  plan.host = mergeHostContracts([hostContractOf(ctx, components), openkeelHostContract(ctx), env.host?.(cfg) ?? {}]);
  const out = withMirror(plan, cfg.mirror);
  // what the feasibility model reads of this Plan, recorded in index.yaml for the removal guard
  out.feasibility = feasibilityFacts(out, cfg, stackConstraints(cfg));
  assertPlanInvariants(out);
  return { plan: out, problems };
}
