// Issue 40, item 1: an OpenKeel service is one module ending with its descriptor, listed once in
// the registry (openkeel/services/index.ts), with its contract chart: the three places
// docs/openkeel-values.md ("Adding a service") names; npm run docs writes its row of the releases'
// table from the descriptor (test/repository/docs-tables.test.ts). The type asks for what every
// service has; what a service names of another is a service it lists before it.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { api, worker } from "../../openkeel/components";
import { releaseName } from "../../openkeel/names";
import { openkeelService, type OpenKeelService } from "../../openkeel/service";
import { OPENKEEL_SERVICES } from "../../openkeel/services";
import { OPENKEEL_CHARTS } from "../../platform/versions";
import { REPO } from "../helpers/stacks";

const SERVICES: readonly OpenKeelService[] = OPENKEEL_SERVICES;
const read = (file: string) => fs.readFileSync(path.join(REPO, file), "utf8");
const DOCS = read("docs/openkeel-values.md");

describe("the registry", () => {
  it("lists each service once, each with a chart of its own, of the charts' release line", () => {
    const names = SERVICES.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(SERVICES.map((s) => s.chart)).size).toBe(names.length);
    for (const s of SERVICES) expect(s.chart.startsWith(OPENKEEL_CHARTS.prefix), s.chart).toBe(true);
    expect(SERVICES.filter((s) => s.identity).map((s) => s.name)).toEqual(["keystone"]);
  });

  it("a service extends, or waits for, only a service listed before it (install order)", () => {
    const before = (s: OpenKeelService) => SERVICES.slice(0, SERVICES.indexOf(s)).map((x) => x.name);
    const named = SERVICES.flatMap((s) => [...(s.extends ? [s.extends] : []), ...(s.waitsFor ?? []).map((w) => w.service)].map((other) => ({ s, other })));
    expect(named.filter(({ s, other }) => !before(s).includes(other)).map(({ s, other }) => `${s.name} → ${other}`)).toEqual([]);
    expect(named.map(({ s, other }) => `${s.name} → ${other}`)).toEqual(["nova → placement", "neutron-fwaas → neutron", "neutron-vpnaas → neutron"]);
  });

  it("a descriptor without a fact every service has does not compile", () => {
    const own = { name: "x", chart: "openkeel-x", components: { api: api(30990) } } as const;
    const { chart: _chart, ...noChart } = own;
    const { components: _components, ...noComponents } = own;
    // @ts-expect-error its chart
    openkeelService(noChart);
    // @ts-expect-error its components
    openkeelService(noComponents);
    // @ts-expect-error a chart of the OpenKeel charts' release line
    openkeelService({ ...own, chart: "nova" });
    // @ts-expect-error a public API names its NodePort in the lab
    openkeelService({ ...own, components: { api: { ...worker(), publicApi: {} } } });
    expect(openkeelService(own).name).toBe("x");
  });
});

/** The files "Adding a service" names, with `<service>` in their paths. */
function filesOfAddingAService(): string[] {
  const section = DOCS.slice(DOCS.indexOf("## Adding a service"), DOCS.indexOf("\n## ", DOCS.indexOf("## Adding a service") + 1));
  return [...section.matchAll(/^\d+\. `([^`]+)`/gm)].map((m) => m[1]);
}

describe("each service has the files docs/openkeel-values.md says adding one takes", () => {
  it("the docs name three: its module, its registry line, its contract chart", () => {
    expect(filesOfAddingAService()).toEqual(["openkeel/services/<service>.ts", "openkeel/services/index.ts", "e2e/charts/openkeel-<service>/"]);
  });

  it.each(SERVICES.map((s) => [s.name, s] as const))("%s: its module ends with its descriptor, and the registry imports it", (name, s) => {
    const module = read(`openkeel/services/${name}.ts`);
    const last = module.slice(module.lastIndexOf("\nexport const ") + 1);
    expect(last).toMatch(/^export const \w+ = openkeelService\(\{\n {2}name: /);
    // nothing after it: the lines that start a statement are its first and its last
    expect(last.split("\n").filter((line) => /^\S/.test(line))).toEqual([last.split("\n")[0], "});"]);
    expect(read("openkeel/services/index.ts")).toContain(`from "./${name}";`);
    expect(s.chart).toBe(releaseName(name));
  });

  it.each(SERVICES.map((s) => [s.chart] as const))("%s: its contract chart (the shared helper is added when the e2e packages it)", (chart) => {
    expect(read(`e2e/charts/${chart}/Chart.yaml`)).toMatch(new RegExp(`^name: ${chart}$`, "m"));
    expect(read(`e2e/charts/${chart}/templates/${chart}.yaml`)).toContain('include "openkeel.workload"');
  });
});
