// Runs a real CNI plugin binary (.tools/cni/, CNI_PLUGINS) against an attachment's config, as
// Multus does on a node (CNI_COMMAND ADD then DEL, CNI_IFNAME net1, the config on stdin), in two
// throwaway network namespaces: the "host", where the config's master interface is created, and the
// "pod". Nothing of this machine's own network is touched, and nothing outlives the run: the
// namespaces are made with unshare(1) and go when their processes exit (as root a new network
// namespace; otherwise a user namespace mapped to root, where the kernel allows unprivileged ones).
//
// The master is what its name and the Talos patches say: a VLAN on its parent for `<parent>.<id>` or
// a rendered VLANConfig, else a dummy link, with the MTU the patches render for it. Where the kernel
// has no VLAN or dummy links, a veth of that name stands in (a plugin sees a master only through
// its name, index, MTU and MAC); the run says which it used.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** Link kinds the probe tries; `veth` is the stand-in every kernel with network namespaces has. */
const KINDS = ["veth", "dummy", "vlan", "macvlan", "ipvlan"] as const;
export type LinkKind = (typeof KINDS)[number];

/** The unshare(1) command that makes the "host" namespace for this user. */
export function sandboxCommand(uid = process.getuid?.() ?? 0): string[] {
  return uid === 0 ? ["unshare", "--net"] : ["unshare", "--user", "--map-root-user", "--net"];
}

const PROBE = `
set -u
for c in ip nsenter unshare; do command -v $c >/dev/null || { echo "missing $c"; exit 3; }; done
ip link add ok-veth type veth peer name ok-peer 2>&1 && ip link set ok-veth up && echo "kind veth"
ip link add ok-dummy type dummy 2>/dev/null && echo "kind dummy"
ip link add link ok-veth name ok-veth.7 type vlan id 7 2>/dev/null && echo "kind vlan"
ip link add link ok-veth name ok-mv type macvlan mode bridge 2>/dev/null && echo "kind macvlan"
ip link add link ok-veth name ok-iv type ipvlan mode l2 2>/dev/null && echo "kind ipvlan"
unshare --net true && echo "nested"
`;

export type Sandbox = { ok: true; kinds: Set<LinkKind>; command: string[] } | { ok: false; why: string };

/** Whether namespaces can be made here, and which link kinds this kernel creates in them. */
export function probeSandbox(command = sandboxCommand()): Sandbox {
  const r = spawnSync(command[0], [...command.slice(1), "bash", "-c", PROBE], { encoding: "utf8", timeout: 20_000 });
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`.trim();
  const kinds = new Set(KINDS.filter((k) => new RegExp(`^kind ${k}$`, "m").test(r.stdout ?? "")));
  if (r.error || r.status !== 0 || !kinds.has("veth") || !/^nested$/m.test(r.stdout ?? "")) {
    return { ok: false, why: `${command.join(" ")} bash: ${r.error?.message ?? (out.split("\n").find((l) => !l.startsWith("kind ")) || `exit ${r.status}`)}` };
  }
  return { ok: true, kinds, command };
}

/** The one line a machine that cannot run the check gets (the tests fail with it). */
export function sandboxProblem(why: string): string {
  return (
    `CNI plugin check cannot run on this machine: ${why}. It needs network namespaces with CAP_NET_ADMIN (root, or unprivileged ` +
    "user namespaces: on Ubuntu 24.04 `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`) and ip (iproute2), unshare and nsenter (util-linux)."
  );
}

/** The kinds a master (or a VLAN's parent) is made as by itself. */
type OwnLink = "dummy" | "veth";
/** How the master is made: a VLAN on a parent, or a link of its own. */
export type MasterPlan =
  | { name: string; mtu: number; as: "vlan"; parent: string; parentAs: OwnLink; vlanID: number }
  | { name: string; mtu: number; as: OwnLink };

/** The master as the name or a rendered VLANConfig says, with the kinds this kernel has. */
export function planMaster(name: string, kinds: ReadonlySet<LinkKind>, rendered: { mtu?: number; parent?: string; vlanID?: number } = {}): MasterPlan {
  const own: OwnLink = kinds.has("dummy") ? "dummy" : "veth";
  const mtu = rendered.mtu ?? 1500;
  const m = /^(.+)\.(\d+)$/.exec(name);
  const parent = rendered.parent ?? m?.[1];
  const vlanID = rendered.vlanID ?? (m ? Number(m[2]) : undefined);
  if (parent && vlanID && kinds.has("vlan")) return { name, mtu, as: "vlan", parent, parentAs: own, vlanID };
  return { name, mtu, as: own };
}

export function describeMaster(p: MasterPlan): string {
  if (p.as === "vlan") return `VLAN ${p.vlanID} on ${p.parentAs} ${p.parent}, MTU ${p.mtu}`;
  return `${p.as} link${p.as === "veth" ? " (a stand-in: this kernel has no dummy or VLAN links)" : ""}, MTU ${p.mtu}`;
}

const RUN = `
set -Eeu
trap 'rc=$?; [ "$BASHPID" != "$$" ] || echo "the namespaces of the check: \\\`$BASH_COMMAND\\\` exited $rc (line $LINENO)" >&2' ERR
ip link set lo up
mk() { if [ "$2" = veth ]; then ip link add "$1" type veth peer name "p$3"; else ip link add "$1" type "$2"; fi; }
case "$MASTER_AS" in
  none) ;;
  vlan) mk "$PARENT" "$PARENT_AS" 0; ip link set "$PARENT" mtu "$MTU" up
        ip link add link "$PARENT" name "$MASTER" type vlan id "$VLAN_ID"; ip link set "$MASTER" mtu "$MTU" up ;;
  *) mk "$MASTER" "$MASTER_AS" 1; ip link set "$MASTER" mtu "$MTU" up ;;
esac
unshare --net sleep 60 & pod=$!
trap 'kill $pod' EXIT
while [ "$(readlink /proc/$pod/ns/net)" = "$(readlink /proc/self/ns/net)" ]; do sleep 0.01; done
export CNI_CONTAINERID=openkeel-cni-check CNI_NETNS=/proc/$pod/ns/net CNI_IFNAME=net1
set +e
CNI_COMMAND=ADD "$PLUGIN" < "$OUT/config.json" > "$OUT/add.out" 2> "$OUT/add.err"; echo $? > "$OUT/add.rc"
nsenter --net="$CNI_NETNS" ip -j addr show > "$OUT/pod-after-add.json"
CNI_COMMAND=DEL "$PLUGIN" < "$OUT/config.json" > "$OUT/del.out" 2> "$OUT/del.err"; echo $? > "$OUT/del.rc"
nsenter --net="$CNI_NETNS" ip -j addr show > "$OUT/pod-after-del.json"
`;

export interface PodInterface {
  ifname: string;
  addresses: string[];
}

export interface PluginRun {
  add: { rc: number; stdout: string; stderr: string };
  del: { rc: number; stdout: string; stderr: string };
  /** The pod namespace's interfaces (not lo) after ADD and after DEL. */
  podAfterAdd: PodInterface[];
  podAfterDel: PodInterface[];
}

function podInterfaces(file: string): PodInterface[] {
  const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim() : "";
  const links = (text ? JSON.parse(text) : []) as { ifname: string; addr_info?: { family: string; local: string; prefixlen: number }[] }[];
  return links
    .filter((l) => l.ifname !== "lo")
    .map((l) => ({ ifname: l.ifname, addresses: (l.addr_info ?? []).filter((a) => a.family === "inet").map((a) => `${a.local}/${a.prefixlen}`) }));
}

/**
 * ADD then DEL of `plugin` with the config `config(dir)` gives (its IPAM already the check's; `dir`
 * is the run's temporary folder, for the IPAM's state) in a fresh pair of namespaces;
 * `master: undefined` creates none. `cniPath` holds the IPAM plugin.
 */
export function runPlugin(
  sandbox: Extract<Sandbox, { ok: true }>,
  plugin: string,
  cniPath: string,
  config: (dir: string) => object,
  master: MasterPlan | undefined,
): PluginRun {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "cni-check-"));
  try {
    fs.writeFileSync(path.join(out, "config.json"), JSON.stringify(config(out)));
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin",
      OUT: out,
      PLUGIN: plugin,
      CNI_PATH: cniPath,
      MASTER_AS: master?.as ?? "none",
    };
    if (master)
      Object.assign(
        env,
        { MASTER: master.name, MTU: String(master.mtu) },
        master.as === "vlan" ? { PARENT: master.parent, PARENT_AS: master.parentAs, VLAN_ID: String(master.vlanID) } : {},
      );
    const cmd = sandbox.command;
    const r = spawnSync(cmd[0], [...cmd.slice(1), "bash", "-c", RUN], { env, encoding: "utf8", timeout: 30_000 });
    if (r.status !== 0)
      throw new Error(`the namespaces of the check could not be set up (${cmd.join(" ")}, exit ${r.status}): ${(r.stderr || r.error?.message || "").trim()}`);
    const read = (f: string) => (fs.existsSync(path.join(out, f)) ? fs.readFileSync(path.join(out, f), "utf8") : "");
    const step = (s: string) => ({ rc: Number(read(`${s}.rc`).trim() || -1), stdout: read(`${s}.out`), stderr: read(`${s}.err`) });
    return {
      add: step("add"),
      del: step("del"),
      podAfterAdd: podInterfaces(path.join(out, "pod-after-add.json")),
      podAfterDel: podInterfaces(path.join(out, "pod-after-del.json")),
    };
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

/** The attachment's config with Kube-OVN's IPAM replaced by host-local handing out `address` (its state in a temporary folder). */
export function withHostLocalIpam(config: object, subnet: { cidrBlock: string; gateway?: string | undefined }, address: string, dataDir: string): object {
  const range = { subnet: subnet.cidrBlock, rangeStart: address, rangeEnd: address, ...(subnet.gateway ? { gateway: subnet.gateway } : {}) };
  return { ...config, ipam: { type: "host-local", dataDir, ranges: [[range]] } };
}
