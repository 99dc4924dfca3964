// openkeel:hostNetworks (config/host-network.ts) and their Talos documents (nodes/talos-network.ts):
// each rule of an entry tripped with its key path, and what a node's patch holds.
import { describe, expect, it } from "vitest";
import { effectiveMtu, hostInterfaces, type HostNetwork } from "../../config/host-network";
import { hostNetworkDocuments } from "../../nodes/talos-network";
import { configProblems, shippedConfig } from "../helpers/stacks";
import { shippedPlan } from "../helpers/plans";

const at = (stack: string, mutate: (raw: any) => void) => configProblems(stack, mutate).map((p) => `${String(p.path)}: ${p.message}. Fix: ${p.fix}`);

describe("openkeel:hostNetworks, refused", () => {
  it("a name twice, a NIC in two bonds or also a plain link, a bond as a member", () => {
    expect(at("prod-medium", (r) => r.hostNetworks.provisioning.vlans.push({ parent: "bond0", id: 31 }))).toEqual([
      expect.stringMatching(/^openkeel:hostNetworks\.provisioning\.vlans\[1\]\.id: declares interface 'bond0\.31' a second time/),
    ]);
    expect(
      at("prod-medium", (r) => {
        r.hostNetworks.control = {
          ...r.hostNetworks.control,
          bonds: [...r.hostNetworks.control.bonds, { name: "bond9", members: ["enp1s0f1", "bond0"], mode: "active-backup" }],
        };
      }),
    ).toEqual([
      expect.stringMatching(/^openkeel:hostNetworks\.control\.bonds\[1\]\.members\[0\]: is already a member of bond0/),
      expect.stringMatching(/^openkeel:hostNetworks\.control\.bonds\[1\]\.members\[1\]: is a bond or VLAN of this host network, not a NIC/),
    ]);
    expect(at("prod-medium", (r) => (r.hostNetworks.provisioning.links = [{ name: "enp1s0f0", mtu: 9000 }]))).toEqual([
      expect.stringMatching(/^openkeel:hostNetworks\.provisioning\.links\[0\]\.name: is a member of bond0, which owns it/),
    ]);
  });

  it("a VLAN on an undeclared parent, or wider than its parent", () => {
    const large = (r: any) => {
      r.hostNetworks.gateway = { ...r.hostNetworks.gateway, links: [{ name: "eno1" }], vlans: [{ parent: "eno1", id: 7, mtu: 9000 }] };
    };
    expect(at("prod-large", large)).toEqual([
      expect.stringMatching(/^openkeel:hostNetworks\.gateway\.vlans\[0\]\.mtu: is 9000, above its parent eno1's MTU of 1500/),
    ]);
    expect(at("prod-medium", (r) => (r.hostNetworks.provisioning.vlans = [{ parent: "eth9", id: 31 }]))).toEqual([
      expect.stringMatching(
        /^openkeel:hostNetworks\.provisioning\.vlans\[0\]\.parent: is not a link or bond of this host network\. Fix: declare 'eth9' under links or bonds, or name one that is \(bond0\)/,
      ),
    ]);
  });

  it("the node address: on a declared link; a static one with its gateway in the node subnet; a DHCP one without", () => {
    expect(at("prod-medium", (r) => (r.hostNetworks.provisioning.nodeAddress = { link: "bond3", method: "dhcp" }))).toEqual([
      expect.stringMatching(/^openkeel:hostNetworks\.provisioning\.nodeAddress\.link: is not a link, bond or VLAN of this host network/),
    ]);
    expect(at("prod-medium", (r) => (r.hostNetworks.provisioning.nodeAddress = { link: "bond0", method: "static" }))).toEqual([
      expect.stringMatching(/^openkeel:hostNetworks\.provisioning\.nodeAddress\.gateway: is required for a static address/),
    ]);
    expect(at("prod-medium", (r) => (r.hostNetworks.provisioning.nodeAddress = { link: "bond0", method: "dhcp", gateway: "10.30.0.1" }))).toEqual([
      expect.stringMatching(/^openkeel:hostNetworks\.provisioning\.nodeAddress\.gateway: is set for a DHCP address/),
    ]);
    expect(at("prod-medium", (r) => (r.hostNetworks.provisioning.nodeAddress = { link: "bond0", method: "static", gateway: "10.99.0.1" }))).toEqual([
      "openkeel:hostNetworks.provisioning.nodeAddress.gateway: is outside the node subnet 10.30.0.0/16, so the node could not reach it. Fix: write the router of 10.30.0.0/16",
    ]);
    expect(at("prod-medium", (r) => delete r.network)).toEqual(
      ["control", "hypervisor", "gateway", "provisioning"].map(
        (n) =>
          `openkeel:hostNetworks.${n}.nodeAddress: is static, and openkeel:network.nodeSubnet, whose prefix length the address takes, is not set. Fix: set openkeel:network.nodeSubnet, or use method: dhcp`,
      ),
    );
  });

  it("a node that names a host network the stack does not declare, or one in a stack that declares none", () => {
    expect(at("prod-medium", (r) => (r.nodes[0].hostNetwork = "contrl"))).toEqual([
      expect.stringMatching(
        /^openkeel:nodes\[0\]\.hostNetwork: .*names host network 'contrl', which openkeel:hostNetworks does not declare\. Fix: did you mean 'control'\?/,
      ),
    ]);
    expect(
      at("prod-small", (r) => {
        delete r.hostNetworks;
      }),
    ).toEqual(
      [0, 1, 2].map((i) =>
        expect.stringMatching(new RegExp(`^openkeel:nodes\\[${i}\\]\\.hostNetwork: .*names host network 'hyperconverged', and the stack declares none`)),
      ),
    );
  });
});

describe("a node's Talos documents of its host network", () => {
  it("bonds, their members, VLANs on them, and the node's static address and default route on its link", () => {
    const cfg = shippedConfig("prod-large");
    const prov = cfg.nodes.find((n) => n.name === "prov-1")!;
    expect(hostNetworkDocuments(prov, cfg.hostNetworks![prov.hostNetwork!], cfg.network!.nodeSubnet)).toEqual([
      {
        apiVersion: "v1alpha1",
        kind: "BondConfig",
        name: "bond0",
        links: ["enp1s0f0", "enp1s0f1"],
        bondMode: "802.3ad",
        xmitHashPolicy: "layer3+4",
        // the defaults: link monitoring, which Talos asks of an 802.3ad bond
        miimon: 100,
        updelay: 200,
        downdelay: 200,
        mtu: 9000,
        addresses: [{ address: "10.40.5.11/16" }],
        routes: [{ gateway: "10.40.0.1" }],
      },
      { apiVersion: "v1alpha1", kind: "VLANConfig", name: "bond0.41", parent: "bond0", vlanID: 41, mtu: 9000 },
      { apiVersion: "v1alpha1", kind: "VLANConfig", name: "bond0.42", parent: "bond0", vlanID: 42 },
    ]);
    // the render's node patch holds them, after the node's own documents
    const patch = shippedPlan("prod-large").plan!.nodeConfig!.files.find((f) => f.path === "talos/nodes/prov-1.yaml")!;
    expect(patch.documents.map((d) => d.kind ?? "v1alpha1")).toEqual(["v1alpha1", "HostnameConfig", "BondConfig", "VLANConfig", "VLANConfig"]);
  });

  it("a DHCP address: a DHCPv4Config of the link, and no address of the node's", () => {
    const network: HostNetwork = {
      links: [{ name: "eno1", mtu: 1500 }],
      bonds: [],
      vlans: [{ parent: "eno1", id: 20, name: "storage" }],
      ovs: [],
      nodeAddress: { link: "storage", method: "dhcp" },
    };
    expect(hostNetworkDocuments({ name: "n", internalIP: "10.0.0.5" }, network, "10.0.0.0/24")).toEqual([
      { apiVersion: "v1alpha1", kind: "LinkConfig", name: "eno1", mtu: 1500 },
      { apiVersion: "v1alpha1", kind: "VLANConfig", name: "storage", parent: "eno1", vlanID: 20 },
      { apiVersion: "v1alpha1", kind: "DHCPv4Config", name: "storage" },
    ]);
    expect(hostInterfaces(network)).toEqual(["eno1", "storage"]);
  });
});

describe("openkeel:hostNetworks: what OVS owns, and VLANs by identity", () => {
  it("a NIC OVS takes declared to Talos too: as a bond member, or as a plain link", () => {
    const member = at(
      "prod-medium",
      (r) => (r.hostNetworks.hypervisor.ovs = [{ name: "bond1", members: ["enp1s0f1", "enp2s0f1"], mode: "balance-tcp", lacp: "active" }]),
    );
    expect(member).toEqual([
      expect.stringMatching(
        /^openkeel:hostNetworks\.hypervisor\.ovs\[0\]\.members\[0\]: is also declared to Talos .*link_spec\.go:706-758.* Fix: declare 'enp1s0f1' under ovs only/,
      ),
    ]);
    const link = at("prod-medium", (r) => (r.hostNetworks.gateway.links = [{ name: "enp2s0f0" }]));
    expect(link).toEqual([expect.stringMatching(/^openkeel:hostNetworks\.gateway\.ovs\[0\]\.members\[0\]: is also declared to Talos/)]);
  });

  it("the link of the node's address given to OVS", () => {
    expect(at("prod-medium", (r) => (r.hostNetworks.gateway.ovs = [{ name: "bond0" }]))).toEqual([
      expect.stringMatching(
        /^openkeel:hostNetworks\.gateway\.ovs\[0\]\.name: is the link of the node's address and default route \(nodeAddress\.link\): OVS would take it/,
      ),
      // and the public VLAN on it would go with it
      expect.stringMatching(/^openkeel:hostNetworks\.gateway\.vlans\[0\]\.parent: is an interface OVS takes/),
    ]);
  });

  it("an OVS bond without its mode, balance-tcp without LACP, one NIC with a mode, a VLAN on what OVS owns", () => {
    expect(at("prod-small", (r) => delete r.hostNetworks.hyperconverged.ovs[0].mode)).toEqual([
      expect.stringMatching(/ovs\[0\]\.mode: is required for an OVS bond/),
    ]);
    expect(at("prod-small", (r) => (r.hostNetworks.hyperconverged.ovs[0].lacp = "off"))).toEqual([
      expect.stringMatching(/ovs\[0\]\.lacp: is off, and OVS's balance-tcp needs LACP/),
    ]);
    expect(at("prod-small", (r) => (r.hostNetworks.hyperconverged.ovs = [{ name: "enp2s0f0", mode: "active-backup" }]))).toEqual([
      expect.stringMatching(/ovs\[0\]: sets a bond mode or LACP on a port of one NIC/),
    ]);
    expect(at("prod-small", (r) => (r.hostNetworks.hyperconverged.vlans = [{ parent: "bond1", id: 50 }]))).toEqual([
      expect.stringMatching(/vlans\[0\]\.parent: is not a link or bond of this host network/),
      expect.stringMatching(/vlans\[0\]\.parent: is an interface OVS takes \(ovs\): a kernel VLAN on an OVS port receives nothing/),
    ]);
  });

  it("a VLAN tagged otherwise than its name promises, and a name over 15 characters", () => {
    expect(at("prod-large", (r) => (r.hostNetworks.storage.vlans = [{ name: "bond0.41", parent: "bond0", id: 44 }]))).toEqual([
      expect.stringMatching(
        /^openkeel:hostNetworks\.storage\.vlans\[0\]\.id: is VLAN 44 of bond0, and its name 'bond0\.41' says VLAN 41 of bond0.* Fix: tag it 41 on bond0/,
      ),
    ]);
    expect(at("prod-large", (r) => (r.hostNetworks.storage.vlans = [{ name: "bond1.41", parent: "bond0", id: 41 }]))).toEqual([
      expect.stringMatching(/vlans\[0\]\.parent: is VLAN 41 of bond0, and its name 'bond1\.41' says VLAN 41 of bond1/),
    ]);
    const long = (r: any) => {
      r.hostNetworks.storage.bonds = [{ ...r.hostNetworks.storage.bonds[0], name: "storagebond0" }];
      r.hostNetworks.storage.vlans = [{ parent: "storagebond0", id: 1041 }];
      r.hostNetworks.storage.nodeAddress = { ...r.hostNetworks.storage.nodeAddress, link: "storagebond0" };
    };
    expect(at("prod-large", long)).toEqual([
      expect.stringMatching(/vlans\[0\]\.id: makes the interface 'storagebond0\.1041', 17 characters, and Linux names an interface in at most 15 \(IFNAMSIZ\)/),
    ]);
  });

  it("a VLAN without an MTU has its parent's: a jumbo parent's VLAN may carry jumbo frames; one above it may not", () => {
    const cfg = shippedConfig("prod-large");
    const control = cfg.hostNetworks!.control;
    expect(effectiveMtu(control, "bond0.100")).toBe(9000);
    expect(effectiveMtu(control, "bond0.41")).toBe(9000);
    expect(at("prod-medium", (r) => (r.hostNetworks.provisioning.vlans = [{ parent: "bond0", id: 31, mtu: 9100 }]))).toEqual([
      expect.stringMatching(/vlans\[0\]\.mtu: is 9100, above its parent bond0's MTU of 9000/),
    ]);
  });
});
