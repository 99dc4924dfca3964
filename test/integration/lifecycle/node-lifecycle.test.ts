// Node lifecycle (issue 15, item 1): each operator scenario as a stack edit and what it yields —
// the objects `pulumi up` would apply, the preview a reviewer approves (actions, the state change,
// the steps in order), the plan checks and the removal guard of `npm run render`.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import type { LoadedConfig } from "../../../config/schema";
import { planStack, resolveStack } from "../../../environments";
import { RenderedStack } from "../../../render/rendered";
import { capture } from "../../../cli/cli";
import { lifecycleChecks } from "../../../lifecycle/checks";
import type { NodeLifecycle } from "../../../lifecycle/contributor";
import { nodeRemovalChecks } from "../../../lifecycle/guards";
import { nodeSteps } from "../../../lifecycle/steps";
import { OPENKEEL } from "../../../openkeel/descriptor";
import { longhorn } from "../../../platform/longhorn";
import { medik8s } from "../../../platform/medik8s";
import { unmigratableVmis } from "../../../platform/kubevirt";
import { hasErrors, previewStack } from "../../../review/preview";
import type { StackPreview, Tree } from "../../../review/preview-model";
import { stackMarkdown } from "../../../review/preview-markdown";
import { renderCommand } from "../../../pipeline/render-command";
import { readTree } from "../../../cli/write";
import { objectsOf, planOf, valueProblems } from "../../helpers/plans";
import { mutatedConfig, PROJECT_KEY, shippedConfig, shippedRaw, tempStacks } from "../../helpers/lifecycle";
import { renderTree } from "../../helpers/stacks";

const node = (raw: any, name: string) => {
  const n = raw.nodes.find((x: any) => x.name === name);
  if (!n) throw new Error(`no node ${name}`);
  return n;
};
const withState = (name: string, state: string) => (raw: any) => (node(raw, name).state = state);
const without = (name: string) => (raw: any) => (raw.nodes = raw.nodes.filter((n: any) => n.name !== name));
/**
 * prod-large with a tenth storage node, sto-10, added and deployed first: its 9 storage nodes hold
 * its 9 Swift members (one each), so a member leaving one needs a node free of one (swift-members).
 */
const withSto10 = (raw: any) => raw.nodes.push({ name: "sto-10", internalIP: "10.40.4.20", zone: "zone-a", roles: ["storage"], hostNetwork: "storage" });
const all =
  (...edits: ((raw: any) => void)[]) =>
  (raw: any) =>
    edits.forEach((e) => e(raw));
const steps = (p: StackPreview, name: string) => p.nodes.find((n) => n.node === name)?.steps.map((s) => `${s.when} ${s.what}: ${s.command}`) ?? [];
const actions = (p: StackPreview) => p.actions.map((a) => `${a.action} ${a.resource}${a.unit ? ` [${a.unit}]` : ""}`);
const errorsOf = (stack: string, edit: (raw: any) => void) =>
  planStack(mutatedConfig(stack, edit))
    .problems.filter((c) => c.level === "error")
    .map((c) => ({ code: c.code, path: c.path, message: c.message }));

describe("putting a node into maintenance (cmp-02 of prod-medium)", () => {
  const plan = planOf(mutatedConfig("prod-medium", withState("cmp-02", "maintenance")));
  const before = renderTree(shippedConfig("prod-medium"));
  const after = renderTree(mutatedConfig("prod-medium", withState("cmp-02", "maintenance")));
  const p = previewStack("prod-medium", before, after);

  it("cordons it and labels its state through the node-roles patch; other nodes are untouched", () => {
    const patches = objectsOf(plan, "node-roles");
    const cmp02 = patches.find((o) => o.metadata.name === "cmp-02")!;
    expect(cmp02.spec).toEqual({ unschedulable: true });
    expect(cmp02.metadata.labels?.["openkeel.io/node-state"]).toBe("maintenance");
    for (const o of patches.filter((x) => x.metadata.name !== "cmp-02")) {
      expect(o.spec).toBeUndefined();
      expect(o.metadata.labels?.["openkeel.io/node-state"]).toBeUndefined();
    }
  });

  it("asks the Node Maintenance Operator to drain it, and leaves Longhorn alone", () => {
    expect(objectsOf(plan, "node-maintenance")).toEqual([
      {
        apiVersion: "nodemaintenance.medik8s.io/v1beta1",
        kind: "NodeMaintenance",
        metadata: { name: "cmp-02" },
        spec: { nodeName: "cmp-02", reason: "maintenance in openkeel:nodes of stack prod-medium" },
      },
    ]);
    expect(plan.phases.flatMap((ph) => ph.units).find((u) => u.name === "longhorn-node-eviction")).toBeUndefined();
  });

  it("our NodeHealthChecks leave it out, and the coverage check accepts that", () => {
    const r = planStack(mutatedConfig("prod-medium", withState("cmp-02", "maintenance")));
    const nhcs = r.placement!.placements.filter((c) => c.component.kind === "NodeHealthCheck");
    expect(nhcs.length).toBeGreaterThan(0);
    for (const c of nhcs) expect(c.eligible).not.toContain("cmp-02");
    expect(nhcs.some((c) => c.eligible.includes("cmp-01"))).toBe(true);
  });

  it("the preview: the patch update, the request created, the state change and its steps in order", () => {
    expect(actions(p)).toEqual(["update Node cmp-02 (patch) [node-roles]", "create NodeMaintenance cmp-02 [node-maintenance]"]);
    // feasible; what the drain costs while it lasts is said (issue 39)
    expect(p.findings.map((f) => [f.level, f.code, f.message.replace(/:.*/, "")])).toEqual([
      ["warning", "failure-domain", "after this change, draining cmp-02 runs degraded"],
      ["warning", "failure-domain", "after this change, losing any one of cmp-01, cmp-03 while cmp-02 is drained runs degraded"],
    ]);
    expect(p.nodes.map((n) => [n.node, n.state])).toEqual([["cmp-02", { before: "active", after: "maintenance" }]]);
    expect(steps(p, "cmp-02")).toEqual([
      "before disable Nova: openstack compute service set --disable --disable-reason maintenance cmp-02 nova-compute",
      `before find the VMs that cannot live-migrate: ${unmigratableVmis("cmp-02")}`,
      expect.stringMatching(/^before move or stop them through Nova: openstack server list --all-projects --host cmp-02 --long; /),
      "after wait for the drain: kubectl wait nodemaintenance/cmp-02 --for=jsonpath='{.status.phase}'=Succeeded --timeout=2h",
    ]);
    expect(stackMarkdown(p)).toContain("- **cmp-02** (compute, storage; state active → maintenance)");
  });

  it("the VMs KubeVirt will not evict (evictionStrategy LiveMigrate) are found by their LiveMigratable condition, on that node only", () => {
    expect(unmigratableVmis("cmp-02")).toBe(
      `kubectl get vmi -A -o jsonpath='{range .items[?(@.status.nodeName=="cmp-02")]}{.metadata.namespace}/{.metadata.name} {.status.conditions[?(@.type=="LiveMigratable")].status} {.status.conditions[?(@.type=="LiveMigratable")].reason}{"\\n"}{end}' | grep -v ' True '`,
    );
    const why = p.nodes[0].steps.find((x) => x.what === "find the VMs that cannot live-migrate")!.why;
    expect(why).toMatch(/KubeVirt denies the eviction of a VMI whose LiveMigratable condition is not True/);
  });

  it("back to active: the request goes (NMO uncordons), Nova takes VMs again", () => {
    const back = previewStack("prod-medium", after, before);
    expect(actions(back)).toEqual(["delete NodeMaintenance cmp-02 [node-maintenance]", "update Node cmp-02 (patch) [node-roles]"]);
    expect(steps(back, "cmp-02")).toEqual(["after enable Nova: openstack compute service set --enable cmp-02 nova-compute"]);
  });

  it("on to cordoned: the node must be cordoned again once NMO lifts its cordon", () => {
    const cordoned = previewStack("prod-medium", after, renderTree(mutatedConfig("prod-medium", withState("cmp-02", "cordoned"))));
    expect(steps(cordoned, "cmp-02")).toEqual(["after cordon again: kubectl cordon cmp-02"]);
  });

  it("two control-plane nodes at once is refused: their quorums would lose their majority", () => {
    const errors = errorsOf("prod-medium", (r) => {
      node(r, "cp-1").state = "maintenance";
      node(r, "cp-2").state = "retiring";
    });
    expect(errors.filter((e) => e.code === "quorum-drain").map((e) => e.path)).toEqual(["openkeel:nodes[1].state", "openkeel:nodes[1].state"]);
    expect(errors.find((e) => e.code === "quorum-drain")?.message).toMatch(
      /'cp-1', 'cp-2' hold the OpenKeel control plane \(Galera, RabbitMQ and OVN central\)/,
    );
  });
});

describe("the lab has no Node Maintenance Operator", () => {
  // a lab with a worker beside its control-plane node: the worker can go into maintenance
  const withWorker = (raw: any) => raw.nodes.push({ name: "openkeel-lab-worker", roles: ["compute", "network", "storage"] });
  const twoNodes = mutatedConfig("lab", withWorker);
  const cfg = mutatedConfig("lab", (r) => (withWorker(r), withState("openkeel-lab-worker", "maintenance")(r)));

  it("maintenance only cordons it, with a warning naming the drain to run; the gateway and the hypervisor left are said", () => {
    const r = planStack(cfg);
    expect(r.plan).toBeDefined();
    expect(r.problems.map((c) => [c.level, c.code, c.path])).toEqual([
      ["warning", "lab-node-state", "openkeel:nodes[1].state"],
      ["warning", "kind-control-plane-taints", "openkeel:nodes[0]"],
      ["warning", "gateway-chassis", "openkeel:nodes[1].state"],
      ["warning", "hypervisors-left", "openkeel:nodes[1].state"],
    ]);
    expect(r.problems[0].fix).toBe("drain it yourself after pulumi up: kubectl drain openkeel-lab-worker --ignore-daemonsets --delete-emptydir-data");
    expect(objectsOf(r.plan!, "node-roles").find((o) => o.metadata.name === "openkeel-lab-worker")!.spec).toEqual({ unschedulable: true });
    expect(r.plan!.phases.flatMap((ph) => ph.units).map((u) => u.name)).not.toContain("node-maintenance");
  });

  it("the preview's step is the drain by hand", () => {
    const p = previewStack("lab", renderTree(twoNodes), renderTree(cfg));
    expect(steps(p, "openkeel-lab-worker")).toEqual([
      "before disable Nova: openstack compute service set --disable --disable-reason maintenance openkeel-lab-worker nova-compute",
      `before find the VMs that cannot live-migrate: ${unmigratableVmis("openkeel-lab-worker")}`,
      expect.stringMatching(/^before move or stop them through Nova: /),
      "after drain: kubectl drain openkeel-lab-worker --ignore-daemonsets --delete-emptydir-data",
    ]);
  });

  it("its only node in maintenance is refused: nothing would be left to run the cloud", () => {
    const errors = errorsOf("lab", withState("openkeel-lab-control-plane", "maintenance")).map((e) => e.code);
    expect(errors).toEqual(["gateway-chassis", "ingress-nodes", "hypervisors-left"]);
  });
});

describe("retiring a storage node (sto-9 of prod-large, sto-10 added first)", () => {
  const base = mutatedConfig("prod-large", withSto10);
  const retiring = mutatedConfig("prod-large", all(withSto10, withState("sto-9", "retiring")));
  const plan = planOf(retiring);
  const p = previewStack("prod-large", renderTree(base), renderTree(retiring));

  it("without a node free of a Swift member it is refused: the member of sto-9 has nowhere to go", () => {
    const errors = errorsOf("prod-large", withState("sto-9", "retiring"));
    expect(errors.map((e) => e.code)).toEqual(["swift-members"]);
    expect(errors[0].message).toMatch(/^retiring 'sto-9' leaves 8 storage node\(s\) for the 9 Swift storage members of openkeel-swift/);
  });

  it("asks Longhorn to evict its replicas: a forced server-side-apply patch of its nodes.longhorn.io object", () => {
    expect(objectsOf(plan, "longhorn-node-eviction")).toEqual([
      {
        apiVersion: "longhorn.io/v1beta2",
        kind: "Node",
        metadata: { name: "sto-9", namespace: "longhorn-system", annotations: { "openkeel.io/apply-as": "patch", "pulumi.com/patchForce": "true" } },
        spec: { allowScheduling: false, evictionRequested: true },
      },
    ]);
    expect(objectsOf(plan, "node-maintenance").map((o) => o.metadata.name)).toEqual(["sto-9"]);
  });

  it("the preview: eviction and drain requested by pulumi up, the waits after it", () => {
    expect(actions(p)).toEqual([
      "update Node sto-9 (patch) [node-roles]",
      "create Node longhorn-system/sto-9 (patch) [longhorn-node-eviction]",
      "create NodeMaintenance sto-9 [node-maintenance]",
    ]);
    // feasible: only what the retirement costs while it lasts is said (issue 39)
    expect(p.findings.filter((f) => f.code !== "failure-domain")).toEqual([]);
    expect(p.findings[0].message).toMatch(
      /^after this change, draining sto-9 runs degraded: Longhorn longhorn-capacity and longhorn-local: the strict-local volumes/,
    );
    // issue 21, dead end 4: each step can finish in this order. The drain finishes once the Swift
    // member is evicted (Longhorn's drain policy); its replica never leaves by eviction, so it goes
    // with its PVC before the eviction is waited for; a drained member's volume is detached, so it
    // is found by its replica on the node
    expect(steps(p, "sto-9")).toEqual([
      "after wait for the drain: kubectl wait nodemaintenance/sto-9 --for=jsonpath='{.status.phase}'=Succeeded --timeout=2h",
      `after move the strict-local members: kubectl -n longhorn-system get replicas.longhorn.io -o jsonpath='{range .items[?(@.spec.nodeID=="sto-9")]}{.spec.volumeName}{"\\n"}{end}'; kubectl get pv -o jsonpath='{range .items[*]}{.spec.storageClassName} {.metadata.name} {.spec.claimRef.namespace}/{.spec.claimRef.name}{"\\n"}{end}' | grep -E '^(longhorn-local|longhorn-capacity) '; then, one at a time, kubectl delete pvc (and its Pending pod) of each Swift storage member whose volume is in both lists`,
      `after wait for the Longhorn eviction: kubectl -n longhorn-system get replicas.longhorn.io -o jsonpath='{range .items[?(@.spec.nodeID=="sto-9")]}{.metadata.name}{"\\n"}{end}'`,
    ]);
  });

  it("called off: Longhorn scheduling must be switched back on by hand", () => {
    const back = previewStack("prod-large", renderTree(retiring), renderTree(base));
    expect(steps(back, "sto-9")).toEqual([
      `after Longhorn scheduling: kubectl -n longhorn-system patch nodes.longhorn.io sto-9 --type merge -p '{"spec":{"allowScheduling":true}}'`,
    ]);
  });

  it("a retiring control-plane node is no default Kube-OVN master; naming it as one is refused", () => {
    const masters = (cfg: LoadedConfig) =>
      objectsOf(planOf(cfg), "node-roles")
        .filter((o) => o.metadata.labels?.["kube-ovn/role"] === "master")
        .map((o) => o.metadata.name);
    expect(masters(shippedConfig("prod-large"))).toEqual(["ok-cp-1", "ok-cp-3", "ok-cp-5"]);
    expect(masters(mutatedConfig("prod-large", withState("ok-cp-1", "retiring")))).toEqual(["ok-cp-2", "ok-cp-3", "ok-cp-5"]);
    const p2 = previewStack("prod-large", renderTree(shippedConfig("prod-large")), renderTree(mutatedConfig("prod-large", withState("ok-cp-1", "retiring"))));
    expect(steps(p2, "ok-cp-1").map((s) => s.split(":")[0])).toEqual([
      "after wait for the drain",
      "after move the strict-local members",
      "after leave Kube-OVN's RAFT",
    ]);
    const errors = errorsOf("prod-large", (r) => {
      node(r, "ok-cp-1").state = "retiring";
      r.platform = { kubeOvn: { masterNodes: ["ok-cp-1", "ok-cp-3", "ok-cp-5"] } };
    });
    expect(errors).toEqual([
      {
        code: "kube-ovn-master-nodes",
        path: "openkeel:platform.kubeOvn.masterNodes[0]",
        message: "node 'ok-cp-1' is retiring, and a retiring node leaves Kube-OVN's RAFT cluster before the inventory",
      },
    ]);
  });
});

/** A stacks folder with stack `s`, rendered once into `out`. */
async function renderedOnce(raw: Record<string, unknown>) {
  const dir = tempStacks({ s: raw });
  const out = path.join(dir, "out");
  const first = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
  expect(first.code, first.stderr).toBe(0);
  return { dir, out, file: path.join(dir, "Pulumi.s.yaml") };
}

function edited(stack: string, ...edits: ((raw: any) => void)[]): Record<string, unknown> {
  const raw = structuredClone(shippedRaw(stack));
  for (const e of edits) e(raw);
  return raw;
}

describe("removing a storage node", () => {
  it("without retiring it first: the render refuses, naming the node, what it holds, what it judged against and the way through; nothing written", async () => {
    const { dir, out, file } = await renderedOnce(edited("prod-large", withSto10));
    const before = readTree(out);
    fs.writeFileSync(file, stringify({ config: PROJECT_KEY(edited("prod-large", withSto10, without("sto-9"))) }));
    const r = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    expect(r.code).toBe(1);
    const reference = `the render in ${path.join(out, "s")}`;
    expect(r.stderr).toBe(
      `s, against ${reference} (the stacks folder is in no git work tree: no committed state to compare with): ` +
        `${file}: openkeel:nodes: error [node-removal]: node 'sto-9' holds Longhorn replicas and the strict-local volumes of Swift storage (storage) and would be removed while it is active in ${reference}. ` +
        "Fix: keep it, set state: retiring on it first, render, merge and pulumi up (its Longhorn replicas are evicted, NMO drains it); remove it once both are done (docs/node-lifecycle.md)\n",
    );
    expect(readTree(out)).toEqual(before);
  });

  it("and the preview of such a change is an error too", () => {
    const p = previewStack(
      "prod-large",
      renderTree(mutatedConfig("prod-large", withSto10)),
      renderTree(mutatedConfig("prod-large", all(withSto10, without("sto-9")))),
    );
    expect(p.findings.map((f) => [f.level, f.code])).toEqual([["error", "node-removal"]]);
    expect(hasErrors([p])).toBe(true);
  });

  it("after retiring it: the render passes, and the preview lists only what is left (reset, delete, forget in Longhorn)", async () => {
    const { dir, out, file } = await renderedOnce(edited("prod-large", withSto10, withState("sto-9", "retiring")));
    const retired = readTree(out);
    fs.writeFileSync(file, stringify({ config: PROJECT_KEY(edited("prod-large", withSto10, without("sto-9"))) }));
    const r = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    const prefix = (t: Map<string, string>) => new Map([...t].filter(([f]) => f.startsWith("s/")).map(([f, c]) => [f.slice(2), c]));
    const p = previewStack("prod-large", prefix(retired), prefix(readTree(out)));
    // the stack sets Swift's 9 members: they stay, on the 9 storage nodes left; no data moves
    expect(p.findings).toEqual([]);
    expect(r.stdout).not.toContain("swift-");
    expect(steps(p, "sto-9")).toEqual([
      "after reset: talosctl reset --graceful --nodes 10.40.4.19",
      "after delete: kubectl delete node sto-9",
      "after forget it in Longhorn: kubectl -n longhorn-system delete nodes.longhorn.io sto-9",
    ]);
    expect(actions(p)).toEqual([
      "delete Node longhorn-system/sto-9 (patch) [longhorn-node-eviction]",
      "delete Node sto-9 (patch) [node-roles]",
      "delete NodeMaintenance sto-9 [node-maintenance]",
    ]);
  });

  it("retiring only in an uncommitted render is not enough: the committed one (git HEAD) decides", async () => {
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-lifecycle-"));
    const git = (...argv: string[]) => {
      const g = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...argv], { cwd: repo, encoding: "utf8" });
      expect(g.status, g.stderr).toBe(0);
    };
    const stacks = path.join(repo, "stacks");
    fs.mkdirSync(stacks);
    const write = (raw: Record<string, unknown>) => fs.writeFileSync(path.join(stacks, "Pulumi.s.yaml"), stringify({ config: PROJECT_KEY(raw) }));
    const argv = ["--stacks-dir", stacks, "--out", path.join(repo, "rendered")];
    write(edited("prod-large", withSto10));
    expect((await capture(renderCommand, argv)).code).toBe(0);
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "render");
    write(edited("prod-large", withSto10, withState("sto-9", "retiring")));
    expect((await capture(renderCommand, argv)).code).toBe(0);
    write(edited("prod-large", withSto10, without("sto-9")));
    const r = await capture(renderCommand, argv);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /node 'sto-9' holds Longhorn replicas and the strict-local volumes of Swift storage \(storage\) and would be removed while it is active in HEAD \([0-9a-f]{12}\)\./,
    );
  });
});

describe("removing the last member of a quorum", () => {
  const twoNodeLab = (raw: any) => {
    node(raw, "openkeel-lab-control-plane").roles = ["compute", "network", "storage"];
    raw.nodes.push({ name: "openkeel-lab-worker", roles: ["controlPlane"] });
  };

  it("retiring the lab's only controlPlane node is refused: nothing would hold the members", () => {
    const errors = errorsOf("lab", (r) => {
      twoNodeLab(r);
      node(r, "openkeel-lab-worker").state = "retiring";
    });
    expect(errors.map((e) => [e.code, e.path])).toEqual([["retiring-quorum-member", "openkeel:nodes[1].state"]]);
    expect(errors[0].message).toBe(
      "node 'openkeel-lab-worker' is retiring, which leaves 0 node(s) for the 1 member(s) of the OpenKeel control plane (Galera, RabbitMQ and OVN central)",
    );
  });

  it("a lab without a controlPlane node is refused by the config already", () => {
    expect(() => mutatedConfig("lab", (r) => (twoNodeLab(r), without("openkeel-lab-worker")(r)))).not.toThrow();
    expect(valueProblems(mutatedConfig("lab", (r) => (twoNodeLab(r), without("openkeel-lab-worker")(r))))).toEqual([
      expect.stringMatching(/no node has the controlPlane role/),
    ]);
  });

  it("removing an etcd member (k8s-cp-3 of prod-large) is refused by the render: with two members left, either's loss (or its zone's) stops the Kubernetes API", async () => {
    const { dir, out, file } = await renderedOnce(edited("prod-large"));
    fs.writeFileSync(file, stringify({ config: PROJECT_KEY(edited("prod-large", without("k8s-cp-3"))) }));
    const r = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split("\n");
    // the plan refuses it before the removal guard runs (the guard's own findings: the next test)
    expect(lines.map((l) => l.match(/error \[([a-z-]+)\]/)?.[1])).toEqual(["node-loss-fatal", "node-loss-fatal", "zone-loss-fatal", "zone-loss-fatal"]);
    expect(lines[0]).toContain(
      "losing k8s-cp-1 would be fatal: etcd: 1 of its 2 member(s) lost, 1 left: no majority (2), the Kubernetes API stops: nothing is scheduled, healed or changed",
    );
  });

  it("even a retiring member may not leave its quorum short (prod-medium's cp-3; etcd as well)", () => {
    const medium = planOf(shippedConfig("prod-medium")).nodes;
    const previous = medium.map((n) => (n.name === "cp-3" ? { ...n, state: "retiring" as const } : n));
    const constraints = resolveStack(shippedConfig("prod-medium")).constraints;
    const checks = nodeRemovalChecks(
      previous,
      medium.filter((n) => n.name !== "cp-3"),
      "the base",
      { constraints },
    );
    expect(checks.map((c) => c.code)).toEqual(["quorum-removal", "quorum-removal"]);
    expect(checks[1].message).toBe("removing 'cp-3' leaves 2 node(s) for the 3 member(s) of the Kubernetes control plane (etcd) that the base has");
    // with a fourth control-plane node deployed first, the same removal passes
    const four = [...previous, { name: "cp-4", roles: ["controlPlane" as const], kubernetesControlPlane: true as const, state: "active" as const }];
    expect(
      nodeRemovalChecks(
        four,
        four.filter((n) => n.name !== "cp-3"),
        "the base",
        { constraints },
      ),
    ).toEqual([]);
  });

  it("retiring one of three is refused until the replacement is there", () => {
    expect(errorsOf("prod-medium", withState("cp-3", "retiring")).map((e) => e.code)).toEqual(["retiring-quorum-member", "retiring-quorum-member"]);
    const withFourth = (r: any) =>
      r.nodes.push({ name: "cp-4", kubernetesControlPlane: true, internalIP: "10.30.0.14", roles: ["controlPlane"], hostNetwork: "control" });
    expect(errorsOf("prod-medium", (r) => (withFourth(r), withState("cp-3", "retiring")(r)))).toEqual([]);
  });
});

describe("index.yaml records every node's state", () => {
  it("active by default, and what the stack says", () => {
    const index = renderTree(mutatedConfig("prod-medium", withState("net-2", "cordoned"))).get("index.yaml")!;
    expect(index).toMatch(/- name: net-2\n {4}roles:\n {6}- network\n {4}state: cordoned\n/);
    expect(index).toMatch(/- kubernetesControlPlane: true\n {4}name: cp-1\n {4}roles:\n {6}- controlPlane\n {4}state: active\n/);
  });
});

describe("a node's life, as docs/node-lifecycle.md walks through it (sto-10 of prod-large)", () => {
  const sto10 = { name: "sto-10", internalIP: "10.40.4.20", zone: "zone-a", roles: ["storage"], hostNetwork: "storage" };
  const joined = (raw: any) => raw.nodes.push(structuredClone(sto10));

  it("join, maintenance, back, retire, remove: each render passes the guard, each preview says what to do", async () => {
    const { dir, out, file } = await renderedOnce(edited("prod-large"));
    const trees: Tree[] = [];
    const step = async (raw: Record<string, unknown>) => {
      fs.writeFileSync(file, stringify({ config: PROJECT_KEY(raw) }));
      const r = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
      expect(r.code, r.stderr).toBe(0);
      trees.push(new Map([...readTree(out)].filter(([f]) => f.startsWith("s/")).map(([f, c]) => [f.slice(2), c])));
      return trees.length === 1 ? undefined : previewStack("prod-large", trees[trees.length - 2], trees[trees.length - 1]);
    };
    await step(edited("prod-large"));
    const join = (await step(edited("prod-large", joined)))!;
    expect(steps(join, "sto-10")[0]).toMatch(/^before install: boot it from the image of schematics\/worker-storage\.yaml/);
    const maintenance = (await step(edited("prod-large", joined, withState("sto-10", "maintenance"))))!;
    expect(actions(maintenance)).toContain("create NodeMaintenance sto-10 [node-maintenance]");
    const back = (await step(edited("prod-large", joined)))!;
    expect(actions(back)).toContain("delete NodeMaintenance sto-10 [node-maintenance]");
    // removing it now, while active, is refused
    fs.writeFileSync(file, stringify({ config: PROJECT_KEY(edited("prod-large")) }));
    expect((await capture(renderCommand, ["--stacks-dir", dir, "--out", out])).stderr).toContain("error [node-removal]: node 'sto-10'");
    const retire = (await step(edited("prod-large", joined, withState("sto-10", "retiring"))))!;
    expect(actions(retire)).toContain("create Node longhorn-system/sto-10 (patch) [longhorn-node-eviction]");
    // feasible (prod-large has storage nodes to spare), and the steps in the runbook's order
    expect(retire.findings.filter((f) => f.code !== "failure-domain")).toEqual([]);
    const retireSteps = steps(retire, "sto-10").map((x) => x.split(":")[0]);
    expect(retireSteps).toEqual(["after wait for the drain", "after move the strict-local members", "after wait for the Longhorn eviction"]);
    const doc = fs.readFileSync(path.join(__dirname, "../../../docs/node-lifecycle.md"), "utf8");
    const runbook = doc.slice(doc.indexOf("### active → retiring"), doc.indexOf("### retiring → active"));
    const at = retireSteps.map((x) => runbook.indexOf(x.replace(/^after /, "")));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((x, y) => x - y)).toEqual(at);
    const removed = (await step(edited("prod-large")))!;
    // the stack sets Swift's 9 members: sto-10 held none, and its removal moves no data
    expect(removed.findings).toEqual([]);
    expect(steps(removed, "sto-10")).toEqual([
      "after reset: talosctl reset --graceful --nodes 10.40.4.20",
      "after delete: kubectl delete node sto-10",
      "after forget it in Longhorn: kubectl -n longhorn-system delete nodes.longhorn.io sto-10",
    ]);
  });
});

describe("between two drained states", () => {
  const maintenance = renderTree(mutatedConfig("prod-large", all(withSto10, withState("sto-9", "maintenance"))));
  const retiring = renderTree(mutatedConfig("prod-large", all(withSto10, withState("sto-9", "retiring"))));

  it("maintenance → retiring: the eviction and the members, no second drain", () => {
    const p = previewStack("prod-large", maintenance, retiring);
    expect(p.nodes[0].state).toEqual({ before: "maintenance", after: "retiring" });
    expect(steps(p, "sto-9").map((s) => s.split(":")[0])).toEqual(["after move the strict-local members", "after wait for the Longhorn eviction"]);
  });

  it("retiring → maintenance: Longhorn scheduling back on, the node stays drained", () => {
    const p = previewStack("prod-large", retiring, maintenance);
    expect(steps(p, "sto-9").map((s) => s.split(":")[0])).toEqual(["after Longhorn scheduling"]);
    expect(actions(p)).toEqual([
      "delete Node longhorn-system/sto-9 (patch) [longhorn-node-eviction]",
      "update Node sto-9 (patch) [node-roles]",
      "update NodeMaintenance sto-9 [node-maintenance]",
    ]);
  });
});

describe("the steps are contributed by the components that own them (lifecycle/contributor.ts)", () => {
  const tree = (cfg: LoadedConfig) => new RenderedStack(renderTree(cfg), cfg.stack);
  const before = tree(mutatedConfig("prod-large", withSto10));
  const after = tree(mutatedConfig("prod-large", all(withSto10, withState("sto-9", "retiring"))));
  const whats = (lifecycles: NodeLifecycle[]) =>
    nodeSteps(before, after, lifecycles)
      .find((n) => n.node === "sto-9")
      ?.steps.map((s) => s.what);

  it("without contributions only the core's: the drain by hand, since nothing asks for it", () => {
    expect(whats([])).toEqual(["drain"]);
  });

  it("Longhorn adds its eviction wait, and the move of the strict-local members OpenKeel holds; Medik8s's drain request replaces the drain by hand", () => {
    expect(whats([longhorn.lifecycle!])).toEqual(["drain", "wait for the Longhorn eviction"]);
    expect(whats([longhorn.lifecycle!, OPENKEEL.lifecycle!])).toEqual(["drain", "move the strict-local members", "wait for the Longhorn eviction"]);
    expect(whats([longhorn.lifecycle!, medik8s.lifecycle!, OPENKEEL.lifecycle!])).toEqual([
      "wait for the drain",
      "move the strict-local members",
      "wait for the Longhorn eviction",
    ]);
  });

  it("each claims its own requests: Longhorn the eviction patch, Medik8s the NodeMaintenance", () => {
    const retiring = mutatedConfig("prod-large", all(withSto10, withState("sto-9", "retiring")));
    const [eviction] = objectsOf(planOf(retiring), "longhorn-node-eviction");
    const [request] = objectsOf(planOf(retiring), "node-maintenance");
    expect([longhorn.lifecycle!.requestFor!(eviction), medik8s.lifecycle!.requestFor!(eviction)]).toEqual(["sto-9", undefined]);
    expect([longhorn.lifecycle!.requestFor!(request), medik8s.lifecycle!.requestFor!(request)]).toEqual([undefined, "sto-9"]);
  });

  it("only a component that drains nodes keeps the lab-node-state warning away", () => {
    const cfg = mutatedConfig("prod-medium", withState("cmp-02", "maintenance"));
    expect(lifecycleChecks(cfg, [longhorn.lifecycle!]).map((c) => c.code)).toEqual(["lab-node-state"]);
    expect(lifecycleChecks(cfg, [longhorn.lifecycle!, medik8s.lifecycle!])).toEqual([]);
  });
});
