// Issue 22 items 8 and 9: Longhorn's storage network (§ 1.3, § 5.3, § 6.3) and Ironic's
// provisioning network (§ 1.4, § 2.2, D7), each a Multus NetworkAttachmentDefinition whose IPAM is
// Kube-OVN (a Subnet whose provider is the attachment): the stack keys and their errors, the
// objects, Longhorn's setting and the conductor's annotation.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { KUBE_OVN_CHART } from "../../platform/versions";
import { STAND_IN_CHARTS } from "../../e2e/standins/artifacts";
import { ensureKubeOvnCrds, KUBE_OVN_CRD_FILE, KUBE_OVN_MODULE, kubeOvnCrdsDir, requireKubeOvnCrds } from "../../tools/kube-ovn-crds";
import { planStack } from "../../environments";
import { applyPostRender } from "../../plan/post-render";
import { object, objectsOf, planOf, release, unitNames, valuesOf } from "../helpers/plans";
import { configProblems, mutatedConfig, shippedConfig } from "../helpers/stacks";

const STORAGE = { cidr: "10.41.0.0/24", interface: "bond0.41" };

const errors = (stack: string, mutate: (raw: any) => void) =>
  planStack(mutatedConfig(stack, mutate))
    .problems.filter((c) => c.level === "error")
    .map((c) => `${c.path}: [${c.code}] ${c.message}`);

const schemaError = (mutate: (raw: any) => void) => {
  const [p] = configProblems("prod-medium", mutate);
  return `${p.path}: ${p.message}. Fix: ${p.fix ?? ""}`;
};

describe("the stack keys, refused with their path and fix", () => {
  const prov = (net: Record<string, unknown>) => (r: any) => (r.services.ironic.provisioningNetwork = { cidr: "10.31.0.0/24", interface: "bond0.31", ...net });

  it("a cidr that is no IPv4 network, an interface that is no Linux name, a type that is neither ipvlan nor macvlan", () => {
    expect(schemaError(prov({ cidr: "10.31.0.1/24" }))).toMatch(/^openkeel:services\.ironic\.provisioningNetwork\.cidr: .*Fix: write it like 10\.20\.0\.0\/24/);
    expect(schemaError(prov({ cidr: "fd00:31::/64" }))).toMatch(/^openkeel:services\.ironic\.provisioningNetwork\.cidr: is an IPv6 range/);
    expect(schemaError(prov({ interface: "bond0.31-provisioning" }))).toMatch(
      /^openkeel:services\.ironic\.provisioningNetwork\.interface: is string "bond0\.31-provisioning": is not a Linux interface name\. Fix: write the NIC's name/,
    );
    expect(schemaError(prov({ type: "bridge" }))).toMatch(
      /^openkeel:services\.ironic\.provisioningNetwork\.type: is string "bridge", not one of ipvlan, macvlan/,
    );
    expect(schemaError(prov({ vlan: 31 }))).toMatch(/^openkeel:services\.ironic\.provisioningNetwork/);
  });

  it("a gateway outside the network, or its broadcast address", () => {
    expect(schemaError(prov({ gateway: "10.30.0.1" }))).toMatch(
      /^openkeel:services\.ironic\.provisioningNetwork\.gateway: is outside the network's cidr 10\.31\.0\.0\/24\. Fix: write an address of 10\.31\.0\.0\/24/,
    );
    expect(schemaError(prov({ gateway: "10.31.0.255" }))).toMatch(/gateway: is the network or broadcast address of 10\.31\.0\.0\/24/);
    expect(schemaError(prov({ gateway: "router" }))).toMatch(/gateway: is not an IPv4 address\. Fix: write one such as 10\.31\.0\.1/);
  });

  it("excluded addresses outside the network, or a range that ends before it starts", () => {
    expect(schemaError(prov({ excludeIps: ["10.31.0.2", "10.32.0.1"] }))).toMatch(/provisioningNetwork\.excludeIps\[1\]: is outside the network's cidr/);
    expect(schemaError(prov({ excludeIps: ["10.31.0.20..10.31.0.10"] }))).toMatch(
      /excludeIps\[0\]: starts after it ends\. Fix: write the lower address first, e.g\. 10\.31\.0\.10\.\.10\.31\.0\.20/,
    );
    expect(schemaError(prov({ excludeIps: ["10.31.0.1..10.31.0.2..10.31.0.3"] }))).toMatch(/excludeIps\[0\]: has more than one '\.\.'/);
  });

  it("Ironic in production without a provisioning network; one set where Ironic does not run", () => {
    expect(errors("prod-medium", (r) => delete r.services.ironic.provisioningNetwork)).toEqual([
      "openkeel:services.ironic.provisioningNetwork: [ironic-provisioning-network] Ironic runs, but openkeel:services.ironic.provisioningNetwork is not set: its conductors would have no interface on the provisioning VLAN, so no machine could boot from them (PXE, DHCP, TFTP)",
    ]);
    expect(errors("prod-small", (r) => (r.services = { ironic: { provisioningNetwork: { cidr: "10.21.0.0/24", interface: "eth1" } } }))).toEqual([
      "openkeel:services.ironic.provisioningNetwork: [ironic-provisioning-network] openkeel:services.ironic.provisioningNetwork is set, but Ironic does not run in this stack, so no pod attaches to it",
    ]);
  });

  it("a network that overlaps the node subnet, a cluster range or the other secondary network", () => {
    expect(errors("prod-medium", (r) => (r.services.ironic.provisioningNetwork.cidr = "10.30.5.0/24"))).toEqual([
      "openkeel:services.ironic.provisioningNetwork.cidr: [network-overlap] the node subnet 10.30.0.0/16 and Ironic's provisioning network 10.30.5.0/24 overlap: packets for one would be routed to the other",
    ]);
    expect(errors("prod-large", (r) => (r.platform.longhorn.storageNetwork.cidr = "10.42.0.0/23"))).toEqual([
      "openkeel:services.ironic.provisioningNetwork.cidr: [network-overlap] Longhorn's storage network 10.42.0.0/23 and Ironic's provisioning network 10.42.0.0/24 overlap: packets for one would be routed to the other",
    ]);
    expect(errors("prod-large", (r) => (r.platform.longhorn.storageNetwork.cidr = "10.16.4.0/24"))).toEqual([
      "openkeel:platform.longhorn.storageNetwork.cidr: [network-overlap] the pod range 10.16.0.0/16 and Longhorn's storage network 10.16.4.0/24 overlap: packets for one would be routed to the other",
    ]);
  });

  it("a storage network in the lab, whose networking is kind's", () => {
    expect(errors("lab", (r) => (r.platform = { realBackends: true, longhorn: { storageNetwork: STORAGE } }))).toContain(
      "openkeel:platform.longhorn.storageNetwork: [attachment-network-environment] Longhorn's storage network is set, but this environment's nodes are not on the data centre's networks (its cluster networking is its own): there is no bond0.41 to attach pods to, and no IPAM of secondary networks to hand out the addresses",
    );
  });
});

describe("the objects", () => {
  it("large: the storage network's NAD (macvlan bridge on the stack's NIC, by default: Talos has no ipvlan; Kube-OVN's IPAM) and Subnet, before Longhorn, which names it", () => {
    const plan = planOf("prod-large");
    const nad = object(plan, "NetworkAttachmentDefinition", "storage-net", "longhorn-storage-network");
    expect(nad.metadata.namespace).toBe("longhorn-system");
    expect(JSON.parse(nad.spec.config)).toEqual({
      cniVersion: "0.3.1",
      name: "storage-net",
      type: "macvlan",
      master: "bond0.41",
      mode: "bridge",
      ipam: { type: "kube-ovn", server_socket: "/run/openvswitch/kube-ovn-daemon.sock", provider: "storage-net.longhorn-system" },
    });
    expect(object(plan, "Subnet", "longhorn-storage-net").spec).toEqual({
      protocol: "IPv4",
      provider: "storage-net.longhorn-system",
      cidrBlock: "10.41.0.0/24",
      gateway: "10.41.0.1",
    });
    expect(valuesOf(plan, "longhorn").defaultSettings.storageNetwork).toBe("longhorn-system/storage-net");
    expect(unitNames(plan, "platform").indexOf("longhorn-storage-network")).toBeLessThan(unitNames(plan, "platform").indexOf("longhorn"));
    // its values name the attachment (defaultSettings.storageNetwork): it waits for it, and for Multus, which attaches it
    expect(release(plan, "longhorn").dependsOn).toEqual(expect.arrayContaining(["longhorn-storage-network", "multus"]));
  });

  it("no storage network where the stack sets none: the pod network, and no NAD", () => {
    for (const stack of ["prod-small", "prod-medium"]) {
      const plan = planOf(stack);
      expect(valuesOf(plan, "longhorn").defaultSettings, stack).not.toHaveProperty("storageNetwork");
      expect(unitNames(plan, "platform"), stack).not.toContain("longhorn-storage-network");
    }
  });

  it("macvlan, a gateway and excluded addresses as the stack sets them", () => {
    const plan = planOf(
      mutatedConfig(
        "prod-large",
        (r) => (r.platform.longhorn.storageNetwork = { ...STORAGE, type: "macvlan", gateway: "10.41.0.254", excludeIps: ["10.41.0.1..10.41.0.9"] }),
      ),
    );
    const config = JSON.parse(object(plan, "NetworkAttachmentDefinition", "storage-net").spec.config);
    expect([config.type, config.mode]).toEqual(["macvlan", "bridge"]);
    expect(object(plan, "Subnet", "longhorn-storage-net").spec).toMatchObject({ gateway: "10.41.0.254", excludeIps: ["10.41.0.1..10.41.0.9"] });
  });

  it("Ironic: the provisioning NAD and Subnet in its namespace, and the conductor's Multus annotation as a post-render patch", () => {
    for (const stack of ["prod-medium", "prod-large"]) {
      const plan = planOf(stack);
      const cidr = (shippedConfig(stack).services.ironic!.provisioningNetwork as { cidr: string }).cidr;
      const [nad, subnet] = objectsOf(plan, "openkeel-ironic-provisioning-network");
      expect(nad.metadata).toEqual({ name: "provisioning-net", namespace: "openkeel-ironic" });
      expect(JSON.parse((nad as any).spec.config).ipam.provider).toBe("provisioning-net.openkeel-ironic");
      expect((subnet as any).spec).toMatchObject({ provider: "provisioning-net.openkeel-ironic", cidrBlock: cidr });
      const ironic = release(plan, "openkeel-ironic");
      const conductor = { kind: "StatefulSet", metadata: { name: "openkeel-ironic-conductor" }, spec: { template: { metadata: { labels: { a: "b" } } } } };
      const [patched] = applyPostRender(ironic.release, [conductor], ironic.postRender ?? []);
      expect((patched.spec.template.metadata as any).annotations, stack).toEqual({
        "k8s.v1.cni.cncf.io/networks": '[{"name":"provisioning-net","namespace":"openkeel-ironic","interface":"prov0"}]',
      });
      expect((patched.spec.template.metadata as any).labels).toEqual({ a: "b" });
    }
  });

  it("no conductor patch when the release renders no conductor (0 replicas)", () => {
    const plan = planOf(mutatedConfig("prod-medium", (r) => (r.services.ironic.replicas.conductor = 0)));
    expect(release(plan, "openkeel-ironic").postRender ?? []).toEqual([]);
    expect(unitNames(plan, "openkeel-infra")).toContain("openkeel-ironic-provisioning-network");
  });
});

describe("Kube-OVN's CRDs, from the pinned module (npm run tools)", () => {
  const CRD = (kind: string) =>
    `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ${kind.toLowerCase()}s.kubeovn.io\nspec:\n  group: kubeovn.io\n  names: {kind: ${kind}, plural: ${kind.toLowerCase()}s}\n  scope: Cluster\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n          type: object\n          properties:\n            spec: {type: object, properties: {cidrBlock: {type: string}}}\n`;
  const fakeModule = (crds: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kube-ovn-module-"));
    fs.mkdirSync(path.join(dir, path.dirname(KUBE_OVN_CRD_FILE)), { recursive: true });
    fs.writeFileSync(path.join(dir, KUBE_OVN_CRD_FILE), crds);
    const calls: string[] = [];
    return { calls, download: (m: string, v: string) => (calls.push(`${m}@${v}`), { dir, sum: "h1:fake=" }) };
  };

  it("fetched once at KUBE_OVN_CHART's version: the chart's CRD file and a strict schema per kind", () => {
    const tools = fs.mkdtempSync(path.join(os.tmpdir(), "tools-"));
    const mod = fakeModule(`${CRD("Subnet")}---\n${CRD("Vpc")}`);
    expect(ensureKubeOvnCrds(tools, mod.download)).toEqual({ dir: kubeOvnCrdsDir(tools), built: true });
    expect(mod.calls).toEqual([`${KUBE_OVN_MODULE}@${KUBE_OVN_CHART.version}`]);
    const schema = JSON.parse(fs.readFileSync(path.join(kubeOvnCrdsDir(tools), "schemas/crds/kubeovn.io/subnet_v1.json"), "utf8"));
    expect(schema.properties.spec.additionalProperties).toBe(false);
    expect(schema.properties.apiVersion.enum).toEqual(["kubeovn.io/v1"]);
    expect(fs.readFileSync(requireKubeOvnCrds(tools), "utf8")).toContain("kind: Vpc");
    expect(JSON.parse(fs.readFileSync(path.join(kubeOvnCrdsDir(tools), "SOURCES.json"), "utf8")).sum).toBe("h1:fake=");
    // a second run reuses the folder
    expect(ensureKubeOvnCrds(tools, mod.download).built).toBe(false);
    expect(mod.calls).toHaveLength(1);
  });

  it("a module without the Subnet CRD, and a folder never built, are errors that say what to do", () => {
    const tools = fs.mkdtempSync(path.join(os.tmpdir(), "tools-"));
    expect(() => ensureKubeOvnCrds(tools, fakeModule(CRD("Vpc")).download)).toThrow(/defines no Subnet of kubeovn\.io\/v1\. Fix: check KUBE_OVN_CHART/);
    expect(fs.existsSync(kubeOvnCrdsDir(tools))).toBe(false);
    expect(() => requireKubeOvnCrds(tools)).toThrow(/are not there\. Fix: run `npm run tools`/);
  });

  it("the e2e's Kube-OVN stand-in chart serves the real Subnet CRD of the pinned module", () => {
    const files = STAND_IN_CHARTS["kube-ovn"].files("../shared/schemas");
    const [crd] = parseAllDocuments(files["files/crds.yaml"]).map((d) => d.toJS());
    expect(crd.metadata.name).toBe("subnets.kubeovn.io");
    const real = parseAllDocuments(fs.readFileSync(requireKubeOvnCrds(), "utf8"))
      .map((d) => d.toJS())
      .find((d) => d?.metadata?.name === "subnets.kubeovn.io");
    expect(crd).toEqual(real);
    expect(files["templates/crds.yaml"]).toContain('.Files.Get "files/crds.yaml"');
  });
});
