// Failure domains (issue 39): what losing a node, a zone, the drained nodes, or one node more while
// they are drained, costs each shipped stack (lifecycle/failure-domains.ts), where it is shown
// (placement.json and placement.md, npm run plan, the preview), what production refuses, and the
// NodeHealthCheck math of § 5.6 behind the fencing column.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { capture } from "../../cli/cli";
import { MAINTENANCE_STATE } from "../../config/lifecycle";
import { planStack, resolveStack } from "../../environments";
import { Loss } from "../../lifecycle/feasibility";
import { renderCommand } from "../../pipeline/render-command";
import { failureSummary, rowLevel, type FailureDomainTable, type LossFinding } from "../../placement/failure-table";
import { placementSummary } from "../../placement/summary";
import { NHC_CONSTRAINT, nhcFences } from "../../platform/medik8s-groups";
import { readIndex, readPlacement } from "../../render/rendered";
import { previewStack } from "../../review/preview";
import { objectsOf, planOf, shippedPlan, valuesOf } from "../helpers/plans";
import { mutatedConfig, PRODUCTION_STACKS, REPO, SHIPPED_STACKS, shippedRaw, tempStacks, renderTree } from "../helpers/stacks";

const tableOf = (stack: string) => readPlacement(fs.readFileSync(path.join(REPO, "rendered", stack, "placement.json"), "utf8"), stack).failureDomains!;

/** The plan's errors of a stack edited, without the ovs-two-stacks warning every production stack has. */
const errors = (stack: string, edit: (raw: any) => void) =>
  planStack(mutatedConfig(stack, edit))
    .problems.filter((p) => p.level === "error")
    .map((p) => ({ code: p.code, path: p.path, message: p.message, fix: p.fix }));

describe("the table, in every shipped render", () => {
  it.each(SHIPPED_STACKS)("%s: placement.json has a row for every node, every zone; placement.md draws it", (stack) => {
    const t = tableOf(stack);
    const nodes = readIndex(fs.readFileSync(path.join(REPO, "rendered", stack, "index.yaml"), "utf8"), stack).nodes.map((n) => n.name);
    const nodeRows = t.rows.filter((r) => r.kind === "node");
    // every node in exactly one node row
    expect(nodeRows.flatMap((r) => r.nodes).sort()).toEqual([...nodes].sort());
    expect(t.rows.filter((r) => r.kind === "zone").map((r) => r.zone)).toEqual(t.zones);
    const md = fs.readFileSync(path.join(REPO, "rendered", stack, "placement.md"), "utf8");
    expect(md).toContain("## Failure domains");
    for (const r of t.rows)
      expect(md).toContain(
        `| ${r.kind === "zone" ? `zone ${r.zone}` : r.kind === "node" ? "one node" : r.kind === "drained" ? "the drained nodes" : "one node more"} | ${r.nodes.join(", ")} | ${rowLevel(r)} |`,
      );
  });

  it("prod-large: three zones, each survived; a zone's quorums keep 2 of 3 members, one per zone", () => {
    const t = tableOf("prod-large");
    expect(t.zones).toEqual(["zone-a", "zone-b", "zone-c"]);
    expect(t.required).toEqual(["node", "zone"]);
    for (const zone of t.rows.filter((r) => r.kind === "zone")) {
      expect(rowLevel(zone), zone.zone).toBe("degraded");
      const galera = zone.findings.find((f) => f.what === "Galera")!;
      expect(galera.message).toBe(
        "at worst (3 members on 6 nodes, one per zone) 1 of its 3 members lost: the 2 left are a bare majority, one more failure loses it",
      );
      // one replica per zone: a zone's loss leaves 2 of every volume
      expect(zone.findings.find((f) => f.what.startsWith("Longhorn longhorn,"))).toMatchObject({ level: "holds" });
    }
  });

  it("the lab: its one node's loss is fatal, drawn but not refused (not production)", () => {
    const t = tableOf("lab");
    expect(t.required).toEqual([]);
    expect(t.rows.map(rowLevel)).toEqual(["fatal"]);
  });

  it("npm run plan's line: the largest loss survived", () => {
    expect(placementSummary(shippedPlan("prod-large").placement!)[1]).toMatch(
      /^failure domains: survives the loss of any one node and of any one zone \(zone-a, zone-b, zone-c\); degraded by \d+ of \d+ losses/,
    );
    expect(placementSummary(shippedPlan("prod-medium").placement!)[1]).toMatch(/^failure domains: survives the loss of any one node; no zones;/);
    expect(placementSummary(shippedPlan("lab").placement!)[1]).toMatch(
      /^failure domains: a single node's loss is fatal: openkeel-lab-control-plane \(Galera, RabbitMQ, OVN central, .*etcd\)/,
    );
  });
});

describe("a change that makes a loss fatal: the plan refuses it in production, the preview says it", () => {
  const cases: [string, string, (raw: any) => void, RegExp, RegExp][] = [
    [
      "prod-small",
      "only node-1 keeps the network role",
      (raw) => raw.nodes.slice(1).forEach((n: any) => (n.roles = n.roles.filter((r: string) => r !== "network"))),
      /^losing node-1 would be fatal: gateway chassis: 0 of 1 gateway chassis left: every router's gateway/,
      /network nodes in more than one failure domain/,
    ],
    [
      "prod-medium",
      "one Kube-OVN master",
      (raw) => (raw.platform = { ...raw.platform, kubeOvn: { masterNodes: ["cp-1"] } }),
      /^losing cp-1 would be fatal: Kube-OVN central: 1 of its 1 member\(s\) lost, 0 left: no majority \(1\), no new pod gets a network port/,
      /^3 Kube-OVN masters/,
    ],
    [
      "prod-large",
      "every network node in zone-a",
      (raw) => raw.nodes.filter((n: any) => n.name === "net-2" || n.name === "net-3").forEach((n: any) => (n.zone = "zone-a")),
      /^losing zone zone-a would be fatal: gateway chassis: 0 of 3 gateway chassis left/,
      /one per zone in large \(§ 6\.3\)/,
    ],
    [
      "prod-large",
      "storage nodes in two zones (Longhorn's replicas may then share one)",
      (raw) => raw.nodes.filter((n: any) => ["sto-7", "sto-8", "sto-9"].includes(n.name)).forEach((n: any) => (n.zone = "zone-a")),
      /^losing zone zone-a would be fatal: Longhorn longhorn, longhorn-rwx and longhorn-vm: at worst 3 of 3 replicas of a volume on the lost nodes: a volume with all its replicas there is unavailable, its only data on them \(replicaZoneSoftAntiAffinity lets replicas share a zone\)/,
      /storage nodes in 3 zones with replicaZoneSoftAntiAffinity false/,
    ],
  ];

  it.each(cases)(
    "%s, %s: a plan check error with the cause and the fix; the render the preview runs fails with it",
    async (stack, _what, edit, message, fix) => {
      const found = errors(stack, edit).filter((e) => (e.code === "node-loss-fatal" || e.code === "zone-loss-fatal") && message.test(e.message));
      expect(found).toHaveLength(1);
      expect(found[0].fix).toMatch(fix);
      // the preview renders the change with npm run render, whose output it reports when the render fails
      const raw = structuredClone(shippedRaw(stack)) as any;
      edit(raw);
      const dir = tempStacks({ s: raw });
      const r = await capture(renderCommand, ["--stacks-dir", dir, "--out", path.join(dir, "out")]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`error \\[${found[0].code}\\]: ${message.source.slice(1)}`));
    },
  );

  it("the lab (not refused): a second node, the only hypervisor once the first loses compute; the preview says its loss became fatal", () => {
    const worker = (raw: any) => raw.nodes.push({ name: "openkeel-lab-worker", roles: ["compute"] });
    const base = renderTree(mutatedConfig("lab", worker));
    const head = renderTree(
      mutatedConfig("lab", (raw) => {
        worker(raw);
        raw.nodes[0].roles = ["controlPlane", "network", "storage"];
      }),
    );
    const p = previewStack("lab", base, head);
    expect(p.findings.filter((f) => f.code === "failure-domain").map((f) => f.message)).toEqual([
      "after this change, losing openkeel-lab-worker is fatal: hypervisors: 0 of 1 hypervisors left: every VM is down, and none can start anywhere",
    ]);
    expect(p.findings.find((f) => f.code === "failure-domain")!.reason).toBe(
      "in the base, losing openkeel-lab-worker runs degraded (the failure-domain table of placement.md, docs/node-lifecycle.md)",
    );
  });

  it("prod-medium, a drain that passes: the preview says which loss it makes fatal while it lasts", () => {
    const p = previewStack(
      "prod-medium",
      renderTree(mutatedConfig("prod-medium", () => {})),
      renderTree(mutatedConfig("prod-medium", (raw) => (raw.nodes[0].state = "maintenance"))),
    );
    const messages = p.findings.filter((f) => f.code === "failure-domain").map((f) => f.message);
    expect(messages).toContainEqual(
      expect.stringMatching(
        /^after this change, losing any one of cp-2, cp-3 while cp-1 is drained is fatal: .*Galera: 2 of its 3 member\(s\) lost, 1 left: no majority \(2\)/,
      ),
    );
    expect(messages).toContainEqual(expect.stringMatching(/^after this change, draining cp-1 runs degraded: .*etcd: 1 of its 3 members lost/));
  });
});

describe("NodeHealthCheck's math (§ 5.6, NHC v0.12.0)", () => {
  it("fences all of a check's unhealthy nodes or none: total − unhealthy ≥ total − maxUnhealthy, a percentage rounded up, more than the total refused", () => {
    expect(nhcFences(3, 1, 1).fences).toBe(true);
    expect(nhcFences(3, 2, 1).fences).toBe(false);
    expect(nhcFences(9, 3, "34%")).toMatchObject({ fences: true, allowed: 4 });
    expect(nhcFences(3, 2, "34%")).toMatchObject({ fences: true, allowed: 2 });
    expect(nhcFences(3, 3, "34%").fences).toBe(false);
    expect(nhcFences(1, 1, 2)).toMatchObject({ fences: false, refused: expect.stringMatching(/greater than its 1 selected node/) });
  });

  /** What NHC does when these nodes of a shipped stack fail at once: each check's finding. */
  function fencing(stack: string, lost: string[], drained: string[] = []): Record<string, LossFinding["level"]> {
    const plan = planOf(stack);
    const nodes = plan.nodes.map((n) => (drained.includes(n.name) ? { ...n, state: MAINTENANCE_STATE } : n));
    const loss = new Loss(nodes, new Set([...lost, ...drained]), new Set(drained));
    return Object.fromEntries(NHC_CONSTRAINT.loss!(loss, plan.feasibility?.["medik8s-remediation"]).map((f) => [f.what, f.level]));
  }

  it("prod-small: one node is fenced and its VMs evacuated; two at once are a human's (the quorum's check fences one at a time)", () => {
    expect(fencing("prod-small", ["node-1"])).toEqual({ "NHC openkeel-control-plane": "holds" });
    expect(fencing("prod-small", ["node-1", "node-2"])).toEqual({ "NHC openkeel-control-plane": "degraded" });
  });

  it("prod-medium: two hypervisors at once are a human's; a hypervisor, a gateway and a control-plane node are each fenced by their own check", () => {
    // compute+storage nodes: the storage check's (its group comes first)
    expect(fencing("prod-medium", ["cmp-01"])).toEqual({ "NHC openkeel-storage": "holds" });
    expect(fencing("prod-medium", ["cmp-01", "cmp-02"])).toEqual({ "NHC openkeel-storage": "degraded" });
    expect(fencing("prod-medium", ["cmp-01", "net-1", "cp-1"])).toEqual({
      "NHC openkeel-control-plane": "holds",
      "NHC openkeel-storage": "holds",
      "NHC openkeel-network": "holds",
    });
    expect(fencing("prod-medium", ["cp-1", "cp-2"])).toEqual({ "NHC openkeel-control-plane": "degraded" });
  });

  it("prod-large: hypervisors of two zones are each fenced (one check per zone); two of one zone, or a zone, are a human's", () => {
    expect(fencing("prod-large", ["cmp-a-01", "cmp-b-01"])).toEqual({ "NHC openkeel-compute-zone-a": "holds", "NHC openkeel-compute-zone-b": "holds" });
    expect(fencing("prod-large", ["cmp-a-01", "cmp-a-02"])).toEqual({ "NHC openkeel-compute-zone-a": "degraded" });
    expect(fencing("prod-large", ["k8s-cp-1", "k8s-cp-2"])).toEqual({ "NHC openkeel-kubernetes-control-plane": "degraded" });
    expect(fencing("prod-large", ["ok-cp-1", "ok-cp-3"])).toEqual({ "NHC openkeel-control-plane": "degraded" });
    const zone = tableOf("prod-large").rows.find((r) => r.zone === "zone-a")!;
    const nhc = zone.findings.filter((f) => f.what.startsWith("NHC"));
    expect(Object.fromEntries(nhc.map((f) => [f.what, f.level]))).toEqual({
      "NHC openkeel-control-plane": "degraded",
      "NHC openkeel-kubernetes-control-plane": "holds",
      "NHC openkeel-network": "holds",
      "NHC openkeel-storage-zone-a": "degraded",
      "NHC openkeel-compute-zone-a": "degraded",
      "NHC openkeel-provisioning": "holds",
    });
    const compute = nhc.find((f) => f.what === "NHC openkeel-compute-zone-a")!;
    expect(compute.message).toContain("none of their VMs is evacuated: evacuation waits for the fencing (§ 5.6)");
    expect(compute.fix).toContain("kubectl taint nodes <node> node.kubernetes.io/out-of-service=nodeshutdown:NoExecute");
  });

  it("prod-large: the gateways (one per zone, one check across them) are fenced one per zone in two zones, never all three; the provisioning nodes one at a time", () => {
    expect(fencing("prod-large", ["net-1"])).toEqual({ "NHC openkeel-network": "holds" });
    expect(fencing("prod-large", ["net-1", "net-2"])).toEqual({ "NHC openkeel-network": "holds" });
    expect(fencing("prod-large", ["net-1", "net-2", "net-3"])).toEqual({ "NHC openkeel-network": "degraded" });
    expect(fencing("prod-large", ["prov-1"])).toEqual({ "NHC openkeel-provisioning": "holds" });
    expect(fencing("prod-large", ["prov-1", "prov-2"])).toEqual({ "NHC openkeel-provisioning": "degraded" });
    // one gateway drained: the check selects two, and fences one of them
    expect(fencing("prod-large", ["net-1"], ["net-3"])).toEqual({ "NHC openkeel-network": "holds" });
    expect(fencing("prod-large", ["net-1", "net-2"], ["net-3"])).toEqual({ "NHC openkeel-network": "degraded" });
  });

  it("a cluster-wide event (every node NotReady at once) fences no node of any shipped stack: every check's storm guard holds", () => {
    for (const stack of PRODUCTION_STACKS) {
      const all = planOf(stack).nodes.map((n) => n.name);
      const levels = fencing(stack, all);
      expect(Object.keys(levels).length, stack).toBeGreaterThan(0);
      for (const [what, level] of Object.entries(levels)) expect(level, `${stack} ${what}`).toBe("degraded");
    }
  });

  it("prod-medium: the only provisioning node has no check of its own: left to a human, said in its row", () => {
    const f = NHC_CONSTRAINT.loss!(new Loss(planOf("prod-medium").nodes, new Set(["prov-1"])), planOf("prod-medium").feasibility?.["medik8s-remediation"]);
    expect(f).toEqual([
      {
        what: "NHC (no check)",
        level: "degraded",
        message:
          "prov-1: alone in its group (a node is in the check of its first role), watched by no NodeHealthCheck of ours (a check of one node would fence it in a cluster-wide event too): nothing fences it, left to a human",
        fix: expect.stringContaining(
          "a node that stays down is fenced by hand (power it off, then kubectl taint nodes <node> node.kubernetes.io/out-of-service=nodeshutdown:NoExecute",
        ),
      },
    ]);
  });

  it("a drained node is out of its check: it neither counts nor is fenced", () => {
    // cmp-02 in maintenance: cmp-01's loss is 1 of 2 selected
    expect(fencing("prod-medium", ["cmp-01"], ["cmp-02"])).toEqual({ "NHC openkeel-storage": "holds" });
    expect(fencing("prod-medium", ["cmp-01", "cmp-03"], ["cmp-02"])).toEqual({ "NHC openkeel-storage": "degraded" });
  });

  it("every check carries stormCooldownDuration (= the unhealthy duration), and per-zone checks select their zone", () => {
    const nhcs = objectsOf(planOf("prod-large"), "medik8s-remediation").filter((o) => o.kind === "NodeHealthCheck") as any[];
    expect(nhcs.map((o) => [o.metadata.name, o.spec.maxUnhealthy])).toEqual([
      ["openkeel-control-plane", 1],
      ["openkeel-kubernetes-control-plane", 1],
      ["openkeel-network", "50%"],
      ["openkeel-storage-zone-a", 1],
      ["openkeel-storage-zone-b", 1],
      ["openkeel-storage-zone-c", 1],
      ["openkeel-compute-zone-a", 1],
      ["openkeel-compute-zone-b", 1],
      ["openkeel-compute-zone-c", 1],
      ["openkeel-provisioning", "50%"],
    ]);
    for (const o of nhcs) expect(o.spec.stormCooldownDuration).toBe("300s");
    expect(nhcs[3].spec.selector.matchExpressions).toContainEqual({ key: "topology.kubernetes.io/zone", operator: "In", values: ["zone-a"] });
    // the control plane's (a quorum) and the network nodes' (one per zone: joined) span the zones
    for (const i of [0, 2]) expect(nhcs[i].spec.selector.matchExpressions.map((e: any) => e.key)).not.toContain("topology.kubernetes.io/zone");
  });

  it("a maxUnhealthy above a check's nodes is a plan check error: NHC would remediate none of them", () => {
    const found = errors("prod-large", (raw) => (raw.platform = { ...raw.platform, medik8s: { maxUnhealthy: { storage: 4 } } })).filter(
      (e) => e.code === "nhc-max-unhealthy",
    );
    expect(found.map((e) => e.message.replace(/ \(.*$/, ""))).toEqual([
      "NodeHealthCheck openkeel-storage-zone-a selects 3 node(s)",
      "NodeHealthCheck openkeel-storage-zone-b selects 3 node(s)",
      "NodeHealthCheck openkeel-storage-zone-c selects 3 node(s)",
    ]);
    expect(found[0]).toMatchObject({
      path: "openkeel:platform.medik8s.maxUnhealthy.storage",
      fix: "set openkeel:platform.medik8s.maxUnhealthy.storage to at most 3, or to a percentage",
    });
  });
});

describe("Longhorn's zones", () => {
  it("prod-large keeps one replica of a volume per zone; the unzoned stacks leave Longhorn's default", () => {
    expect(valuesOf(planOf("prod-large"), "longhorn").defaultSettings.replicaZoneSoftAntiAffinity).toBe(false);
    for (const stack of ["prod-small", "prod-medium"])
      expect(valuesOf(planOf(stack), "longhorn").defaultSettings).not.toHaveProperty("replicaZoneSoftAntiAffinity");
  });

  it("retiring a zone's last storage node is refused: no other zone may take its replica", () => {
    const found = errors("prod-large", (raw) => {
      raw.nodes.filter((n: any) => n.name === "sto-8" || n.name === "sto-9").forEach((n: any) => (n.zone = "zone-a"));
      raw.nodes.find((n: any) => n.name === "sto-7").state = "retiring";
    });
    // Swift's 9 members (one per storage node, the stack's count) would have 8 nodes too
    expect(found.map((e) => e.code)).toEqual(["longhorn-replicas", "swift-members"]);
    expect(found[0].message).toMatch(/^the Longhorn eviction of 'sto-7' can never finish: it leaves zone zone-c no storage node for its replica/);
    expect(found[0].fix).toBe("add a storage node in zone zone-c first (its own change, merged and deployed), then retire 'sto-7'");
  });
});

describe("renders before the table (schema 5)", () => {
  it("read without it; the preview against such a base says nothing of failure domains", () => {
    const head = renderTree(mutatedConfig("prod-medium", (raw) => (raw.nodes[0].state = "maintenance")));
    const base = renderTree(mutatedConfig("prod-medium", () => {}));
    const json = JSON.parse(base.get("placement.json")!);
    delete json.failureDomains;
    base.set("placement.json", JSON.stringify(json));
    base.set("index.yaml", base.get("index.yaml")!.replace(/^schemaVersion: \d+$/m, "schemaVersion: 5"));
    expect(readPlacement(base.get("placement.json")!, "base").failureDomains).toBeUndefined();
    expect(previewStack("prod-medium", base, head).findings.filter((f) => f.code === "failure-domain")).toEqual([]);
    // the same change against a schema-5 base says what the drain costs
    expect(previewStack("prod-medium", renderTree(mutatedConfig("prod-medium", () => {})), head).findings.some((f) => f.code === "failure-domain")).toBe(true);
  });
});

describe("the constraints say it, not the table", () => {
  it("every finding of every shipped row names its owner and, unless it holds, a fix", () => {
    for (const stack of SHIPPED_STACKS) {
      for (const row of (tableOf(stack) as FailureDomainTable).rows) {
        for (const f of row.findings) {
          expect(f.what.length).toBeGreaterThan(0);
          if (f.level !== "holds") expect(f.fix, `${stack} ${f.what}`).toBeTruthy();
        }
      }
    }
    expect(resolveStack(mutatedConfig("prod-large", () => {})).constraints.filter((c) => c.loss).length).toBeGreaterThan(8);
    expect(failureSummary(undefined)).toBeUndefined();
  });
});
