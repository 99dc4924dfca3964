// Issue 40, item 1: adding an OpenKeel service takes its module and its registry line (then its
// contract chart, which test/openkeel/openkeel-services.test.ts asks for). Here the registry gets one
// more line, for a service no file of the program names (test/fixtures/example-service/), and the
// whole program takes it: the stack's keys, its release, its values contract, its placement and the
// § 2 matrix by its own design rows, its post-render patch, its NodePort in the lab, its row of the
// releases' table (npm run docs).
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { isError } from "../../config/problems";
import { planStack } from "../../environments";
import { LAB_EXAMPLE_BLOCK, LAB_NODE_PORTS } from "../../openkeel/endpoints";
import { labApiNodePorts, serviceOfRelease } from "../../openkeel/registry";
import { OPENKEEL_SERVICES } from "../../openkeel/services";
import { example } from "../fixtures/example-service/example";
import { checkMatrix, designRows } from "../helpers/design-matrix";
import { planOf, release, valuesOf } from "../helpers/plans";
import { configProblems, mutatedConfig, REPO } from "../helpers/stacks";
import { generatedDoc, RELEASES_TABLE } from "../../tools/docs-command";

vi.mock("../../openkeel/services", async (importOriginal) => {
  const registry = await importOriginal<typeof import("../../openkeel/services")>();
  const { example } = await import("../fixtures/example-service/example");
  return { OPENKEEL_SERVICES: [...registry.OPENKEEL_SERVICES, example] };
});

/** The real registry: what comes before the example's line. */
const REAL = OPENKEEL_SERVICES.slice(0, -1);

/** A shipped stack that configures the example service (its block, and its chart's version). */
const withExample = (stack: string, block: Record<string, unknown> = {}) =>
  mutatedConfig(stack, (raw) => {
    raw.services = { ...raw.services, example: block };
    raw.charts = { ...raw.charts, versions: { ...raw.charts?.versions, example: "1.2.3" } };
  });

describe("a service added by its module and its registry line", () => {
  it("is the registry's last service", () => {
    expect(OPENKEEL_SERVICES.map((s) => s.name).at(-1)).toBe("example");
  });

  it("has its keys in the stack: its block and its chart's version; a misspelt name is refused, naming it", () => {
    expect(withExample("prod-medium", { replicas: { api: 4 } }).services.example?.replicas).toEqual({ api: 4 });
    const [problem] = configProblems("prod-medium", (raw) => (raw.services = { exampel: {} }));
    expect(problem).toMatchObject({ path: "openkeel:services.exampel", message: "unknown key" });
    expect(problem.fix).toBe(`did you mean 'example'? the OpenKeel services are ${[...REAL.map((s) => s.name), "example"].join(", ")}`);
  });

  it("is installed after Keystone, from its chart at the version the stack pins, its values passing the contract", () => {
    const plan = planOf(withExample("prod-medium", { replicas: { api: 4 } }));
    const u = release(plan, "openkeel-example");
    expect(u.chart).toEqual({ repository: "oci://registry.openkeel.io/charts", chart: "openkeel-example", version: "1.2.3" });
    // the identity service, by hand (no object shows it); the rest from what its values use
    expect(u.waitsFor?.map((w) => w.unit)).toEqual(["openkeel-keystone"]);
    expect(u.dependsOn).toEqual(expect.arrayContaining(["openkeel-keystone", "openkeel-namespace"]));
    expect(u.namespace).toBe("openkeel");
    expect(u.values.placement).toEqual({ api: { role: "controlPlane" } });
    expect(u.values.api).toEqual({ replicas: 4 });
    expect(u.values.worker).toEqual({ replicas: 2 });
    expect(serviceOfRelease("openkeel-example")).toBe("example");
  });

  it("is refused where the stack breaks its values contract or its replica rules, naming the stack key", () => {
    const errors = (block: Record<string, unknown>) =>
      planStack(withExample("prod-medium", block))
        .problems.filter(isError)
        .map((p) => `${p.path}: ${p.message}`);
    expect(errors({ replicas: { api: 2 } })).toEqual([
      expect.stringMatching(
        /^openkeel:services\.example\.replicas\.api: release openkeel-example \(service example\), values key api\.replicas: 2 replica\(s\) of the example API/,
      ),
    ]);
    const problems = errors({ values: { worker: { nodeSelector: {} } } });
    expect(problems).toEqual([
      expect.stringMatching(
        /^openkeel:services\.example\.values\.worker\.nodeSelector: release openkeel-example \(service example\), values key worker\.nodeSelector: /,
      ),
    ]);
  });

  it("is placed: its API by the chart helper, its worker by the post-render patch of its release, both on the control plane", () => {
    const r = planStack(withExample("prod-medium"));
    expect(r.problems.filter(isError)).toEqual([]);
    const placed = r.placement!.placements.filter((p) => p.component.unit === "openkeel-example");
    expect(placed.map((p) => p.component.name)).toEqual(["openkeel-example/api", "openkeel-example/worker"]);
    for (const p of placed) expect(p.eligible, p.component.name).toEqual(["cp-1", "cp-2", "cp-3"]);
    expect(release(r.plan!, "openkeel-example").postRender?.map((p) => p.target)).toEqual([{ kind: "Deployment", name: "openkeel-example-worker" }]);
  });

  // (prod-small's three nodes carry every role: a wrong row reaches the same nodes there)
  it.each(["prod-medium", "prod-large"])(
    "%s: its workloads pass the § 2 matrix by its descriptor's design rows (the design does not list it), and fail it without them or with a wrong one",
    (stack) => {
      const cfg = withExample(stack);
      const report = planStack(cfg).placement!;
      checkMatrix(cfg, report, expect);
      expect(() => checkMatrix(cfg, report, expect, designRows(undefined, REAL))).toThrow("no § 2 row for openkeel-example/api");
      const onCompute = { ...example.components.worker, design: { kind: "Deployment" as const, roles: ["compute" as const] } };
      const wrong = designRows(undefined, [...REAL, { ...example, components: { ...example.components, worker: onCompute } }]);
      expect(() => checkMatrix(cfg, report, expect, wrong)).toThrow("openkeel-example/worker");
    },
  );

  it("has its API on its NodePort in the lab, among the lab's: the last block, which no real service takes", () => {
    const plan = planOf(withExample("lab"));
    expect(valuesOf(plan, "openkeel-example").api.service).toEqual({ type: "NodePort", nodePort: LAB_EXAMPLE_BLOCK });
    expect(labApiNodePorts().at(-1)).toEqual({ release: "openkeel-example", path: ["api", "service", "nodePort"], port: LAB_EXAMPLE_BLOCK });
    // the next real service, in the next block of ten after the registry's, finds it free
    const next = LAB_NODE_PORTS.first + REAL.length * 10;
    expect(labApiNodePorts().filter((u) => u.port >= next && u.release !== "openkeel-example")).toEqual([]);
    expect(next).toBeLessThan(LAB_EXAMPLE_BLOCK);
  });

  it("has its row in the releases' table npm run docs writes, the last, from its descriptor alone", () => {
    const text = fs.readFileSync(path.join(REPO, RELEASES_TABLE.file), "utf8");
    const written = generatedDoc(RELEASES_TABLE, text).split("\n");
    const row = "| `openkeel-example` | `api` (controlPlane); `worker` (controlPlane; a post-render patch, below) | | `api`: 30990 |";
    expect(written.filter((l) => !text.split("\n").includes(l))).toEqual([row]);
    expect(written[written.indexOf(row) - 1]).toMatch(new RegExp(`^\\| \`openkeel-${REAL.at(-1)!.name}\` \\|`));
  });

  it("is the module docs/openkeel-values.md shows, word for word", () => {
    const docs = fs.readFileSync(path.join(REPO, "docs/openkeel-values.md"), "utf8");
    const module = fs.readFileSync(path.join(REPO, "test/fixtures/example-service/example.ts"), "utf8");
    // the docs show it inside a list item: indented, and with the imports a module of openkeel/services/ has
    const shown = /## Adding a service[\s\S]*?\n( *)```ts\n([\s\S]*?)\n *```/.exec(docs);
    const [, indent, code] = shown ?? ["", "", ""];
    const dedented = code.replace(new RegExp(`^${indent}`, "gm"), "");
    const body = (text: string) => text.slice(text.indexOf("export const")).trimEnd();
    expect(body(dedented)).toBe(body(module));
    expect(dedented).toContain('from "../components"');
  });
});
