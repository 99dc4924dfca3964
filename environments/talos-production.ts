// Talos Linux production clusters (§ 6 small, medium, large): hardened label keys (D1).
import type { LoadedConfig } from "../components/config";
import type { Plan } from "../components/plan";
import type { PlanCheck, Topology } from "../components/topology";
import { basePlan } from "./common";

export function talosProductionPlan(cfg: LoadedConfig, topo: Topology, warnings: PlanCheck[]): Plan {
  return basePlan(cfg, topo, warnings);
}
