// Generated production inventories of any size, shaped like the large topology (§ 6.3): the
// benchmark's 10…5000-node stacks. Deterministic: the same size gives the same stack.
import type { Role } from "../config/roles";

export interface GeneratedStack {
  stack: string;
  /** Raw `openkeel:` config (keys without the prefix), as a stack file holds it. */
  raw: Record<string, unknown>;
}

/** Node addresses in 10.128.0.0/9: clear of Kube-OVN's pod (10.16.0.0/16) and service (10.96.0.0/12) ranges. */
const NODE_SUBNET = "10.128.0.0/9";

function ip(i: number): string {
  return `10.${128 + Math.floor(i / 65536)}.${Math.floor(i / 256) % 256}.${i % 256}`;
}

/**
 * The smallest generated stack whose every node can be lost (lifecycle/failure-domains.ts): 3
 * control-plane nodes, 2 of each of provisioning (D7: a conductor each), network, storage (Swift's
 * and Longhorn's replicas) and compute (the VMs of the one left are restarted on the other).
 */
export const MIN_GENERATED_NODES = 11;

/**
 * A production stack of `size` nodes (at least MIN_GENERATED_NODES): 3 control-plane nodes (5 from
 * 500 nodes on), 2 provisioning nodes, network nodes ~3 %, storage ~20 %, the rest compute; 3
 * zones from 30 nodes on; compute, network, storage and provisioning tainted.
 */
export function generatedProductionStack(size: number): GeneratedStack {
  if (!Number.isInteger(size) || size < MIN_GENERATED_NODES)
    throw new Error(`a generated production stack needs at least ${MIN_GENERATED_NODES} nodes, not ${size}`);
  const zones = size >= 30 ? ["zone-a", "zone-b", "zone-c"] : [];
  const controlPlane = size >= 500 ? 5 : 3;
  const provisioning = 2;
  const network = Math.max(2, Math.round(size * 0.03));
  const storage = Math.max(2, Math.round(size * 0.2));
  const compute = size - controlPlane - provisioning - network - storage;
  const nodes: Record<string, unknown>[] = [];
  const add = (prefix: string, count: number, roles: Role[], extra: Record<string, unknown> = {}) => {
    for (let i = 0; i < count; i++) {
      const n = nodes.length;
      nodes.push({
        name: `${prefix}-${String(i + 1).padStart(4, "0")}`,
        internalIP: ip(n + 10),
        roles,
        ...(zones.length ? { zone: zones[i % zones.length] } : {}),
        ...extra,
      });
    }
  };
  add("cp", controlPlane, ["controlPlane"], { kubernetesControlPlane: true, hostNetwork: "node" });
  add("prov", provisioning, ["provisioning"], { hostNetwork: "provisioning" });
  // D3: every gateway and hypervisor has the external VLANs, through its physnet bridge mappings
  const wiring = { labels: { "network.openkeel.io/external-nic": "bond1" }, bridgeMappings: "physnet1:br-ex", hostNetwork: "wired" };
  add("net", network, ["network"], wiring);
  add("sto", storage, ["storage"], { hostNetwork: "node" });
  add("cmp", compute, ["compute"], wiring);
  const bond = (name: string, first: number) => ({ name, members: [`enp${first}s0f0`, `enp${first}s0f1`], mode: "802.3ad" });
  const address = { link: "bond0", method: "dhcp" };
  return {
    stack: `generated-${size}`,
    raw: {
      environment: "talos-production",
      topology: "large",
      taints: ["compute", "network", "storage", "provisioning"],
      nodes,
      // the links every interface the cluster names lives on (the host contract: placement/host.ts)
      hostNetworks: {
        node: { bonds: [bond("bond0", 1)], nodeAddress: address },
        // the external NIC: an OVS bond the chassis builds (config/host-network.ts ovs)
        wired: { bonds: [bond("bond0", 1)], ovs: [{ ...bond("bond1", 2), mode: "balance-tcp", lacp: "active" }], nodeAddress: address },
        provisioning: { bonds: [bond("bond0", 1)], vlans: [{ parent: "bond0", id: 17 }], nodeAddress: address },
      },
      network: { nodeSubnet: NODE_SUBNET },
      // Ironic runs on the provisioning nodes; its namespace reaches the BMC networks only (§ 2.2),
      // its conductors serve the provisioning VLAN (D7)
      services: { ironic: { bmcNetworks: ["172.16.0.0/16"], provisioningNetwork: { cidr: "172.17.0.0/24", interface: "bond0.17" } } },
      cluster: { context: `admin@generated-${size}`, apiServer: "https://10.128.0.1:6443" },
      // required in production (config/talos.ts): hypervisor reservation, Longhorn disk, install
      // disk, names, time and registry mirrors
      talos: {
        watchdogModule: "ipmi_watchdog",
        installDisk: { type: "ssd", size: "<= 512GB" },
        nameservers: ["10.128.0.2"],
        timeServers: ["10.128.0.2"],
        registries: { mirrors: { "*": { endpoints: ["https://registry.generated.example.net"] } } },
        compute: { reservedSystemCPUs: "0-3", systemReserved: { memory: "10Gi" } },
        longhornDisk: { diskSelector: "disk.transport == 'nvme' && !system_disk", minSize: "1TB" },
      },
    },
  };
}
