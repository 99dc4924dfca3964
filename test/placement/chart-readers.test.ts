// Issue 22, item 7: every workload a chart renders is a component. The e2e renders the contract
// charts through the engine's provider only, so this test reads the charts' templates (the real
// platform charts are rendered by Helm in test/integration/placement/chart-placement.test.ts): the contract charts (e2e/charts) render every pod template through the
// shared helper `openkeel.workload` with a literal "key" and "kind" (the helper is written once, in
// e2e/charts/_shared/, and added when the mirror packages a chart), and a literal `kind: <workload>` document anywhere else; the stand-in
// charts (e2e/standins) are generated text. A pod template that no placement reader claims
// fails the test.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { resolveEnvironment } from "../../environments";
import type { Plan } from "../../plan/plan";
import { allUnits } from "../../plan/plan";
import { planComponents } from "../../placement/workloads";
import { STAND_IN_CHARTS } from "../../e2e/standins/artifacts";
import { planOf } from "../helpers/plans";
import { mutatedConfig } from "../helpers/stacks";

const CHARTS = path.resolve(__dirname, "../../e2e/charts");
const WORKLOAD_KINDS = "Deployment|StatefulSet|DaemonSet|Job|CronJob|Pod|ReplicaSet";

interface PodTemplate {
  chart: string;
  file: string;
  /** What a reader names it by: the placement key (contract charts) or the object's name (stand-ins). */
  id: string;
  kind: string;
}

/** The pod templates of one chart's template texts. */
export function podTemplates(chart: string, files: Record<string, string>): PodTemplate[] {
  const out: PodTemplate[] = [];
  for (const [file, text] of Object.entries(files)) {
    for (const m of text.matchAll(/include "openkeel\.workload" \(dict [^\n]*?"key" "([A-Za-z]+)"[^\n]*?"kind" "([A-Za-z]+)"/g)) {
      // a component of its own (the API's Job) names itself; the others are their placement key
      const own = /"component" "([a-z-]+)"/.exec(m[0])?.[1];
      out.push({ chart, file, id: own ?? m[1], kind: m[2] });
    }
    for (const doc of text.split(/^---$/m)) {
      const kind = new RegExp(`^kind: (${WORKLOAD_KINDS})\\s*$`, "m").exec(doc)?.[1];
      const name = /^metadata:\s*\n\s+name: (\S+)/m.exec(doc)?.[1];
      if (kind) out.push({ chart, file, id: name ?? "(unnamed)", kind });
    }
  }
  return out;
}

function contractChartFiles(chart: string): Record<string, string> {
  const dir = path.join(CHARTS, chart, "templates");
  return Object.fromEntries(fs.readdirSync(dir).map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8")]));
}

/** The components the readers claim per chart: `<key or object name>` under every unit of that chart. */
function claimedByChart(plans: Plan[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const plan of plans) {
    const units = new Map(allUnits(plan).map((u) => [u.name, u]));
    for (const c of planComponents(plan, resolveEnvironment(plan.environment).readers)) {
      const u = units.get(c.unit);
      const chart = u?.kind === "HelmRelease" ? u.chart.chart : c.unit;
      const set = out.get(chart) ?? new Set<string>();
      // `<unit>/<id>`, and ids joined with + (kube-ovn-cni+ovs-ovn+pinger) each count
      for (const id of c.name.slice(c.unit.length + 1).split("+")) set.add(id);
      out.set(chart, set);
    }
  }
  return out;
}

export function unclaimed(templates: PodTemplate[], claimed: Map<string, Set<string>>): string[] {
  return templates.filter((t) => !claimed.get(t.chart)?.has(t.id)).map((t) => `${t.chart} ${t.file}: ${t.kind} ${t.id}`);
}

/** Every optional component on: every service, BGP, the realBackends-free production stacks. */
function everythingOn(): Plan[] {
  const all = mutatedConfig("prod-small", (raw) => {
    raw.bgp = true;
    raw.services = { ...(raw.services ?? {}), zun: { ...(raw.services?.zun ?? {}), enabled: true } };
    // Zun needs containers nodes: small's hyperconverged nodes carry that role too (§ 1.4)
    for (const n of raw.nodes as { roles: string[] }[]) if (!n.roles.includes("containers")) n.roles.push("containers");
  });
  return [planOf(all), planOf("prod-large"), planOf("prod-medium"), planOf("lab")];
}

describe("item 7: every pod template a contract or stand-in chart renders is claimed by a reader", () => {
  const plans = everythingOn();
  const claimed = claimedByChart(plans);

  it("the contract charts' workloads: a component of their release each", () => {
    const charts = fs.readdirSync(CHARTS).filter((c) => c !== "_shared");
    const templates = charts.flatMap((c) => podTemplates(c, contractChartFiles(c)));
    expect(templates.length).toBeGreaterThan(40);
    expect(unclaimed(templates, claimed)).toEqual([]);
  });

  it("the stand-in charts' workloads (kube-ovn-controller): a component of their release each", () => {
    const templates = Object.entries(STAND_IN_CHARTS).flatMap(([chart, s]) => podTemplates(chart, s.files("../shared/schemas")));
    expect(templates.map((t) => `${t.chart}/${t.id}`)).toEqual(["kube-ovn/kube-ovn-controller"]);
    expect(unclaimed(templates, claimed)).toEqual([]);
  });

  it("a Job, a CronJob or a workload of a key no reader knows is reported", () => {
    const files = {
      "templates/x.yaml": `{{ include "openkeel.workload" (dict "root" $ "key" "api" "kind" "Deployment") }}\n{{ include "openkeel.workload" (dict "root" $ "key" "dbSync" "kind" "Job") }}\n---\napiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: rotate\n`,
    };
    expect(unclaimed(podTemplates("openkeel-keystone", files), claimed)).toEqual([
      "openkeel-keystone templates/x.yaml: Job dbSync",
      "openkeel-keystone templates/x.yaml: CronJob rotate",
    ]);
  });
});
