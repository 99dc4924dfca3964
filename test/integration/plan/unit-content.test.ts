// Issue 46: the content each chart and pinned manifest is stated to hold (what its unit offers other
// units and uses of them: plan/needs.ts), against the real files. The platform's release manifests
// and charts at their pins and at the predecessors a pin bump comes from (the mirror folder's files,
// `helm template` with a stack's values); the OpenKeel releases against their
// contract charts (e2e/charts/, the § 5.1–5.2 interface: no real chart is public). A statement that
// misses a use, or an offer another unit uses, fails here with the file and the fact.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultMirrorDir } from "../../../e2e/harness/driver";
import { contractChart } from "../../../e2e/harness/mirror";
import { predecessorMoves } from "../../../e2e/harness/predecessor";
import { readRendered } from "../../../e2e/harness/rendered";
import { ENVIRONMENTS } from "../../../environments/registry";
import { covers, unitFacts, type Fact } from "../../../plan/needs";
import { allUnits, type HelmReleaseUnit, type Plan, type RemoteManifestUnit, type UnitContent } from "../../../plan/plan";
import { kindOffersOf } from "../../../platform/component";
import type { Contents } from "../../../platform/context";
import { readRenderedDir } from "../../../render/rendered";
import { chartArchive } from "../../../tools/chart-placement";
import { chartObjects, contentProblems, mirroredTexts, yamlObjects } from "../../../tools/unit-content";
import { planOf } from "../../helpers/plans";
import { REPO, SHIPPED_STACKS } from "../../helpers/stacks";

const MIRROR = defaultMirrorDir(REPO);
/** prod-large first: it installs the most; each chart and manifest is read once, with the values of the first stack that has it. */
const PLANS: [string, Plan][] = [...SHIPPED_STACKS].sort((a, b) => Number(b === "prod-large") - Number(a === "prod-large")).map((s) => [s, planOf(s)]);
const USES = new Set(PLANS.flatMap(([, p]) => allUnits(p).flatMap((u) => [...unitFacts(u).uses])));
const used = (offer: Fact) => [...USES].some((u) => covers(offer, u));
const COMPONENTS = [...new Set(Object.values(ENVIRONMENTS).flatMap((e) => e.platform))];
/** Every platform component's statements, by unit name. */
const ARTIFACTS = new Map<string, Contents>(COMPONENTS.flatMap((c) => Object.entries(c.artifacts ?? {})));
/** What objects of every platform component's kinds offer. */
const KINDS = kindOffersOf(COMPONENTS);
const RENDERS = new Map(SHIPPED_STACKS.map((s) => [s, readRenderedDir(path.join(REPO, "rendered", s))]));

/** The versions a unit's statements must cover: its pin, and the predecessor the mirror holds (the e2e's Renovate path deploys it first). */
function versionsOf(stack: string, u: HelmReleaseUnit | RemoteManifestUnit): string[] {
  const moves = predecessorMoves(readRendered(path.join(REPO, "rendered"), stack), MIRROR).moves;
  const move =
    u.kind === "HelmRelease"
      ? moves.find((m) => m.kind === "chart" && m.what === u.chart.chart)
      : moves.find((m) => m.kind === "manifest" && m.what === u.urls[0]);
  return [u.kind === "HelmRelease" ? u.chart.version : u.version, ...(move ? [move.to] : [])];
}

/** The platform's remote manifests and charts of the shipped stacks, once per unit and version. */
function platformCases() {
  const seen = new Set<string>();
  const cases: { name: string; stack: string; unit: HelmReleaseUnit | RemoteManifestUnit; version: string }[] = [];
  for (const [stack, plan] of PLANS) {
    for (const u of allUnits(plan)) {
      if (!(u.kind === "RemoteManifest" || (u.kind === "HelmRelease" && u.type.startsWith("openkeel:platform:")))) continue;
      for (const version of versionsOf(stack, u)) {
        const key = `${u.name} ${version}`;
        if (seen.has(key)) continue;
        seen.add(key);
        cases.push({ name: `${u.name} ${version} (${stack})`, stack, unit: u, version });
      }
    }
  }
  return cases;
}

function platformProblems(c: ReturnType<typeof platformCases>[number], stated: UnitContent | undefined): string[] {
  const { unit: u, version } = c;
  if (u.kind === "RemoteManifest") {
    const urls = u.urls.map((url) => url.replace(`/${u.version}/`, `/${version}/`));
    return contentProblems({
      where: `${u.name} ${version} (${urls.join(", ")})`,
      stated,
      objects: yamlObjects(...mirroredTexts(MIRROR, urls)),
      used,
      kinds: KINDS,
    });
  }
  const render = RENDERS.get(c.stack)!;
  const ru = render.units().find((x) => x.name === u.name)!;
  const objects = chartObjects({
    chart: chartArchive({ ...u.chart, version }, MIRROR),
    release: u.release,
    namespace: u.namespace,
    valuesFile: path.join(render.where, ru.values!),
  });
  const planReads = { values: u.values, patches: (u.postRender ?? []).map((p) => p.patch), release: { namespace: u.namespace, name: u.release } };
  return contentProblems({ where: `${u.name} ${version} (chart ${u.chart.chart}, stack ${c.stack}'s values)`, stated, objects, planReads, used, kinds: KINDS });
}

describe("what each platform chart and pinned manifest is stated to hold, at its pin and its predecessor, is what the mirror's files hold", () => {
  const cases = platformCases();

  it("covers every remote manifest and platform chart of the shipped stacks, each at its pin and at the predecessor the mirror holds", () => {
    const names = new Set(cases.map((c) => c.unit.name));
    expect([...names].sort()).toEqual([...ARTIFACTS.keys()].sort());
    // the e2e's Renovate path deploys the predecessors: one of the manifests moved there (OLM) held what the pin no longer does
    expect(cases.filter((c) => c.unit.name === "olm").map((c) => c.version)).toEqual(["v0.38.0", "v0.37.0"]);
  });

  it.each(cases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const contents = ARTIFACTS.get(c.unit.name);
    expect(Object.keys(contents ?? {})).toContain(c.version);
    // the unit states its table's entry for its version
    if (c.version === (c.unit.kind === "HelmRelease" ? c.unit.chart.version : c.unit.version)) expect(c.unit.content).toEqual(contents![c.version]);
    expect(platformProblems(c, contents![c.version])).toEqual([]);
  });
});

describe("a statement that is wrong about its file fails, naming the fact", () => {
  const olm = platformCases().find((c) => c.unit.name === "olm" && c.version === "v0.37.0")!;
  const stated = ARTIFACTS.get("olm")!["v0.37.0"];

  it("v0.37.0's olm.yaml holds cert-manager objects: a statement without them misses the use (the edge to cert-manager)", () => {
    const without = { ...stated, uses: stated.uses!.filter((u) => !u.startsWith("api cert-manager.io/")) };
    expect(platformProblems(olm, without)).toEqual([
      expect.stringMatching(/^olm v0\.37\.0 \(.*\): uses api cert-manager\.io\/Certificate, which its statement does not say$/),
      expect.stringMatching(/^olm v0\.37\.0 \(.*\): uses api cert-manager\.io\/Issuer, which its statement does not say$/),
    ]);
  });

  it("an offer another unit uses (medik8s-operators' Subscriptions) left out; a use the file does not have; an offer it does not make", () => {
    const wrong = {
      offers: [...stated.offers!.filter((o) => !o.endsWith("/Subscription")), "api operators.coreos.com/Nonexistent"],
      uses: [...stated.uses!, "storageclass fast"],
    };
    expect(platformProblems(olm, wrong)).toEqual([
      expect.stringMatching(/: its statement says it offers api operators\.coreos\.com\/Nonexistent, which it does not$/),
      expect.stringMatching(/: its statement says it uses storageclass fast, which it does not$/),
      expect.stringMatching(/: offers api operators\.coreos\.com\/Subscription, which a unit uses, and its statement does not say$/),
    ]);
  });
});

describe("what the OpenKeel releases are stated to hold is what their contract charts render (e2e/charts/, § 5.1–5.2)", () => {
  // as the e2e's mirror serves it: the shared § 5.2 helper is added when a chart is packaged
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "unit-content-"));
  const packaged = (chart: string) => {
    const file = path.join(dir, `${chart}.tgz`);
    if (!fs.existsSync(file)) fs.writeFileSync(file, contractChart(chart, "1.0.0"));
    return file;
  };
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const seen = new Set<string>();
  const cases = PLANS.flatMap(([stack, plan]) =>
    allUnits(plan)
      .filter(
        (u): u is HelmReleaseUnit => u.kind === "HelmRelease" && u.type.startsWith("openkeel:openkeel:") && !seen.has(u.name) && Boolean(seen.add(u.name)),
      )
      .map((u) => [`${u.name} (${stack}'s values)`, stack, u] as const),
  );

  it.each(cases)("%s", (_name, stack, u) => {
    const render = RENDERS.get(stack)!;
    const ru = render.units().find((x) => x.name === u.name)!;
    const objects = chartObjects({
      chart: packaged(u.chart.chart),
      release: u.release,
      namespace: u.namespace,
      valuesFile: path.join(render.where, ru.values!),
    });
    const planReads = { values: u.values, patches: (u.postRender ?? []).map((p) => p.patch), release: { namespace: u.namespace, name: u.release } };
    expect(contentProblems({ where: `${u.name} (contract chart, stack ${stack})`, stated: u.content, objects, planReads, used, kinds: KINDS })).toEqual([]);
  });
});
