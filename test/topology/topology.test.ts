// Plan checks (okadm plan rules, § 5.2, § 6): each trips on a mutated shipped stack; labels and
// taints per node as the scheduler sees them.
import { describe, expect, it } from "vitest";
import type { LoadedConfig } from "../../config/schema";
import { K8S_CONTROL_PLANE_LABEL } from "../../config/roles";
import { planChecks } from "../../topology/checks";
import { serviceEnabled } from "../../topology/services";
import { nodeTaints, schedulingNodeLabels } from "../../topology/topology";
import { planStack, resolveStack } from "../../environments";
import { isStandingWarning, mutatedConfig, SHIPPED_STACKS, shippedConfig } from "../helpers/stacks";

function checksOf(cfg: LoadedConfig) {
  return planChecks(cfg, resolveStack(cfg).topology);
}
const codes = (cfg: LoadedConfig, level: "error" | "warning") =>
  checksOf(cfg)
    .filter((c) => c.level === level && !isStandingWarning(c))
    .map((c) => c.code);

/** Every check of the stack's plan, the components' and services' own included (what `npm run plan` prints). */
const stackCodes = (cfg: LoadedConfig, level: "error" | "warning") =>
  planStack(cfg)
    .problems.filter((c) => "level" in c && c.level === level && !isStandingWarning(c))
    .map((c) => ("code" in c ? c.code : undefined));

describe("shipped stacks", () => {
  it.each(SHIPPED_STACKS)("%s passes every plan check without warnings", (stack) => {
    expect(checksOf(shippedConfig(stack))).toEqual([]);
  });
});

describe("plan checks trip", () => {
  it("fewer than 3 control-plane nodes", () => {
    const cfg = mutatedConfig("prod-medium", (r) => (r.nodes[2].roles = ["storage"]));
    const check = checksOf(cfg).find((c) => c.code === "control-plane-count")!;
    expect(check.level).toBe("error");
    expect(check.message).toMatch(/2 controlPlane node\(s\).*need 3/);
    expect(check.fix).toMatch(/at least 3 nodes/);
  });

  it("no compute node", () => {
    const cfg = mutatedConfig("prod-medium", (r) => r.nodes.forEach((n: any) => (n.roles = n.roles.filter((x: string) => x !== "compute"))));
    expect(stackCodes(cfg, "error")).toContain("compute-count");
    // Nova's own check (its module, openkeel/services/nova.ts), not the topology's
    expect(codes(cfg, "error")).not.toContain("compute-count");
  });

  it("no network node", () => {
    const cfg = mutatedConfig("prod-medium", (r) => (r.nodes = r.nodes.filter((n: any) => !n.roles.includes("network"))));
    expect(stackCodes(cfg, "error")).toEqual(["network-count"]);
  });

  it("no storage node is a warning, not an error", () => {
    const cfg = mutatedConfig("prod-medium", (r) => r.nodes.forEach((n: any) => (n.roles = n.roles.filter((x: string) => x !== "storage"))));
    expect(stackCodes(cfg, "error")).toEqual([]);
    const { plan } = planStack(cfg);
    // every production stack also has the standing warnings (ovs-two-stacks, machine-facts-missing)
    expect(plan?.warnings.filter((w) => !isStandingWarning(w)).map((w) => w.code)).toEqual(["storage-recommended"]);
  });

  it("Ironic enabled without provisioning nodes", () => {
    const cfg = mutatedConfig(
      "prod-small",
      (r) => (r.services = { ironic: { enabled: true, bmcNetworks: ["10.20.9.0/24"], provisioningNetwork: { cidr: "10.21.0.0/24", interface: "bond0.21" } } }),
    );
    expect(codes(cfg, "error")).toEqual(["service-needs-role"]);
  });

  it("Zun enabled without containers nodes", () => {
    const cfg = mutatedConfig("prod-medium", (r) => (r.services.zun = { enabled: true }));
    expect(codes(cfg, "error")).toEqual(["service-needs-role"]);
  });

  it("duplicate node names", () => {
    const cfg = mutatedConfig("prod-medium", (r) => (r.nodes[4].name = "cmp-01"));
    const check = checksOf(cfg).find((c) => c.code === "duplicate-node")!;
    expect(check.message).toMatch(/'cmp-01' is listed twice \(nodes\[3\] and nodes\[4\]\)/);
    expect(check.path).toBe("openkeel:nodes[4].name");
  });

  it("a node without a role", () => {
    const cfg = mutatedConfig("prod-medium", (r) => (r.nodes[8].roles = []));
    expect(codes(cfg, "error")).toContain("node-without-role");
    // a Kubernetes control-plane node without roles is fine (large topology)
    expect(codes(shippedConfig("prod-large"), "error")).toEqual([]);
  });

  it("a node without a zone in a multi-zone topology", () => {
    const cfg = mutatedConfig("prod-large", (r) => delete r.nodes[10].zone);
    const check = checksOf(cfg).find((c) => c.code === "zone-missing")!;
    expect(check.level).toBe("error");
    expect(check.path).toBe("openkeel:nodes[10].zone");
  });

  it("a zone on some nodes of a single-zone topology is a warning", () => {
    const cfg = mutatedConfig("prod-medium", (r) => (r.nodes[0].zone = "zone-a"));
    // issue 21: one warning, at the node that has the zone, not one per other node
    expect(codes(cfg, "warning")).toEqual(["zone-missing"]);
    const check = checksOf(cfg).find((c) => c.code === "zone-missing")!;
    expect(check.path).toBe("openkeel:nodes[0].zone");
    expect(check.message).toBe("only node 'cp-1' has a zone (zone-a); the 8 other node(s) have none");
  });

  it("the lab is not held to the production counts", () => {
    expect(codes(shippedConfig("lab"), "error")).toEqual([]);
    const cfg = mutatedConfig("lab", (r) => (r.nodes[0].roles = []));
    expect(codes(cfg, "error")).toEqual([]);
  });
});

describe("services", () => {
  it("Ironic is on where provisioning nodes exist, off elsewhere", () => {
    const on = (stack: string) => {
      const cfg = shippedConfig(stack);
      return serviceEnabled(cfg, resolveStack(cfg).topology, "ironic");
    };
    expect([on("lab"), on("prod-small"), on("prod-medium"), on("prod-large")]).toEqual([false, false, true, true]);
  });
});

describe("node labels and taints", () => {
  it("hardened role labels, zone and the hostname in production", () => {
    const cfg = shippedConfig("prod-large");
    const node = cfg.nodes.find((n) => n.name === "cmp-b-02")!;
    expect(schedulingNodeLabels(node, "hardened")).toEqual({
      "node-restriction.kubernetes.io/openkeel-compute": "",
      "topology.kubernetes.io/zone": "zone-b",
      "kubernetes.io/hostname": "cmp-b-02",
      "network.openkeel.io/external-nic": "bond1",
    });
  });

  it("taints only the stack's tainted roles; keys stay node-role.openkeel.io in every profile", () => {
    const cfg = shippedConfig("prod-medium");
    const topo = resolveStack(cfg).topology;
    const taints = (name: string) =>
      nodeTaints(
        cfg.nodes.find((n) => n.name === name)!,
        topo,
      );
    expect(taints("cp-1")).toEqual([]);
    expect(taints("cmp-01")).toEqual([{ key: "node-role.openkeel.io/compute", effect: "NoSchedule" }]);
    expect(taints("prov-1")).toEqual([{ key: "node-role.openkeel.io/provisioning", effect: "NoSchedule" }]);
  });

  it("taints: true taints every role; the small topology has none", () => {
    const cfg = mutatedConfig("prod-small", (r) => (r.taints = true));
    expect(nodeTaints(cfg.nodes[0], resolveStack(cfg).topology)).toHaveLength(5);
    const small = shippedConfig("prod-small");
    expect(nodeTaints(small.nodes[0], resolveStack(small).topology)).toEqual([]);
  });

  it("a Kubernetes control-plane node without OpenKeel roles keeps the upstream taint", () => {
    const cfg = shippedConfig("prod-large");
    const topo = resolveStack(cfg).topology;
    expect(
      nodeTaints(
        cfg.nodes.find((n) => n.name === "k8s-cp-1")!,
        topo,
      ),
    ).toEqual([{ key: K8S_CONTROL_PLANE_LABEL, effect: "NoSchedule" }]);
  });
});
