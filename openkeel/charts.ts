// Where each OpenKeel chart comes from: the charts' one pin of platform/versions.ts, overridden per
// stack by `openkeel:charts` (repository, a version for every chart, a version per chart, keyed
// `infrastructure` or by the service's name).
import type { LoadedConfig } from "../config/schema";
import type { ChartPin } from "../plan/plan";
import { OPENKEEL_CHART_REPOSITORY, OPENKEEL_CHARTS } from "../platform/versions";

export function chartRef(cfg: LoadedConfig, key: string, chart: string): ChartPin {
  return {
    repository: cfg.charts.repository ?? OPENKEEL_CHART_REPOSITORY,
    chart,
    version: cfg.charts.versions[key] ?? cfg.charts.version ?? OPENKEEL_CHARTS.version,
  };
}
