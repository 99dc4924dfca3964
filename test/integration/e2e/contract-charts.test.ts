// Issue 47, item 4: the contract charts' shared helper (e2e/charts/_shared/_openkeel.tpl) is written
// once and added when the e2e packages a chart (e2e/harness/mirror.ts, contractChart). Helm itself
// renders each packaged chart with the committed values of its release: the helper is where the
// charts' templates find it, and every workload comes out of `openkeel.workload`.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { CONTRACT_CHARTS_DIR, contractChart } from "../../../e2e/harness/mirror";
import { CHART_KUBE_VERSION } from "../../../tools/chart-placement";
import { helmTemplate, requireHelm } from "../../../tools/helm";
import { REPO, SHIPPED_STACKS } from "../../helpers/stacks";

const CHARTS = fs
  .readdirSync(CONTRACT_CHARTS_DIR)
  .filter((c) => c.startsWith("openkeel-"))
  .sort();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-contract-charts-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The committed values of the chart's release in the first shipped stack that installs it. */
function committedValues(chart: string): string {
  const stack = SHIPPED_STACKS.find((s) => fs.existsSync(path.join(REPO, "rendered", s, "values", `${chart}.yaml`)));
  if (!stack) throw new Error(`no shipped stack installs ${chart}`);
  return path.join(REPO, "rendered", stack, "values", `${chart}.yaml`);
}

describe("the contract charts, packaged with the shared helper, rendered by Helm", () => {
  // its pin checked once (go version -m), not per chart
  const helm = requireHelm();
  it.each(CHARTS)("%s", (chart) => {
    const archive = path.join(tmp, `${chart}-1.0.0.tgz`);
    fs.writeFileSync(archive, contractChart(chart, "1.0.0"));
    const out = helmTemplate(
      { release: chart, namespace: "openkeel", chart: archive, valuesFile: committedValues(chart), kubeVersion: CHART_KUBE_VERSION },
      helm,
    );
    const workloads = parseAllDocuments(out)
      .map((d) => d.toJSON() as { kind?: string; spec?: { template?: { metadata?: { labels?: Record<string, string> } } } } | null)
      .filter((o) => o?.spec?.template !== undefined);
    expect(workloads.length, chart).toBeGreaterThan(0);
    for (const w of workloads) expect(w!.spec!.template!.metadata?.labels?.["e2e.openkeel.io/contract-chart"], `${chart} ${w!.kind}`).toBe(chart);
  });
});
