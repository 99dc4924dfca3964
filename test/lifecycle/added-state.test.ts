// Issue 47, item 1: a node state is its traits (config/lifecycle.ts), so a state whose traits
// combine differently from today's must plan like any other. Here STATE_TRAITS gets one more state,
// `burn-in` (a node under hardware burn-in: cordoned, and out of our NodeHealthChecks because it
// reboots on purpose, but nothing drained: no NodeMaintenance), and every stack plans with a node in
// it. The NodeHealthCheck coverage check once skipped nodes by `drains` where the checks' selectors
// leave a node out by `leavesHealthChecks`: planning threw [placement-nhc-coverage] as our bug.
import { describe, expect, it, vi } from "vitest";
import { NODE_STATE_LABEL, NODE_STATES, STATE_TRAITS, type StateTraits } from "../../config/lifecycle";
import { isError } from "../../config/problems";
import { planStack } from "../../environments";
import { Loss } from "../../lifecycle/feasibility";
import { allUnits, type K8sObject } from "../../plan/plan";
import { aloneInGroup, NHC_CONSTRAINT } from "../../platform/medik8s-groups";
import { planOf } from "../helpers/plans";
import { mutatedConfig, PRODUCTION_STACKS, SHIPPED_STACKS, shippedRaw } from "../helpers/stacks";

const ADDED = "burn-in";

vi.mock("../../config/lifecycle", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../config/lifecycle")>();
  const burnIn: StateTraits = {
    cordons: true,
    drains: false,
    evictsData: false,
    leavesQuorums: false,
    leavesHealthChecks: true,
    leavesInventory: false,
    words: "under burn-in",
    verb: "put $ under burn-in",
  };
  // the one table every rule reads (hasTrait, stateWords); the lists derived from it, derived again
  Object.assign(actual.STATE_TRAITS, { "burn-in": burnIn });
  const states = Object.keys(actual.STATE_TRAITS) as typeof actual.NODE_STATES;
  const traits = actual.STATE_TRAITS as Readonly<Record<string, StateTraits>>;
  return { ...actual, NODE_STATES: states, UNWATCHED_STATES: states.filter((s) => traits[s].leavesHealthChecks) };
});

/**
 * The stack with its last node that a check of ours watches (a worker where the stack has any; not
 * one alone in its group, which no check watches: platform/medik8s-groups.ts) under burn-in.
 */
function withBurnIn(stack: string) {
  const nodes = (shippedRaw(stack).nodes as { name: string }[]).map((n) => n.name);
  const alone = aloneInGroup(planOf(stack).nodes);
  const node = nodes.filter((n) => !alone.has(n)).at(-1) ?? nodes.at(-1)!;
  const cfg = mutatedConfig(stack, (raw) => {
    raw.nodes.find((n: { name: string }) => n.name === node).state = ADDED;
  });
  return { node, cfg };
}

const objects = (plan: NonNullable<ReturnType<typeof planStack>["plan"]>): K8sObject[] =>
  allUnits(plan).flatMap((u) => (u.kind === "Manifests" ? u.objects : []));

describe("a state added to STATE_TRAITS whose traits combine differently (cordons, leaves the health checks, does not drain)", () => {
  it("is a state of the schema", () => {
    expect(NODE_STATES).toContain(ADDED);
    expect((STATE_TRAITS as Record<string, StateTraits>)[ADDED].drains).toBe(false);
  });

  it.each(SHIPPED_STACKS)("%s plans with a node in it: cordoned and labelled, out of the health checks, not drained", (stack) => {
    const { node, cfg } = withBurnIn(stack);
    const r = planStack(cfg);
    expect(r.problems.filter(isError)).toEqual([]);
    const all = objects(r.plan!);
    const patch = all.find((o) => o.kind === "Node" && o.metadata.name === node) as any;
    expect(patch?.metadata.labels?.[NODE_STATE_LABEL], node).toBe(ADDED);
    expect(patch?.spec?.unschedulable, node).toBe(true);
    expect(all.filter((o) => o.kind === "NodeMaintenance").map((o) => o.metadata.name)).toEqual([]);
    const nhcs = r.placement!.placements.filter((p) => p.component.kind === "NodeHealthCheck");
    expect(nhcs.filter((p) => p.eligible.includes(node)).map((p) => p.component.name)).toEqual([]);
  });

  it.each(PRODUCTION_STACKS)("%s: losing that node is fenced by no NodeHealthCheck (none watches it); active, its check fences it", (stack) => {
    const { node, cfg } = withBurnIn(stack);
    const fencing = (plan: ReturnType<typeof planOf>) =>
      NHC_CONSTRAINT.loss!(new Loss(plan.nodes, new Set([node])), plan.feasibility?.["medik8s-remediation"]).map((f) => f.level);
    expect(fencing(planOf(cfg))).toEqual([]);
    expect(fencing(planOf(stack))).toEqual(["holds"]);
  });
});
