// The kind lab on a laptop (§ 6, lab): default label keys, roles optional, no Ironic.
import type { LoadedConfig } from "../components/config";
import type { Plan } from "../components/plan";
import type { PlanCheck, Topology } from "../components/topology";
import { addOpenKeel } from "../components/openkeel";
import { basePlan } from "./common";

export function kindLabPlan(cfg: LoadedConfig, topo: Topology, warnings: PlanCheck[]): Plan {
  const plan = basePlan(cfg, topo, warnings);
  addOpenKeel(plan, cfg, topo);
  return plan;
}
