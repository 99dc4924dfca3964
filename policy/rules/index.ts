// Every rule of the pack, by decision. Imported by policy/index.ts (which starts the server) and by
// the tests (which must not).
import { resourcePolicy, stackPolicy, type ResourceRule, type StackRule } from "./common";
import { d1HardenedRoleLabels } from "./d1";
import { d2ChassisNodes, d2OvnCentralAntiAffinity, d2ParallelOvn } from "./d2";
import { d3BridgeMappings, d3DistributedFloatingIps } from "./d3";
import { d4MetadataAgent, d4MetadataSecret } from "./d4";
import { d5LocalClass, d5LocalVolumes, d5MembersApart } from "./d5";
import { d6DynamicReservation } from "./d6";
import { d7ConductorCount, d7ConductorPlacement } from "./d7";
import { d8PublicIngress } from "./d8";

export const RESOURCE_RULES: ResourceRule[] = [d1HardenedRoleLabels, d2ParallelOvn, d5LocalVolumes, d6DynamicReservation, d7ConductorPlacement];
export const STACK_RULES: StackRule[] = [
  d2ChassisNodes,
  d2OvnCentralAntiAffinity,
  d3DistributedFloatingIps,
  d3BridgeMappings,
  d4MetadataAgent,
  d4MetadataSecret,
  d5LocalClass,
  d5MembersApart,
  d7ConductorCount,
  d8PublicIngress,
];

export function policies() {
  return [...RESOURCE_RULES.map(resourcePolicy), ...STACK_RULES.map(stackPolicy)];
}
