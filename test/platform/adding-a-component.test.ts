// Issue 47: adding a platform component takes its module, its pin (platform/versions.ts), its
// upgrade rule (platform/upgrade-rules.ts) and its line in the environment that installs it. Here
// production's list gets one more component that no file of the program names
// (test/fixtures/example-component/, whose pin stays in the fixture), and the whole program takes
// it: every production stack plans, its unit is in the Plan in its phase, its workloads are placed
// and held to the § 2 matrix by its own design rows, docs/platform.md's table gets its row, and its
// module names no service.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { isError } from "../../config/problems";
import { planStack } from "../../environments";
import { environmentComponents } from "../../environments/registry";
import { talosProduction } from "../../environments/talos-production";
import { OPENKEEL_SERVICES } from "../../openkeel/services";
import { allUnits, phase } from "../../plan/plan";
import { generatedDoc, PLATFORM_TABLE } from "../../tools/docs-command";
import { example } from "../fixtures/example-component/example";
import { checkMatrix, designRows } from "../helpers/design-matrix";
import { serviceNames, tokens } from "../helpers/machinery-names";
import { PRODUCTION_STACKS, REPO, shippedConfig } from "../helpers/stacks";

vi.mock("../../environments/talos-production", async (importOriginal) => {
  const env = await importOriginal<typeof import("../../environments/talos-production")>();
  const { example } = await import("../fixtures/example-component/example");
  return { ...env, talosProduction: { ...env.talosProduction, platform: [...env.talosProduction.platform, example] } };
});

const MODULE = "test/fixtures/example-component/example.ts";

const planned = (stack: string) => {
  const cfg = shippedConfig(stack);
  return { cfg, result: planStack(cfg) };
};

const nodesWith = (stack: string, role: string) =>
  shippedConfig(stack)
    .nodes.filter((n) => n.roles.includes(role as never))
    .map((n) => n.name)
    .sort();

describe("a platform component added by its module and its environment's line", () => {
  it("is production's last platform component", () => {
    expect(talosProduction.platform.at(-1)).toBe(example);
    expect(environmentComponents()).toContain(example);
  });

  it.each(PRODUCTION_STACKS)("%s plans, with its unit in the platform phase and its namespace created first", (stack) => {
    const { result } = planned(stack);
    expect(result.problems.filter(isError)).toEqual([]);
    const plan = result.plan!;
    expect(phase(plan, "platform").units.map((u) => u.name)).toContain("example");
    expect(allUnits(plan).filter((u) => u.name === "example")).toHaveLength(1);
    const namespaces = phase(plan, "crds-operators").units.find((u) => u.name === "platform-namespaces");
    expect(namespaces?.kind === "Manifests" && namespaces.objects.map((o) => o.metadata.name)).toContain("example-system");
  });

  it.each(PRODUCTION_STACKS)("%s places its controller on the control plane and its agent on the compute nodes", (stack) => {
    const placed = planned(stack).result.placement!.placements.filter((p) => p.component.unit === "example");
    expect(placed.map((p) => p.component.name)).toEqual(["example/example-controller", "example/example-agent"]);
    expect([...placed[0].eligible].sort()).toEqual(nodesWith(stack, "controlPlane"));
    expect([...placed[1].eligible].sort()).toEqual(nodesWith(stack, "compute"));
  });

  it.each(PRODUCTION_STACKS)("%s: its workloads pass the § 2 matrix by its own design rows, and fail it without them", (stack) => {
    const { cfg, result } = planned(stack);
    const report = result.placement!;
    expect(report.checks).toEqual([]);
    checkMatrix(cfg, report, expect);
    const without = designRows(environmentComponents().map((c) => (c === example ? { ...c, design: [] } : c)));
    expect(() => checkMatrix(cfg, report, expect, without)).toThrow("no § 2 row for example/example-controller");
  });

  it("has its row in docs/platform.md's table, after the last of production's other components", () => {
    const text = fs.readFileSync(path.join(REPO, "docs/platform.md"), "utf8");
    const written = generatedDoc(PLATFORM_TABLE, text).split("\n");
    const row = `| Example | ${Object.values(example.docs![0]).slice(1).join(" | ")} |`;
    expect(written.filter((l) => !text.split("\n").includes(l))).toEqual([row]);
    expect(written[written.indexOf(row) - 1]).toMatch(/^\| MetalLB \|/);
  });

  it("names no service in its module, as the names test asks of a component's module", () => {
    const services = serviceNames(OPENKEEL_SERVICES);
    const named = (text: string) => services.filter((n) => tokens(MODULE, text).some(n.in)).map((n) => n.name);
    const text = fs.readFileSync(path.join(REPO, MODULE), "utf8");
    expect(named(text)).toEqual([]);
    // the same module with the compute agent named after the service beside it would break the rule
    expect(named(text.replace('"example-agent"', '"nova-example-agent"'))).toEqual(["nova"]);
  });
});
