// Issue 14, item 4: every production node is watched by exactly one NodeHealthCheck (§ 5.6), a node
// that holds a quorum (the OpenKeel or the Kubernetes control plane) by one with maxUnhealthy 1,
// unless it is a Masakari segment host. prod-small (every node compute) and prod-large's
// Kubernetes-only control plane had none.
import { hasTrait } from "../../config/lifecycle";
import { describe, expect, it, vi } from "vitest";
import { HA_SEGMENT_LABEL } from "../../config/roles";
import { resolveEnvironment, planStack, resolveStack } from "../../environments";
import { medik8s } from "../../platform/medik8s";
import { nhcGroupOf } from "../../platform/medik8s-groups";
import { placementReport } from "../../placement/report";
import { planComponents } from "../../placement/workloads";
import { findUnit, type ManifestsUnit, type Plan } from "../../plan/plan";
import { planOf, shippedPlan } from "../helpers/plans";
import { mutatedConfig, PRODUCTION_STACKS, shippedConfig } from "../helpers/stacks";

function coverageChecks(stack: string, change: (plan: Plan) => void) {
  const plan = structuredClone(planOf(stack));
  change(plan);
  const report = placementReport(
    plan,
    resolveStack(shippedConfig(stack)).topology,
    planComponents(plan, resolveEnvironment().readers),
    resolveEnvironment(plan.environment).placementChecks,
  );
  // only this repository's code can trip the check: its findings are bugs, not the stack's checks
  expect(report.checks.filter((c) => c.code === "placement-nhc-coverage")).toEqual([]);
  return report.bugs;
}

const nhcs = (plan: Plan) => (findUnit(plan, "medik8s-remediation") as ManifestsUnit).objects.filter((o) => o.kind === "NodeHealthCheck") as any[];

describe("NodeHealthCheck coverage", () => {
  it.each(PRODUCTION_STACKS)("%s: every node is selected by exactly one of our checks, a quorum's by one with maxUnhealthy 1", (stack) => {
    const r = shippedPlan(stack);
    const report = r.placement!;
    const unwatched = new Set(
      shippedConfig(stack)
        .nodes.filter((n) => hasTrait(n.state, "leavesHealthChecks"))
        .map((n) => n.name),
    );
    const alone = (n: (typeof report.nodes)[number]) => report.nodes.filter((x) => nhcGroupOf(x) === nhcGroupOf(n)).length === 1;
    for (const node of report.nodes) {
      const by = report.placements.filter((p) => p.component.kind === "NodeHealthCheck" && p.eligible.includes(node.name));
      // a node whose state leaves the health checks (maintenance, retiring) is left out on purpose, and one alone in its group (docs/node-lifecycle.md)
      const out = unwatched.has(node.name) || alone(node);
      expect(
        by.map((p) => p.component.name),
        node.name,
      ).toHaveLength(out ? 0 : 1);
      if (out) continue;
      if (node.roles.includes("controlPlane") || node.kubernetesControlPlane) expect(by[0].component.facts?.maxUnhealthy, node.name).toBe(1);
    }
  });

  it("prod-small: the hyperconverged nodes are the control plane's (maxUnhealthy 1)", () => {
    const [only, ...rest] = nhcs(planOf("prod-small"));
    expect(rest).toEqual([]);
    expect(only.metadata.name).toBe("openkeel-control-plane");
    expect(only.spec.maxUnhealthy).toBe(1);
  });

  it("prod-large: the Kubernetes-only control plane has its own check, fencing one node at a time", () => {
    const k8s = nhcs(planOf("prod-large")).find((n) => n.metadata.name === "openkeel-kubernetes-control-plane");
    expect(k8s.spec.maxUnhealthy).toBe(1);
    expect(k8s.spec.selector.matchExpressions[0]).toEqual({ key: "node-role.kubernetes.io/control-plane", operator: "Exists" });
  });

  it("a node no check selects is an error naming it", () => {
    const checks = coverageChecks("prod-medium", (plan) => {
      const unit = findUnit(plan, "medik8s-remediation") as ManifestsUnit;
      unit.objects = unit.objects.filter((o) => o.metadata.name !== "openkeel-storage");
    });
    expect(checks.map((c) => c.message)).toEqual(
      ["cmp-01", "cmp-02", "cmp-03"].map(
        (n) => `node ${n} (compute+storage) is selected by no NodeHealthCheck: nothing would remediate it when it fails (§ 5.6)`,
      ),
    );
  });

  it("a quorum's node under a check that may fence several at once is an error", () => {
    const checks = coverageChecks("prod-medium", (plan) => {
      nhcs(plan).find((n) => n.metadata.name === "openkeel-control-plane").spec.maxUnhealthy = 2;
    });
    expect(checks.map((c) => c.message)).toEqual(
      ["cp-1", "cp-2", "cp-3"].map(
        (n) =>
          `node ${n} holds a quorum (Galera, RabbitMQ, OVN central) but medik8s-remediation/openkeel-control-plane/remediates may fence 2 of its nodes at once`,
      ),
    );
  });

  it("its findings are this repository's bugs: planStack throws instead of blaming the stack file", () => {
    const units = medik8s.units;
    const spy = vi.spyOn(medik8s, "units").mockImplementation((ctx, w) => {
      const built = units(ctx, w);
      const remediation = built["platform-config"]!.find((u) => u.name === "medik8s-remediation") as ManifestsUnit;
      remediation.objects = remediation.objects.filter((o) => o.metadata.name !== "openkeel-network");
      return built;
    });
    try {
      expect(() => planStack(shippedConfig("prod-medium"))).toThrow(
        /placement of stack prod-medium: \[placement-nhc-coverage\] node net-1 \(network\) is selected by no NodeHealthCheck/,
      );
    } finally {
      spy.mockRestore();
    }
  });

  it("a Masakari segment host is exempt: its segment's check watches it", () => {
    const cfg = mutatedConfig("prod-medium", (raw) => (raw.nodes[3].labels = { ...raw.nodes[3].labels, [HA_SEGMENT_LABEL]: "segment-a" }));
    const r = planStack(cfg);
    expect(r.problems.filter((c) => c.level === "error")).toEqual([]);
    const by = r.placement!.placements.filter((p) => p.component.kind === "NodeHealthCheck" && p.eligible.includes("cmp-01"));
    expect(by).toEqual([]);
  });
});
