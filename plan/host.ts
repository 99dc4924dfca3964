// The host contract as data (placement/host.ts judges it): what the components of a Plan need of
// the host of every node they may run on, what node agents install on the hosts they run on, and
// what a node's host has. Kept in the Plan beside its units: the components that state their needs
// are the ones that build the units (platform/, openkeel/).

export const HOST_CAPABILITY_KINDS = ["cniPlugin", "interface", "hostTool", "runtimeHandler", "kernelModule", "device", "mount"] as const;
export type HostCapabilityKind = (typeof HOST_CAPABILITY_KINDS)[number];

export interface HostCapability {
  kind: HostCapabilityKind;
  name: string;
}

/** Something a component needs of its node's host. */
export interface HostNeed {
  kind: HostCapabilityKind;
  /** Any one of these names will do (MetalLB announces from whichever of its interfaces a node has). */
  anyOf: readonly string[];
  /** Why it needs it, with the upstream code that says so. */
  why: string;
  /** How to give it to the nodes that lack it. */
  fix: string;
  /**
   * The stack key that chose it: where the error points.
   * @default the component's placement key, else the roles of the first node that lacks it
   */
  configPath?: string;
  /**
   * An interface it may use only while nothing enslaves it (no bond, no OVS bridge is its master):
   * MetalLB answers ARP only on such interfaces.
   * @default any interface of that name
   */
  free?: true;
  /**
   * It enslaves the interface to this master (the OVN chassis adds its external NIC to br-ex): on
   * that node, nothing else may need the interface free.
   * @default it uses the interface and leaves it free
   */
  takes?: string;
  /**
   * The interface must be one Open vSwitch owns (openkeel:hostNetworks.*.ovs), never one Talos
   * manages: the component adds it to an OVS bridge, which Talos' link controller would fight.
   * @default any interface of that name
   */
  ovsOwned?: true;
}

/** A need whose name each node says itself: the value of one of its labels (the OVN chassis' external NIC). */
export interface NodeLabelNeed extends Omit<HostNeed, "anyOf" | "configPath" | "free"> {
  nodeLabel: string;
}

/** The pods of a component attach to a NetworkAttachmentDefinition: its plugin, its IPAM plugin and its master interface. */
export interface AttachmentNeed {
  attachment: { namespace: string; name: string };
  /** The stack key of the attachment network (`…storageNetwork`): its `type` and `interface` chose the plugin and the master. */
  configPath: string;
  why: string;
}

export type ComponentNeed = HostNeed | NodeLabelNeed | AttachmentNeed;

/** What one component needs, by its placement name (`<unit>/<component>`). */
export interface ComponentHostNeeds {
  component: string;
  needs: readonly ComponentNeed[];
}

/** What a node agent installs on the host of every node it runs on (the CNI plugins its init step copies). */
export interface HostInstall {
  component: string;
  provides: readonly HostCapability[];
  /** Who, at which version, and where upstream says so. */
  by: string;
}

/** A capability a node's host has, and who gives it; `name: "*"` gives every name of its kind. */
export interface HostProvision extends HostCapability {
  by: string;
  /**
   * The interface's master (a bond member's bond): it is there, but not free.
   * @default none
   */
  master?: string;
  /**
   * Open vSwitch owns it, not the node's OS: only a need that adds it to an OVS bridge may use it.
   * @default the OS manages it
   */
  ovs?: true;
  /**
   * The node's own address and default route are on it.
   * @default not
   */
  addressed?: true;
  /**
   * A VLAN's identity: its parent and tag, what the switch port sees.
   * @default not a VLAN
   */
  vlan?: { parent: string; id: number };
}

/** What the components of a Plan need of the hosts, and install on them. */
export interface HostContract {
  needs: ComponentHostNeeds[];
  installs: HostInstall[];
  /**
   * What every pod that is not on the host network needs of its node: the plugins of the pod
   * network's CNI configuration, which the kubelet's runtime calls for each pod sandbox.
   * @default none
   */
  podNeeds?: HostNeed[];
}

/** Contracts of several contributors as one: their needs, installs and pod needs, in their order. */
export function mergeHostContracts(parts: readonly Partial<HostContract>[]): HostContract {
  const podNeeds = parts.flatMap((p) => p.podNeeds ?? []);
  return { needs: parts.flatMap((p) => p.needs ?? []), installs: parts.flatMap((p) => p.installs ?? []), ...(podNeeds.length > 0 ? { podNeeds } : {}) };
}
