// Remediation that holds (issue 45 item 3, § 5.6; platform/medik8s-rule.ts): the shipped stacks keep
// the rule; each clause trips, on a stack's setting (a plan check error) or on checks drawn otherwise
// by the code (the rule's bugs); the failure-domain table follows the checks the Plan holds; and
// docs/node-lifecycle.md says of a zone's loss in prod-large what the table says.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { Check } from "../../config/problems";
import { planStack } from "../../environments";
import { Loss } from "../../lifecycle/feasibility";
import type { FailureDomainTable } from "../../placement/failure-table";
import type { PlacementFacts } from "../../placement/report";
import type { K8sObject, ManifestsUnit, Plan } from "../../plan/plan";
import { medik8s } from "../../platform/medik8s";
import { NHC_CONSTRAINT, nhcChecks } from "../../platform/medik8s-groups";
import { REMEDIATION_RULE } from "../../platform/medik8s-rule";
import { objectsOf, planOf } from "../helpers/plans";
import { mutatedConfig, PRODUCTION_STACKS, REPO, shippedConfig } from "../helpers/stacks";

const ZONE = "topology.kubernetes.io/zone";

/** The rule's findings on a Plan: those only the code can cause (bugs), and the stack's. */
function rule(plan: Plan): { bugs: Check[]; stack: Check[] } {
  const facts = { plan, nodes: [], placements: [] } as unknown as PlacementFacts;
  return {
    bugs: REMEDIATION_RULE.filter((r) => r.origin === "code").flatMap((r) => r.check(facts)),
    stack: REMEDIATION_RULE.filter((r) => r.origin !== "code").flatMap((r) => r.check(facts)),
  };
}

/**
 * A shipped stack's Plan whose NodeHealthChecks the code drew otherwise: `redraw` edits the objects,
 * and the facts are read again from them, as planning does.
 */
function redrawn(stack: string, redraw: (nhcs: K8sObject[]) => K8sObject[]): Plan {
  const cfg = shippedConfig(stack);
  const plan = planStack(cfg).plan!;
  const objects = objectsOf(plan, "medik8s-remediation");
  const others = objects.filter((o) => o.kind !== "NodeHealthCheck");
  objects.splice(0, objects.length, ...others, ...redraw(objects.filter((o) => o.kind === "NodeHealthCheck")));
  plan.feasibility![NHC_CONSTRAINT.key] = NHC_CONSTRAINT.facts!(plan, cfg)!;
  return plan;
}

/** A NodeHealthCheck like `like`, named `name`, its zone term replaced by `zone` (none: across zones). */
function nhc(like: K8sObject, name: string, maxUnhealthy: number | string, zone?: string): K8sObject {
  const spec = like.spec as { selector: { matchExpressions: { key: string }[] } };
  const terms = spec.selector.matchExpressions.filter((e) => e.key !== ZONE);
  return {
    ...like,
    metadata: { name },
    spec: { ...spec, maxUnhealthy, selector: { matchExpressions: [...terms, ...(zone ? [{ key: ZONE, operator: "In", values: [zone] }] : [])] } },
  };
}

const named = (nhcs: K8sObject[], name: string) => nhcs.find((o) => o.metadata.name === name)!;

describe("the rule holds on every shipped production stack", () => {
  it.each(PRODUCTION_STACKS)("%s: no finding of either kind", (stack) => {
    expect(rule(planOf(stack))).toEqual({ bugs: [], stack: [] });
  });
});

describe("1. independent failures are fenced (nhc-independent-failures)", () => {
  it("checks drawn per role across zones (the issue's careless change): two hypervisors of two zones, neither fenced, a bug of the code", () => {
    const plan = redrawn("prod-large", (nhcs) => [
      ...nhcs.filter((o) => !o.metadata.name.startsWith("openkeel-compute-")),
      nhc(named(nhcs, "openkeel-compute-zone-a"), "openkeel-compute", 1),
    ]);
    const { bugs, stack } = rule(plan);
    expect(stack).toEqual([]);
    expect(bugs.map((c) => [c.level, c.code])).toEqual([["error", "nhc-independent-failures"]]);
    expect(bugs[0].message).toBe(
      "NodeHealthCheck openkeel-compute selects 9 node(s) with maxUnhealthy 1 across zones: one failure in each of two zones (cmp-a-01 in zone-a, cmp-b-01 in zone-b) is 2 of its nodes unhealthy, more than it allows, and it fences neither (storm protection, node-healthcheck-operator v0.12.0 internal/controller/nodehealthcheck_controller.go 336–347): two independent faults left to a human, their VMs not evacuated (evacuation waits for the fencing)",
    );
    expect(bugs[0].fix).toMatch(/^draw the compute nodes' checks per zone \(platform\/medik8s-groups\.ts nhcChecks/);
  });

  it("a check that fences no single failure", () => {
    const plan = redrawn("prod-medium", (nhcs) => nhcs.map((o) => (o.metadata.name === "openkeel-storage" ? nhc(o, "openkeel-storage", "0%") : o)));
    expect(rule(plan).bugs.map((c) => c.message)).toEqual([
      "NodeHealthCheck openkeel-storage selects 3 node(s) with maxUnhealthy 0%: a single failure of one of its nodes (cmp-01) is not fenced (node-healthcheck-operator v0.12.0 internal/controller/nodehealthcheck_controller.go 336–347)",
    ]);
  });

  it("two nodes of a role in two zones that are the whole role: not fencing both is the storm guard, not a finding", () => {
    // prod-large's provisioning nodes: prov-1 (zone-a) and prov-2 (zone-b), one check, maxUnhealthy 50% (1 of 2)
    expect(nhcChecks(planOf("prod-large").nodes).find((c) => c.group === "provisioning")).toEqual({
      name: "openkeel-provisioning",
      group: "provisioning",
      nodes: ["prov-1", "prov-2"],
      maxUnhealthy: "50%",
    });
    expect(rule(planOf("prod-large")).bugs).toEqual([]);
  });
});

describe("2. no cluster-wide event fences every member of a role (nhc-storm-guard)", () => {
  it("the one-node checks per zone that prod-large had (its gateways): every gateway fenced at once, a bug of the code, with the fix", () => {
    const plan = redrawn("prod-large", (nhcs) => [
      ...nhcs.filter((o) => o.metadata.name !== "openkeel-network"),
      ...["zone-a", "zone-b", "zone-c"].map((z) => nhc(named(nhcs, "openkeel-network"), `openkeel-network-${z}`, 1, z)),
    ]);
    const { bugs, stack } = rule(plan);
    expect(stack).toEqual([]);
    expect(bugs).toEqual([
      {
        level: "error",
        code: "nhc-storm-guard",
        message:
          "a cluster-wide event (every node NotReady for the unhealthy duration: the API path, a CNI rollout) would fence every network node at once (net-1, net-2, net-3): openkeel-network-zone-a selects 1 node(s) with maxUnhealthy 1; openkeel-network-zone-b selects 1 node(s) with maxUnhealthy 1; openkeel-network-zone-c selects 1 node(s) with maxUnhealthy 1, and a check fences all its nodes once maxUnhealthy reaches their count (node-healthcheck-operator v0.12.0 internal/controller/nodehealthcheck_controller.go 336–347)",
        reason: expect.stringContaining("§ 5.6: maxUnhealthy stops remediation storms"),
        fix: "join the network nodes' one-node checks into one check across their zones (platform/medik8s-groups.ts nhcChecks)",
      },
    ]);
  });

  it("planStack throws it as this repository's bug, never the stack file's", () => {
    const units = medik8s.units;
    const spy = vi.spyOn(medik8s, "units").mockImplementation((ctx, w) => {
      const built = units(ctx, w);
      const u = built["platform-config"]!.find((x) => x.name === "medik8s-remediation") as ManifestsUnit;
      const network = named(u.objects, "openkeel-network");
      u.objects = [...u.objects.filter((o) => o !== network), ...["zone-a", "zone-b", "zone-c"].map((z) => nhc(network, `openkeel-network-${z}`, 1, z))];
      return built;
    });
    try {
      expect(() => planStack(shippedConfig("prod-large"))).toThrow(
        /placement of stack prod-large: .*\[nhc-storm-guard\] a cluster-wide event \(.*\) would fence every network node at once \(net-1, net-2, net-3\)/,
      );
    } finally {
      spy.mockRestore();
    }
  });

  it.each([
    ["prod-large", { storage: 3 }, "storage", "set openkeel:platform.medik8s.maxUnhealthy.storage below 3"],
    ["prod-large", { compute: "100%" }, "compute", "set openkeel:platform.medik8s.maxUnhealthy.compute below 3"],
    ["prod-medium", { network: 2 }, "network", "set openkeel:platform.medik8s.maxUnhealthy.network below 2"],
  ] as const)("%s, maxUnhealthy %j: the stack's error, naming the setting", (stack, maxUnhealthy, group, fix) => {
    const r = planStack(mutatedConfig(stack, (raw) => (raw.platform = { ...raw.platform, medik8s: { maxUnhealthy } })));
    expect(r.plan).toBeUndefined();
    const found = r.problems.filter((p) => p.code === "nhc-storm-guard");
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ level: "error", path: `openkeel:platform.medik8s.maxUnhealthy.${group}` });
    expect(found[0].message).toMatch(new RegExp(`^a cluster-wide event .* would fence every ${group} node at once`));
    expect(found[0].fix).toContain(fix);
  });
});

describe("3. what a loss leaves to a human is what the failure-domain table says", () => {
  it("the table reads the checks the Plan holds: checks drawn across zones leave two hypervisors of two zones unfenced, and it says so", () => {
    const plan = redrawn("prod-large", (nhcs) => [
      ...nhcs.filter((o) => !o.metadata.name.startsWith("openkeel-compute-")),
      nhc(named(nhcs, "openkeel-compute-zone-a"), "openkeel-compute", 1),
    ]);
    const loss = (p: Plan) => NHC_CONSTRAINT.loss!(new Loss(p.nodes, new Set(["cmp-a-01", "cmp-b-01"])), p.feasibility?.[NHC_CONSTRAINT.key]);
    expect(loss(planOf("prod-large")).map((f) => [f.what, f.level])).toEqual([
      ["NHC openkeel-compute-zone-a", "holds"],
      ["NHC openkeel-compute-zone-b", "holds"],
    ]);
    expect(loss(plan).map((f) => [f.what, f.level])).toEqual([["NHC openkeel-compute", "degraded"]]);
  });

  it("docs/node-lifecycle.md's prod-large row says of a whole zone what every zone row of the table says", () => {
    const doc = fs.readFileSync(path.join(REPO, "docs/node-lifecycle.md"), "utf8");
    const row = doc.split("\n").find((l) => l.startsWith("| prod-large |"))!;
    const [, , fenced, left] = row.split("|").map((c) => c.trim());
    const ofZone = (cell: string) => cell.slice(cell.indexOf("A whole zone:"));
    // the roles the docs name, as the checks' groups
    const GROUPS: [RegExp, string][] = [
      [/Kubernetes control-plane/, "kubernetes-control-plane"],
      [/OpenKeel control-plane/, "control-plane"],
      [/network/, "network"],
      [/provisioning/, "provisioning"],
      [/storage/, "storage"],
      [/compute/, "compute"],
    ];
    const named = (cell: string) => GROUPS.filter(([re]) => re.test(ofZone(cell))).map(([, g]) => g);
    const group = (what: string) => what.replace(/^NHC openkeel-/, "").replace(/-zone-[a-z]$/, "");
    const table = JSON.parse(fs.readFileSync(path.join(REPO, "rendered/prod-large/placement.json"), "utf8")).failureDomains as FailureDomainTable;
    const zones = table.rows.filter((r) => r.kind === "zone");
    expect(zones).toHaveLength(3);
    for (const z of zones) {
      const nhc = z.findings.filter((f) => f.what.startsWith("NHC openkeel-"));
      // "its … nodes": of the roles the zone has nodes of (zone-c has no provisioning node)
      const has = new Set(nhc.map((f) => group(f.what)));
      const said = (cell: string) =>
        named(cell)
          .filter((g) => has.has(g))
          .sort();
      expect(
        nhc
          .filter((f) => f.level === "holds")
          .map((f) => group(f.what))
          .sort(),
        z.zone,
      ).toEqual(said(fenced));
      expect(
        nhc
          .filter((f) => f.level !== "holds")
          .map((f) => group(f.what))
          .sort(),
        z.zone,
      ).toEqual(said(left));
    }
  });
});

describe("the checks drawn along the zones (platform/medik8s-groups.ts)", () => {
  it("a role with two or more nodes in some zones and one in others: per-zone checks, the rest joined; the rule holds, and a failure in each of the lone zones is fenced", () => {
    // storage: zone-a 7 nodes, zone-b sto-4, zone-c sto-7
    const cfg = mutatedConfig("prod-large", (raw) =>
      raw.nodes.filter((n: any) => ["sto-5", "sto-6", "sto-8", "sto-9"].includes(n.name)).forEach((n: any) => (n.zone = "zone-a")),
    );
    const plan = planOf(cfg);
    const storage = objectsOf(plan, "medik8s-remediation").filter((o) => o.metadata.name.startsWith("openkeel-storage")) as any[];
    expect(storage.map((o) => [o.metadata.name, o.spec.maxUnhealthy, o.spec.selector.matchExpressions.find((e: any) => e.key === ZONE)])).toEqual([
      ["openkeel-storage", 2, { key: ZONE, operator: "NotIn", values: ["zone-a"] }],
      ["openkeel-storage-zone-a", 1, { key: ZONE, operator: "In", values: ["zone-a"] }],
    ]);
    expect(rule(plan)).toEqual({ bugs: [], stack: [] });
    const f = NHC_CONSTRAINT.loss!(new Loss(plan.nodes, new Set(["sto-4", "sto-7"])), plan.feasibility?.[NHC_CONSTRAINT.key]);
    expect(f.map((x) => [x.what, x.level])).toEqual([["NHC openkeel-storage", "holds"]]);
  });

  it("a node alone in its role has no check, and the placement's coverage check lets it be", () => {
    expect(objectsOf(planOf("prod-medium"), "medik8s-remediation").map((o) => o.metadata.name)).not.toContain("openkeel-provisioning");
    expect(planStack(shippedConfig("prod-medium")).problems.filter((p) => p.level === "error")).toEqual([]);
  });
});
