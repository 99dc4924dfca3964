// Talos Linux production clusters (§ 6 small, medium, large): hardened label keys (D1).
import type { LoadedConfig } from "../components/config";
import type { Plan } from "../components/plan";
import type { PlanCheck, Topology } from "../components/topology";
import { addOpenKeel } from "../components/openkeel";
import { basePlan } from "./common";

export function talosProductionPlan(cfg: LoadedConfig, topo: Topology, warnings: PlanCheck[]): Plan {
  const plan = basePlan(cfg, topo, warnings);
  addOpenKeel(plan, cfg, topo);
  return plan;
}
