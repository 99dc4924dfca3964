// The real CNI plugins judge every rendered attachment (issue 36 item 6): for each
// NetworkAttachmentDefinition of rendered/<stack>/, its plugin binary at CNI_PLUGINS (the version
// Kube-OVN installs on the nodes) runs ADD then DEL with the attachment's own config, as Multus runs
// it, in a throwaway "host" namespace holding its master interface and a "pod" namespace.
//
// What stays a model: the IPAM. The attachments name Kube-OVN's IPAM (`"type":"kube-ovn"`), which
// asks Kube-OVN's daemon over a socket; the check replaces it with host-local handing out the first
// address Kube-OVN could give from the attachment's Subnet (its cidrBlock, minus its gateway and
// excludeIps). And the master is made here (a VLAN, a dummy, or a veth where the kernel has neither),
// not read from a node: that every node the attachment's pods run on has it is the host contract's
// check, not this one.
//
// A machine that cannot make network namespaces (no root and no user namespaces, no iproute2) fails
// every case here with one line that says why and how to fix it: never a skip.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { CNI_PLUGINS, KUBE_OVN_CHART } from "../../../platform/versions";
import { readRenderedDir } from "../../../render/rendered";
import { firstFreeAddress, renderedAttachments, renderedLinks, type Attachment } from "../../../tools/attachments";
import { requireCniPlugins } from "../../../tools/cni-plugins";
import {
  describeMaster,
  planMaster,
  probeSandbox,
  runPlugin,
  sandboxCommand,
  sandboxProblem,
  withHostLocalIpam,
  type LinkKind,
} from "../../../tools/cni-sandbox";
import { KUBE_OVN_MODULE } from "../../../tools/kube-ovn-crds";
import { goModDownload } from "../../../tools/tools";
import { REPO } from "../../helpers/stacks";

const RENDERED = path.join(REPO, "rendered");
const STACKS = fs.readdirSync(RENDERED).filter((s) => fs.existsSync(path.join(RENDERED, s, "index.yaml")));

const sandbox = probeSandbox();
if (!sandbox.ok) console.error(`\n${"!".repeat(100)}\n${sandboxProblem(sandbox.why)}\n${"!".repeat(100)}\n`);
function ready() {
  if (!sandbox.ok) throw new Error(sandboxProblem(sandbox.why));
  return sandbox;
}

const CASES = STACKS.flatMap((stack) => renderedAttachments(readRenderedDir(path.join(RENDERED, stack))).map((a) => ({ stack, a })));

/** What the Talos patches of the stack render for the master (the VLANConfig first), if anything. */
function renderedMaster(stack: string, master: string) {
  const links = renderedLinks(readRenderedDir(path.join(RENDERED, stack)), master);
  const mtus = links.flatMap((l) => (l.mtu ? [l.mtu] : []));
  const vlan = links.find((l) => l.kind === "VLANConfig");
  return { ...(mtus.length ? { mtu: Math.min(...mtus) } : {}), ...(vlan ? { parent: vlan.parent, vlanID: vlan.vlanID } : {}) };
}

type Ready = Extract<ReturnType<typeof probeSandbox>, { ok: true }>;

/** The kernel must create the plugin's own link kind, or the plugin cannot be judged here. */
function requireKind(sb: Ready, type: string, what: string) {
  if (!sb.kinds.has(type as LinkKind)) {
    throw new Error(
      `this kernel cannot create ${type} links in a network namespace (kinds it can: ${[...sb.kinds].join(", ")}): the ${type} plugin of ${what} cannot be judged here. ` +
        `Fix: run on a kernel with ${type} (CONFIG_${type.toUpperCase()}, modprobe ${type}).`,
    );
  }
}

describe("the plugins: Kube-OVN's version, installed", () => {
  it("CNI_PLUGINS is the CNI_PLUGINS_VERSION Kube-OVN's image is built with, at KUBE_OVN_CHART's tag", () => {
    const { dir } = goModDownload(KUBE_OVN_MODULE, KUBE_OVN_CHART.version, "Kube-OVN's CNI version");
    const dockerfile = fs.readFileSync(path.join(dir, "dist/images/Dockerfile.base"), "utf8");
    expect(/^ARG CNI_PLUGINS_VERSION=(\S+)$/m.exec(dockerfile)?.[1]).toBe(CNI_PLUGINS.version);
    // …and the macvlan of that release is what its install-cni.sh puts into /opt/cni/bin
    expect(fs.readFileSync(path.join(dir, "dist/images/install-cni.sh"), "utf8")).toMatch(/^MACVLAN_BIN_DST=\/opt\/cni\/bin\/macvlan$/m);
  });

  it(".tools/cni/ holds every plugin at the pin", () => {
    expect(fs.readdirSync(requireCniPlugins()).sort()).toEqual(expect.arrayContaining(Object.keys(CNI_PLUGINS.plugins).sort()));
  });
});

describe("what the check builds", () => {
  const kinds = (...k: LinkKind[]) => new Set<LinkKind>(["veth", ...k]);

  it("the master: a VLAN on its parent for <parent>.<id> or a rendered VLANConfig, else a dummy; a veth where the kernel has neither", () => {
    expect(planMaster("bond0.41", kinds("dummy", "vlan"))).toEqual({ name: "bond0.41", mtu: 1500, as: "vlan", parent: "bond0", parentAs: "dummy", vlanID: 41 });
    expect(planMaster("storage", kinds("dummy", "vlan"), { parent: "bond0", vlanID: 41, mtu: 9000 })).toEqual({
      name: "storage",
      mtu: 9000,
      as: "vlan",
      parent: "bond0",
      parentAs: "dummy",
      vlanID: 41,
    });
    expect(planMaster("bond1", kinds("dummy", "vlan"))).toEqual({ name: "bond1", mtu: 1500, as: "dummy" });
    expect(planMaster("bond0.41", kinds())).toEqual({ name: "bond0.41", mtu: 1500, as: "veth" });
    expect(describeMaster(planMaster("bond0.41", kinds()))).toMatch(/^veth link \(a stand-in: this kernel has no dummy or VLAN links\), MTU 1500$/);
  });

  it("the address: the first one Kube-OVN could hand out of the Subnet (not the gateway, not excluded)", () => {
    const subnet = { name: "s", cidrBlock: "10.41.0.0/24", gateway: "10.41.0.1", excludeIps: [] };
    expect(firstFreeAddress(subnet)).toEqual({ address: "10.41.0.2", prefix: 24 });
    expect(firstFreeAddress({ ...subnet, excludeIps: ["10.41.0.2..10.41.0.9", "10.41.0.10"] })).toEqual({ address: "10.41.0.11", prefix: 24 });
    expect(() => firstFreeAddress({ ...subnet, cidrBlock: "10.41.0.0/30", excludeIps: ["10.41.0.2"] })).toThrow(/no address left/);
  });

  it("the namespaces: a new network namespace as root, a user namespace mapped to root otherwise", () => {
    expect(sandboxCommand(0)).toEqual(["unshare", "--net"]);
    expect(sandboxCommand(1000)).toEqual(["unshare", "--user", "--map-root-user", "--net"]);
    // a machine without util-linux: the probe says what failed, and the tests fail with it
    expect(probeSandbox(["/nonexistent/unshare", "--net"])).toEqual({ ok: false, why: expect.stringMatching(/^\/nonexistent\/unshare --net bash: .*ENOENT/) });
    expect(sandboxProblem("unshare: unshare failed: Operation not permitted")).toMatch(
      /^CNI plugin check cannot run on this machine: unshare: unshare failed: Operation not permitted\. It needs network namespaces with CAP_NET_ADMIN/,
    );
  });
});

describe("every rendered attachment, by its real plugin", () => {
  it("the reader finds every NetworkAttachmentDefinition file of rendered/, each with its Kube-OVN Subnet and a master", () => {
    const files = STACKS.flatMap((s) =>
      (fs.readdirSync(path.join(RENDERED, s), { recursive: true }) as string[])
        .filter((f) => path.basename(f).startsWith("networkattachmentdefinition-"))
        .map((f) => `${s}/${f}`),
    );
    expect(CASES.map(({ stack, a }) => `${stack}/${a.file}`).sort()).toEqual(files.sort());
    expect(CASES.length).toBeGreaterThan(0);
    for (const { a } of CASES) {
      expect(a.subnet, a.id).toBeDefined();
      expect(a.config.master, a.id).toMatch(/^\S+$/);
    }
  });

  it.each(CASES.map(({ stack, a }) => [`${stack} ${a.id} (${a.config.type} on ${a.config.master})`, stack, a] as [string, string, Attachment]))(
    "%s: ADD gives the pod its address, DEL takes it away",
    (_, stack, a) => {
      const sb = ready();
      requireKind(sb, a.config.type, `${stack} ${a.id}`);
      const cni = requireCniPlugins();
      const subnet = a.subnet!;
      const { address, prefix } = firstFreeAddress(subnet);
      const master = planMaster(a.config.master!, sb.kinds, renderedMaster(stack, a.config.master!));
      const run = runPlugin(sb, path.join(cni, a.config.type), cni, (dir) => withHostLocalIpam(a.config, subnet, address, path.join(dir, "ipam")), master);
      expect(run.add.rc, `ADD: ${run.add.stdout}${run.add.stderr}`).toBe(0);
      expect((JSON.parse(run.add.stdout) as { ips: { address: string }[] }).ips.map((i) => i.address)).toEqual([`${address}/${prefix}`]);
      expect(run.podAfterAdd).toEqual([{ ifname: "net1", addresses: [`${address}/${prefix}`] }]);
      expect(run.del.rc, `DEL: ${run.del.stdout}${run.del.stderr}`).toBe(0);
      expect(run.podAfterDel).toEqual([]);
      console.log(
        `${stack} ${a.id}: ${a.config.type} ${CNI_PLUGINS.version} on ${a.config.master} (${describeMaster(master)}): ADD gave net1 ${address}/${prefix}, DEL removed it`,
      );
    },
  );
});

describe("the plugin's own errors", () => {
  const macvlan = (master: string, extra: object = {}) => ({ cniVersion: "0.3.1", name: "check", type: "macvlan", master, mode: "bridge", ...extra });
  const ipam = (config: object) => (dir: string) => withHostLocalIpam(config, { cidrBlock: "10.41.0.0/24", gateway: "10.41.0.1" }, "10.41.0.2", dir);

  it("a master that does not exist: ADD fails with the plugin's error, and the pod gets nothing", () => {
    const sb = ready();
    requireKind(sb, "macvlan", "this case");
    const cni = requireCniPlugins();
    const run = runPlugin(sb, path.join(cni, "macvlan"), cni, ipam(macvlan("bond9.99")), undefined);
    expect(run.add.rc).not.toBe(0);
    expect(JSON.parse(run.add.stdout)).toMatchObject({ msg: expect.stringMatching(/Link not found/) });
    expect(run.podAfterAdd).toEqual([]);
  });

  it("an attachment MTU above its master's: ADD fails with the plugin's error (the master's MTU is the rendered one)", () => {
    const sb = ready();
    requireKind(sb, "macvlan", "this case");
    const cni = requireCniPlugins();
    const master = planMaster("bond0.41", sb.kinds, { mtu: 1500 });
    const run = runPlugin(sb, path.join(cni, "macvlan"), cni, ipam(macvlan("bond0.41", { mtu: 9000 })), master);
    expect(run.add.rc).not.toBe(0);
    expect(JSON.parse(run.add.stdout)).toMatchObject({ msg: "invalid MTU 9000, must be [0, master MTU(1500)]" });
  });
});
