// The operator's day-2 changes (issue 15), each as a stack edit and the preview a reviewer gets:
// the action per resource, what `pulumi up` would refuse, warnings with their reasons, the steps per
// node in order, the placement delta. Each shipped stack is rendered as committed and as edited,
// in-process, and compared the way `npm run preview` compares two commits. Adding a hypervisor and
// a render that fails are proven through the CLI between two commits (test/integration/review/preview.test.ts).
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readStack } from "../../config/stack-file";
import { planStack } from "../../environments";
import { hasErrors, previewStack } from "../../review/preview";
import type { StackPreview, Tree } from "../../review/preview-model";
import { stackMarkdown } from "../../review/preview-markdown";
import { mutatedConfig, shippedConfig, STACKS_DIR, tempStacks, renderTree } from "../helpers/stacks";
import { STACK_DECLARATIONS } from "../../environments/registry";

const committed = new Map<string, Tree>();
function scenario(stack: string, edit: (raw: any) => void): StackPreview {
  if (!committed.has(stack)) committed.set(stack, renderTree(shippedConfig(stack)));
  return previewStack(stack, committed.get(stack)!, renderTree(mutatedConfig(stack, edit)));
}

const node = (raw: any, name: string) => {
  const n = raw.nodes.find((x: any) => x.name === name);
  if (!n) throw new Error(`no node ${name}`);
  return n;
};
const steps = (p: StackPreview, name: string) => p.nodes.find((n) => n.node === name)?.steps.map((s) => `${s.when} ${s.what}: ${s.command}`) ?? [];
const component = (p: StackPreview, name: string) => p.placement?.components.find((c) => c.component === name);

describe("removing a gateway (net-2 of prod-medium with a third, net-3), retired first", () => {
  // issue 21: only a node that was retiring in the base may leave, on every topology; issue 39: one
  // network node left would make its loss fatal, so the stack has a third (§ 6.2: 3 recommended)
  const withNet3 = (r: any) => r.nodes.splice(8, 0, { ...structuredClone(node(r, "net-2")), name: "net-3", internalIP: "10.30.2.13" });
  const retiring = renderTree(mutatedConfig("prod-medium", (r) => (withNet3(r), (node(r, "net-2").state = "retiring"))));
  const p = previewStack(
    "prod-medium",
    retiring,
    renderTree(mutatedConfig("prod-medium", (r) => (withNet3(r), (r.nodes = r.nodes.filter((n: any) => n.name !== "net-2"))))),
  );

  it("deletes its role-label patch and its drain request; reset and delete the Node after; a gateway's loss now leaves no standby", () => {
    expect(p.actions).toEqual([
      { action: "delete", resource: "Node net-2 (patch)", unit: "node-roles", protected: false },
      { action: "delete", resource: "NodeMaintenance net-2", unit: "node-maintenance", protected: false },
    ]);
    expect(p.findings.map((f) => [f.level, f.code])).toEqual([["warning", "failure-domain"]]);
    expect(p.findings[0].message).toMatch(
      /^after this change, losing any one of net-1, net-3 runs degraded: gateway chassis: 1 of 2 gateway chassis left: the routers' HA chassis groups run without a standby \(§ 3\.2\)/,
    );
    expect(p.nodes.map((n) => [n.node, n.change])).toEqual([["net-2", "removed"]]);
    // drained while it was retiring; no Longhorn step (no disk there)
    expect(steps(p, "net-2")).toEqual(["after reset: talosctl reset --graceful --nodes 10.30.2.12", "after delete: kubectl delete node net-2"]);
  });

  it("the placement delta names what leaves the node", () => {
    expect(component(p, "openkeel-neutron/chassis")).toEqual({ component: "openkeel-neutron/chassis", op: "changed", gained: [], lost: ["net-2"] });
    expect(component(p, "openkeel-chart/ingress")?.lost).toEqual(["net-2"]);
    expect(p.placement?.nodes).toEqual([
      { node: "net-2", op: "removed", fields: ["role group: network", "state: retiring", "zone: —", "taints: `node-role.openkeel.io/network:NoSchedule`"] },
    ]);
    expect(stackMarkdown(p)).toContain("- `openkeel-neutron/chassis`: −net-2");
  });

  it("removed while active, it is refused", () => {
    const active = previewStack(
      "prod-medium",
      renderTree(mutatedConfig("prod-medium", withNet3)),
      renderTree(mutatedConfig("prod-medium", (r) => (withNet3(r), (r.nodes = r.nodes.filter((n: any) => n.name !== "net-2"))))),
    );
    expect(active.findings.map((f) => [f.level, f.code])).toEqual([
      ["error", "node-removal"],
      ["warning", "failure-domain"],
    ]);
    expect(active.findings[0].message).toBe("node 'net-2' holds a gateway chassis (network) and would be removed while it is active in the base");
  });

  it("the one network node left would be fatal to lose: prod-medium without net-2 does not plan", () => {
    const r = planStack(mutatedConfig("prod-medium", (raw) => (raw.nodes = raw.nodes.filter((n: any) => n.name !== "net-2"))));
    expect(r.plan).toBeUndefined();
    expect(r.problems.filter((c) => c.level === "error").map((c) => c.code)).toEqual(["node-loss-fatal"]);
  });
});

describe("changing a node's role (cmp-03 of prod-medium: compute, storage → network)", () => {
  // a gateway's host network too: its public VLAN, where MetalLB announces the ingress VIP
  // two storage nodes left for the stack's Swift members: the change lowers them too, as it must
  const p = scenario("prod-medium", (r) => {
    Object.assign(node(r, "cmp-03"), { roles: ["network"], hostNetwork: "gateway" });
    r.services.swift.replicas.storage = 2;
  });

  it("the steps outside Kubernetes, in order: evict its Longhorn replicas, drain, new config, new image, taints; uncordon after", () => {
    expect(p.nodes.map((n) => [n.node, n.change, n.roles])).toEqual([["cmp-03", "changed", { before: ["compute", "storage"], after: ["network"] }]]);
    const s = p.nodes[0].steps;
    expect(s.map((x) => `${x.when} ${x.what}`)).toEqual([
      "before Longhorn eviction",
      "before drain",
      "before apply-config",
      "before upgrade",
      "before taints",
      "after uncordon",
    ]);
    expect(s[0].command).toBe(
      `kubectl -n longhorn-system patch nodes.longhorn.io cmp-03 --type merge -p '{"spec":{"allowScheduling":false,"evictionRequested":true}}'`,
    );
    expect(s[2].command).toBe("talosctl apply-config --nodes 10.30.1.13 --file <its machine config: patches/worker-network.yaml + nodes/cmp-03.yaml>");
    expect(s[2].why).toMatch(/machine\.kubelet\.extraConfig\.cpuManagerPolicy/);
    const network = fs
      .readFileSync(path.join(STACKS_DIR, "..", "rendered/prod-medium/talos/machines.yaml"), "utf8")
      .match(/net-1:[\s\S]*?installerImage: (\S+)/)![1];
    expect(s[3].command).toBe(`talosctl upgrade --nodes 10.30.1.13 --image ${network}`);
    expect(s[4].command).toBe("kubectl taint nodes cmp-03 node-role.openkeel.io/compute:NoSchedule- node-role.openkeel.io/network=:NoSchedule");
    expect(s[5].command).toBe("kubectl uncordon cmp-03");
  });

  it("its role labels are an update of the patch; losing a storage node replaces the protected StorageClasses: an error", () => {
    expect(p.actions.find((a) => a.resource === "Node cmp-03 (patch)")?.action).toBe("update");
    // longhorn-vm and longhorn-rwx (Manila's shares), both replicated on the storage nodes
    expect(p.findings.filter((f) => f.level === "error").map((f) => f.code)).toEqual(["protected-replace", "protected-replace"]);
    expect(hasErrors([p])).toBe(true);
  });
});

describe("dropping a storage role (cmp-03 of prod-medium: compute, storage → compute)", () => {
  const p = scenario("prod-medium", (r) => {
    node(r, "cmp-03").roles = ["compute"];
    r.services.swift.replicas.storage = 2;
  });

  it("StorageClass longhorn-vm is replaced, not changed (parameters.numberOfReplicas), and it is protected: an error", () => {
    expect(p.actions.find((a) => a.resource === "StorageClass longhorn-vm")).toEqual({
      action: "replace",
      resource: "StorageClass longhorn-vm",
      unit: "storage-classes",
      protected: true,
      detail: "parameters.numberOfReplicas cannot change in place",
    });
    const replaced = (name: string) => [
      "error",
      "protected-replace",
      `StorageClass ${name} of unit storage-classes would be replaced: parameters.numberOfReplicas cannot change in place, and the unit is protected, so \`pulumi up\` refuses`,
    ];
    // Manila's class is replicated like longhorn-vm: it is replaced with it
    expect(p.findings.map((f) => [f.level, f.code, f.message])).toEqual(expect.arrayContaining([replaced("longhorn-vm"), replaced("longhorn-rwx")]));
    // and Swift's members go 3 → 2: the rings move a third of the replicas, said with its reason
    expect(p.findings.filter((f) => f.level === "warning").map((f) => [f.code, f.message])).toEqual([
      [
        "swift-ring",
        "Swift's storage members: 3 → 2: the rings move about 1/3 of the objects' replicas, from the members that go to the others (the StatefulSet removes its highest ordinals)",
      ],
      // and with two storage nodes (two replicas now), a storage node's loss leaves a volume its last replica (issue 39)
      [
        "failure-domain",
        "after this change, losing any one of cmp-01, cmp-02 runs degraded: Longhorn longhorn, longhorn-rwx and longhorn-vm: at worst 1 of 2 replicas of a volume on the lost nodes: a volume with replicas there runs on its last one, one failure from losing its data",
      ],
      // and cmp-03, the only node whose first role is compute now, has no NodeHealthCheck (issue 45)
      [
        "failure-domain",
        "after this change, losing cmp-03 runs degraded: NHC (no check): cmp-03: alone in its group (a node is in the check of its first role), watched by no NodeHealthCheck of ours (a check of one node would fence it in a cluster-wide event too): nothing fences it, left to a human",
      ],
    ]);
    expect(p.findings).toHaveLength(5);
    const md = stackMarkdown(p);
    expect(md).toContain("**❌ Errors: `pulumi up` would refuse or fail on these**");
    expect(md).toContain("| **replace** | StorageClass longhorn-vm | storage-classes 🔒 | parameters.numberOfReplicas cannot change in place |");
  });

  it("the node's replicas move away first; no upgrade: the compute-only schematic is the same image (compute mounts Longhorn volumes too); its compute taint stays", () => {
    expect(p.nodes[0].steps.map((s) => s.what)).toEqual(["Longhorn eviction", "drain", "apply-config", "uncordon"]);
  });
});

describe("removing a storage node that holds replicas (sto-9 of prod-large, a tenth storage node added before)", () => {
  const withSto10 = (r: any) => r.nodes.push({ name: "sto-10", internalIP: "10.40.4.20", zone: "zone-a", roles: ["storage"], hostNetwork: "storage" });
  const p = previewStack(
    "prod-large",
    renderTree(mutatedConfig("prod-large", withSto10)),
    renderTree(mutatedConfig("prod-large", (r) => (withSto10(r), (r.nodes = r.nodes.filter((n: any) => n.name !== "sto-9"))))),
  );

  it("an error: it was not retiring in the base (docs/node-lifecycle.md)", () => {
    expect(p.findings.map((f) => [f.level, f.code])).toEqual([["error", "node-removal"]]);
    expect(p.findings[0].message).toBe(
      "node 'sto-9' holds Longhorn replicas and the strict-local volumes of Swift storage (storage) and would be removed while it is active in the base",
    );
  });

  it("Longhorn eviction comes first, then drain; reset and delete after; Swift keeps the members the stack sets", () => {
    expect(steps(p, "sto-9")).toEqual([
      `before Longhorn eviction: kubectl -n longhorn-system patch nodes.longhorn.io sto-9 --type merge -p '{"spec":{"allowScheduling":false,"evictionRequested":true}}'`,
      "before drain: kubectl drain sto-9 --ignore-daemonsets --delete-emptydir-data",
      "after reset: talosctl reset --graceful --nodes 10.40.4.19",
      "after delete: kubectl delete node sto-9",
      "after forget it in Longhorn: kubectl -n longhorn-system delete nodes.longhorn.io sto-9",
    ]);
    expect(p.actions).toEqual([{ action: "delete", resource: "Node sto-9 (patch)", unit: "node-roles", protected: false }]);
    expect(component(p, "openkeel-swift/storage")).toEqual({ component: "openkeel-swift/storage", op: "changed", gained: [], lost: ["sto-9"] });
  });
});

describe("changing the provisioning node's role (prov-1 of prod-medium: provisioning → compute)", () => {
  const p = scenario("prod-medium", (r) => {
    node(r, "prov-1").roles = ["compute"];
    // a hypervisor now: its chassis needs the provider bridges; no Ironic, so no BMC networks and no provisioning network
    node(r, "prov-1").bridgeMappings = "physnet1:br-ex";
    delete r.services.ironic.bmcNetworks;
    delete r.services.ironic.provisioningNetwork;
  });

  it("the removed service is a warning with its reason, and its release is deleted; its namespace is protected: an error", () => {
    expect(p.actions.find((a) => a.resource === "HelmRelease openkeel-ironic")).toEqual({
      action: "delete",
      resource: "HelmRelease openkeel-ironic",
      unit: "openkeel-ironic",
      protected: false,
    });
    expect(p.findings).toEqual([
      {
        level: "error",
        code: "protected-delete",
        message: "Namespace openkeel-ironic of unit openkeel-namespace would be deleted, and the unit is protected, so `pulumi up` refuses",
        fix: 'keep it in the stack, or, if its data may go, add the unit to openkeel:allowRemoval in this change (docs/operating.md, "Removing a unit that owns data")',
        reason: "the unit owns data (protect + retainOnDelete)",
      },
      {
        level: "warning",
        code: "service-removed",
        message: "service ironic goes away: `pulumi up` uninstalls release openkeel-ironic",
        reason:
          "no node has the provisioning role any more (prov-1 lost it), and ironic runs only where one has it (topology/services.ts); its API leaves the cloud",
        fix: "if the cloud still needs it, give a node the provisioning role",
      },
      // a hypervisor now: its loss takes VMs down (issue 39)
      expect.objectContaining({
        level: "warning",
        code: "failure-domain",
        message: expect.stringMatching(/^after this change, losing prov-1 runs degraded: hypervisors: 3 of 4 hypervisors left/),
      }),
    ]);
    expect(stackMarkdown(p)).toContain("**⚠️ Warnings**\n\n- **service-removed**: service ironic goes away");
    expect(component(p, "openkeel-ironic/conductor")).toEqual({ component: "openkeel-ironic/conductor", op: "removed", gained: [], lost: ["prov-1"] });
  });

  it("the node itself: drain, a new config and image (compute: hugepages, CPU manager), new taints", () => {
    expect(p.nodes[0].steps.map((s) => s.what)).toEqual(["drain", "apply-config", "upgrade", "taints", "uncordon"]);
  });
});

describe("lowering OVN central's members (prod-medium: ovnCentral.replicas 3 → 1)", () => {
  it("is refused with what it breaks: the quorum the topology gives is 3, and one member stops it at its first loss", () => {
    const r = planStack(mutatedConfig("prod-medium", (raw) => (raw.services.neutron = { replicas: { ovnCentral: 1 } })));
    expect(r.plan).toBeUndefined();
    const found = r.problems.filter((c) => c.level === "error");
    expect(found.map((c) => [c.code, c.path])).toEqual([["replicas-quorum", "openkeel:services.neutron.replicas.ovnCentral"]]);
    expect(found[0].message).toMatch(
      /1 member\(s\) of openkeel-neutron ovnCentral, a quorum the topology gives 3 .*: with 1, the loss of one member stops it$/,
    );
  });

  it("a member count that does change is a warning with the reason (the rendered values, 3 → 5)", () => {
    const base = renderTree(shippedConfig("prod-medium"));
    const head = new Map(base);
    const file = "values/openkeel-neutron.yaml";
    head.set(file, base.get(file)!.replace(/^(ovnCentral:\n(?: {2}.*\n)*? {2}replicas:) 3$/m, "$1 5"));
    expect(head.get(file)).not.toBe(base.get(file));
    const p = previewStack("prod-medium", base, head);
    expect(p.findings.map((f) => [f.level, f.code, f.message])).toEqual([
      ["warning", "quorum-members", "OVN central: 3 → 5 members (ovnCentral.replicas of openkeel-neutron)"],
    ]);
    expect(p.findings[0].reason).toMatch(/^it survives 1 failed member\(s\) before and 2 after; .*RAFT/);
  });

  it("moving it to the network role instead is refused outright (D2: OVN central on the control plane)", () => {
    const r = planStack(mutatedConfig("prod-medium", (raw) => (raw.services.neutron = { placement: { ovnCentral: { role: "network" } } })));
    expect(r.plan).toBeUndefined();
    expect(r.problems.filter((c) => c.level === "error").map((c) => c.code)).toContain("placement-forbidden");
  });
});

describe("adding a zone (prod-medium's nodes spread over zone-a, zone-b, zone-c)", () => {
  const zones: Record<string, string> = {
    "cp-1": "zone-a",
    "cmp-01": "zone-a",
    "net-1": "zone-a",
    "prov-1": "zone-a",
    "cp-2": "zone-b",
    "cmp-02": "zone-b",
    "net-2": "zone-b",
    "cp-3": "zone-c",
    "cmp-03": "zone-c",
  };
  const p = scenario("prod-medium", (r) => r.nodes.forEach((n: any) => (n.zone = zones[n.name])));

  it("every node: its zone label (a patch update) and a new machine config; Swift's ring, Longhorn and the NodeHealthChecks follow the zones; nothing replaced, no warning", () => {
    const nodes = p.actions.filter((a) => a.resource.startsWith("Node "));
    expect(nodes.every((a) => a.action === "update")).toBe(true);
    expect(nodes).toHaveLength(9);
    // Swift zones = Kubernetes zones (§ 6.3): the release is told the zone label once nodes have zones;
    // Longhorn keeps a volume's replicas in 3 zones; the checks that hold no quorum would go per zone
    // (issue 39), but each zone holds one node of theirs: they stay one check each, which now fences a
    // failure in each of two zones (maxUnhealthy 50%), and no storm (issue 45); their selectors stay
    expect(p.actions.filter((a) => !a.resource.startsWith("Node ")).map((a) => `${a.action} ${a.resource}`)).toEqual([
      "update HelmRelease longhorn",
      "update HelmRelease openkeel-swift",
      "update NodeHealthCheck openkeel-network",
      "update NodeHealthCheck openkeel-storage",
    ]);
    expect(p.actions.find((a) => a.resource === "NodeHealthCheck openkeel-storage")?.detail).toBe("spec.maxUnhealthy");
    expect(p.actions.find((a) => a.resource === "HelmRelease longhorn")?.detail).toBe("values defaultSettings.replicaZoneSoftAntiAffinity");
    expect(p.actions.find((a) => a.resource === "Node cmp-01 (patch)")?.detail).toBe('metadata.labels["topology.kubernetes.io/zone"]');
    // the ring's consequence, per storage node: its Swift member's replicas move to keep each object's apart
    expect(p.findings.map((f) => [f.level, f.code, f.message.split(":")[0]])).toEqual(
      ["cmp-01", "cmp-02", "cmp-03"].map((n) => ["warning", "swift-ring", `storage node '${n}' moves from zone (none) to ${zones[n]}`]),
    );
    expect(p.nodes.map((n) => n.steps.map((s) => s.what).join())).toEqual(new Array(9).fill("apply-config"));
    expect(p.nodes.find((n) => n.node === "cmp-01")!.steps[0].why).toBe('its machine config changes: machine.nodeLabels["topology.kubernetes.io/zone"]');
    expect(p.placement?.nodes.find((n) => n.node === "cp-2")).toEqual({ node: "cp-2", op: "changed", fields: ["zone: — → zone-b"] });
  });
});

describe("making nodes Kubernetes control-plane machines (ok-cp-1 and ok-cp-6 of prod-large)", () => {
  // two, not one: a fourth etcd member would put two of four in one zone, whose loss is fatal (issue 39)
  const p = scenario("prod-large", (r) => ["ok-cp-1", "ok-cp-6"].forEach((n) => (node(r, n).kubernetesControlPlane = true)));

  it("their Talos machine type changes: reset and install again, nothing else on them", () => {
    const reinstall = (ip: string) => [
      `before reinstall: talosctl reset --graceful --nodes ${ip}, then install it as a controlplane with its new configuration (talos/machines.yaml)`,
    ];
    expect(p.nodes.map((n) => [n.node, n.steps.map((s) => `${s.when} ${s.what}: ${s.command}`)])).toEqual([
      ["ok-cp-1", reinstall("10.40.1.11")],
      ["ok-cp-6", reinstall("10.40.1.16")],
    ]);
    expect(p.nodes[0].steps[0].why).toBe("its Talos machine type changes (worker → controlplane), which Talos does not convert in place");
  });

  it("one alone is refused: two of four etcd members in zone-c", () => {
    const r = planStack(mutatedConfig("prod-large", (raw) => (node(raw, "ok-cp-6").kubernetesControlPlane = true)));
    expect(r.problems.filter((c) => c.level === "error").map((c) => [c.code, c.message.replace(/, the Kubernetes.*/, "")])).toEqual([
      ["zone-loss-fatal", "losing zone zone-c would be fatal: etcd: 2 of its 4 member(s) lost, 2 left: no majority (3)"],
    ]);
  });
});

describe("a comment-only change", () => {
  it("a comment edited in a stack file renders nothing different: the preview says no changes", () => {
    const text = fs.readFileSync(path.join(STACKS_DIR, "Pulumi.prod-medium.yaml"), "utf8");
    const edited = text.replace("# Medium (§ 6.2)", "# Medium topology (§ 6.2, reviewed)");
    expect(edited).not.toBe(text);
    const dir = tempStacks({ "prod-medium": edited });
    try {
      const p = previewStack("prod-medium", renderTree(shippedConfig("prod-medium")), renderTree(readStack("prod-medium", dir, STACK_DECLARATIONS)));
      expect(p.status).toBe("unchanged");
      expect(stackMarkdown(p)).toBe("### prod-medium — talos-production/medium\n\nNo changes.\n");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a zone under two of prod-medium's three storage nodes (issue 45 item 4): a health check NHC's webhook holds while it remediates", () => {
  // every node in a zone (zone-missing), the storage nodes two in zone-a, one in zone-b
  const zones: Record<string, string> = {
    "cp-1": "zone-a",
    "cmp-01": "zone-a",
    "cmp-02": "zone-a",
    "net-1": "zone-a",
    "prov-1": "zone-a",
    "cp-2": "zone-b",
    "cmp-03": "zone-b",
    "net-2": "zone-b",
    "cp-3": "zone-c",
  };
  const p = scenario("prod-medium", (r) => r.nodes.forEach((n: any) => (n.zone = zones[n.name])));

  it("openkeel-storage's selector changes (its zone-a nodes get a check of their own): a warning naming it, the webhook's refusal and the runbook step", () => {
    expect(p.actions.filter((a) => a.resource.startsWith("NodeHealthCheck")).map((a) => `${a.action} ${a.resource}: ${a.detail ?? ""}`)).toEqual([
      // the network nodes, one per zone: one check still, which fences one of the two (issue 45 item 3)
      "update NodeHealthCheck openkeel-network: spec.maxUnhealthy",
      "update NodeHealthCheck openkeel-storage: spec.selector.matchExpressions[6]",
      "create NodeHealthCheck openkeel-storage-zone-a: ",
    ]);
    const held = p.findings.filter((f) => f.code === "nhc-held-change");
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ level: "warning" });
    expect(held[0].message).toMatch(
      /^NodeHealthCheck openkeel-storage \(selector\): NHC's webhook refuses that while the check remediates a node \("deletion prohibited due to running remediation", "selector update prohibited due to running remediation": node-healthcheck-operator v0\.12\.0 internal\/webhook\/v1alpha1\/nodehealthcheck_webhook\.go 76-103, 211-232\), and `pulumi up` would stop there/,
    );
    expect(held[0].fix).toContain(
      `kubectl get nodehealthchecks -o jsonpath='{range .items[*]}{.metadata.name}{"\\t"}{.status.unhealthyNodes[*].remediations[*].resource.name}{"\\n"}{end}'`,
    );
    expect(held[0].fix).toContain('docs/node-lifecycle.md, "Changing the health checks"');
  });

  it("and back: openkeel-storage-zone-a deleted, openkeel-storage's selector back", () => {
    const zoned = renderTree(mutatedConfig("prod-medium", (r) => r.nodes.forEach((n: any) => (n.zone = zones[n.name]))));
    const back = previewStack("prod-medium", zoned, renderTree(shippedConfig("prod-medium")));
    expect(back.findings.filter((f) => f.code === "nhc-held-change").map((f) => f.message.split(":")[0])).toEqual([
      "NodeHealthCheck openkeel-storage-zone-a is deleted; openkeel-storage (selector)",
    ]);
  });

  it("a change of maxUnhealthy only is no finding: the webhook holds the selector and the templates, not the threshold", () => {
    const q = scenario("prod-medium", (r) => (r.platform = { ...r.platform, medik8s: { maxUnhealthy: { storage: "34%" } } }));
    expect(q.actions.filter((a) => a.resource.startsWith("NodeHealthCheck")).map((a) => `${a.action} ${a.resource}`)).toEqual([
      "update NodeHealthCheck openkeel-storage",
    ]);
    expect(q.findings.filter((f) => f.code === "nhc-held-change")).toEqual([]);
  });
});
