// A service's own checks of a change reach the review through its descriptor (`changeFindings`,
// openkeel/service.ts): review/ asks every service of the registry and names none (issue 47).
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { openkeelService } from "../../openkeel/service";
import type { Index } from "../../review/preview-model";
import { serviceChangeFindings } from "../../review/release-findings";
import { REPO } from "../helpers/stacks";

/** What the hook reads of a side: its nodes and its feasibility facts (the rest of an Index is the preview's). */
const side = (nodes: Index["nodes"], feasibility: Index["feasibility"]) => ({ nodes, feasibility }) as Index;
const storage = (name: string, zone?: string): Index["nodes"][number] => ({ name, roles: ["storage"], ...(zone ? { zone } : {}) });

describe("a service's checks of a change (changeFindings of its descriptor)", () => {
  it("are asked of every service, in the registry's order, with both sides and what the change is judged against", () => {
    const asked: string[] = [];
    const hooked = (name: string) =>
      openkeelService({
        name,
        chart: `openkeel-${name}`,
        components: {},
        changeFindings: (before, after, where) => {
          asked.push(name);
          return [{ level: "warning", code: `${name}-moved`, message: `${before.nodes.length} → ${after.nodes.length} node(s) against ${where}`, fix: "none" }];
        },
      });
    const plain = openkeelService({ name: "plain", chart: "openkeel-plain", components: {} });
    const found = serviceChangeFindings(side([], undefined), side([storage("s-1")], undefined), "the base", [hooked("b"), plain, hooked("a")]);
    expect(found.map((f) => [f.code, f.message])).toEqual([
      ["b-moved", "0 → 1 node(s) against the base"],
      ["a-moved", "0 → 1 node(s) against the base"],
    ]);
    expect(asked).toEqual(["b", "a"]);
  });

  it("of the registry: Swift's, from its module (a member count that follows the storage nodes is refused; one the stack sets moves data)", () => {
    const nodes = [storage("s-1", "a"), storage("s-2", "b"), storage("s-3", "c")];
    const implicit = serviceChangeFindings(
      side(nodes, { swift: { members: 3 } }),
      side([...nodes, storage("s-4", "a")], { swift: { members: 4 } }),
      "the base",
    );
    expect(implicit.map((f) => [f.level, f.code])).toEqual([["error", "swift-members-implicit"]]);
    const set = serviceChangeFindings(side(nodes, { swift: { members: 3 } }), side(nodes, { swift: { members: 4, set: "stack" } }), "the base");
    expect(set.map((f) => [f.level, f.code, f.message.split(":")[0]])).toEqual([["warning", "swift-ring", "Swift's storage members"]]);
    // nothing changes for Swift: none
    expect(serviceChangeFindings(side(nodes, { swift: { members: 3 } }), side(nodes, { swift: { members: 3 } }), "the base")).toEqual([]);
  });

  it("no file of review/ imports one service's module: a service's checks are its descriptor's", () => {
    const dir = path.join(REPO, "review");
    const files = fs.readdirSync(dir).filter((f) => f.endsWith(".ts"));
    expect(files).toContain("release-findings.ts");
    expect(files.filter((f) => importsAService(fs.readFileSync(path.join(dir, f), "utf8")))).toEqual([]);
    // and the check trips, but not on the registry
    expect(importsAService('import { SWIFT_REPLICAS } from "../openkeel/services/swift";')).toBe(true);
    expect(importsAService('import { OPENKEEL_SERVICES } from "../openkeel/services";')).toBe(false);
  });
});

function importsAService(text: string): boolean {
  return /from "\.\.\/openkeel\/services\/(?!index")[^"]+"/.test(text);
}
