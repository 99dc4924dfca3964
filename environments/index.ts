// Config → checks → Plan, for any environment. The single entry the Pulumi program, the offline
// scripts and the tests share.
import type { LoadedConfig } from "../config/schema";
import { assertPlanInvariants, type Plan } from "../plan/plan";
import { buildTopology, planChecks, type PlanCheck, type Topology } from "../topology/topology";
import { placementReport, type PlacementReport } from "../placement/report";
import { planComponents } from "../placement/workloads";
import { kindChecks, kindNodeConfig } from "../nodes/kind";
import { talosNodeConfig } from "../nodes/talos";
import { platformChecks } from "../platform/checks";
import { kindLabPlan } from "./kind-lab";
import { talosProductionPlan } from "./talos-production";

export interface PlanResult {
  topology: Topology;
  /** Every plan check, errors and warnings. */
  checks: PlanCheck[];
  /** Built only when no check is an error. */
  plan?: Plan;
  /** Where every component can run (issue 7); its errors are among `checks`, and then no plan. */
  placement?: PlacementReport;
}

export function planStack(cfg: LoadedConfig): PlanResult {
  const topology = buildTopology(cfg);
  const checks = [
    ...planChecks(cfg, topology),
    ...platformChecks(cfg, topology),
    ...(cfg.environment === "kind-lab" ? kindChecks(cfg, topology) : []),
  ];
  if (checks.some((c) => c.level === "error")) return { topology, checks };
  const warnings = checks.filter((c) => c.level === "warning");
  const plan =
    cfg.environment === "kind-lab" ? kindLabPlan(cfg, topology, warnings) : talosProductionPlan(cfg, topology, warnings);
  // Node-level config (Talos patches and schematics, the kind cluster) from the same inventory.
  plan.nodeConfig = cfg.environment === "kind-lab" ? kindNodeConfig(cfg, topology) : talosNodeConfig(cfg, topology);
  assertPlanInvariants(plan);
  // A component that cannot run, or runs where the design forbids it, fails like a plan check.
  const placement = placementReport(plan, topology, planComponents(plan));
  if (placement.checks.length > 0) return { topology, checks: [...checks, ...placement.checks], placement };
  return { topology, checks, plan, placement };
}
