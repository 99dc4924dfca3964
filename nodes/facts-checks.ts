// The stack judged against its machines' own facts (stacks/facts/<stack>/, config/facts.ts): every
// host-level choice that names a piece of hardware is checked where the machine's facts exist. The
// NICs a host network names (bond members, plain links, the NICs OVS takes) are NICs the machine
// has; the install disk selector picks exactly one of its disks, never one that Longhorn's or
// Swift's disk selector takes (a reinstall would wipe it); each user volume finds a disk; the
// watchdog module is the machine's vendor's. A node without facts is planned, with one warning
// naming what stays unverified.
import type { DiskFact, MachineFacts } from "../config/facts";
import type { HostNetwork } from "../config/host-network";
import { ovsNics } from "../config/host-network";
import { formatPath, type Check } from "../config/problems";
import type { LoadedConfig, NodeConfig } from "../config/schema";
import type { TalosConfig } from "../config/talos";
import { watchdogModuleOf } from "../platform/medik8s-talos";
import { installCandidates, installSelectorMatches, volumeFits, volumeSelectorMatches } from "./disk-selectors";
import { parseByteSize, parseSizeMatcher, type InstallDiskSelector } from "../config/talos";
import { nodeInstallDisk, nodeVolumes } from "./talos";

const CAPTURE = "npm run facts -- --stack <stack> --address <its maintenance address> (docs/operating.md)";

const describeDisk = (d: DiskFact) =>
  `${d.id} (${[d.pretty_size || `${d.size} B`, d.transport || "no transport", d.rotational ? "rotational" : "", d.model, d.serial ? `serial ${d.serial}` : ""].filter(Boolean).join(", ")})`;

/** The NICs of a machine: its physical Ethernet links (a bond, VLAN or bridge has a kind). */
const nicsOf = (m: MachineFacts) => m.links.filter((l) => l.type === "ether" && l.kind === "");

/** Per node with a machine, its facts; the nodes whose machine has none or is taken twice are errors. */
function machineOfNodes(cfg: LoadedConfig): { pairs: { node: NodeConfig; i: number; m: MachineFacts }[]; checks: Check[] } {
  const checks: Check[] = [];
  const pairs: { node: NodeConfig; i: number; m: MachineFacts }[] = [];
  const taken = new Map<string, string>();
  cfg.nodes.forEach((node, i) => {
    if (node.machine === undefined) return;
    const m = cfg.facts?.[node.machine];
    const path = `openkeel:nodes[${i}].machine`;
    if (!m) {
      const known = Object.keys(cfg.facts ?? {});
      checks.push({
        level: "error",
        code: "machine-facts",
        message: `node '${node.name}' is machine '${node.machine}', which has no facts file (stacks/facts/${cfg.stack}/${node.machine}.yaml)${known.length ? `; the stack's machines are ${known.join(", ")}` : ""}`,
        fix: `capture its facts: ${CAPTURE}, or name a captured machine`,
        path,
      });
    } else if (taken.has(node.machine)) {
      checks.push({
        level: "error",
        code: "machine-facts",
        message: `node '${node.name}' is machine '${node.machine}', which node '${taken.get(node.machine)}' already is`,
        fix: "give each node its own machine",
        path,
      });
    } else {
      taken.set(node.machine, node.name);
      pairs.push({ node, i, m });
    }
  });
  return { pairs, checks };
}

/** The NICs a host network names, each with its key path. */
function namedNics(hn: string, n: HostNetwork): { nic: string; path: (string | number)[] }[] {
  const at = (...rest: (string | number)[]) => ["openkeel:hostNetworks", hn, ...rest];
  const bondOrVlan = new Set([...n.bonds.map((b) => b.name), ...n.vlans.map((v) => v.name ?? `${v.parent}.${v.id}`)]);
  return [
    ...n.links.flatMap((l, i) => (bondOrVlan.has(l.name) ? [] : [{ nic: l.name, path: at("links", i, "name") }])),
    ...n.bonds.flatMap((b, i) => b.members.map((m, j) => ({ nic: m, path: at("bonds", i, "members", j) }))),
    ...n.ovs.flatMap((p, i) => ovsNics(p).map((nic, j) => ({ nic, path: p.members ? at("ovs", i, "members", j) : at("ovs", i, "name") }))),
  ];
}

/** Every NIC the node's host network names is one its machine has. */
function nicChecks(cfg: LoadedConfig, node: NodeConfig, m: MachineFacts): Check[] {
  const n = node.hostNetwork === undefined ? undefined : cfg.hostNetworks?.[node.hostNetwork];
  if (!n) return [];
  const nics = nicsOf(m);
  return namedNics(node.hostNetwork!, n)
    .filter(({ nic }) => !nics.some((l) => l.name === nic))
    .map(({ nic, path }) => ({
      level: "error" as const,
      code: "machine-nic",
      message: `names NIC '${nic}', which machine '${m.machine}' (node '${node.name}', ${m.file}) does not have: its NICs are ${nics.map((l) => `${l.name} (${[l.permanentAddr, l.driver].filter(Boolean).join(", ")})`).join(", ") || "none"}`,
      fix: `use the NIC names the machine reports (talosctl get links --insecure), or give node '${node.name}' a host network of its own`,
      path: formatPath(path),
    }));
}

/** Intel's and AMD's chipset watchdogs create /dev/watchdog only on their own vendor's hardware. */
const VENDOR_WATCHDOGS: Record<string, { vendor: RegExp; name: string; other: string }> = {
  iTCO_wdt: { vendor: /intel/i, name: "Intel's", other: "sp5100_tco on AMD" },
  sp5100_tco: { vendor: /amd|advanced micro devices/i, name: "AMD's", other: "iTCO_wdt on Intel" },
};

function watchdogChecks(talos: TalosConfig, node: NodeConfig, m: MachineFacts): Check[] {
  const rule = VENDOR_WATCHDOGS[watchdogModuleOf(talos)];
  const cpu = m.cpus.find((c) => c.manufacturer !== "");
  if (!rule || !cpu || rule.vendor.test(cpu.manufacturer)) return [];
  return [
    {
      level: "error",
      code: "machine-watchdog",
      message: `is ${watchdogModuleOf(talos)}, ${rule.name} chipset watchdog, and machine '${m.machine}' (node '${node.name}') has ${cpu.manufacturer} CPUs (${cpu.productName}): the driver creates no /dev/watchdog there, and Medik8s self-node-remediation finds none`,
      fix: `use ${rule.other}, or ipmi_watchdog through the BMC`,
      path: "openkeel:talos.watchdogModule",
    },
  ];
}

/** The install disk is one disk of the machine, and none a user volume's selector may take; each volume finds a disk. */
function diskChecks(talos: TalosConfig, node: NodeConfig, i: number, m: MachineFacts): Check[] {
  const sel = nodeInstallDisk(node, talos);
  if (!sel) return [];
  const installPath = node.installDisk ? `openkeel:nodes[${i}].installDisk` : "openkeel:talos.installDisk";
  const on = `machine '${m.machine}' (node '${node.name}')`;
  const candidates = installCandidates(sel, m.disks);
  const has = `it has ${m.disks.map(describeDisk).join("; ") || "no disk"}`;
  if (candidates.length !== 1) {
    const what = candidates.length === 0 ? "matches none of the disks of" : `matches ${candidates.length} disks of`;
    return [
      {
        level: "error",
        code: "install-disk",
        message: `${what} ${on}: ${has}${candidates.length > 1 ? `; Talos would install on ${candidates[0].id}, the first it lists` : ""}`,
        fix: `narrow it to the boot disk: installDisk: {serial: …} on the node, or its busPath, model, type and size`,
        path: installPath,
      },
    ];
  }
  const system = candidates[0];
  const checks: Check[] = [];
  for (const v of nodeVolumes(node, talos)) {
    const volPath = `openkeel:talos.${v.key}.diskSelector`;
    const takes = (d: DiskFact, systemDisk: boolean) => {
      try {
        return volumeSelectorMatches(v.disk.diskSelector, d, systemDisk) && volumeFits(v.disk.minSize, d);
      } catch (e) {
        checks.push({
          level: "error",
          code: "volume-disk",
          message: `cannot be evaluated as Talos' disk selector: ${(e as Error).message}`,
          fix: "write a CEL expression over disk.* and system_disk, e.g. disk.transport == 'nvme' && !system_disk",
          path: volPath,
        });
        return false;
      }
    };
    // on a reinstall the guard `!system_disk` protects nothing if the installer picks the volume's disk
    if (takes(system, false)) {
      checks.push({
        level: "error",
        code: "install-disk",
        message: `selects ${describeDisk(system)} on ${on}, a disk the ${v.name} volume's selector (${volPath}) may take too: installing there wipes the volume`,
        fix: `narrow the install disk (its serial, busPath or a size below ${v.disk.minSize}), or the volume's selector`,
        path: installPath,
      });
    }
    if (!m.disks.some((d) => takes(d, d.id === system.id))) {
      checks.push({
        level: "error",
        code: "volume-disk",
        message: `selects no disk of ${on} with ${v.disk.minSize} free: ${has}`,
        fix: `write a selector and minSize that match the machine's ${v.name} disk`,
        path: volPath,
      });
    }
  }
  return checks;
}

const TRANSPORTS = ["nvme", "sata", "sas", "scsi", "virtio", "mmc", "usb"];

/** A string a glob matches (`*` → `x`), or empty where the selector says nothing. */
const witness = (pattern: string | undefined) => (pattern ?? "").replaceAll("*", "x");

/**
 * The disks a machine without facts could have, as far as the selectors can tell them apart: every
 * transport, rotational or not, sizes at each boundary a selector draws, and the attributes the
 * install selector names set to what it matches.
 */
function possibleDisks(sel: InstallDiskSelector, minSizes: readonly string[]): DiskFact[] {
  const bounds = [sel.size ? parseSizeMatcher(sel.size)?.bytes : undefined, ...minSizes.map((m) => parseByteSize(m))].filter(
    (b): b is bigint => b !== undefined,
  );
  const sizes = [...new Set([10n ** 9n, 10n ** 14n, ...bounds.flatMap((b) => [b - 1n, b, b + 1n, b + 67n * 4096n])])].filter((b) => b > 0n);
  return TRANSPORTS.flatMap((transport) =>
    [false, true].flatMap((rotational) =>
      sizes.map((size) => ({
        id: `${transport}-${rotational ? "hdd" : "ssd"}-${size}`,
        dev_path: "",
        size,
        pretty_size: `${size} B`,
        io_size: 4096n,
        sector_size: 4096n,
        readonly: false,
        cdrom: false,
        model: witness(sel.model),
        serial: witness(sel.serial),
        modalias: witness(sel.modalias),
        wwid: witness(sel.wwid),
        uuid: witness(sel.uuid),
        bus_path: witness(sel.busPath),
        sub_system: "/sys/class/block",
        transport,
        rotational,
        secondary_disks: [],
        symlinks: [],
      })),
    ),
  );
}

const describePossible = (d: DiskFact) => `a ${d.rotational ? "rotational" : "non-rotational"} ${d.transport} disk of ${d.size} bytes`;

/**
 * Nodes without facts: the install disk selector may not be able to take a disk a user volume's
 * selector may take on any machine (on a reinstall, `!system_disk` guards nothing if the installer
 * picked the volume's disk). One error per selector, naming its nodes.
 */
function possibleCollisions(cfg: LoadedConfig, talos: TalosConfig): Check[] {
  const bySelector = new Map<string, { sel: InstallDiskSelector; nodes: string[]; volumes: ReturnType<typeof nodeVolumes> }>();
  cfg.nodes.forEach((node, i) => {
    const sel = nodeInstallDisk(node, talos);
    const volumes = nodeVolumes(node, talos);
    if (node.machine !== undefined || !sel || volumes.length === 0) return;
    const path = node.installDisk ? `openkeel:nodes[${i}].installDisk` : "openkeel:talos.installDisk";
    const key = `${path} ${volumes.map((v) => v.key).join(",")}`;
    const entry = bySelector.get(key) ?? { sel, nodes: [], volumes };
    entry.nodes.push(node.name);
    bySelector.set(key, entry);
  });
  const checks: Check[] = [];
  for (const [key, { sel, nodes, volumes }] of bySelector) {
    const path = key.split(" ")[0];
    const disks = possibleDisks(
      sel,
      volumes.map((v) => v.disk.minSize),
    ).filter((d) => installSelectorMatches(sel, d));
    for (const v of volumes) {
      const both = disks.find((d) => {
        try {
          return volumeSelectorMatches(v.disk.diskSelector, d, false) && volumeFits(v.disk.minSize, d);
        } catch {
          return false; // a selector Talos cannot evaluate: Talos' validation reports it (npm run validate)
        }
      });
      if (!both) continue;
      checks.push({
        level: "error",
        code: "install-disk",
        message: `can select a disk the ${v.name} volume's selector (openkeel:talos.${v.key}.diskSelector) may take too, on ${nodes.join(", ")}: ${describePossible(both)} meets both, and installing there wipes the volume`,
        fix: `make them exclusive: a size below ${v.disk.minSize}, another type or the boot disk's busPath or model for the install disk; or capture the machines' facts (${CAPTURE}), which then decide`,
        path,
      });
    }
  }
  return checks;
}

/** What the stack says of its machines, judged against their facts; one warning for the nodes that have none. */
export function machineFactsChecks(cfg: LoadedConfig): Check[] {
  const talos = cfg.talos;
  if (!talos) return [];
  const { pairs, checks } = machineOfNodes(cfg);
  for (const { node, i, m } of pairs) checks.push(...nicChecks(cfg, node, m), ...watchdogChecks(talos, node, m), ...diskChecks(talos, node, i, m));
  checks.push(...possibleCollisions(cfg, talos));
  const without = cfg.nodes.filter((n) => n.machine === undefined);
  if (without.length > 0) {
    checks.push({
      level: "warning",
      code: "machine-facts-missing",
      message: `${without.length} node(s) name no machine with hardware facts (${without.map((n) => n.name).join(", ")}): their install disk, the NICs of their host network and of OVS, the Longhorn and Swift disk selectors and the watchdog driver are not checked against the machines`,
      fix: `capture each machine (${CAPTURE}) and set machine: <name> on its node`,
      path: "openkeel:nodes",
    });
  }
  return checks;
}
