// e2e step 11f's change, planned from the shipped prod-medium render: the check the step holds must
// keep its remediated node, so the change is a selector update (a check left without nodes is
// deleted instead, and the step's expectations would not match what the webhook says: CI's run of
// 189e42c, where the alternation put all three storage nodes in zone-a).
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { planOf, zoneOf } from "../../e2e/harness/nhc-change";
import { readRendered } from "../../e2e/harness/rendered";
import { previewStack } from "../../review/preview";
import { mutatedConfig, REPO, shippedConfig, renderTree } from "../helpers/stacks";

describe("e2e step 11f: a NodeHealthCheck reshaped while it remediates", () => {
  const plan = planOf(readRendered(path.join(REPO, "rendered"), "prod-medium"))!;

  it("holds prod-medium's storage check, a node of it remediated, the two others moved to zone-a", () => {
    expect(plan).toEqual({ check: "openkeel-storage", zoneA: ["cmp-01", "cmp-02"], remediated: "cmp-03" });
  });

  it("the zones keep the remediated node on the held check: its selector changes, the verdict names it, nothing else is held", () => {
    const zoned = mutatedConfig("prod-medium", (raw: any) => {
      const zones = zoneOf(
        plan,
        raw.nodes.map((n: any) => n.name),
      );
      raw.nodes.forEach((n: any) => (n.zone = zones.get(n.name)));
    });
    const p = previewStack("prod-medium", renderTree(shippedConfig("prod-medium")), renderTree(zoned));
    expect(p.actions.filter((a) => a.resource === `NodeHealthCheck ${plan.check}`).map((a) => a.action)).toEqual(["update"]);
    expect(p.findings.filter((f) => f.code === "nhc-held-change").map((f) => f.message.split(":")[0])).toEqual([`NodeHealthCheck ${plan.check} (selector)`]);
  });
});
