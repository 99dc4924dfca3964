// The VIP's way back (platform/metallb.ts routeBackChecks, nodes/talos-network.ts): replies from
// a MetalLB VIP announced on its own VLAN leave through that VLAN (a routing table and a rule
// on every node that has the VLAN), never through the node's default route (metallb/metallb#319).
import { describe, expect, it } from "vitest";
import type { Check } from "../../config/problems";
import type { LoadedConfig } from "../../config/schema";
import { planStack } from "../../environments";
import { VIP_ROUTE_TABLE, VIP_RULE_PRIORITY } from "../../nodes/talos-network";
import { mutatedConfig, PRODUCTION_STACKS, shippedConfig } from "../helpers/stacks";
import { shippedPlan } from "../helpers/plans";
import { metallbSettings } from "../../platform/metallb-settings";

const routeBack = (cfg: LoadedConfig): Check[] => planStack(cfg).problems.filter((p): p is Check => p.code === "metallb-route-back") as Check[];

describe("the VIP's replies leave through the VIP's VLAN", () => {
  it.each(PRODUCTION_STACKS.filter((s) => shippedConfig(s).platform.metallb))(
    "%s: every node with the VLAN routes the VIP network through its own table",
    (stack) => {
      const cfg = shippedConfig(stack);
      const vip = metallbSettings(cfg.platform)!.vipNetwork!;
      const plan = shippedPlan(stack).plan!;
      const withVlan = cfg.nodes.filter((n) => ["control", "gateway"].includes(n.hostNetwork ?? ""));
      expect(withVlan.length).toBeGreaterThan(0);
      for (const node of cfg.nodes) {
        const docs = plan.nodeConfig!.files.find((f) => f.path === `talos/nodes/${node.name}.yaml`)!.documents;
        const rule = docs.find((d) => d.kind === "RoutingRuleConfig");
        const vlan = docs.find((d) => d.kind === "VLANConfig" && d.name === "bond0.100");
        if (!withVlan.includes(node)) {
          expect(rule, node.name).toBeUndefined();
          continue;
        }
        expect(rule, node.name).toEqual({ apiVersion: "v1alpha1", kind: "RoutingRuleConfig", name: VIP_RULE_PRIORITY, src: vip.cidr, table: VIP_ROUTE_TABLE });
        expect(vlan?.routes, node.name).toEqual([
          { destination: vip.cidr, table: VIP_ROUTE_TABLE },
          { gateway: vip.gateway, table: VIP_ROUTE_TABLE },
        ]);
        // the node's own default route stays in the main table, on its own link
        const own = docs.find((d) => d.kind === "BondConfig" && d.name === "bond0");
        expect(own?.routes, node.name).toEqual([{ gateway: expect.any(String) }]);
      }
    },
  );

  it("a VIP on a VLAN without its network is refused, naming the VLAN and the link the replies would take", () => {
    const [c] = routeBack(mutatedConfig("prod-medium", (r) => delete r.platform.metallb.vipNetwork));
    expect(c).toMatchObject({ level: "error", path: "openkeel:platform.metallb" });
    expect(c.message).toBe(
      "the VIP is announced from bond0.100 of host network 'control' (and 1 more), but its replies would leave through the node's default route on bond0 with the VIP as their source (metallb/metallb#319), which uRPF and stateful firewalls drop",
    );
  });

  it("a router outside the VIP network, and pool addresses outside it", () => {
    const found = routeBack(
      mutatedConfig("prod-medium", (r) => {
        r.platform.metallb.vipNetwork = { cidr: "203.0.113.0/28", gateway: "203.0.113.129" };
      }),
    );
    expect(found.map((c) => c.path)).toEqual(["openkeel:platform.metallb.vipNetwork.gateway", "openkeel:platform.metallb.addresses[0]"]);
  });

  it("announced from the nodes' own link, the VIP needs no table", () => {
    const cfg = mutatedConfig("prod-medium", (r) => {
      r.platform.metallb.interfaces = ["bond0"];
      delete r.platform.metallb.vipNetwork;
    });
    expect(routeBack(cfg)).toEqual([]);
  });
});
