// Masakari's NodeHealthChecks (§ 5.6; issue 22 item 11): Masakari creates one NodeHealthCheck per
// failover segment, and the release is told what to put in them (our contract for the chart,
// `segmentHealthChecks`): the remediation template of this repository's checks, the compute
// nodes' maxUnhealthy, the same conditions. The placement checks hold segments apart from our
// checks (origin code) and a segment that may hold quorum nodes to one fence at a time.
import { describe, expect, it } from "vitest";
import { resolveEnvironment, planStack, resolveStack } from "../../environments";
import { placementReport } from "../../placement/report";
import { planComponents } from "../../placement/workloads";
import { findUnit, type ManifestsUnit, type Plan } from "../../plan/plan";
import { planOf, valueProblems, valuesOf } from "../helpers/plans";
import { mutatedConfig, PRODUCTION_STACKS, shippedConfig } from "../helpers/stacks";

const TEMPLATE = {
  apiVersion: "self-node-remediation.medik8s.io/v1alpha1",
  kind: "SelfNodeRemediationTemplate",
  namespace: "medik8s",
  name: "openkeel-out-of-service",
};

const withMedik8s = (stack: string, medik8s: Record<string, unknown>) => mutatedConfig(stack, (r) => (r.platform = { ...(r.platform ?? {}), medik8s }));
const withMasakariValues = (stack: string, values: Record<string, unknown>) =>
  mutatedConfig(stack, (r) => (r.services = { ...(r.services ?? {}), masakari: { values } }));

/** The report of a Plan changed after it was built: what only this repository's code can break. */
function bugsOf(stack: string, change: (plan: Plan) => void) {
  const plan = structuredClone(planOf(stack));
  change(plan);
  return placementReport(
    plan,
    resolveStack(shippedConfig(stack)).topology,
    planComponents(plan, resolveEnvironment().readers),
    resolveEnvironment(plan.environment).placementChecks,
  ).bugs;
}

describe("Masakari is told how its segments' hosts are remediated", () => {
  it.each(PRODUCTION_STACKS)("%s: our SNR template, the compute nodes' maxUnhealthy and the Ready conditions", (stack) => {
    expect(valuesOf(planOf(stack), "openkeel-masakari").segmentHealthChecks).toEqual({
      remediationTemplate: TEMPLATE,
      maxUnhealthy: 1,
      unhealthyConditions: [
        { type: "Ready", status: "False", duration: "300s" },
        { type: "Ready", status: "Unknown", duration: "300s" },
      ],
    });
  });

  it("follows openkeel:platform.medik8s: the compute nodes' maxUnhealthy and the unhealthy duration", () => {
    const plan = planOf(withMedik8s("prod-large", { maxUnhealthy: { compute: "34%" }, unhealthyDuration: "5m" }));
    const told = valuesOf(plan, "openkeel-masakari").segmentHealthChecks;
    expect(told.maxUnhealthy).toBe("34%");
    expect(told.unhealthyConditions.map((c: { duration: string }) => c.duration)).toEqual(["5m", "5m"]);
    // the same as our own compute nodes' checks (one per zone in large)
    const ours = (findUnit(plan, "medik8s-remediation") as ManifestsUnit).objects.find((o) => o.metadata.name === "openkeel-compute-zone-a") as any;
    expect(ours.spec.maxUnhealthy).toBe("34%");
    expect(ours.spec.remediationTemplate).toEqual(told.remediationTemplate);
  });

  it("the lab remediates no node: Masakari is told nothing", () => {
    expect(valuesOf(planOf("lab"), "openkeel-masakari").segmentHealthChecks).toBeUndefined();
  });

  it("the values contract holds the key: a misspelt field is a problem naming it", () => {
    const lines = valueProblems(withMasakariValues("prod-medium", { segmentHealthChecks: { maxUnhealty: 2 } }));
    expect(lines.join("\n")).toMatch(/openkeel:services\.masakari\.values\.segmentHealthChecks.*segmentHealthChecks\.maxUnhealty: unknown key/);
  });
});

describe("segments and our NodeHealthChecks", () => {
  const errors = (cfg: ReturnType<typeof shippedConfig>) => planStack(cfg).problems.filter((p) => p.code === "masakari-segment-remediation");

  it.each(PRODUCTION_STACKS)("%s: no finding", (stack) => {
    expect(errors(shippedConfig(stack))).toEqual([]);
    expect(bugsOf(stack, () => {}).filter((b) => b.code === "placement-masakari-segment-overlap")).toEqual([]);
  });

  it("prod-small: segments may hold the hyperconverged quorum nodes, so more than one fence at a time is an error", () => {
    const [e, ...more] = errors(withMedik8s("prod-small", { maxUnhealthy: { compute: 2 } }));
    expect(more).toEqual([]);
    expect(e).toMatchObject({ level: "error", path: "openkeel:platform.medik8s.maxUnhealthy.compute" });
    expect(e.message).toContain(
      "may fence 2 nodes at once, but compute nodes that hold a quorum (Galera, RabbitMQ, OVN central or etcd) may be segment hosts: node-1, node-2, node-3",
    );
    // the same through the release's own values
    expect(errors(withMasakariValues("prod-small", { segmentHealthChecks: { maxUnhealthy: "50%" } }))).toHaveLength(1);
  });

  it("prod-large: compute nodes hold no quorum, so segments may fence several", () => {
    expect(errors(withMedik8s("prod-large", { maxUnhealthy: { compute: 2 } }))).toEqual([]);
  });

  it("another remediation template than ours is an error", () => {
    const [e] = errors(withMasakariValues("prod-medium", { segmentHealthChecks: { remediationTemplate: { name: "other" } } }));
    expect(e.message).toMatch(/not the template of this repository's checks/);
    expect(e.path).toBe("openkeel:services.masakari.values.segmentHealthChecks");
  });

  it("one of our checks that would keep selecting a segment host is a bug naming it (origin code)", () => {
    const bugs = bugsOf("prod-medium", (plan) => {
      const nhc = (findUnit(plan, "medik8s-remediation") as ManifestsUnit).objects.find((o) => o.metadata.name === "openkeel-storage") as any;
      nhc.spec.selector.matchExpressions = nhc.spec.selector.matchExpressions.filter((e: { key: string }) => e.key !== "openkeel.io/ha-segment");
    });
    expect(bugs.filter((b) => b.code === "placement-masakari-segment-overlap").map((b) => b.message)).toEqual(
      ["cmp-01", "cmp-02", "cmp-03"].map(
        (n) =>
          `node ${n}, once a Masakari segment host, would still be selected by medik8s-remediation/openkeel-storage/remediates: its segment's NodeHealthCheck and ours would remediate it concurrently (§ 5.6)`,
      ),
    );
  });
});
