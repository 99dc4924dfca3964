// The rendered output as one typed, versioned model (render/rendered.ts): what renderPlan writes
// reads back as the same typed data (index, placement data, Talos machines); placement.md and
// placement.svg are functions of placement.json alone; a render from before the model (no
// schemaVersion, no placement.json) still reads, and the preview says why it shows no placement
// delta; a newer or broken render is refused with a message naming the file and the key.
import { describe, expect, it } from "vitest";
import { planStack } from "../../environments";
import { placementData } from "../../placement/data";
import { placementMarkdown, placementSvg } from "../../placement/picture";
import {
  INDEX_FILE,
  PLACEMENT_DATA_FILE,
  readIndex,
  readPlacement,
  RENDERED_SCHEMA_VERSION,
  RenderedStack,
  renderedIndex,
  renderPlan,
  TALOS_MACHINES_FILE,
} from "../../render/rendered";
import { previewStack } from "../../review/preview";
import type { Tree } from "../../review/preview-model";
import { stackMarkdown } from "../../review/preview-markdown";
import { mutatedConfig, shippedConfig, SHIPPED_STACKS } from "../helpers/stacks";

function rendered(cfg = shippedConfig("prod-medium")) {
  const r = planStack(cfg);
  if (!r.plan || !r.placement) throw new Error(`${cfg.stack} does not plan`);
  const files: Tree = new Map(renderPlan(r.plan, r.placement).map((f) => [f.path, f.content]));
  return { plan: r.plan, report: r.placement, files, model: new RenderedStack(files, `rendered/${cfg.stack}`) };
}

/** What a value is once written as YAML or JSON: undefined fields gone. */
const asWritten = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

describe("write → read gives the same typed data", () => {
  for (const stack of SHIPPED_STACKS) {
    it(`${stack}: index, placement data, Talos machines; placement.md and placement.svg from placement.json alone`, () => {
      const { plan, report, files, model } = rendered(shippedConfig(stack));
      expect(model.index).toEqual(asWritten(renderedIndex(plan)));
      expect(model.schemaVersion).toBe(RENDERED_SCHEMA_VERSION);
      expect(model.placement).toEqual(asWritten(placementData(report)));
      expect(placementMarkdown(model.placement!)).toBe(files.get("placement.md"));
      expect(placementSvg(model.placement!)).toBe(files.get("placement.svg"));
      const machinesFile = plan.nodeConfig?.files.find((f) => f.path === TALOS_MACHINES_FILE);
      expect(model.talosMachines()).toEqual(machinesFile ? (machinesFile.documents[0] as { machines: unknown }).machines : {});
      expect(model.units().map((u) => u.name)).toEqual(plan.phases.flatMap((p) => p.units.map((u) => u.name)));
    });
  }

  it("placement.json holds one line per node and per component, so a diff of rendered/ shows what changed", () => {
    const { files, model } = rendered();
    const lines = files.get(PLACEMENT_DATA_FILE)!.split("\n");
    expect(lines.filter((l) => l.startsWith('    {"name":')).length).toBe(model.placement!.nodes.length + model.placement!.components.length);
  });

  it("placement.json writes a reason once for the nodes that share it, and reads back each node's reasons in node order", () => {
    const { report, files, model } = rendered();
    const data = placementData(report);
    const written = JSON.parse(files.get(PLACEMENT_DATA_FILE)!) as { components: { name: string; reasons: { why: string[]; nodes: string[] }[] }[] };
    const api = written.components.find((c) => c.name === "openkeel-nova/api")!;
    const perNode = data.components.find((c) => c.name === "openkeel-nova/api")!.reasons;
    // six nodes it cannot run on for three reasons: each reason written once, with its nodes
    expect(Object.keys(perNode)).toHaveLength(6);
    expect(api.reasons.map((g) => g.nodes.length)).toEqual([3, 2, 1]);
    expect(Object.fromEntries(api.reasons.flatMap((g) => g.nodes.map((n) => [n, g.why])))).toEqual(perNode);
    for (const c of model.placement!.components) {
      const expected = data.components.find((d) => d.name === c.name)!.reasons;
      expect(Object.entries(c.reasons)).toEqual(Object.entries(expected));
    }
  });

  it("a placement.json of schema 2 (reasons per node) reads as the same data", () => {
    const { report, files } = rendered();
    const data = placementData(report);
    const text = files.get(PLACEMENT_DATA_FILE)!;
    const perNode = JSON.parse(text) as { components: { reasons: unknown }[] };
    perNode.components.forEach((c, i) => (c.reasons = data.components[i]!.reasons));
    expect(readPlacement(JSON.stringify(perNode), "rendered/prod-medium/placement.json")).toEqual(asWritten(data));
    expect(readPlacement(text, "rendered/prod-medium/placement.json")).toEqual(asWritten(data));
  });
});

/** A render as the code before the model wrote it: no schemaVersion in index.yaml, no placement.json. */
function beforeTheModel(files: Tree): Tree {
  const old = new Map(files);
  old.delete(PLACEMENT_DATA_FILE);
  old.set(INDEX_FILE, files.get(INDEX_FILE)!.replace(/^schemaVersion: \d+\n/m, ""));
  return old;
}

describe("a render from before the model (the preview's base, rendered with the base's own code)", () => {
  const before = rendered();
  // one more compute node, a copy of cmp-01
  const after = rendered(
    mutatedConfig("prod-medium", (raw) =>
      raw.nodes.push({ ...raw.nodes.find((n: { name: string }) => n.name === "cmp-01"), name: "cmp-04", internalIP: "10.30.1.14" }),
    ),
  );
  const old = beforeTheModel(before.files);

  it("reads as schema 0, without placement data", () => {
    const model = new RenderedStack(old, "the base");
    expect(model.schemaVersion).toBe(0);
    expect(model.placement).toBeUndefined();
    expect(model.index.nodes).toEqual(before.model.index.nodes);
  });

  it("the preview shows no placement delta and says why; placement.md is compared line by line", () => {
    const p = previewStack("prod-medium", old, after.files);
    expect(p.placement).toBeUndefined();
    expect(p.placementNote).toBe("No placement delta: the base (render schema 0) has no placement.json, so placement.md is compared line by line below");
    expect(p.other.find((f) => f.file === "placement.md")?.lines?.length).toBeGreaterThan(0);
    expect(p.other.find((f) => f.file === "placement.json")).toEqual({ file: "placement.json", op: "add" });
    expect(p.settings).toEqual([]);
    expect(stackMarkdown(p)).toContain("#### Placement\n\nNo placement delta: the base (render schema 0) has no placement.json");
    // with placement data on both sides: the delta, and neither placement.json nor placement.md listed
    const both = previewStack("prod-medium", before.files, after.files);
    expect(both.placement?.nodes.map((n) => n.node)).toEqual(["cmp-04"]);
    expect(both.placementNote).toBeUndefined();
    expect(both.other.map((f) => f.file)).not.toEqual(expect.arrayContaining(["placement.json"]));
  });
});

describe("a render this code cannot read is refused, naming the file, the key and the way out", () => {
  const { files } = rendered();
  const index = files.get(INDEX_FILE)!;

  it("a newer schema", () => {
    expect(() => readIndex(index.replace(/^schemaVersion: \d+$/m, "schemaVersion: 99"), "base/index.yaml")).toThrow(
      `base/index.yaml: schemaVersion 99 is newer than this code reads (${RENDERED_SCHEMA_VERSION}). Fix: read it with the code that wrote it, or bring this checkout up to date (git rebase onto it)`,
    );
  });

  it("a unit of an unknown kind, a node of an unknown state, broken JSON", () => {
    expect(() => readIndex(index.replace("kind: HelmRelease", "kind: Chart"), "i.yaml")).toThrow(
      /^i\.yaml: phases\[\d+\]\.units\[\d+\]\.kind: .*not what this repository's render writes\. Fix: render it again/,
    );
    expect(() => readIndex(index.replace("state: active", "state: asleep"), "i.yaml")).toThrow(/^i\.yaml: nodes\[0\]\.state: /);
    expect(() => readPlacement("{", "p.json")).toThrow(/^p\.json: is not JSON \(.*\)\. Fix: render it again/);
  });
});
