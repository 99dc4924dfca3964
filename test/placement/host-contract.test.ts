// The host contract (placement/host.ts): every need of every component holds on every node it may
// run on, by what the node's host has: its OS at the pinned version, what is rendered for it (Talos
// schematic extensions, kernel modules, user volumes, host network), and what the node agents that
// run there install. The shipped stacks meet it; each kind of need is tripped here, through a stack
// file where one can trip it, and the error names the component, the nodes, what they have and the fix.
import { describe, expect, it } from "vitest";
import type { Check } from "../../config/problems";
import { planStack, resolveEnvironment, resolveStack } from "../../environments";
import { ENVIRONMENTS, environmentComponents } from "../../environments/registry";
import { talosHostProvisions } from "../../nodes/talos-host";
import { placementReport } from "../../placement/report";
import { planComponents } from "../../placement/workloads";
import { nodeProvisions } from "../../placement/host";
import type { HostContract } from "../../plan/host";
import { allUnits, type K8sObject, type Plan } from "../../plan/plan";
import { TALOS_MACHINES_FILE, type TalosMachine } from "../../render/rendered";
import { HOST_FACTS, TALOS_EXTENSION_FACTS, type HostFactsRow } from "../../platform/host-facts";
import { hostContractOf, type PlatformComponent } from "../../platform/component";
import { KUBE_OVN_CNI_FACTS } from "../../platform/kube-ovn";
import { KIND_NODE_IMAGE, KUBE_OVN_CHART, MULTUS_IMAGE, TALOS_VERSION } from "../../platform/versions";
import { mutatedConfig, PRODUCTION_STACKS, shippedConfig, SHIPPED_STACKS } from "../helpers/stacks";
import { shippedPlan } from "../helpers/plans";
import type { LoadedConfig } from "../../config/schema";
import { metallbSettings } from "../../platform/metallb-settings";

const errors = (cfg: LoadedConfig): Check[] => planStack(cfg).problems.filter((p): p is Check => p.level === "error" && typeof p.code === "string");
const hostErrors = (cfg: LoadedConfig) => errors(cfg).filter((c) => c.code.startsWith("host-"));

/** The NetworkAttachmentDefinitions of a Plan, with their parsed CNI configs. */
function attachments(plan: Plan): { name: string; config: { type: string; master: string } }[] {
  return allUnits(plan)
    .flatMap((u) => (u.kind === "Manifests" ? u.objects : []))
    .filter((o) => o.kind === "NetworkAttachmentDefinition")
    .map((o) => ({ name: `${o.metadata.namespace}/${o.metadata.name}`, config: JSON.parse((o.spec as { config: string }).config) }));
}

/** talos/machines.yaml of a Plan: per node, its patches and what OVS owns on it. */
function talosMachines(plan: Plan): Record<string, TalosMachine> {
  const file = plan.nodeConfig!.files.find((f) => f.path === TALOS_MACHINES_FILE)!;
  return (file.documents[0] as { machines: Record<string, TalosMachine> }).machines;
}

/** The interfaces every rendered Talos document of a node names (all its patches: links, bonds, members, VLANs and their parents). */
function renderedInterfaces(plan: Plan, node: string): string[] {
  const patches = talosMachines(plan)[node].patches.map((p) => plan.nodeConfig!.files.find((f) => f.path === `talos/${p}`)!);
  return patches
    .flatMap((f) => f.documents)
    .filter((d) => ["LinkConfig", "BondConfig", "VLANConfig"].includes(String(d.kind)))
    .flatMap((d) => [String(d.name), ...((d.links as string[]) ?? []), ...(d.parent ? [String(d.parent)] : [])]);
}

/** The Node patch the node-roles phase applies to a node. */
function nodePatchOf(plan: Plan, node: string): K8sObject {
  return allUnits(plan)
    .flatMap((u) => (u.kind === "Manifests" ? u.objects : []))
    .find((o) => o.kind === "Node" && o.metadata.name === node)!;
}

describe("host contract: the shipped stacks", () => {
  it.each(SHIPPED_STACKS)("%s: every need of every component holds on every node it may run on", (stack) => {
    const result = shippedPlan(stack);
    expect(result.problems.filter((p) => p.level === "error")).toEqual([]);
    // a component whose unit the Plan holds has its needs judged: the report lists them
    expect(result.placement!.hostNeeds.size).toBeGreaterThan(0);
  });

  it.each(PRODUCTION_STACKS)("%s: every attachment is of a plugin its nodes have, and its master is rendered in their Talos patches", (stack) => {
    const { plan, placement } = shippedPlan(stack);
    for (const nad of attachments(plan!)) {
      expect(nad.config.type, nad.name).toBe("macvlan");
      const component = placement!.placements.find(
        (p) => p.component.name === (nad.name.startsWith("longhorn") ? "longhorn/longhorn-csi-plugin+instance-managers" : "openkeel-ironic/conductor"),
      )!;
      expect(component.eligible.length).toBeGreaterThan(0);
      for (const node of component.eligible) {
        expect(renderedInterfaces(plan!, node), `${nad.name} on ${node}`).toContain(nad.config.master);
        expect(placement!.hosts.get(node)!.some((p) => p.kind === "cniPlugin" && p.name === nad.config.type)).toBe(true);
      }
    }
  });

  it.each(PRODUCTION_STACKS)(
    "%s: every interface the cluster names is rendered in the Talos patch of each node that uses it, but the external NIC, which OVS builds and no Talos document names",
    (stack) => {
      const cfg = shippedConfig(stack);
      const { plan, placement } = shippedPlan(stack);
      const speakers = placement!.placements.find((p) => p.component.name === "metallb-placement/speaker")?.eligible ?? [];
      for (const node of speakers) expect(renderedInterfaces(plan!, node), node).toEqual(expect.arrayContaining(metallbSettings(cfg.platform)!.interfaces));
      const wired = cfg.nodes.filter((n) => n.labels["network.openkeel.io/external-nic"] !== undefined);
      expect(wired.length).toBeGreaterThan(0);
      const machines = talosMachines(plan!);
      for (const node of wired) {
        const nic = node.labels["network.openkeel.io/external-nic"];
        const port = machines[node.name].ovs?.find((p) => p.name === nic);
        // OVS builds the external bond from its NICs; Talos is told of none of them
        expect(port?.nics.length, node.name).toBe(2);
        for (const name of [nic, ...port!.nics]) expect(renderedInterfaces(plan!, node.name), node.name).not.toContain(name);
        const annotation = nodePatchOf(plan!, node.name).metadata.annotations?.["network.openkeel.io/external-bond"];
        expect(JSON.parse(annotation!), node.name).toMatchObject({ name: nic, interfaces: port!.nics, bond_mode: "balance-tcp", lacp: "active" });
      }
    },
  );

  it("nothing but Kube-OVN gives a Talos node macvlan, and nothing gives it ipvlan (HOST_FACTS, KUBE_OVN_CNI_FACTS)", () => {
    const { placement } = shippedPlan("prod-medium");
    const macvlan = placement!.hosts.get("cp-1")!.filter((p) => p.kind === "cniPlugin" && p.name === "macvlan");
    expect(macvlan.map((p) => p.by)).toEqual([KUBE_OVN_CNI_FACTS.by]);
    expect(placement!.hosts.get("cp-1")!.some((p) => p.kind === "cniPlugin" && p.name === "ipvlan")).toBe(false);
  });
});

describe("host contract: what trips it", () => {
  it("a stack key that chooses a plugin no node has (ipvlan on Talos): the component, each node, what it has, and the key", () => {
    const cfg = mutatedConfig("prod-large", (r) => (r.platform.longhorn.storageNetwork.type = "ipvlan"));
    const [check] = hostErrors(cfg);
    expect(check).toMatchObject({ code: "host-cni-plugin", path: "openkeel:platform.longhorn.storageNetwork.type" });
    expect(check.message).toContain("longhorn/longhorn-csi-plugin+instance-managers (DaemonSet) needs the CNI plugin 'ipvlan'");
    expect(check.message).toMatch(
      /ok-cp-1, ok-cp-2, .*each has bridge, firewall, flannel, host-local, kube-ovn, loopback, macvlan, multus-shim, passthru, portmap \(from /,
    );
    expect(check.fix).toBe(
      "set openkeel:platform.longhorn.storageNetwork.type to a plugin the nodes have (the message lists them, with what installs each), or install the 'ipvlan' plugin on them",
    );
    expect(hostErrors(cfg)).toHaveLength(1);
  });

  it("an interface the stack names that no node's host network declares", () => {
    const cfg = mutatedConfig("prod-medium", (r) => (r.services.ironic.provisioningNetwork.interface = "bond0.99"));
    expect(hostErrors(cfg)).toEqual([
      expect.objectContaining({
        code: "host-interface",
        path: "openkeel:services.ironic.provisioningNetwork.interface",
        message: expect.stringContaining("openkeel-ironic/conductor (StatefulSet) needs the host interface 'bond0.99'"),
      }),
    ]);
    expect(hostErrors(cfg)[0].message).toContain("prov-1 (has bond0, bond0.31, enp1s0f0, enp1s0f1 (from talos/nodes/prov-1.yaml))");
  });

  it("a node that names no host network has no interface the cluster can name", () => {
    const cfg = mutatedConfig("prod-medium", (r) => delete r.nodes.find((n: { name: string }) => n.name === "prov-1").hostNetwork);
    const [check] = hostErrors(cfg);
    expect(check.message).toContain("prov-1 (has no host interface declared: it names no entry of openkeel:hostNetworks)");
  });

  it("an external-nic label that names a NIC the node's host network does not declare points at that label", () => {
    const cfg = mutatedConfig("prod-medium", (r) => (r.nodes[3].labels = { "network.openkeel.io/external-nic": "bond7" }));
    expect(hostErrors(cfg)).toEqual([
      expect.objectContaining({ code: "host-interface", path: 'openkeel:nodes[3].labels["network.openkeel.io/external-nic"]' }),
    ]);
    expect(hostErrors(cfg)[0].message).toContain("openkeel-neutron/chassis (DaemonSet) needs the host interface 'bond7'");
  });

  it("the external NIC a link Talos manages: the node's own bond0, or a bond declared to Talos instead of OVS", () => {
    const own = hostErrors(mutatedConfig("prod-medium", (r) => (r.nodes[3].labels = { "network.openkeel.io/external-nic": "bond0" })));
    expect(own).toEqual([expect.objectContaining({ code: "host-interface", path: 'openkeel:nodes[3].labels["network.openkeel.io/external-nic"]' })]);
    expect(own[0].message).toMatch(
      /needs the host interface 'bond0', owned by Open vSwitch, on every node .*bond0 is a link the node's OS manages \(talos\/nodes\/cmp-01\.yaml\), and carries the node's address and default route, which the node would lose into the bridge; its link controller brings down .*: cmp-01 \(has only bond1, enp2s0f0, enp2s0f1 owned by Open vSwitch\)/,
    );
    expect(own[0].fix).toMatch(/^declare that NIC under ovs of the node's host network/);
    const talosBond = hostErrors(
      mutatedConfig("prod-small", (r) => {
        const n = r.hostNetworks.hyperconverged;
        n.bonds.push({ name: "bond1", members: ["enp2s0f0", "enp2s0f1"], mode: "802.3ad" });
        n.ovs = [];
      }),
    );
    expect(talosBond.map((c) => c.path)).toEqual(['openkeel:nodes[0].labels["network.openkeel.io/external-nic"]']);
    expect(talosBond[0].message).toContain("bond1 is a link the node's OS manages");
  });

  it("one network, two VLANs: the storage network named 'storage' but tagged 44 on the hypervisors and 41 elsewhere", () => {
    const found = hostErrors(
      mutatedConfig("prod-large", (r) => {
        r.platform.longhorn.storageNetwork.interface = "storage";
        for (const [name, n] of Object.entries<any>(r.hostNetworks)) {
          n.vlans = (n.vlans ?? []).map((v: any) => (v.id === 41 ? { name: "storage", parent: "bond0", id: name === "hypervisor" ? 44 : 41, mtu: 9000 } : v));
        }
      }),
    );
    expect(found).toEqual([expect.objectContaining({ code: "host-interface-identity", path: "openkeel:platform.longhorn.storageNetwork.interface" })]);
    expect(found[0].message).toMatch(/uses storage as one network .*and it is not one VLAN: VLAN 41 of bond0 on .*; VLAN 44 of bond0 on cmp-a-01, /);
  });

  it("MetalLB's interface enslaved to the chassis' bridge or to a bond: present, but no node announces the VIP", () => {
    const bridge = hostErrors(mutatedConfig("prod-medium", (r) => (r.platform.metallb.interfaces = ["bond1"])));
    // the controlPlane nodes have no bond1 at all; the gateways have it as OVS's bond in br-ex
    expect(bridge.map((c) => c.code).sort()).toEqual(["host-interface", "host-interface-enslaved"]);
    expect(bridge.find((c) => c.code === "host-interface-enslaved")!.message).toContain(
      "net-1 bond1 is Open vSwitch's (the OVN chassis' physnet bridge (openkeel-neutron/chassis)); net-2 bond1",
    );
    const member = hostErrors(mutatedConfig("prod-medium", (r) => (r.platform.metallb.interfaces = ["enp1s0f0"])));
    expect(member).toEqual([expect.objectContaining({ code: "host-interface-enslaved", path: "openkeel:platform.metallb.interfaces" })]);
    expect(member[0].message).toContain("cp-1 enp1s0f0 is enslaved to bond bond0");
    // any free one of the list will do
    expect(hostErrors(mutatedConfig("prod-medium", (r) => (r.platform.metallb.interfaces = ["enp1s0f0", "bond0.100"])))).toEqual([]);
  });

  it("a Talos extension the node's schematic lacks: the host tool it gives, missing, and where the schematic is", () => {
    const cfg = shippedConfig("prod-medium");
    const plan = structuredClone(shippedPlan("prod-medium").plan!);
    const schematic = plan.nodeConfig!.files.find((f) => f.path === "talos/schematics/controlplane-control-plane.yaml")!;
    (schematic.documents[0] as any).customization.systemExtensions.officialExtensions = ["siderolabs/util-linux-tools"];
    const topo = resolveStack(cfg).topology;
    const report = placementReport(
      plan,
      topo,
      planComponents(plan, resolveEnvironment(cfg.environment).readers),
      resolveEnvironment(cfg.environment).placementChecks,
      resolveStack(cfg).stateTaints,
      talosHostProvisions(plan, true),
    );
    const host = report.checks.filter((c) => c.code.startsWith("host-"));
    expect(host.map((c) => [c.code, c.path])).toEqual([
      ["host-tool", "openkeel:nodes[0].roles"],
      ["host-tool", "openkeel:nodes[0].roles"],
    ]);
    expect(host[0].message).toContain("needs the host tool 'iscsiadm'");
    expect(host[0].message).toContain(
      "cp-1, cp-2, cp-3 (each has fstrim, nsenter (from siderolabs/util-linux-tools (talos/schematics/controlplane-control-plane.yaml)))",
    );
    expect(host[0].fix).toContain("siderolabs/iscsi-tools");
  });

  it("the pod network's plugins on every node a pod on it may run on: Multus' shim, missing, is named once with its nodes", () => {
    const cfg = shippedConfig("prod-medium");
    const plan = structuredClone(shippedPlan("prod-medium").plan!);
    plan.host!.installs = plan.host!.installs.filter((i) => !i.component.startsWith("multus/"));
    const report = placementReport(
      plan,
      resolveStack(cfg).topology,
      planComponents(plan, resolveEnvironment(cfg.environment).readers),
      resolveEnvironment(cfg.environment).placementChecks,
      resolveStack(cfg).stateTaints,
      talosHostProvisions(plan, true),
    );
    const host = report.checks.filter((c) => c.code.startsWith("host-"));
    expect(host.map((c) => c.code)).toEqual(["host-cni-plugin"]);
    expect(host[0].message).toMatch(
      /^every pod on the pod network \(up to \d+ component\(s\) per node\) needs the CNI plugin 'multus-shim' .* these nodes lack it: cp-1, cp-2, cp-3, cmp-01/,
    );
    expect(host[0].fix).toContain("Multus' DaemonSet");
    expect(report.podNeeds).toEqual(["CNI plugin 'kube-ovn'", "CNI plugin 'portmap'", "CNI plugin 'multus-shim'"]);
  });

  it("a kind lab that gives a node the containers role: no Kata runtime and no /dev/kvm in a kind node", () => {
    const cfg = mutatedConfig("lab", (r) => r.nodes[0].roles.push("containers"));
    const host = hostErrors(cfg);
    expect(host.map((c) => [c.code, c.path])).toEqual([
      ["host-runtime-handler", "openkeel:nodes[0].roles"],
      ["host-device", "openkeel:nodes[0].roles"],
    ]);
    expect(host[0].message).toContain("openkeel-zun-runtime-class/kata (Pods) needs the container runtime handler 'kata'");
    expect(host[1].message).toContain("needs the device '/dev/kvm'");
    expect(host[1].message).toContain("openkeel-lab-control-plane (has /dev/net/tun, /dev/vhost-net (from the laptop's /dev");
  });

  it("Swift's storage pods widened to nodes without the capacity disk their devices live on", () => {
    const cfg = mutatedConfig("prod-large", (r) => (r.services = { ...r.services, swift: { placement: { storage: { roles: ["storage", "controlPlane"] } } } }));
    const mount = hostErrors(cfg).filter((c) => c.code === "host-mount");
    expect(mount).toEqual([expect.objectContaining({ path: "openkeel:services.swift.placement.storage" })]);
    expect(mount[0].message).toContain("openkeel-swift/storage (StatefulSet) needs the mount '/var/mnt/longhorn-capacity'");
    expect(mount[0].message).toMatch(/ok-cp-1, .* \(each has \/var\/mnt\/longhorn \(from talos\/patches\/worker-control-plane\.yaml\)\)/);
  });

  it("a watchdog module that gives no /dev/watchdog would leave Self Node Remediation without its fence", () => {
    const plan = structuredClone(shippedPlan("prod-small").plan!);
    for (const f of plan.nodeConfig!.files.filter((x) => x.path.startsWith("talos/patches/")))
      (f.documents[0] as any).machine.kernel.modules = [{ name: "openvswitch" }];
    const devices = talosHostProvisions(plan, true)
      .get("node-1")!
      .filter((p) => p.kind === "device");
    expect(devices.map((d) => d.name)).not.toContain("/dev/watchdog");
    expect(
      talosHostProvisions(shippedPlan("prod-small").plan!, true)
        .get("node-1")!
        .find((p) => p.name === "/dev/watchdog")!.by,
    ).toMatch(/iTCO_wdt watchdog driver/);
  });
});

describe("host contract: who provides what", () => {
  it("an agent's plugins are on the nodes it runs on, and only there", () => {
    const { plan, placement } = shippedPlan("prod-large");
    const contract: HostContract = {
      needs: [],
      installs: [{ component: "metallb-placement/speaker", provides: [{ kind: "cniPlugin", name: "x" }], by: "test" }],
    };
    const provided = nodeProvisions(plan!, new Map(placement!.nodes.map((n) => [n.name, []])), contract.installs, placement!.placements);
    const speakers = placement!.placements.find((p) => p.component.name === "metallb-placement/speaker")!.eligible;
    expect([...provided].filter(([, p]) => p.length > 0).map(([n]) => n)).toEqual(speakers);
    expect(speakers).not.toContain("sto-1");
  });

  it("a need of a component its unit does not place is this repository's bug, thrown; a unit the Plan does not hold is skipped", () => {
    const { plan, placement } = shippedPlan("prod-medium");
    const bad = { needs: [], installs: [{ component: "multus/no-such-daemonset", provides: [], by: "test" }] };
    expect(() => nodeProvisions(plan!, new Map(), bad.installs, placement!.placements)).toThrow(/unit multus does not place/);
    const off = { needs: [], installs: [{ component: "openkeel-zun/computeAgent", provides: [{ kind: "cniPlugin" as const, name: "x" }], by: "test" }] };
    expect([...nodeProvisions(plan!, new Map(), off.installs, placement!.placements).values()].flat()).toEqual([]);
  });

  it("each environment says what its nodes' hosts have; kind's never has Talos extensions or /dev/kvm", () => {
    const lab = shippedPlan("lab");
    const kind = ENVIRONMENTS["kind-lab"].hostProvisions(lab.plan!, lab.topology).get("openkeel-lab-control-plane")!;
    expect(kind.filter((p) => p.kind === "cniPlugin").map((p) => p.name)).toEqual(["host-local", "loopback", "ptp", "portmap"]);
    expect(kind.some((p) => p.name === "/dev/kvm" || p.kind === "runtimeHandler" || p.kind === "hostTool")).toBe(false);
    const withLonghorn = planStack(mutatedConfig("lab", (r) => (r.platform = { realBackends: true })));
    const prepared = ENVIRONMENTS["kind-lab"].hostProvisions(withLonghorn.plan!, withLonghorn.topology).get("openkeel-lab-control-plane")!;
    expect(prepared.filter((p) => p.kind === "hostTool").map((p) => [p.name, p.by])).toEqual([
      ["iscsiadm", "open-iscsi, from the node preparation step of kind/cluster.yaml"],
      ["iscsid", "open-iscsi, from the node preparation step of kind/cluster.yaml"],
    ]);
    expect(withLonghorn.plan!.nodeConfig!.files[0].comment).toContain("apt-get install -y open-iscsi");
  });
});

describe("host facts: the OS's table beside the pins, and each component's rows on its descriptor", () => {
  it("a component's hostInstalls are what its node agents install in the host contract, and its host hook cannot say installs", () => {
    const facts: HostFactsRow = { pin: "P", readAt: "v1", by: "an agent v1", provides: [{ kind: "cniPlugin", name: "x" }], source: "s" };
    const agent = { hostInstalls: [{ component: "a/agent", facts }] } as unknown as PlatformComponent;
    const ctx = resolveStack(shippedConfig("lab")).ctx;
    expect(hostContractOf(ctx, [agent]).installs).toEqual([{ component: "a/agent", provides: [{ kind: "cniPlugin", name: "x" }], by: "an agent v1" }]);
    // @ts-expect-error what a node agent installs is a row of hostInstalls, read upstream at a pin
    const host: PlatformComponent["host"] = () => ({ installs: [] });
    expect(host).toBeTypeOf("function");
  });

  it("each row was read at its pin's current version: a bump re-reads the row at the new tag first", () => {
    const current: Record<string, string> = {
      TALOS_VERSION,
      KIND_NODE_IMAGE: KIND_NODE_IMAGE.tag,
      KUBE_OVN_CHART: KUBE_OVN_CHART.version,
      MULTUS_IMAGE: MULTUS_IMAGE.tag,
    };
    const rows: [string, HostFactsRow][] = [
      ...Object.entries(HOST_FACTS).map(([name, row]): [string, HostFactsRow] => [`HOST_FACTS.${name}`, row]),
      ...environmentComponents().flatMap((c) =>
        (c.hostInstalls ?? []).map((i): [string, HostFactsRow] => [`${c.name}'s hostInstalls ${i.component}`, i.facts]),
      ),
    ];
    expect(rows.map(([, row]) => row.pin)).toEqual(expect.arrayContaining(["KUBE_OVN_CHART", "MULTUS_IMAGE"]));
    for (const [name, row] of rows) {
      expect(current[row.pin], `${name}: pin ${row.pin}`).toBeDefined();
      expect(
        row.readAt,
        `${name} was read at ${row.readAt}, and ${row.pin} is now ${current[row.pin]}: read its source again at the new tag, then set readAt`,
      ).toBe(current[row.pin]);
    }
  });

  it("every extension a rendered schematic carries has its row", () => {
    for (const stack of PRODUCTION_STACKS) {
      const schematics = shippedPlan(stack).plan!.nodeConfig!.files.filter((f) => f.path.startsWith("talos/schematics/"));
      for (const s of schematics) {
        for (const ext of (s.documents[0] as any).customization.systemExtensions?.officialExtensions ?? [])
          expect(TALOS_EXTENSION_FACTS[ext], ext).toBeDefined();
      }
    }
  });
});
