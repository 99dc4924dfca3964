// Day 2 that cannot dead-end (issue 21): each dead end of the issue as written, on the shipped
// stacks, and what the feasibility model (lifecycle/feasibility.ts) says instead — refused with the
// fix that works, or warned with the reason. Stacks are edited with the helpers of
// test/helpers/lifecycle.ts; renders are compared the way `npm run render` and the preview do.
import * as fs from "node:fs";
import * as path from "node:path";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { capture } from "../../cli/cli";
import { planStack } from "../../environments";
import { renderCommand } from "../../pipeline/render-command";
import { untoleratedTaints } from "../../placement/scheduling";
import { RenderedStack } from "../../render/rendered";
import { previewStack } from "../../review/preview";
import type { StackPreview } from "../../review/preview-model";
import { stackMarkdown } from "../../review/preview-markdown";
import { readTree } from "../../cli/write";
import { objectsOf, planOf, valuesOf, shippedPlan } from "../helpers/plans";
import { mutatedConfig, PROJECT_KEY, shippedRaw, tempStacks } from "../helpers/lifecycle";
import { isStandingWarning, renderTree } from "../helpers/stacks";

/** The taints of a disabled hypervisor (§ 4.1) and of a node NMO drains, as the issue names them. */
const COMPUTE_DISABLED = { key: "openkeel.io/compute-disabled", effect: "NoSchedule" as const };
const DRAIN = { key: "medik8s.io/drain", effect: "NoSchedule" as const };

const node = (raw: any, name: string) => {
  const n = raw.nodes.find((x: any) => x.name === name);
  if (!n) throw new Error(`no node ${name}`);
  return n;
};
const withState = (name: string, state: string) => (raw: any) => (node(raw, name).state = state);
const without = (name: string) => (raw: any) => (raw.nodes = raw.nodes.filter((n: any) => n.name !== name));
/** A fourth compute+storage node for prod-medium, as the fix says: added (and deployed) first. */
const withCmp04 = (raw: any) => raw.nodes.splice(6, 0, { ...structuredClone(node(raw, "cmp-03")), name: "cmp-04", internalIP: "10.30.1.14" });

function edited(stack: string, ...edits: ((raw: any) => void)[]): Record<string, unknown> {
  const raw = structuredClone(shippedRaw(stack));
  for (const e of edits) e(raw);
  return raw;
}

/** The stack's problems, without the warnings every production stack has (STANDING_WARNINGS). */
const problems = (stack: string, ...edits: ((raw: any) => void)[]) =>
  planStack(mutatedConfig(stack, (raw) => edits.forEach((e) => e(raw))))
    .problems.filter((p) => !isStandingWarning(p))
    .map((p) => ({
      level: p.level,
      code: p.code,
      path: p.path,
      message: p.message,
      fix: p.fix,
    }));

const rendered = (stack: string, ...edits: ((raw: any) => void)[]) => renderTree(mutatedConfig(stack, (raw) => edits.forEach((e) => e(raw))));
const steps = (p: StackPreview, name: string) => p.nodes.find((n) => n.node === name)?.steps.map((s) => `${s.when} ${s.what}`) ?? [];

/** A stacks folder with stack `s` rendered once into `out`; `next` renders it again edited. */
async function renderedOnce(raw: Record<string, unknown>) {
  const dir = tempStacks({ s: raw });
  const out = path.join(dir, "out");
  const first = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
  expect(first.code, first.stderr).toBe(0);
  const file = path.join(dir, "Pulumi.s.yaml");
  const stackTree = () => new Map([...readTree(out)].filter(([f]) => f.startsWith("s/")).map(([f, c]) => [f.slice(2), c]));
  const next = async (edit: Record<string, unknown>) => {
    fs.writeFileSync(file, stringify({ config: PROJECT_KEY(edit) }));
    return capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
  };
  return { file, out, next, stackTree };
}

describe("dead end 1: retiring a storage node when storage nodes = replicas (cmp-02 of prod-medium)", () => {
  it("is refused: the Longhorn eviction can never finish, and Swift's member has nowhere to go; the fix adds a storage node first", () => {
    const found = problems("prod-medium", withState("cmp-02", "retiring"));
    expect(found.map((p) => [p.level, p.code, p.path])).toEqual([
      ["error", "longhorn-replicas", "openkeel:nodes[4].state"],
      ["error", "swift-members", "openkeel:nodes[4].state"],
    ]);
    expect(found[0].message).toBe(
      "the Longhorn eviction of 'cmp-02' can never finish: the volumes of longhorn, longhorn-rwx and longhorn-vm keep 3 replicas, each on its own storage node, and 2 storage node(s) can take one ('cmp-01' and 'cmp-03')",
    );
    expect(found[1].message).toMatch(/^retiring 'cmp-02' leaves 2 storage node\(s\) for the 3 Swift storage members of openkeel-swift/);
    for (const p of found) expect(p.fix).toBe("add a storage node first (its own change, merged and deployed), then retire 'cmp-02'");
  });

  it("the fix works: with cmp-04 deployed first, retiring cmp-02 passes, and so does its removal, without touching longhorn-vm", async () => {
    expect(problems("prod-medium", withCmp04, withState("cmp-02", "retiring")).filter((p) => p.level === "error")).toEqual([]);
    const r = await renderedOnce(edited("prod-medium", withCmp04));
    const base = r.stackTree();
    expect((await r.next(edited("prod-medium", withCmp04, withState("cmp-02", "retiring")))).code).toBe(0);
    const retiring = r.stackTree();
    const removal = await r.next(edited("prod-medium", withCmp04, without("cmp-02")));
    expect(removal.code, removal.stderr).toBe(0);
    const p = previewStack("prod-medium", retiring, r.stackTree());
    // the stack sets Swift's members (3): the fourth node held none, and its removal moves no data
    expect(p.findings).toEqual([]);
    expect(p.actions.map((a) => a.resource)).not.toContain("StorageClass longhorn-vm");
    expect(removal.stdout).not.toContain("swift-");
    // what the retirement costs while it lasts (issue 39): the drain itself, and a storage node more lost meanwhile
    expect(previewStack("prod-medium", base, retiring).findings.map((f) => f.message.replace(/:.*/, ""))).toEqual([
      "after this change, draining cmp-02 runs degraded",
      "after this change, losing any one of cmp-01, cmp-03, cmp-04 while cmp-02 is drained runs degraded",
    ]);
  });

  it("a removal judged against a committed render in which it was retiring: refused the same way, with the committed replica count", () => {
    // a committed render of before this model: cmp-02 retiring, 3 storage nodes
    const committed = new RenderedStack(rendered("prod-medium"), "the base");
    const nodes = committed.index.nodes.map((n) => (n.name === "cmp-02" ? { ...n, state: "retiring" as const } : n));
    const index = { ...committed.index, nodes };
    const base = new Map(rendered("prod-medium"));
    base.set("index.yaml", stringify(index));
    // the stack's 3 Swift members cannot stay on 2 nodes: its change lowers them, as it must
    const p = previewStack(
      "prod-medium",
      base,
      rendered("prod-medium", without("cmp-02"), (raw) => (raw.services.swift.replicas.storage = 2)),
    );
    const errors = p.findings.filter((f) => f.level === "error");
    // the class cannot change in place (the preview's own finding), and the model says why the removal is wrong
    expect(errors.map((f) => f.code)).toEqual(["protected-replace", "protected-replace", "longhorn-replicas", "swift-members"]);
    expect(errors[2].message).toBe(
      "removing 'cmp-02' leaves 2 storage node(s) for the 3 replicas of longhorn, longhorn-rwx and longhorn-vm that the base has: every volume would stay degraded for good, and a StorageClass's numberOfReplicas cannot change in place",
    );
    expect(errors[2].fix).toBe("add a storage node first (its own change, merged and deployed), then retire and remove 'cmp-02'");
  });
});

describe("dead end 2: two of three compute+storage nodes in maintenance at once (cmp-01, cmp-02 of prod-medium)", () => {
  const found = problems("prod-medium", withState("cmp-01", "maintenance"), withState("cmp-02", "maintenance"));

  it("is refused, judged as a whole: Swift's second member cannot be drained; Longhorn's last replicas and where the VMs go are said", () => {
    expect(found.map((p) => [p.level, p.code])).toEqual([
      ["warning", "longhorn-replicas"],
      ["error", "swift-members"],
      ["warning", "hypervisors-left"],
    ]);
    expect(found[0].message).toMatch(/keep 3 replicas, one per storage node: a volume with replicas on them runs on its last replica/);
    expect(found[1].message).toMatch(/PodDisruptionBudget \(maxUnavailable: 1, § 2\.2\) holds the second drain/);
    expect(found[2].message).toBe(
      "'cmp-01' (in maintenance) and 'cmp-02' (in maintenance) would be out at once: their VMs live-migrate to 'cmp-03', which must have room for all of them; with one hypervisor left, no VM can live-migrate again until they are back",
    );
    expect(found.every((p) => p.path === "openkeel:nodes[4].state")).toBe(true);
    expect(found[1].fix).toBe("put one storage node at a time into maintenance or retiring; set the others back to active (or cordoned)");
  });

  it("one at a time passes, with nothing to say", () => {
    expect(problems("prod-medium", withState("cmp-01", "maintenance"))).toEqual([]);
  });
});

describe("dead end 3: risky removals", () => {
  it("removing one of prod-medium's two network nodes, retired first, is refused: the one left would be every router's single point of failure", async () => {
    const r = await renderedOnce(edited("prod-medium"));
    const base = r.stackTree();
    const retire = await r.next(edited("prod-medium", withState("net-2", "retiring")));
    expect(retire.stdout).toContain("warning [gateway-chassis]: 'net-2' (retiring) would leave one gateway chassis ('net-1')");
    // the preview says what the drain costs while it lasts (issue 39)
    const p = previewStack("prod-medium", base, r.stackTree());
    expect(p.findings.filter((f) => f.code === "failure-domain").map((f) => f.message)).toContainEqual(
      expect.stringMatching(/^after this change, losing net-1 while net-2 is drained is fatal: gateway chassis: 0 of 2 gateway chassis left/),
    );
    const removal = await r.next(edited("prod-medium", without("net-2")));
    expect(removal.code).toBe(1);
    expect(removal.stderr).toContain("error [node-loss-fatal]: losing net-1 would be fatal: gateway chassis: 0 of 1 gateway chassis left");
  });

  // prod-medium's storage nodes hold its 3 Swift members (the stack's count): one fewer node takes one member fewer
  const twoSwiftMembers = (raw: any) => (raw.services.swift = { ...raw.services.swift, replicas: { storage: 2 } });
  it.each([
    ["prod-large", "cmp-a-01", []],
    ["prod-large", "net-1", []],
    ["prod-large", "net-3", []],
    ["prod-medium", "cmp-03", [twoSwiftMembers]],
  ])("%s: removing an active node (%s) is refused, as on every topology", async (stack, name, more) => {
    const r = await renderedOnce(edited(stack));
    const before = readTree(r.out);
    const removal = await r.next(edited(stack, without(name), ...more));
    expect(removal.code).toBe(1);
    expect(removal.stderr).toContain(`error [node-removal]: node '${name}' holds`);
    expect(removal.stderr).toContain("would be removed while it is active");
    expect(readTree(r.out)).toEqual(before);
  });

  it("the steps of removing a hypervisor disable its Nova service before the drain, and delete it after", () => {
    const p = previewStack("prod-large", rendered("prod-large"), rendered("prod-large", without("cmp-a-01")));
    expect(steps(p, "cmp-a-01")).toEqual(["before disable Nova", "before drain", "before delete the Nova service", "after reset", "after delete"]);
  });
});

describe("dead end 5: disabled hypervisors and draining nodes keep their agents", () => {
  const placement = shippedPlan("prod-medium").placement!;
  const tolerations = (name: string) => placement.placements.find((p) => p.component.name === name)!.component.scheduling.tolerations ?? [];

  it.each([
    "openkeel-nova/computeAgent",
    "kubevirt/kubevirt/virt-handler",
    "longhorn/longhorn-manager",
    "longhorn/longhorn-csi-plugin+instance-managers",
    "openkeel-neutron/metadataAgent",
    "openkeel-neutron/chassis",
    "medik8s-remediation/self-node-remediation-config/self-node-remediation-agent",
  ])("%s tolerates openkeel.io/compute-disabled and medik8s.io/drain", (name) => {
    expect(untoleratedTaints([COMPUTE_DISABLED, DRAIN], tolerations(name))).toEqual([]);
  });

  it("the SNR agent tolerates everything (§ 5.6): {operator: Exists}", () => {
    const [config] = objectsOf(planOf("prod-medium"), "medik8s-remediation").filter((o) => o.kind === "SelfNodeRemediationConfig");
    expect((config as any).spec.customDsTolerations).toEqual([{ operator: "Exists" }]);
  });

  it("Longhorn's system-managed pods follow taintToleration, which lists both", () => {
    const setting: string = valuesOf(planOf("prod-medium"), "longhorn").defaultSettings.taintToleration;
    expect(setting.split(";")).toEqual(expect.arrayContaining(["openkeel.io/compute-disabled:NoSchedule", "medik8s.io/drain:NoSchedule"]));
  });

  it("a node agent that lacks one fails the placement check, at the stack key that placed it", () => {
    const found = problems("prod-medium", (raw) => {
      // the stack's extraTolerations replace the catalog's (stacks/README.md, placement.<component>)
      raw.services = { ...raw.services, nova: { placement: { computeAgent: { extraTolerations: [] } } } };
    });
    const at = "openkeel:services.nova.placement.computeAgent";
    expect(found.map((p) => [p.code, p.path])).toEqual([
      ["placement-agent-tolerations", at],
      ["placement-agent-tolerations", at],
      ["placement-reserved-host", at],
    ]);
    expect(found[0].message).toMatch(
      /^openkeel-nova\/computeAgent \(DaemonSet\) does not tolerate openkeel\.io\/compute-disabled:NoSchedule: a disabled hypervisor carries it/,
    );
  });
});

describe("dead end 4's setting: the drains of nodes with strict-local volumes can finish", () => {
  it("Longhorn's node drain policy lets a stopped last replica go (allow-if-replica-is-stopped, for D5)", () => {
    expect(valuesOf(planOf("prod-medium"), "longhorn").defaultSettings.nodeDrainPolicy).toBe("allow-if-replica-is-stopped");
  });
});

describe("dead end 6: the placement report and the preview show node state", () => {
  const head = rendered("prod-medium", withCmp04, withState("cmp-02", "retiring"));
  const md = head.get("placement.md")!;
  const placement = new RenderedStack(head, "head").placement!;

  it("placement.md: a state column; the Swift member marked off the retiring node; replicas counted on the nodes that remain", () => {
    expect(md).toContain("| role group | node | state | zone | taints |");
    expect(md).toContain("| compute+storage | cmp-02 | retiring | — | `node-role.openkeel.io/compute:NoSchedule` |");
    const swift = md.split("\n").find((l) => l.startsWith("| openkeel-swift/storage |"))!;
    // the stack sets 3 members: the fourth storage node holds none
    expect(swift).toContain("| StatefulSet | 3 (3 of 4 node(s) left) |");
    const cells = swift.split("|").map((c) => c.trim());
    const column = (n: string) => placement.nodes.findIndex((x) => x.name === n) + 6;
    expect([cells[column("cmp-01")], cells[column("cmp-02")]]).toEqual(["●", "○"]);
    expect(placement.components.find((c) => c.name === "openkeel-swift/storage")!.heldOff).toEqual({
      "cmp-02": [
        "taint node.kubernetes.io/unschedulable:NoSchedule not tolerated (retiring)",
        "taint medik8s.io/drain:NoSchedule not tolerated (retiring)",
        "taint openkeel.io/compute-disabled:NoSchedule not tolerated (retiring)",
      ],
    });
  });

  it("the node agents stay on it: no DaemonSet is held off a retiring node", () => {
    expect(placement.components.filter((c) => c.kind === "DaemonSet" && c.heldOff?.["cmp-02"]).map((c) => c.name)).toEqual([]);
  });

  it("the preview says the state change among the placement's, not '0 node(s)'", () => {
    const p = previewStack("prod-medium", rendered("prod-medium", withCmp04), head);
    const text = stackMarkdown(p);
    expect(text).not.toContain("0 node(s)");
    expect(text).toContain("- node `cmp-02`: state: active → retiring");
    expect(text).toContain("- `openkeel-swift/storage`: held off cmp-02 by its state");
  });

  it("maintenance of cmp-02 on the shipped prod-medium: one node in the delta, with its state", () => {
    const p = previewStack("prod-medium", rendered("prod-medium"), rendered("prod-medium", withState("cmp-02", "maintenance")));
    expect(p.placement?.nodes).toEqual([{ node: "cmp-02", op: "changed", fields: ["state: active → maintenance"] }]);
  });
});
