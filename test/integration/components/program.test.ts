// The Pulumi program under the runtime mocks, for every shipped stack.
import { describe, expect, it } from "vitest";
import { chassisLabelKey } from "../../../config/roles";
import program from "../../../index";
import { findUnit, PHASES } from "../../../plan/plan";
import { planOf } from "../../helpers/plans";
import * as pulumi from "@pulumi/pulumi";
import { dependsOnUnit, programError, runProgram } from "../../helpers/pulumi";
import { pulumiConfigOf, SHIPPED_STACKS, shippedRaw } from "../../helpers/stacks";

// The type token the Plan invariants accept (plan/plan.ts), digits included (Medik8s).
const UNIT_TYPE = /^openkeel:[a-z][A-Za-z0-9]*:[A-Z][A-Za-z0-9]*$/;

describe.each(SHIPPED_STACKS)("Pulumi program, stack %s", (stack) => {
  it("registers one ComponentResource per unit, each depending on the units its Plan's dependsOn names and on no other", async () => {
    const run = await runProgram(stack, pulumiConfigOf(shippedRaw(stack)), program);
    const units = run.resources.filter((r) => UNIT_TYPE.test(r.type) && r.type !== "openkeel:secrets:StackSecrets");
    const phases = run.outputs.phases as { name: string; units: string[] }[];
    expect(phases.map((p) => p.name)).toEqual([...PHASES]);
    const names = phases.flatMap((p) => p.units);
    expect(units.map((u) => u.name).sort()).toEqual([...names].sort());
    const plan = planOf(stack);
    for (const name of names) {
      const deps = run.byName(name).dependencies;
      const on = new Set(findUnit(plan, name)!.dependsOn ?? []);
      expect(names.filter((other) => other !== name && dependsOnUnit(deps, other)).sort(), name).toEqual([...on].sort());
    }
  });

  it("patches every node with the role label keys of its profile (D1)", async () => {
    const raw = shippedRaw(stack) as any;
    const run = await runProgram(stack, pulumiConfigOf(raw), program);
    const patches = run.ofType("kubernetes:core/v1:NodePatch");
    expect(patches.map((p) => p.inputs.metadata.name).sort()).toEqual(raw.nodes.map((n: any) => n.name).sort());
    const unit = run.byName("node-roles");
    const production = raw.environment === "talos-production";
    for (const p of patches) {
      expect(p.parent).toBe(unit.urn);
      const keys = Object.keys(p.inputs.metadata.labels);
      // the OVN chassis label has the role labels' prefix in production (D1), but is no role
      const chassis = chassisLabelKey(production ? "hardened" : "default");
      const roleKeys = keys.filter((k) => k !== chassis && (k.includes("openkeel-") || k.startsWith("node-role.openkeel.io/")));
      const node = raw.nodes.find((n: any) => n.name === p.inputs.metadata.name);
      expect(roleKeys).toHaveLength(node.roles.length);
      for (const k of roleKeys) {
        expect(k.startsWith(production ? "node-restriction.kubernetes.io/openkeel-" : "node-role.openkeel.io/")).toBe(true);
      }
      expect(p.inputs.metadata.annotations["pulumi.com/patchFieldManager"]).toBe("openkeel-node-roles");
    }
  });
});

describe("Pulumi program, bad config", () => {
  it("fails with the stack file, key path and fix, without running any unit", async () => {
    const raw = { ...shippedRaw("prod-medium"), taint: true };
    const err = await programError("prod-medium", pulumiConfigOf(raw), program);
    expect(pulumi.RunError.isInstance(err)).toBe(true);
    expect(err.message).toMatch(/stacks\/Pulumi\.prod-medium\.yaml: openkeel:taint: unknown key/);
  });

  it("fails on plan check errors with the remediation", async () => {
    const raw = structuredClone(shippedRaw("prod-medium")) as any;
    raw.services.ironic.replicas.conductor = 2;
    const err = await programError("prod-medium", pulumiConfigOf(raw), program);
    expect(pulumi.RunError.isInstance(err)).toBe(true);
    expect(err.message).toMatch(/\[ironic-conductors\].*set openkeel:services\.ironic\.replicas\.conductor to 1/);
  });
});
