// Config → checks → Plan → placement, for any environment: the single entry the Pulumi program,
// the offline scripts and the tests share.
import { configIssueProblems } from "../config/load";
import { isError, type Check, type Problem } from "../config/problems";
import type { LoadedConfig } from "../config/schema";
import { placementReport, type PlacementReport } from "../placement/report";
import { planComponents } from "../placement/workloads";
import type { Plan } from "../plan/plan";
import { lifecyclesOf, platformChecks } from "../platform/component";
import { pinProblems } from "../platform/upgrades";
import * as VERSIONS from "../platform/versions";
import { lifecycleChecks, stateFeasibilityChecks } from "../lifecycle/checks";
import { failureDomainChecks, failureDomainTable } from "../lifecycle/failure-domains";
import { planChecks } from "../topology/checks";
import type { Topology } from "../topology/topology";
import { composePlan } from "./compose";
import { installed } from "./environment";
import { ENVIRONMENTS, placementChecks, placementReaders, stackConstraints, stackStateTaints, stackTopology } from "./registry";
import { storageClassChecks } from "./storage";
import { priorityClassChecks } from "./priority";
import { postRenderGuarantees } from "../openkeel/guarantees";

export { environmentConstraints, placementChecks, placementReaders, stackConstraints, stackTopology } from "./registry";

export interface PlanResult {
  topology: Topology;
  /**
   * Every user mistake of the stack, one type, errors and warnings: the plan checks (with a code),
   * and the problems of its values (the values contract's). A bug in this repository is thrown.
   */
  problems: Problem[];
  /** Built only when no problem is an error. */
  plan?: Plan;
  /** Where every component can run; its errors are among `problems`, and then no plan. */
  placement?: PlacementReport;
}

/** The checks of a stack: the okadm plan rules, its node states', its environment's, its platform components'. */
function stackChecks(cfg: LoadedConfig, topology: Topology): Check[] {
  const env = ENVIRONMENTS[cfg.environment];
  const components = installed(env, cfg);
  return [
    ...planChecks(cfg, topology),
    ...lifecycleChecks(cfg, lifecyclesOf(components)),
    // the constraints that judge the nodes alone (the quorums): with the other plan checks
    ...stateFeasibilityChecks(
      cfg,
      stackConstraints(cfg).filter((c) => !c.facts),
      undefined,
    ),
    ...env.checks(cfg, topology),
    ...platformChecks(cfg, topology, components),
  ];
}

/** platform/versions.ts's malformed pins, judged once: the same for every stack. */
let malformedPins: Problem[] | undefined;

export function planStack(cfg: LoadedConfig): PlanResult {
  const env = ENVIRONMENTS[cfg.environment];
  const topology = stackTopology(cfg);
  // a pin written wrong is the mistake of whoever edits platform/versions.ts (the problems name that
  // file), and would otherwise surface as a broken Plan's invariant, with a trace
  malformedPins ??= pinProblems(VERSIONS);
  if (malformedPins.length > 0) return { topology, problems: malformedPins };
  // what the environment asks of the config beyond the schema: the stack's mistake, like a schema issue
  const invalid = configIssueProblems(cfg, env.configIssues(cfg));
  if (invalid.length > 0) return { topology, problems: invalid };
  const checks = stackChecks(cfg, topology);
  if (checks.some(isError)) return { topology, problems: checks };
  const { plan, problems } = composePlan(cfg, topology, checks);
  if (problems.length > 0) return { topology, problems: [...checks, ...problems] };
  // whether every node state can finish, by the constraints that read this Plan (what its releases run)
  const feasibility = stateFeasibilityChecks(
    cfg,
    stackConstraints(cfg).filter((c) => c.facts),
    plan.feasibility,
  );
  if (feasibility.some(isError)) return { topology, problems: [...checks, ...feasibility] };
  plan.warnings = [...plan.warnings, ...feasibility];
  const storage = [...storageClassChecks(plan, cfg, ENVIRONMENTS[cfg.environment].storage(cfg)), ...priorityClassChecks(plan, cfg)];
  if (storage.length > 0) return { topology, problems: [...checks, ...feasibility, ...storage] };
  // the design's guarantees on the objects as the cluster receives them, after the post-render patches
  const guarantees = postRenderGuarantees(plan, cfg);
  if (guarantees.bugs.length > 0) {
    throw new Error(`post-render of stack ${cfg.stack}: ${guarantees.bugs.map((c) => `[${c.code}] ${c.message}. Fix: ${c.fix}`).join("; ")}`);
  }
  if (guarantees.checks.length > 0) return { topology, problems: [...checks, ...feasibility, ...guarantees.checks] };
  // A component that cannot run, or runs where the design forbids it, fails like a plan check.
  const placement = placementReport(
    plan,
    topology,
    planComponents(plan, placementReaders(cfg.environment)),
    placementChecks(cfg.environment),
    stackStateTaints(cfg),
    ENVIRONMENTS[cfg.environment].hostProvisions(plan, topology),
  );
  // what only this repository's code can trip is its bug, never the stack file's
  if (placement.bugs.length > 0) throw new Error(`placement of stack ${cfg.stack}: ${placement.bugs.map((c) => `[${c.code}] ${c.message}`).join("; ")}`);
  if (placement.checks.length > 0) return { topology, problems: [...checks, ...feasibility, ...placement.checks], placement };
  // what losing a node or a zone costs: drawn in placement.md, refused where the stack must survive it
  placement.failureDomains = failureDomainTable(plan.nodes, stackConstraints(cfg), plan.feasibility ?? {}, env.mustSurvive?.(cfg) ?? []);
  const losses = failureDomainChecks(placement.failureDomains, (name) => cfg.nodes.findIndex((n) => n.name === name));
  if (losses.length > 0) return { topology, problems: [...checks, ...feasibility, ...losses], placement };
  return { topology, problems: [...checks, ...feasibility], plan, placement };
}
