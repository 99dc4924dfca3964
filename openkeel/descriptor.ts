// OpenKeel's descriptor: OpenKeel itself as one entry of a stack's platform list, of the same shape as the platform components: the
// last one installed (environments/registry.ts appends it to every environment's platform), with
// its units in the OpenKeel phases, its services' plan checks, the labels its chassis need, what its workloads need of the
// hosts, its part in a node's life, and how the placement report reads its releases.
import type { PlatformComponent } from "../platform/component";
import { OPENKEEL_CHART_REPOSITORY, OPENKEEL_CHARTS } from "../platform/versions";
import { openkeelHostContract } from "./host";
import { openkeelUnits } from "./index";
import { INFRASTRUCTURE_CHART } from "./names";
import { openkeelNodeMetadata } from "./node-metadata";
import { openkeelLifecycle } from "./node-lifecycle";
import { OPENKEEL_SERVICES } from "./services";
import { OPENKEEL_PLACEMENT_CHECKS, OPENKEEL_READERS } from "./workloads";

export const OPENKEEL: PlatformComponent = {
  name: "OpenKeel",
  // the charts of the infrastructure and of every service, at the release line platform/versions.ts pins (a stack's openkeel:charts overrides the repository and versions)
  pins: [INFRASTRUCTURE_CHART, ...OPENKEEL_SERVICES.map((s) => s.chart)].map((chart) => ({
    repository: OPENKEEL_CHART_REPOSITORY,
    chart,
    version: OPENKEEL_CHARTS.version,
  })),
  nodeMetadata: (ctx) => openkeelNodeMetadata(ctx.cfg, ctx.topo),
  lifecycle: openkeelLifecycle,
  units(ctx, wiring) {
    const { units, problems } = openkeelUnits(ctx);
    wiring.problems.push(...problems);
    return units;
  },
  // every service's own plan checks, whether it runs or not
  checks: (cfg, topo, installed) => OPENKEEL_SERVICES.flatMap((s) => s.planChecks?.(cfg, topo, installed) ?? []),
  readers: OPENKEEL_READERS,
  placementChecks: OPENKEEL_PLACEMENT_CHECKS,
  host: openkeelHostContract,
};
