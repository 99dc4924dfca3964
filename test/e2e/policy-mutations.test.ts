// The e2e's D1–D8 mutation planner (e2e/harness/policy-mutations.ts) on the committed renders: each
// decision on a release the stack deploys, the others skipped with one line saying why. Whether the
// resources it names are the ones each program registers: test/integration/e2e/policy-mutations.test.ts.
import * as path from "node:path";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { mutationLines, planMutations, postRenderRecordName, unjudged } from "../../e2e/harness/policy-mutations";
import { readRendered, type RenderedStack } from "../../e2e/harness/rendered";
import { RenderedStack as RenderedModel, type RenderedHelmRelease } from "../../render/rendered";
import { REPO, SHIPPED_STACKS } from "../helpers/stacks";

const RENDERED = path.join(REPO, "rendered");
const rendered = (stack: string) => readRendered(RENDERED, stack);

/** `r` with `file` holding `change` of its first document. */
function withFile(r: RenderedStack, file: string, change: (doc: any) => void): RenderedStack {
  const doc = structuredClone(r.model.documents(file)[0]) as any;
  change(doc);
  const text = stringify(doc);
  const files = { get: (p: string) => (p === file ? text : r.model.files.get(p)), keys: () => r.model.files.keys() };
  const model = new RenderedModel(files, `${r.dir} (${file} changed)`);
  return { dir: r.dir, index: model.index, units: model.units(), model };
}

const releaseOf = (r: RenderedStack, name: string) => r.units.find((u): u is RenderedHelmRelease => u.kind === "HelmRelease" && u.name === name)!;

describe("e2e: the D1–D8 mutations a stack's run judges", () => {
  it.each(SHIPPED_STACKS)("%s: every mutation changes a release of its render, and only D7 goes without Ironic", (stack) => {
    const r = rendered(stack);
    const plan = planMutations(r);
    const ironic = r.units.some((u) => u.kind === "HelmRelease" && u.chart.chart === "openkeel-ironic");
    expect(unjudged(plan)).toEqual(ironic ? [] : ["D7"]);
    expect(plan.planned.map((m) => m.decision)).toEqual(["D1", "D2", "D3", "D4", "D5", "D6", "D7", "D8"].filter((d) => ironic || d !== "D7"));
    const releases = new Set(r.units.filter((u) => u.kind === "HelmRelease").map((u) => u.name));
    const records = new Set(r.units.flatMap((u) => (u.kind === "HelmRelease" && u.postRender ? [postRenderRecordName(u)] : [])));
    for (const m of plan.planned) {
      expect(releases, m.decision).toContain(m.target);
      for (const o of m.resources ?? []) expect(o.type === "kubernetes:core/v1:ConfigMap" ? records : releases, `${m.decision} ${o.name}`).toContain(o.name);
    }
  });

  it("says in one line why a decision is not judged on a stack without its target", () => {
    const lines = mutationLines(planMutations(rendered("prod-small")));
    expect(lines.filter((l) => l.startsWith("skipped:"))).toEqual([
      "skipped: D7 (the Ironic conductor on the control plane): prod-small's plan has no release of chart openkeel-ironic, rendering values placement.conductor; D7 is not judged on this stack: both its rules judge the Ironic conductor alone, so there is no other target",
    ]);
    expect(lines.filter((l) => l.startsWith("run:"))).toHaveLength(7);
  });

  it("shows a decision on another target of the plan where the first is missing, and says so", () => {
    const r = rendered("prod-medium");
    // no Galera storage in the infrastructure release: D5 on RabbitMQ's
    const noGalera = withFile(r, releaseOf(r, "openkeel-chart").values, (v) => delete v.infrastructure.mariadb.storage);
    const plan = planMutations(noGalera);
    expect(plan.planned.find((m) => m.decision === "D5")).toMatchObject({ what: "RabbitMQ without a storage class", target: "openkeel-chart" });
    expect(mutationLines(plan).filter((l) => l.startsWith("skipped:"))).toEqual([
      "skipped: D5 (Galera on a class the stack does not create): prod-medium's plan has no release rendering values infrastructure.mariadb.storage; D5 is judged on openkeel-chart instead (RabbitMQ without a storage class)",
    ]);
    // the API placement of D1 is read from the plan, not named: without keystone's, the next release's
    const noKeystoneApi = withFile(r, releaseOf(r, "openkeel-keystone").values, (v) => delete v.placement.api);
    expect(planMutations(noKeystoneApi).planned.find((m) => m.decision === "D1")?.resources).toEqual([
      {
        type: "kubernetes:helm.sh/v3:Release",
        name: "openkeel-placement",
        path: ["values", "placement", "api", "nodeSelector"],
        value: { "node-role.openkeel.io/control-plane": "" },
      },
    ]);
  });

  it("D8 needs the infrastructure release's patch of its ingress: without it, D8 is not judged", () => {
    const r = rendered("prod-medium");
    const chart = releaseOf(r, "openkeel-chart");
    const noIngressPatch = withFile(r, chart.postRender!, (list) => list.splice(0, list.length, ...list.filter((p: any) => p.target.kind !== "DaemonSet")));
    const plan = planMutations(noIngressPatch);
    expect(unjudged(plan)).toEqual(["D8"]);
    expect(mutationLines(plan).at(-1)).toMatch(
      /^skipped: D8 .*with a post-render patch of DaemonSet <release>-ingress; D8 is not judged on this stack: the e2e has no other D8 mutation$/,
    );
  });
});
