// Where each OpenKeel chart comes from: platform/versions.ts, overridden per stack by
// `openkeel:charts` (repository, a version for every chart, a version per chart).
import type { LoadedConfig, OpenKeelChartKey } from "../config/schema";
import type { ChartPin } from "../plan/plan";
import { OPENKEEL_CHART_REPOSITORY, OPENKEEL_CHARTS } from "../platform/versions";

export function chartRef(cfg: LoadedConfig, key: OpenKeelChartKey): ChartPin {
  const pin = OPENKEEL_CHARTS[key];
  return {
    repository: cfg.charts.repository ?? OPENKEEL_CHART_REPOSITORY,
    chart: pin.chart,
    version: cfg.charts.versions[key] ?? cfg.charts.version ?? pin.version,
  };
}
