// What the host of each Talos node has, for the host contract (placement/host.ts): Talos itself at
// the pinned version (HOST_FACTS of platform/host-facts.ts), and what is rendered for the node, read
// back from the files the operator applies: its schematic's extensions, its patches' kernel modules
// and user volumes, and the links of its host network. Reading the rendered documents, not the
// stack config, is the point: a node has what its files give it.
import { WATCHDOG_MODULES } from "../config/talos";
import type { HostProvision } from "../plan/host";
import type { NodeConfigFile, Plan } from "../plan/plan";
import { TALOS_MACHINES_FILE, type TalosMachine } from "../render/rendered";
import { HOST_FACTS, TALOS_EXTENSION_FACTS } from "../platform/host-facts";
import { TALOS_DATA_PATH } from "../platform/longhorn-names";

type Doc = Record<string, unknown>;
const LINK_KINDS = new Set(["LinkConfig", "BondConfig", "VLANConfig"]);
/** Talos mounts a UserVolumeConfig `<name>` at /var/mnt/<name> (the `longhorn` volume at Longhorn's data path). */
const USER_VOLUME_ROOT = TALOS_DATA_PATH.slice(0, TALOS_DATA_PATH.lastIndexOf("/"));

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

/** Kernel modules (and the watchdog device one of them gives) and user volumes of a machine-config patch. */
function patchProvisions(file: NodeConfigFile): HostProvision[] {
  const by = `talos/${file.path.slice("talos/".length)}`;
  const out: HostProvision[] = [];
  const addressedByDhcp = new Set(file.documents.filter((d) => d.kind === "DHCPv4Config").map((d) => String(d.name)));
  for (const doc of file.documents) {
    const modules = ((doc.machine as Doc | undefined)?.kernel as Doc | undefined)?.modules;
    for (const m of Array.isArray(modules) ? (modules as Doc[]) : []) {
      const name = String(m.name);
      out.push({ kind: "kernelModule", name, by });
      if ((WATCHDOG_MODULES as readonly string[]).includes(name))
        out.push({ kind: "device", name: "/dev/watchdog", by: `${by} (the ${name} watchdog driver)` });
    }
    if (doc.kind === "UserVolumeConfig") out.push({ kind: "mount", name: `${USER_VOLUME_ROOT}/${String(doc.name)}`, by });
    if (typeof doc.kind === "string" && LINK_KINDS.has(doc.kind)) {
      const addressed = doc.addresses !== undefined || addressedByDhcp.has(String(doc.name));
      const vlan = doc.kind === "VLANConfig" ? { vlan: { parent: String(doc.parent), id: Number(doc.vlanID) } } : {};
      out.push({ kind: "interface", name: String(doc.name), by, ...(addressed ? { addressed: true as const } : {}), ...vlan });
      // a bond's members are there, enslaved to it
      for (const name of strings(doc.links)) out.push({ kind: "interface", name, by, master: String(doc.name) });
    }
  }
  return out;
}

/** What the extensions of a schematic give (each extension's row of HOST_FACTS). */
function schematicProvisions(file: NodeConfigFile): HostProvision[] {
  const customization = (file.documents[0]?.customization ?? {}) as Doc;
  const extensions = strings((customization.systemExtensions as Doc | undefined)?.officialExtensions);
  return extensions.flatMap((ext) => {
    const row = TALOS_EXTENSION_FACTS[ext];
    if (!row) throw new Error(`host contract: schematic ${file.path} carries ${ext}, which platform/versions.ts HOST_FACTS does not describe`);
    return row.provides.map((c) => ({ ...c, by: `${ext} (${file.path})` }));
  });
}

/** The interfaces Open vSwitch owns on a machine (machines.yaml `ovs`): each port, and its NICs enslaved to it. */
function ovsProvisions(m: TalosMachine): HostProvision[] {
  const by = `${TALOS_MACHINES_FILE} ovs (Open vSwitch's, not Talos')`;
  return (m.ovs ?? []).flatMap((port) => [
    { kind: "interface" as const, name: port.name, by, ovs: true as const },
    ...port.nics
      .filter((nic) => nic !== port.name)
      .map((nic) => ({ kind: "interface" as const, name: nic, by, master: `OVS bond ${port.name}`, ovs: true as const })),
  ]);
}

/** Per node of a Talos stack: what its host has. */
export function talosHostProvisions(plan: Plan, hardwareVirtualization: boolean): Map<string, HostProvision[]> {
  const files = new Map((plan.nodeConfig?.files ?? []).map((f) => [f.path, f]));
  const machines = (files.get(TALOS_MACHINES_FILE)?.documents[0]?.machines ?? {}) as Record<string, TalosMachine>;
  const file = (path: string) => {
    const f = files.get(path);
    if (!f) throw new Error(`host contract: ${TALOS_MACHINES_FILE} names ${path}, which the node configuration does not hold`);
    return f;
  };
  const os: HostProvision[] = [
    ...HOST_FACTS.talos.provides.map((c) => ({ ...c, by: HOST_FACTS.talos.by })),
    // the environment's machines have VT-x or AMD-V, and the Talos kernel has KVM
    ...(hardwareVirtualization ? [{ kind: "device" as const, name: "/dev/kvm", by: `${HOST_FACTS.talos.by} on hardware with virtualization` }] : []),
  ];
  return new Map(
    Object.entries(machines).map(([node, m]) => [
      node,
      [...os, ...m.patches.flatMap((p) => patchProvisions(file(`talos/${p}`))), ...schematicProvisions(file(`talos/${m.schematic}`)), ...ovsProvisions(m)],
    ]),
  );
}
