// Placement checks fail the pipeline like plan checks: planStack returns no Plan, the scripts exit 1
// with a message naming the component and the nodes it cannot reach. Plan composition is wrapped
// here to add the design's units to production stacks, with a broken selector for stacks named `typo-*`.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { findUnit, type HelmReleaseUnit } from "../../plan/plan";
import { planStack } from "../../environments";
import { planStacks, UserError } from "../../cli/cli";
import { withDesignUnits } from "../helpers/design-units";
import { REPO, shippedConfig, tempStacks } from "../helpers/stacks";

vi.mock("../../environments/compose", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../environments/compose")>();
  return {
    composePlan: (...a: Parameters<typeof actual.composePlan>) => {
      if (a[0].cfg.environment !== "talos-production") return actual.composePlan(...a);
      const composed = actual.composePlan(...a);
      const plan = withDesignUnits(composed.plan, { ironic: true, conductorReplicas: 1 });
      if (a[0].cfg.stack.startsWith("typo")) {
        const nova = findUnit(plan, "openkeel-nova") as HelmReleaseUnit;
        (nova.values.placement as any).computeAgent.nodeSelector = { "node-restriction.kubernetes.io/openkeel-compte": "" };
      }
      return { ...composed, plan };
    },
  };
});

describe("placement checks in the pipeline", () => {
  it("a sound stack plans, with its placement report", () => {
    const r = planStack(shippedConfig("prod-medium"));
    expect(r.plan).toBeDefined();
    expect(r.placement!.checks).toEqual([]);
    expect(r.placement!.placements.length).toBeGreaterThan(20);
  });

  it("a broken selector: no Plan, an error check naming the component and the nodes it cannot reach", () => {
    const cfg = { ...shippedConfig("prod-medium"), stack: "typo-medium" };
    const r = planStack(cfg);
    expect(r.plan).toBeUndefined();
    const errors = r.problems.filter((c) => c.level === "error");
    expect(errors.map((c) => c.code)).toEqual(["placement-no-node"]);
    expect(errors[0].message).toMatch(/^openkeel-nova\/computeAgent \(DaemonSet\) can run on no node: /);
    expect(errors[0].message).toContain("cmp-01, cmp-02, cmp-03 (no label node-restriction.kubernetes.io/openkeel-compte)");
  });

  it("the scripts' planStacks turns it into exit code 1 with file, code, message and fix", () => {
    const dir = tempStacks({ "typo-medium": fs.readFileSync(path.join(REPO, "stacks/Pulumi.prod-medium.yaml"), "utf8") });
    let err: unknown;
    try {
      planStacks(["typo-medium"], dir);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).exitCode).toBe(1);
    expect((err as UserError).message).toMatch(
      /Pulumi\.typo-medium\.yaml: openkeel:services\.nova\.placement\.computeAgent: error \[placement-no-node\]: openkeel-nova\/computeAgent \(DaemonSet\) can run on no node: .*cmp-01.*\. Fix: correct the component's nodeSelector/,
    );
  });
});
