// What a stack's environment tells the layers below environments/: the capabilities they need,
// never the environment's name. Each environment states its traits (environments/kind-lab.ts,
// environments/talos-production.ts); no file below environments/ compares an environment name or
// keeps a production flag, so a new environment is a choice of traits, not a search for `if`s.
import type { LabelProfile } from "../config/roles";

export interface EnvironmentTraits {
  /** D1: the label profile of a stack that sets none. */
  labelProfile: LabelProfile;
  /**
   * The plan checks hold the inventory to a cloud's (§ 6): 3 controlPlane nodes, a compute and a
   * network node, a role on every node (so the releases always get global.nodeRoles), provisioning
   * nodes tainted (D7), and its VMs, its tenants', on KVM: never emulated (platform/kubevirt.ts,
   * kubevirt-emulation). Without it roles are optional (§ 5.2: a lab).
   */
  cloudInventory: boolean;
  /**
   * The nodes are machines on the data centre's networks: chassis nodes need their bridge mappings
   * (D3), Ironic needs its BMC networks, and the nodes' addresses must fit the cluster's ranges
   * (openkeel:network). Without it the cluster's networking is its own (kind's).
   */
  physicalNetworks: boolean;
  /** The cluster lifts the control-plane taint off its control-plane nodes when it has no worker (kind). */
  untaintsLoneControlPlane: boolean;
  /** How the public APIs are reached: NodePorts the cluster publishes (kind's port mappings), or the public ingress (D8). */
  publicApis: "nodePorts" | "ingress";
  /**
   * The nodes' operating system, whose host paths and sizes node agents follow (Longhorn's data
   * path, Multus' network namespaces): Talos Linux, or kind's node image with upstream defaults.
   */
  nodeOs: "talos" | "kindest-node";
  /** The nodes have /dev/kvm; without it KubeVirt emulates, which a cloud inventory refuses. */
  hardwareVirtualization: boolean;
}
