// The kind lab on a laptop (§ 6, lab): default label keys, roles optional, no Ironic.
import type { LoadedConfig } from "../components/config";
import type { Plan } from "../components/plan";
import type { PlanCheck, Topology } from "../components/topology";
import { basePlan } from "./common";

export function kindLabPlan(cfg: LoadedConfig, topo: Topology, warnings: PlanCheck[]): Plan {
  return basePlan(cfg, topo, warnings);
}
