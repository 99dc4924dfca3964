// Changes to a running quorum's spread (issue 39, item 5): a zone rule the members' current nodes
// cannot satisfy is refused by the render (against the committed render) and the preview (against
// the base), with the staged procedure; the procedure itself passes, stage by stage.
import * as path from "node:path";
import { stringify } from "yaml";
import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { capture } from "../../cli/cli";
import { quorumMoveChecks } from "../../openkeel/quorum-moves";
import { renderCommand } from "../../pipeline/render-command";
import { previewStack } from "../../review/preview";
import { readTree } from "../../cli/write";
import { planOf } from "../helpers/plans";
import { PROJECT_KEY } from "../helpers/lifecycle";
import { mutatedConfig, shippedRaw, tempStacks, renderTree } from "../helpers/stacks";

const node = (raw: any, name: string) => raw.nodes.find((n: any) => n.name === name);
const moveOkCp2 = (raw: any) => (node(raw, "ok-cp-2").zone = "zone-b");
const cordon =
  (...names: string[]) =>
  (raw: any) =>
    names.forEach((n) => (node(raw, n).state = "cordoned"));

function edited(...edits: ((raw: any) => void)[]): Record<string, unknown> {
  const raw = structuredClone(shippedRaw("prod-large")) as any;
  for (const e of edits) e(raw);
  return raw;
}

describe("a controlPlane node moved to another zone (prod-large)", () => {
  it("is refused by the render, naming the members that would share a zone and the staged procedure; the staged procedure passes", async () => {
    const dir = tempStacks({ s: edited() });
    const out = path.join(dir, "out");
    const next = (raw: Record<string, unknown>) => {
      fs.writeFileSync(path.join(dir, "Pulumi.s.yaml"), stringify({ config: PROJECT_KEY(raw) }));
      return capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    };
    expect((await capture(renderCommand, ["--stacks-dir", dir, "--out", out])).code).toBe(0);
    const before = readTree(out);
    const refused = await next(edited(moveOkCp2));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("error [quorum-zone-move]: this change moves 'ok-cp-2' to another zone, while ");
    expect(refused.stderr).toContain(
      "out/s may run two of the 3 members of Galera, RabbitMQ and OVN central on 'ok-cp-2' and 'ok-cp-3', which would then share zone zone-b",
    );
    expect(refused.stderr).toContain(
      "Fix: stage it, each step its own change, merged and deployed: 1. set state: cordoned on 'ok-cp-3', 'ok-cp-4' and 'ok-cp-6'; 2. move the members",
    );
    expect(refused.stderr).toContain("kubectl -n openkeel get pods -l app.kubernetes.io/instance=openkeel-chart-mariadb -o wide");
    expect(readTree(out)).toEqual(before);
    // the stages, each rendered against the one before
    expect((await next(edited(cordon("ok-cp-3", "ok-cp-4", "ok-cp-6")))).code).toBe(0);
    expect((await next(edited(cordon("ok-cp-3", "ok-cp-4", "ok-cp-6"), moveOkCp2))).code).toBe(0);
    expect((await next(edited(moveOkCp2))).code).toBe(0);
  });

  it("the preview says it against the base, as an error; a zone move of a node that holds no member is not one", () => {
    const base = renderTree(mutatedConfig("prod-large", () => {}));
    const p = previewStack("prod-large", base, renderTree(mutatedConfig("prod-large", moveOkCp2)));
    const found = p.findings.filter((f) => f.code === "quorum-zone-move");
    expect(found.map((f) => [f.level, f.message.slice(0, 63)])).toEqual([["error", "this change moves 'ok-cp-2' to another zone, while the base may"]]);
    expect(found[0].reason).toMatch(/the strict-local PV of each \(D5\) binds it to the node/);
    const compute = previewStack("prod-large", base, renderTree(mutatedConfig("prod-large", (raw) => (node(raw, "cmp-a-01").zone = "zone-b"))));
    expect(compute.findings.filter((f) => f.code === "quorum-zone-move")).toEqual([]);
  });

  it("a maintenance does not count as emptied: the member waits there for its node", () => {
    const head = planOf("prod-large");
    // (three at once is no state the plan lets through: the quorum-drain check; the rule alone is judged here)
    const committed = {
      ...head,
      nodes: head.nodes.map((n) => (["ok-cp-3", "ok-cp-4", "ok-cp-6"].includes(n.name) ? { ...n, state: "maintenance" as const } : n)),
    };
    const moved = planOf(mutatedConfig("prod-large", moveOkCp2));
    expect(quorumMoveChecks(committed, moved, "the base").map((c) => c.code)).toEqual(["quorum-zone-move"]);
    expect(quorumMoveChecks(head, head, "the base")).toEqual([]);
  });
});

describe("the zone rule added to running quorums", () => {
  const large = planOf("prod-large");
  const facts = large.feasibility!;
  /** prod-large as a render before § 6.3's zone term: the same nodes, members that may share a zone. */
  const unspread = { nodes: large.nodes, feasibility: { ...facts, "openkeel-quorums": { ...facts["openkeel-quorums"], zoneSpread: [] } } };

  it("is refused while two controlPlane nodes of one zone may both hold a member; cordoning all but one per zone lets it through", () => {
    const [c] = quorumMoveChecks(unspread, large, "the committed render");
    expect(c.message).toBe(
      "this change requires one Galera, RabbitMQ and OVN central member per zone (§ 6.3), which the committed rule does not, while the committed render may run two of the 3 members of Galera, RabbitMQ and OVN central on 'ok-cp-1' and 'ok-cp-2', which would then share zone zone-a: a member's strict-local volume pins it to its node (D5), the new rule refuses it that node, and it stays Pending for good",
    );
    expect(c.fix).toMatch(/^stage it, each step its own change, merged and deployed: 1\. set state: cordoned on 'ok-cp-2', 'ok-cp-4' and 'ok-cp-6'/);
    const emptied = {
      ...unspread,
      nodes: unspread.nodes.map((n) => (["ok-cp-2", "ok-cp-4", "ok-cp-6"].includes(n.name) ? { ...n, state: "cordoned" as const } : n)),
    };
    expect(quorumMoveChecks(emptied, large, "the committed render")).toEqual([]);
  });

  it("three members on three controlPlane nodes: each holds one, so two in one zone is certain; the fix adds nodes first", () => {
    const three = ["cp-1", "cp-2", "cp-3"].map((name, i) => ({ name, roles: ["controlPlane" as const], zone: `zone-${"abc"[i]}` }));
    const f = { "openkeel-quorums": { galera: 3, rabbitmq: 3, ovnCentral: 3, zoneSpread: ["galera", "rabbitmq", "ovnCentral"] } };
    const moved = three.map((n) => (n.name === "cp-2" ? { ...n, zone: "zone-a" } : n));
    const [c] = quorumMoveChecks({ nodes: three, feasibility: f }, { nodes: moved, feasibility: f }, "the base");
    expect(c.message).toContain("on 'cp-1' and 'cp-2', which would then share zone zone-a");
    expect(c.fix).toMatch(/^stage it, each step its own change: 1\. add controlPlane nodes first, so that 3 zones have one/);
    // cordoning one of three spares nothing: the other two cannot take three members
    const cordoned = three.map((n) => (n.name === "cp-2" ? { ...n, state: "cordoned" as const } : n));
    expect(quorumMoveChecks({ nodes: cordoned, feasibility: f }, { nodes: moved, feasibility: f }, "the base")).toHaveLength(1);
  });
});
