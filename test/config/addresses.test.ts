// Issue 14, item 17: the networks of a production stack (node subnet, pod, service and join ranges,
// Kube-OVN's defaults) and the nodes' addresses checked against them and against each other.
import { describe, expect, it } from "vitest";
import { contains, overlaps, parseAddress, parseCidr, reservedAddresses } from "../../config/cidr";
import { NETWORK_DEFAULTS } from "../../config/network";
import { planStack } from "../../environments";
import { planOf, valuesOf, shippedPlan } from "../helpers/plans";
import { configProblems, mutatedConfig, PRODUCTION_STACKS, shippedConfig } from "../helpers/stacks";

const errors = (stack: string, mutate: (raw: any) => void) =>
  planStack(mutatedConfig(stack, mutate))
    .problems.filter((c) => c.level === "error")
    .map((c) => `${c.path}: [${c.code}] ${c.message}`);

/** The stack's nodes take their addresses by DHCP: a static one needs the node subnet these tests take away. */
function dhcpAddresses(raw: { hostNetworks?: Record<string, { nodeAddress: unknown }> }): void {
  for (const n of Object.values(raw.hostNetworks ?? {})) n.nodeAddress = { link: "bond0", method: "dhcp" };
}

describe("address arithmetic", () => {
  it("parses IPv4 and IPv6, ranges with their prefix, and refuses host bits", () => {
    expect(parseAddress("10.20.0.11")).toEqual({ family: 4, value: 0x0a14000bn });
    expect(parseAddress("fd00::1")).toEqual({ family: 6, value: (0xfd00n << 112n) | 1n });
    expect(parseAddress("10.20.0.256")).toBeUndefined();
    expect(parseAddress("fd00::1::2")).toBeUndefined();
    expect(parseCidr("10.20.0.0/24")?.prefix).toBe(24);
    expect(parseCidr("10.20.0.1/24")).toBeUndefined();
    expect(parseCidr("10.20.0.0/33")).toBeUndefined();
  });

  it("contains, overlaps, and the network and broadcast addresses of an IPv4 range", () => {
    const node = parseCidr("10.20.0.0/24")!;
    expect(contains(node, parseAddress("10.20.0.255")!)).toBe(true);
    expect(contains(node, parseAddress("10.20.1.0")!)).toBe(false);
    expect(contains(node, parseAddress("fd00::1")!)).toBe(false);
    expect(overlaps(parseCidr("10.96.0.0/12")!, parseCidr("10.100.0.0/16")!)).toBe(true);
    expect(overlaps(parseCidr("10.16.0.0/16")!, parseCidr("10.17.0.0/16")!)).toBe(false);
    expect(reservedAddresses(node)).toEqual([0x0a140000n, 0x0a1400ffn]);
    expect(reservedAddresses(parseCidr("10.20.0.0/31")!)).toEqual([]);
  });
});

describe("the networks of a production stack", () => {
  it("Kube-OVN's chart defaults when the stack sets none, in the Kube-OVN values and the Talos patches alike", () => {
    expect(NETWORK_DEFAULTS).toEqual({ podCIDR: "10.16.0.0/16", serviceCIDR: "10.96.0.0/12", joinCIDR: "100.64.0.0/16" });
    for (const stack of PRODUCTION_STACKS) {
      const plan = planOf(stack);
      expect(valuesOf(plan, "kube-ovn").ipv4).toEqual({
        POD_CIDR: "10.16.0.0/16",
        POD_GATEWAY: "10.16.0.1",
        SVC_CIDR: "10.96.0.0/12",
        JOIN_CIDR: "100.64.0.0/16",
      });
      for (const f of plan.nodeConfig!.files.filter((x) => x.path.startsWith("talos/patches/"))) {
        expect((f.documents[0] as any).cluster.network, f.path).toEqual({
          cni: { name: "none" },
          podSubnets: ["10.16.0.0/16"],
          serviceSubnets: ["10.96.0.0/12"],
        });
      }
    }
  });

  it("ranges the stack sets reach Kube-OVN and Talos", () => {
    const plan = planStack(
      mutatedConfig("prod-small", (r) => (r.network = { nodeSubnet: "10.20.0.0/24", podCIDR: "172.20.0.0/16", serviceCIDR: "172.21.0.0/16" })),
    ).plan!;
    expect(valuesOf(plan, "kube-ovn").ipv4).toMatchObject({ POD_CIDR: "172.20.0.0/16", POD_GATEWAY: "172.20.0.1", SVC_CIDR: "172.21.0.0/16" });
    expect((plan.nodeConfig!.files.find((f) => f.path.startsWith("talos/patches/"))!.documents[0] as any).cluster.network.serviceSubnets).toEqual([
      "172.21.0.0/16",
    ]);
  });

  it("every shipped production stack names its node subnet and passes the address checks", () => {
    for (const stack of PRODUCTION_STACKS) {
      expect(shippedConfig(stack).network?.nodeSubnet, stack).toBeDefined();
      expect(
        shippedPlan(stack).problems.filter((c) => /address|network|subnet/.test(c.code ?? "")),
        stack,
      ).toEqual([]);
    }
  });

  it("without a node subnet: a warning, and the other checks still hold", () => {
    const r = planStack(
      mutatedConfig("prod-small", (raw) => {
        delete raw.network;
        dhcpAddresses(raw);
      }),
    );
    expect(r.plan).toBeDefined();
    expect(r.problems.map((c) => `${c.level} ${c.code}`)).toContain("warning node-subnet-missing");
  });

  it("IPv6 ranges and malformed ones are refused by the schema, the lab's ranges are kind's", () => {
    expect(configProblems("prod-small", (r) => (r.network = { nodeSubnet: "fd00::/64" }))[0].message).toMatch(/IPv6 range/);
    expect(configProblems("prod-small", (r) => (r.network = { serviceCIDR: "10.96.0.0" }))[0].path).toBe("openkeel:network.serviceCIDR");
    expect(configProblems("lab", (r) => (r.network = { nodeSubnet: "10.0.0.0/8" }))[0].path).toBe("openkeel:network");
  });
});

describe("the address checks, tripped", () => {
  it("a duplicated address names both nodes, in the lab too", () => {
    expect(errors("prod-medium", (r) => (r.nodes[4].internalIP = r.nodes[3].internalIP))).toEqual([
      "openkeel:nodes[4].internalIP: [duplicate-address] node 'cmp-02' has the address 10.30.1.11 of node 'cmp-01' (nodes[3])",
    ]);
    const twoLabNodes = (r: any) =>
      (r.nodes = [
        { ...r.nodes[0], internalIP: "172.18.0.2" },
        { name: "openkeel-lab-worker", roles: ["compute"], internalIP: "172.18.0.2" },
      ]);
    expect(errors("lab", twoLabNodes)).toContain(
      "openkeel:nodes[1].internalIP: [duplicate-address] node 'openkeel-lab-worker' has the address 172.18.0.2 of node 'openkeel-lab-control-plane' (nodes[0])",
    );
  });

  it("an address in the pod, service or join range, outside the node subnet, or the subnet's own network address", () => {
    expect(
      errors("prod-small", (r) => {
        r.network = { podCIDR: "10.20.0.0/16" };
        dhcpAddresses(r);
      }),
    ).toEqual(
      [0, 1, 2].map(
        (i) =>
          `openkeel:nodes[${i}].internalIP: [node-address] node 'node-${i + 1}': 10.20.0.1${i + 1} is inside the pod range 10.20.0.0/16, which the cluster routes to pods: the node would be unreachable`,
      ),
    );
    expect(errors("prod-small", (r) => (r.nodes[0].internalIP = "100.64.0.9"))).toEqual([
      "openkeel:nodes[0].internalIP: [node-address] node 'node-1': 100.64.0.9 is inside the join range 100.64.0.0/16, which the cluster routes to pods: the node would be unreachable",
      "openkeel:nodes[0].internalIP: [node-address] node 'node-1': 100.64.0.9 is outside the node subnet 10.20.0.0/24",
    ]);
    expect(errors("prod-small", (r) => (r.nodes[2].internalIP = "10.20.0.0"))).toEqual([
      "openkeel:nodes[2].internalIP: [node-address] node 'node-3': 10.20.0.0 is the network address of the node subnet 10.20.0.0/24, which no host can have",
    ]);
  });

  it("overlapping ranges: the later one is named, and the fix gives the defaults", () => {
    const overlapping = (r: any) => (r.network = { nodeSubnet: "10.20.0.0/24", serviceCIDR: "10.16.128.0/17" });
    expect(errors("prod-small", overlapping)).toEqual([
      "openkeel:network.serviceCIDR: [network-overlap] the pod range 10.16.0.0/16 and the service range 10.16.128.0/17 overlap: packets for one would be routed to the other",
    ]);
    const [overlap] = planStack(mutatedConfig("prod-small", overlapping)).problems.filter((c) => c.code === "network-overlap");
    expect(overlap.fix).toBe("choose ranges that do not overlap (the defaults: pod 10.16.0.0/16, service 10.96.0.0/12, join 100.64.0.0/16)");
  });
});
