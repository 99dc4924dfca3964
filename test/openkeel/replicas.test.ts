// Settings that break the cloud, refused (issue 38, part 3): replica counts below what § 2's
// PodDisruptionBudgets and the quorums need, counts an HPA owns set outside its bounds, Swift's
// members below an object's replicas, and the retire rule of Swift's members as the docs state it.
// Each refusal says what the count would break. (The bad-input catalog trips each through the
// render: test/fixtures/bad-stacks/replicas-*.yaml, swift-members-below-replicas, state-disabled.)
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { planStack } from "../../environments";
import { configProblems, mutatedConfig, REPO } from "../helpers/stacks";
import { valuesOf } from "../helpers/plans";

/** The errors of planning a shipped stack edited, as [code, key path, message]. */
const errors = (stack: string, edit: (raw: any) => void) =>
  planStack(mutatedConfig(stack, edit))
    .problems.filter((p) => (p.level ?? "error") === "error")
    .map((p) => [p.code, p.path, p.message] as const);
const replicas = (service: string, counts: Record<string, number>) => (raw: any) => (raw.services = { ...raw.services, [service]: { replicas: counts } });

describe("replica counts below what the design needs are refused, with what they break", () => {
  it("0 replicas of Keystone's API: no pod, and no API of the cloud answers", () => {
    const found = errors("prod-medium", replicas("keystone", { api: 0 }));
    expect(found).toEqual([
      [
        "replicas-none",
        "openkeel:services.keystone.replicas.api",
        "release openkeel-keystone (service keystone), values key api.replicas: 0 replicas of openkeel-keystone api: no pod; without Keystone, every API of the cloud refuses its requests (they all authenticate through it)",
      ],
    ]);
  });

  it.each([1, 2])("%i replica(s) of an API whose PodDisruptionBudget keeps 2: a drain that can never finish", (n) => {
    const found = errors("prod-medium", replicas("glance", { api: n }));
    expect(found.map(([code, p]) => [code, p])).toEqual([["replicas-below-design", "openkeel:services.glance.replicas.api"]]);
    expect(found[0][2]).toContain(
      `${n} replica(s) of the glance API, whose PodDisruptionBudget keeps 2 available (§ 2.2: minAvailable 2 of 3): no pod may be evicted`,
    );
  });

  it("raw values count as the stack's too (the final values are judged)", () => {
    const found = errors("prod-medium", (raw) => (raw.services = { ...raw.services, glance: { values: { api: { replicas: 2 } } } }));
    expect(found.map(([code, p]) => [code, p])).toEqual([["replicas-below-design", "openkeel:services.glance.values.api.replicas"]]);
  });

  it("a Lease worker alone: no standby to take the Lease while its node drains", () => {
    const found = errors("prod-medium", replicas("nova", { conductor: 1 }));
    expect(found.map(([code, p]) => [code, p])).toEqual([["replicas-below-design", "openkeel:services.nova.replicas.conductor"]]);
    expect(found[0][2]).toMatch(
      /a drain or a failure of its node leaves no standby to take the Lease, and nova conductor stops until its pod starts elsewhere$/,
    );
  });

  it("a quorum: an even count, or fewer members than the topology gives", () => {
    const even = errors("prod-medium", replicas("neutron", { ovnCentral: 2 }));
    expect(even.map(([code]) => code)).toEqual(["replicas-quorum"]);
    expect(even[0][2]).toMatch(/2 members of openkeel-neutron ovnCentral, a quorum: a majority of 2 is 2/);
    const one = errors("prod-medium", replicas("neutron", { ovnCentral: 1 }));
    expect(one[0][2]).toMatch(/a quorum the topology gives 3 .*: with 1, the loss of one member stops it$/);
  });

  it("Swift's members below an object's 3 replicas, where the storage nodes could hold them apart; 0 stores nothing", () => {
    const two = errors("prod-medium", (raw) => (raw.services.swift.replicas.storage = 2));
    expect(two.map(([code, p]) => [code, p])).toEqual([["replicas-below-design", "openkeel:services.swift.replicas.storage"]]);
    expect(two[0][2]).toMatch(/2 Swift storage member\(s\) for the 3 replicas of each object \(§ 6\.1\): 2 of them share a member/);
    expect(errors("prod-medium", (raw) => (raw.services.swift.replicas.storage = 0))[0][2]).toMatch(/no pod; Swift stores no object$/);
  });

  it("the design's counts, and those the topology caps (the 1-node lab), pass", () => {
    expect(errors("prod-medium", replicas("glance", { api: 3 }))).toEqual([]);
    expect(errors("prod-medium", replicas("nova", { conductor: 3 }))).toEqual([]);
    expect(errors("lab", replicas("glance", { api: 1 }))).toEqual([]);
    expect(valuesOf(planStack(mutatedConfig("lab", () => undefined)).plan!, "openkeel-keystone").api.replicas).toBe(1);
  });
});

describe("a count an HPA owns stays within its bounds (prod-large, openkeel:autoscaling.apis 3 to 6)", () => {
  it.each([2, 7, 10])("%i replicas of Keystone's API: the HPA and Helm would fight over it", (n) => {
    const found = errors("prod-large", replicas("keystone", { api: n }));
    expect(found.map(([code, p]) => [code, p])).toEqual([["replicas-autoscaler", "openkeel:services.keystone.replicas.api"]]);
    expect(found[0][2]).toContain(`${n} replicas of the keystone API, which a HorizontalPodAutoscaler keeps between 3 and 6 (openkeel:autoscaling.apis)`);
  });

  it("within the bounds it passes, and the HPA scales from there", () => {
    expect(errors("prod-large", replicas("keystone", { api: 4 }))).toEqual([]);
  });
});

describe("state: disabled", () => {
  it("is no state: the fix names the two ways to stop new VMs without a drain (§ 4.1), and that maintenance drains", () => {
    const [p] = configProblems("prod-medium", (raw) => (raw.nodes.find((n: any) => n.name === "cmp-01").state = "disabled"));
    expect(p.path).toBe("openkeel:nodes[3].state");
    expect(p.message).toBe(`node 'cmp-01': is string "disabled", not one of active, cordoned, maintenance, retiring`);
    expect(p.fix).toMatch(/^to stop new VMs on this hypervisor without draining it, write state: cordoned .*'cordoned in Kubernetes', § 4\.1/);
    expect(p.fix).toContain(
      "openstack compute service set --disable <node> nova-compute (the compute agent taints the node openkeel.io/compute-disabled:NoSchedule",
    );
    expect(p.fix).toContain("maintenance would drain the node");
    // and the runbook says the same
    const doc = fs.readFileSync(path.join(REPO, "docs/node-lifecycle.md"), "utf8");
    expect(doc).toContain("state: cordoned");
  });
});

describe("Swift's members leaving: the retire check and the docs use one rule (storage nodes staying >= members)", () => {
  /** prod-medium with a fourth storage node, and the stack's Swift members at `members`. */
  const fourNodes = (members: number) => (raw: any) => {
    raw.nodes.splice(6, 0, { ...structuredClone(raw.nodes.find((n: any) => n.name === "cmp-03")), name: "cmp-04", internalIP: "10.30.1.14" });
    raw.services.swift.replicas.storage = members;
  };
  const retire = (members: number) => (raw: any) => {
    fourNodes(members)(raw);
    raw.nodes.find((n: any) => n.name === "cmp-04").state = "retiring";
  };

  it("4 members on 4 storage nodes: retiring one leaves 3 nodes for 4 members, refused (not judged against min(members, 3))", () => {
    const found = errors("prod-medium", retire(4));
    expect(found.map(([code, p]) => [code, p])).toEqual([["swift-members", "openkeel:nodes[6].state"]]);
    expect(found[0][2]).toMatch(
      /^retiring 'cmp-04' leaves 3 storage node\(s\) for the 4 Swift storage members of openkeel-swift .*: the member of 'cmp-04' has no node to start on$/,
    );
    const fix = planStack(mutatedConfig("prod-medium", retire(4))).problems.find((p) => p.code === "swift-members")!.fix;
    expect(fix).toBe(
      "add a storage node first (its own change, merged and deployed), then retire 'cmp-04'; or lower openkeel:services.swift.replicas.storage to 3 first (its own change, deployed: the StatefulSet removes its highest ordinal, and the rings move that member's replicas)",
    );
  });

  it("3 members on 4 storage nodes: the retirement passes", () => {
    expect(errors("prod-medium", retire(3))).toEqual([]);
  });

  it("docs/node-lifecycle.md states the same rule", () => {
    const doc = fs.readFileSync(path.join(REPO, "docs/node-lifecycle.md"), "utf8");
    expect(doc).toContain("fewer storage nodes than Swift storage members");
  });
});
