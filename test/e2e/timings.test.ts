// What a pulumi up waited on, from the engine's event log (e2e/harness/timings.ts).
import { describe, expect, it } from "vitest";
import { deployedGraph, deployTimings, longestChain, resourceSteps } from "../../e2e/harness/timings";

const urn = (type: string, name: string) => `urn:pulumi:s::openkeel::${type}::${name}`;
const ev = (
  timestamp: number,
  kind: "resourcePreEvent" | "resOutputsEvent" | "resOpFailedEvent",
  type: string,
  name: string,
  parent?: string,
  planning = false,
  op = "create",
) =>
  JSON.stringify({
    timestamp,
    [kind]: { metadata: { op, urn: urn(type, name), type, new: parent ? { parent } : undefined }, ...(planning ? { planning } : {}) },
  });

const A = "openkeel:platform:A";
const index = {
  phases: [
    {
      name: "one",
      units: [
        { name: "a", type: A, kind: "Manifests" },
        { name: "b", type: A, kind: "Manifests" },
      ],
    },
    {
      name: "two",
      units: [
        { name: "c", type: A, kind: "Manifests" },
        { name: "d", type: A, kind: "Manifests", dependsOn: ["c"] },
      ],
    },
  ],
} as never;

describe("deploy timings from the engine's event log", () => {
  const log = [
    // the preview's events are left out
    ev(1, "resourcePreEvent", "kubernetes:core/v1:ConfigMap", "a:x", urn(A, "a"), true),
    ev(10, "resourcePreEvent", A, "a"),
    ev(10, "resourcePreEvent", "kubernetes:core/v1:ConfigMap", "a:x", urn(A, "a")),
    ev(14, "resOutputsEvent", "kubernetes:core/v1:ConfigMap", "a:x", urn(A, "a")),
    ev(10, "resourcePreEvent", A, "b"),
    ev(10, "resourcePreEvent", "kubernetes:helm.sh/v3:Release", "b", urn(A, "b")),
    ev(30, "resOutputsEvent", "kubernetes:helm.sh/v3:Release", "b", urn(A, "b")),
    ev(30, "resourcePreEvent", A, "c"),
    ev(31, "resourcePreEvent", "kubernetes:core/v1:ConfigMap", "c:y", urn(A, "c")),
    ev(33, "resOutputsEvent", "kubernetes:core/v1:ConfigMap", "c:y", urn(A, "c")),
    ev(33, "resourcePreEvent", A, "d"),
    ev(33, "resourcePreEvent", "kubernetes:yaml/v2:ConfigFile", "d", urn(A, "d")),
    ev(34, "resourcePreEvent", "kubernetes:apps/v1:Deployment", "d-dep", urn("kubernetes:yaml/v2:ConfigFile", "d")),
    ev(45, "resOpFailedEvent", "kubernetes:apps/v1:Deployment", "d-dep", urn("kubernetes:yaml/v2:ConfigFile", "d")),
  ].join("\n");

  it("times each unit (its resources, nested ones included), phase and Helm release of the update, and the longest chain", () => {
    const steps = resourceSteps(log);
    expect(steps.find((s) => s.urn.endsWith("a:x"))).toMatchObject({ start: 10, end: 14 });
    expect(steps.find((s) => s.urn.endsWith("d-dep"))).toMatchObject({ start: 34, end: 45, failed: true });
    const t = deployTimings(steps, index, "phase-barriers");
    expect(t.units.map((u) => [u.name, u.phase, u.seconds])).toEqual([
      ["a", "one", 4],
      ["b", "one", 20],
      ["c", "two", 2],
      ["d", "two", 12],
    ]);
    expect(t.phases.map((p) => [p.name, p.seconds])).toEqual([
      ["one", 20],
      ["two", 14],
    ]);
    expect(t.releases).toEqual([{ name: "b", start: 10, end: 30, seconds: 20, op: "create" }]);
    expect(t.seconds).toBe(35);
    // b (20) → c (2) → d (12): under the bench's phase barriers every unit of phase two waits for the whole of phase one
    // b starts at 10, d ends at 45: the chain spans 35 of the update's 35 s
    expect(t.chain).toEqual({ units: ["b", "c", "d"], seconds: 34, span: 35, share: 1 });
    // the program's own graph: d waits for c only, so the longest chain is b alone (20 s) against c → d (14 s)
    expect(deployTimings(steps, index).chain).toEqual({ units: ["b"], seconds: 20, span: 20, share: 20 / 35 });
  });

  it("the graph a render's program deployed with: its index's, the bench's switch over it; a render before issue 46 says none: phase barriers", () => {
    expect(deployedGraph({ deployGraph: "dependencies" }, undefined)).toBe("dependencies");
    expect(deployedGraph({ deployGraph: "dependencies" }, "phase-barriers")).toBe("phase-barriers");
    expect(deployedGraph({}, undefined)).toBe("phase-barriers");
    // the last release's program reads no switch: it always waited for the phase before
    expect(deployedGraph({}, "dependencies")).toBe("phase-barriers");
  });

  it("a unit with no time of its own adds nothing; under phase barriers its dependants still wait for the phase before", () => {
    const seconds = new Map([
      ["a", 5],
      ["d", 3],
    ]);
    expect(longestChain(index, seconds, 10, "phase-barriers")).toEqual({ units: ["a", "d"], seconds: 8, share: 0.8 });
    // by its dependencies d waits for c alone: a's five seconds are off its chain
    expect(longestChain(index, seconds, 10)).toEqual({ units: ["a"], seconds: 5, share: 0.5 });
  });
});
