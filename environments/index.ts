// Config → checks → Plan → placement, for any environment: the single entry the Pulumi program,
// the offline scripts and the tests share. The stack is resolved once (./resolve.ts); each stage
// below reads that value and stops the run at the first stage that finds an error.
import { configIssueProblems } from "../config/load";
import { isError, type Check, type Problem } from "../config/problems";
import type { LoadedConfig } from "../config/schema";
import { placementReport, type PlacementReport } from "../placement/report";
import { planComponents } from "../placement/workloads";
import type { Plan } from "../plan/plan";
import { platformChecks } from "../platform/component";
import { pinProblems } from "../platform/upgrades";
import * as VERSIONS from "../platform/versions";
import { lifecycleChecks, stateFeasibilityChecks } from "../lifecycle/checks";
import { failureDomainChecks, failureDomainTable } from "../lifecycle/failure-domains";
import { planChecks } from "../topology/checks";
import type { Topology } from "../topology/topology";
import { composePlan } from "./compose";
import { resolveStack, type ResolvedStack } from "./resolve";
import { storageClassChecks } from "./storage";
import { priorityClassChecks, priorityOrderChecks } from "./priority";
import { postRenderGuarantees } from "../openkeel/guarantees";

export { resolveEnvironment, resolveStack, type ResolvedStack } from "./resolve";

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

/** platform/versions.ts's malformed pins, judged once: the same for every stack. */
let malformedPins: Problem[] | undefined;

/** What is wrong before any check: a pin written wrong (whoever edits platform/versions.ts), or what the environment asks of the config beyond the schema. */
function inputProblems(s: ResolvedStack): Problem[] {
  // a malformed pin would otherwise surface as a broken Plan's invariant, with a trace
  malformedPins ??= pinProblems(VERSIONS);
  if (malformedPins.length > 0) return malformedPins;
  return configIssueProblems(s.cfg, s.env.configIssues(s.cfg));
}

/** The checks of a stack: the okadm plan rules, its node states', its environment's, its components'. */
function stackChecks(s: ResolvedStack): Check[] {
  const { cfg, topology } = s;
  return [
    ...planChecks(cfg, topology),
    ...lifecycleChecks(cfg, s.lifecycles),
    // the constraints that judge the nodes alone (the quorums): with the other plan checks
    ...stateFeasibilityChecks(
      cfg,
      s.constraints.filter((c) => !c.facts),
      undefined,
    ),
    ...s.env.checks(cfg, topology),
    ...platformChecks(cfg, topology, s.components),
  ];
}

/** The checks of a composed Plan before placement: every node state can finish (by the constraints that read the Plan), the classes it names exist and keep § 2's order. */
function composedChecks(s: ResolvedStack, plan: Plan): { feasibility: Check[]; storage: Check[] } {
  return {
    feasibility: stateFeasibilityChecks(
      s.cfg,
      s.constraints.filter((c) => c.facts),
      plan.feasibility,
    ),
    storage: [...storageClassChecks(plan, s.cfg, s.env.storage(s.cfg)), ...priorityClassChecks(plan, s.cfg), ...priorityOrderChecks(plan, s.cfg)],
  };
}

/** The design's guarantees on the objects as the cluster receives them, after the post-render patches: a finding only this repository can cause is its bug. */
function guaranteeChecks(s: ResolvedStack, plan: Plan): Check[] {
  const guarantees = postRenderGuarantees(plan, s.cfg, s.kinds);
  if (guarantees.bugs.length > 0) {
    throw new Error(`post-render of stack ${s.cfg.stack}: ${guarantees.bugs.map((c) => `[${c.code}] ${c.message}. Fix: ${c.fix}`).join("; ")}`);
  }
  return guarantees.checks;
}

/** Where every component can run: a component that cannot run, or runs where the design forbids it, fails like a plan check. */
function placementOf(s: ResolvedStack, plan: Plan): PlacementReport {
  const placement = placementReport(
    plan,
    s.topology,
    planComponents(plan, s.readers),
    s.placementChecks,
    s.stateTaints,
    s.env.hostProvisions(plan, s.topology),
  );
  // what only this repository's code can trip is its bug, never the stack file's
  if (placement.bugs.length > 0) throw new Error(`placement of stack ${s.cfg.stack}: ${placement.bugs.map((c) => `[${c.code}] ${c.message}`).join("; ")}`);
  return placement;
}

/** What losing a node or a zone costs: drawn in placement.md, refused where the stack must survive it. */
function lossChecks(s: ResolvedStack, plan: Plan, placement: PlacementReport): Check[] {
  const { cfg } = s;
  placement.failureDomains = failureDomainTable(plan.nodes, s.constraints, plan.feasibility ?? {}, s.env.mustSurvive?.(cfg) ?? []);
  return failureDomainChecks(placement.failureDomains, (name) => cfg.nodes.findIndex((n) => n.name === name));
}

export function planStack(cfg: LoadedConfig): PlanResult {
  const s = resolveStack(cfg);
  const { topology } = s;
  const invalid = inputProblems(s);
  if (invalid.length > 0) return { topology, problems: invalid };
  const checks = stackChecks(s);
  if (checks.some(isError)) return { topology, problems: checks };
  const { plan, problems } = composePlan(s, checks);
  if (problems.length > 0) return { topology, problems: [...checks, ...problems] };
  const { feasibility, storage } = composedChecks(s, plan);
  if (feasibility.some(isError)) return { topology, problems: [...checks, ...feasibility] };
  plan.warnings = [...plan.warnings, ...feasibility];
  if (storage.length > 0) return { topology, problems: [...checks, ...feasibility, ...storage] };
  const guarantees = guaranteeChecks(s, plan);
  if (guarantees.length > 0) return { topology, problems: [...checks, ...feasibility, ...guarantees] };
  const placement = placementOf(s, plan);
  if (placement.checks.length > 0) return { topology, problems: [...checks, ...feasibility, ...placement.checks], placement };
  const losses = lossChecks(s, plan, placement);
  if (losses.length > 0) return { topology, problems: [...checks, ...feasibility, ...losses], placement };
  return { topology, problems: [...checks, ...feasibility], plan, placement };
}
