// Issue 22, item 2: the components § 5.2 "What is implemented" does not list (the ingress,
// Neutron's worker, metadata and BGP agents, Nova's scheduler, Swift, Heat, Designate, Manila,
// EC2 API, Zun). Their charts read no placement for them, so the release writes none (but what the
// policy pack judges) and places each through a post-render patch derived from its role placement
// (openkeel/unlisted.ts); the placement model judges them from the patched template alone, and
// without the patch as the chart renders them: unplaced.
import { describe, expect, it } from "vitest";
import { resolveEnvironment, planStack, resolveStack } from "../../environments";
import { openkeelDesign } from "../../openkeel/design";
import { UNLISTED_COMPONENTS, unlistedPlacementPatch, unlistedRendered } from "../../openkeel/unlisted";
import { workloadObjectName } from "../../openkeel/names";
import { findUnit, type HelmReleaseUnit, type Plan } from "../../plan/plan";
import type { PostRenderPatch } from "../../plan/post-render";
import { placementReport } from "../../placement/report";
import { planComponents, type Component } from "../../placement/workloads";
import { roleLabelKey } from "../../config/roles";
import { openkeelReleases, planOf, release } from "../helpers/plans";
import { mutatedConfig, SHIPPED_STACKS, shippedConfig } from "../helpers/stacks";

type Obj = Record<string, any>;

const isUnlistedPatch = (p: PostRenderPatch) => p.why.startsWith("§ 5.2 does not list ");

/** A copy of a Plan whose releases lose their § 5.2 patches: what the charts alone render. */
function withoutUnlistedPatches(plan: Plan): Plan {
  const copy = structuredClone(plan);
  for (const u of openkeelReleases(copy)) u.postRender = (u.postRender ?? []).filter((p) => !isUnlistedPatch(p));
  return copy;
}

function components(plan: Plan): Map<string, Component> {
  return new Map(planComponents(plan, resolveEnvironment(plan.environment).readers).map((c) => [c.name, c]));
}

/** Every unlisted component a release of the plan renders, with its release. */
function unlistedOf(plan: Plan): { u: HelmReleaseUnit; key: string }[] {
  return openkeelReleases(plan).flatMap((u) =>
    Object.entries(UNLISTED_COMPONENTS[u.chart.chart] ?? {})
      .filter(([key, unlisted]) => unlistedRendered(unlisted, (u.values as Obj)[key]))
      .map(([key]) => ({ u, key })),
  );
}

describe("item 2: what § 5.2 does not list is placed by its release's patch, and judged from it", () => {
  it.each(SHIPPED_STACKS)("%s: no value the chart does not read, one patch each, the model reads the patch and nothing else", (stack) => {
    const plan = planOf(stack);
    const found = unlistedOf(plan);
    expect(found.length).toBeGreaterThan(10);
    const model = components(plan);
    const bare = components(withoutUnlistedPatches(plan));
    for (const { u, key } of found) {
      const id = `${u.name}/${key}`;
      const values = u.values as Obj;
      // none stays: the policy pack judges the patch (the release's post-render record) too
      expect(values.placement?.[key] ?? values[key]?.placement, id).toBeUndefined();
      const patches = (u.postRender ?? []).filter((p) => isUnlistedPatch(p) && p.target.name === workloadObjectName(u.release, key));
      expect(
        patches.map((p) => p.target.kind),
        id,
      ).toEqual([openkeelDesign(u.chart.chart, key).kind]);
      expect(patches[0].why, id).toMatch(new RegExp(`^§ 5\\.2 does not list ${key} among the components ${u.chart.chart} places`));
      const spec = (patches[0].patch as Obj).spec.template.spec;
      const c = model.get(id)!;
      expect(c.scheduling.nodeSelector, id).toEqual(spec.nodeSelector);
      expect(c.scheduling.affinity?.nodeAffinity, id).toEqual(spec.affinity?.nodeAffinity);
      expect(c.scheduling.tolerations, id).toEqual(spec.tolerations ?? []);
      // without it: exactly what a chart that reads no key renders
      const b = bare.get(id)!;
      expect([b.scheduling.nodeSelector, b.scheduling.affinity?.nodeAffinity, b.scheduling.tolerations], id).toEqual([undefined, undefined, []]);
    }
  });

  it("the patches are what keeps the report's verdicts: without them it refuses the ingress and the metadata agent, and large's Swift storage", () => {
    const verdicts = (stack: string, bare: boolean) => {
      const cfg = shippedConfig(stack);
      const plan = bare ? withoutUnlistedPatches(planOf(cfg)) : planOf(cfg);
      const r = placementReport(
        plan,
        resolveStack(cfg).topology,
        planComponents(plan, resolveEnvironment(cfg.environment).readers),
        resolveEnvironment(cfg.environment).placementChecks,
      );
      return [...new Set(r.checks.filter((c) => c.level === "error").map((c) => `${c.code} ${c.message.split(" ")[0]}`))].sort();
    };
    for (const stack of ["prod-medium", "prod-large"]) expect(verdicts(stack, false), stack).toEqual([]);
    expect(verdicts("prod-medium", true)).toEqual([
      "placement-agent-tolerations openkeel-chart/ingress",
      "placement-agent-tolerations openkeel-neutron/metadataAgent",
      "placement-daemonset-coverage openkeel-chart/ingress",
      "placement-daemonset-coverage openkeel-neutron/metadataAgent",
      "placement-reserved-host openkeel-neutron/metadataAgent",
    ]);
    expect(verdicts("prod-large", true)).toContain("placement-anti-affinity openkeel-swift/storage");
    // a control-plane Deployment without its patch may run on any untainted node, not only the
    // control plane (the shipped production stacks taint every other node: there it changes no verdict)
    const cfg = mutatedConfig("prod-medium", (r) => (r.taints = ["provisioning"]));
    const eligible = (plan: Plan) =>
      placementReport(plan, resolveStack(cfg).topology, planComponents(plan, resolveEnvironment(cfg.environment).readers), []).placements.find(
        (p) => p.component.name === "openkeel-nova/scheduler",
      )!.eligible;
    const controlPlane = planOf(cfg)
      .nodes.filter((n) => n.roles.includes("controlPlane"))
      .map((n) => n.name);
    expect([...eligible(planOf(cfg))].sort()).toEqual([...controlPlane].sort());
    expect(eligible(withoutUnlistedPatches(planOf(cfg))).filter((n) => !controlPlane.includes(n)).length).toBeGreaterThan(0);
  });

  it("a placement the stack sets for one reaches its patch, never the values", () => {
    const nodeSelector = { "node-restriction.kubernetes.io/openkeel-control-plane": "", "topology.kubernetes.io/zone": "zone-a" };
    const plan = planOf(mutatedConfig("prod-large", (r) => (r.services = { ...r.services, nova: { placement: { scheduler: { nodeSelector } } } })));
    const nova = release(plan, "openkeel-nova");
    expect((nova.values as Obj).placement.scheduler).toBeUndefined();
    expect(components(plan).get("openkeel-nova/scheduler")!.scheduling.nodeSelector).toEqual(nodeSelector);
  });

  it("ovn-bgp-agent: off by default, switched by bgpAgent.enabled, which the chart reads; openkeel:bgp turns it and its patch on", () => {
    const off = planOf("prod-large");
    expect((release(off, "openkeel-neutron").values as Obj).bgpAgent).toEqual({ enabled: false });
    expect(components(off).has("openkeel-neutron/bgpAgent")).toBe(false);
    expect(release(off, "openkeel-neutron").postRender?.some((p) => p.target.name === "openkeel-neutron-bgp-agent")).toBe(false);
    const on = planOf(mutatedConfig("prod-large", (r) => (r.bgp = true)));
    expect((release(on, "openkeel-neutron").values as Obj).bgpAgent).toEqual({ enabled: true });
    const agent = components(on).get("openkeel-neutron/bgpAgent")!;
    const terms = agent.scheduling.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    expect(terms.map((t) => t.matchExpressions?.[0].key)).toEqual([roleLabelKey("network", "hardened"), roleLabelKey("compute", "hardened")]);
    // the metadata agent's chart default is on (D4): it renders without a switch
    expect(unlistedRendered(UNLISTED_COMPONENTS["openkeel-neutron"].metadataAgent, {})).toBe(true);
    expect(unlistedRendered(UNLISTED_COMPONENTS["openkeel-neutron"].bgpAgent, {})).toBe(false);
  });

  it("a raw value that stacks write for an unlisted component passes the contract and reaches the patch", () => {
    const tolerations = [{ key: "gpu", operator: "Exists", effect: "NoSchedule" }];
    const r = planStack(
      mutatedConfig(
        "prod-medium",
        (raw) => (raw.services = { ...raw.services, heat: { values: { placement: { engine: { role: "controlPlane", extraTolerations: tolerations } } } } }),
      ),
    );
    expect(r.problems.filter((p) => p.level === "error")).toEqual([]);
    const engine = (findUnit(r.plan!, "openkeel-heat") as HelmReleaseUnit).postRender!.find((p) => p.target.name === "openkeel-heat-engine")!;
    expect((engine.patch as Obj).spec.template.spec.tolerations).toContainEqual(tolerations[0]);
  });

  it("a component § 5.2 lists is the chart's to place: deriving a patch for it is a bug here", () => {
    expect(() => unlistedPlacementPatch("openkeel-nova", "openkeel-nova", "api", "Deployment", { role: "controlPlane" }, {})).toThrow(
      /unlisted placement: openkeel-nova api is placed by its chart \(§ 5\.2\), not by a patch/,
    );
  });
});
