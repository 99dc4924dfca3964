// What the pinned OS and its extensions put on a node's host: the host contract's providers
// (placement/host.ts), each row beside the pin of platform/versions.ts it was read for. What a
// platform component's node agent installs is a row of the same shape in its own module, carried on
// its descriptor (platform/component.ts hostInstalls).
import type { HostCapability } from "../plan/host";

/**
 * What a pinned OS, extension or node agent gives the host of a node: the OS's own CNI plugins,
 * devices and kernel modules, an extension's tools, the plugins an agent's init step copies.
 * `readAt` is the version of `pin` the row was read at upstream (`source`):
 * test/placement/host-contract.test.ts fails when the pin moves past it, so a bump of Talos, kind or
 * a component whose agent installs something re-reads its row.
 */
export interface HostFactsRow {
  /** The pin of platform/versions.ts it was read for. */
  pin: string;
  readAt: string;
  /** Who, in messages and placement.md: `Talos v1.13.9`. */
  by: string;
  provides: readonly HostCapability[];
  source: string;
}

/** One table: every row of host facts of the OS and its extensions, beside the pins it depends on. */
export const HOST_FACTS = {
  talos: {
    pin: "TALOS_VERSION",
    readAt: "v1.13.9",
    by: "Talos v1.13.9",
    provides: [
      ...["bridge", "firewall", "flannel", "host-local", "loopback", "portmap"].map((name) => ({ kind: "cniPlugin" as const, name })),
      ...["openvswitch", "geneve", "kvm", "vhost_net", "tun", "macvlan", "ipvlan", "8021q", "bonding", "iscsi_tcp", "nfs", "dm_crypt"].map((name) => ({
        kind: "kernelModule" as const,
        name,
      })),
      ...["/dev/net/tun", "/dev/vhost-net"].map((name) => ({ kind: "device" as const, name })),
    ],
    source:
      "siderolabs/talos@v1.13.9 Dockerfile:249-265,716-717 (only bridge, firewall, host-local, loopback, portmap of the cni package, and flannel: no macvlan, no ipvlan); " +
      "siderolabs/pkgs@f541ca4 (Talos' PKGS) kernel/build/config-amd64: CONFIG_OPENVSWITCH=y (1899), GENEVE=y (2637), KVM/KVM_INTEL/KVM_AMD=y (768-773), VHOST_NET=y (6177), TUN=y (2648), " +
      "MACVLAN=y (2631), IPVLAN=y (2634), VLAN_8021Q=y (1791), BONDING=y (2622), ISCSI_TCP=y (2385), NFS_V4=y (6783), DM_CRYPT=y (2573), no SOFT_WATCHDOG (4079)",
  },
  kindNode: {
    pin: "KIND_NODE_IMAGE",
    readAt: "v1.36.1",
    by: "kindest/node v1.36.1",
    provides: ["host-local", "loopback", "ptp", "portmap"].map((name) => ({ kind: "cniPlugin" as const, name })),
    source:
      "kubernetes-sigs/kind@v0.32.0 images/base/Dockerfile:173-185,226-230 (containernetworking/plugins v1.9.1: host-local, loopback, ptp, portmap); kindnetd copies none (pkg/build/nodeimage/const_cni.go:123-158)",
  },
  iscsiTools: {
    pin: "TALOS_VERSION",
    readAt: "v1.13.9",
    by: "the siderolabs/iscsi-tools extension",
    provides: [
      { kind: "hostTool", name: "iscsiadm" },
      { kind: "hostTool", name: "iscsid" },
    ],
    source: "siderolabs/extensions@v1.13.9 storage/iscsi-tools/iscsid.yaml:1-13 (the ext-iscsid service), README.md:3 (iscsiadm in its mount namespace)",
  },
  utilLinuxTools: {
    pin: "TALOS_VERSION",
    readAt: "v1.13.9",
    by: "the siderolabs/util-linux-tools extension",
    provides: [
      { kind: "hostTool", name: "fstrim" },
      { kind: "hostTool", name: "nsenter" },
    ],
    source: "siderolabs/extensions@v1.13.9 tools/util-linux/pkg.yaml:26-31 (--enable-nsenter --enable-fstrim)",
  },
  kataContainers: {
    pin: "TALOS_VERSION",
    readAt: "v1.13.9",
    by: "the siderolabs/kata-containers extension",
    provides: [{ kind: "runtimeHandler", name: "kata" }],
    source:
      "siderolabs/extensions@v1.13.9 container-runtime/kata-containers/10-kata-containers.part:1-6 (the one handler, kata: Cloud Hypervisor, no kata-qemu)",
  },
} as const satisfies Record<string, HostFactsRow>;

/** The Talos system extensions this repository puts in schematics, and the host facts row of each. */
export const TALOS_EXTENSION_FACTS: Readonly<Record<string, HostFactsRow>> = {
  "siderolabs/iscsi-tools": HOST_FACTS.iscsiTools,
  "siderolabs/util-linux-tools": HOST_FACTS.utilLinuxTools,
  "siderolabs/kata-containers": HOST_FACTS.kataContainers,
};
