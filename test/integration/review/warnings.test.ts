// Warnings once per run, matched by what they mean (issue 38): a plan-check warning that several
// stacks share (same code, reason and fix) prints once, naming each stack's own part, in render, plan
// and policy; the preview pairs a base's and a head's warning by code and subject (the key path,
// a node's index read as its name), so a changed warning is "changed", not new and resolved.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { capture, type CommandResult } from "../../../cli/cli";
import { warningLines, type StackWarning } from "../../../cli/warnings";
import type { Check } from "../../../config/problems";
import { planCommand } from "../../../pipeline/plan-command";
import { renderCommand } from "../../../pipeline/render-command";
import type { RenderedWarning } from "../../../render/rendered";
import { stackMarkdown } from "../../../review/preview-markdown";
import type { StackPreview } from "../../../review/preview-model";
import { warningChanges } from "../../../review/preview-warnings";

const warning = (over: Partial<Check> = {}): Check => ({
  level: "warning",
  code: "ovs-two-stacks",
  path: "openkeel:nodes",
  message: "3 node(s) run both",
  reason: "the design's open question",
  fix: "decide § 7 Q1",
  ...over,
});
const on = (stack: string, w: Check): StackWarning => ({ stack, file: `stacks/Pulumi.${stack}.yaml`, warning: w });

describe("warningLines: each meaning once for a run", () => {
  it("the same warning on four stacks: one block naming the stacks, each stack's own part below it", () => {
    const lines = warningLines(["a", "b", "c", "d"].map((s, i) => on(s, warning({ message: `${i + 1} node(s) run both` }))));
    expect(lines).toEqual([
      "warning [ovs-two-stacks] in 4 stacks (a, b, c, d): the design's open question. Fix: decide § 7 Q1",
      "  stacks/Pulumi.a.yaml: openkeel:nodes: 1 node(s) run both",
      "  stacks/Pulumi.b.yaml: openkeel:nodes: 2 node(s) run both",
      "  stacks/Pulumi.c.yaml: openkeel:nodes: 3 node(s) run both",
      "  stacks/Pulumi.d.yaml: openkeel:nodes: 4 node(s) run both",
    ]);
  });

  it("another reason or fix is another warning; a warning of one stack is its usual line, with why", () => {
    const lines = warningLines([
      on("a", warning()),
      on("b", warning({ fix: "something else" })),
      on("c", warning({ code: "zone-missing", reason: undefined, fix: "set zone:" })),
    ]);
    expect(lines).toEqual([
      "stacks/Pulumi.a.yaml: openkeel:nodes: warning [ovs-two-stacks]: 3 node(s) run both. Why: the design's open question. Fix: decide § 7 Q1",
      "stacks/Pulumi.b.yaml: openkeel:nodes: warning [ovs-two-stacks]: 3 node(s) run both. Why: the design's open question. Fix: something else",
      "stacks/Pulumi.c.yaml: openkeel:nodes: warning [zone-missing]: 3 node(s) run both. Fix: set zone:",
    ]);
  });
});

describe("the commands print a shared warning once", () => {
  const REASON = /how two OVS\/OVN stacks share a node/g;
  let out: string;
  let render: CommandResult;
  let plan: CommandResult;
  beforeAll(async () => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-warnings-"));
    [render, plan] = [await capture(renderCommand, ["--out", out]), await capture(planCommand, [])];
  });
  afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

  it.each([
    ["render", () => render],
    ["plan", () => plan],
  ])("npm run %s of the shipped stacks: ovs-two-stacks's reason once, naming the three production stacks and their nodes", (_, result) => {
    const r = result();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.match(REASON)).toHaveLength(1);
    expect(r.stdout).toMatch(
      /^warning \[ovs-two-stacks\] in 3 stacks \(prod-large, prod-medium, prod-small\): how two OVS\/OVN stacks .*\. Fix: decide § 7 Q1/m,
    );
    expect(r.stdout).toMatch(/^ {2}stacks\/Pulumi\.prod-medium\.yaml: openkeel:nodes: 5 node\(s\) run both .*: cmp-01, cmp-02, cmp-03, net-1, net-2$/m);
  });
});

describe("the preview matches warnings by code and subject", () => {
  const w = (over: Partial<RenderedWarning> = {}): RenderedWarning => ({
    code: "ovs-two-stacks",
    path: "openkeel:nodes",
    message: "5 node(s) run both",
    reason: "the open question",
    remediation: "decide",
    ...over,
  });
  const nodes = (...names: string[]) => names.map((name) => ({ name }));

  it("a warning whose text changed is changed (old → new), not new and resolved; one unchanged is neither", () => {
    const kept = w({ code: "storage-recommended", message: "no storage node" });
    const c = warningChanges({ warnings: [w(), kept], nodes: nodes("a") }, { warnings: [kept, w({ message: "6 node(s) run both" })], nodes: nodes("a", "b") });
    expect(c).toEqual({ added: [], resolved: [], changed: [{ before: w(), after: w({ message: "6 node(s) run both" }) }] });
  });

  it("a node's warning stays that node's when a node is added before it (its index moves)", () => {
    const base = { warnings: [w({ code: "lab-node-state", path: "openkeel:nodes[0].state", message: "x on the lab" })], nodes: nodes("x") };
    const head = { warnings: [w({ code: "lab-node-state", path: "openkeel:nodes[1].state", message: "x on the lab!" })], nodes: nodes("new", "x") };
    expect(warningChanges(base, head).changed.map((c) => [c.before.path, c.after.path])).toEqual([["openkeel:nodes[0].state", "openkeel:nodes[1].state"]]);
    // the same index about another node is another warning
    const other = { warnings: [w({ code: "lab-node-state", path: "openkeel:nodes[0].state", message: "y on the lab" })], nodes: nodes("y") };
    const c = warningChanges(base, other);
    expect([c.added.length, c.resolved.length, c.changed.length]).toEqual([1, 1, 0]);
  });

  it("a base rendered before warnings had a path: the one warning of a code on each side is that warning; two are not guessed at", () => {
    const { path: _p, ...old } = w();
    expect(warningChanges({ warnings: [old], nodes: [] }, { warnings: [w({ message: "6 node(s) run both" })], nodes: [] }).changed).toHaveLength(1);
    const two = warningChanges({ warnings: [old, { ...old, message: "other" }], nodes: [] }, { warnings: [w({ message: "6 node(s) run both" })], nodes: [] });
    expect([two.added.length, two.resolved.length, two.changed.length]).toEqual([1, 2, 0]);
  });

  it("the Markdown shows a changed warning as one line, what changed old → new, counted once", () => {
    const p = {
      stack: "s",
      status: "changed",
      title: "t",
      judged: "the base",
      settings: [],
      upgrades: [],
      actions: [],
      findings: [],
      objects: { added: [], removed: [], changed: [] },
      values: [],
      units: [],
      nodes: [],
      warnings: { added: [], resolved: [], changed: [{ before: w(), after: w({ message: "6 node(s) run both" }) }] },
      other: [],
    } satisfies StackPreview;
    const md = stackMarkdown(p);
    expect(md).toContain("- changed plan-check warning **ovs-two-stacks** (`openkeel:nodes`): 5 node(s) run both → 6 node(s) run both\n");
    expect(md).not.toContain("resolved");
    expect(md).not.toContain("new plan-check warning");
  });
});
