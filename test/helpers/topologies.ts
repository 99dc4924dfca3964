// fast-check arbitraries of whole stack configs (raw `openkeel:` maps, as a stack file holds them):
// both environments, 1 to 2000 nodes, random roles, zones, taints, labels and toggles, with a few
// deliberate mistakes mixed in. Mostly plausible, so that most of them plan and render and the
// properties say something about renders, not only about error messages.
import fc from "fast-check";
import { OPENKEEL_SERVICES } from "../../openkeel/services";
import { kindNodeNames } from "../../nodes/kind";
import { ROLES, type Role } from "../../config/roles";

/** The fixed seed of CI runs; OPENKEEL_FC_SEED and OPENKEEL_FC_RUNS override it to explore. */
export const PROPERTY_SEED = Number(process.env.OPENKEEL_FC_SEED ?? 20260509);
export function runs(ci: number): number {
  const scale = Number(process.env.OPENKEEL_FC_RUNS_SCALE ?? 1);
  return Math.max(1, Math.round(ci * scale));
}

/** Role sets real inventories use (§ 6), beside fully random ones. */
const ROLE_SHAPES: Role[][] = [
  ["controlPlane"],
  ["compute"],
  ["network"],
  ["storage"],
  ["compute", "storage"],
  ["controlPlane", "storage"],
  ["controlPlane", "compute", "network", "storage", "containers"],
  ["provisioning"],
  ["containers"],
  ["network", "compute"],
];

const roleSet = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...ROLE_SHAPES) }, { weight: 1, arbitrary: fc.subarray([...ROLES]) });

const ZONES = ["zone-a", "zone-b", "zone-c"];

function ip(i: number): string {
  return `10.${Math.floor(i / 65536) % 256}.${Math.floor(i / 256) % 256}.${i % 256}`;
}

const TALOS = {
  watchdogModule: "i6300esb",
  compute: { reservedSystemCPUs: "0-1", systemReserved: { memory: "4Gi" } },
  longhornDisk: { diskSelector: "!system_disk", minSize: "100GB" },
  // a boot disk too small for Longhorn's minSize, and the site's names, time and mirrors
  installDisk: { type: "ssd", size: "<= 64GB" },
  nameservers: ["10.0.0.2"],
  timeServers: ["10.0.0.2"],
  registries: { mirrors: { "*": { endpoints: ["https://registry.generated.example.net"] } } },
};

/** Every generated production node's links: what the external NIC and the provisioning VLAN name (the host contract). */
const HOST_NETWORK = {
  bonds: [{ name: "bond0", members: ["enp1s0f0", "enp1s0f1"], mode: "802.3ad" }],
  vlans: [{ parent: "bond0", id: 17 }],
  // the external NIC: an OVS bond, never a Talos link
  ovs: [{ name: "bond1", members: ["enp2s0f0", "enp2s0f1"], mode: "balance-tcp", lacp: "active" }],
  nodeAddress: { link: "bond0", method: "dhcp" },
};

export interface GeneratedRaw {
  raw: Record<string, unknown>;
  nodes: number;
}

/** A stack of `min`..`max` nodes. */
export function stackArbitrary(min: number, max: number): fc.Arbitrary<GeneratedRaw> {
  return fc
    .record({
      production: fc.boolean(),
      size: fc.integer({ min, max }),
      // three controlPlane (and Kubernetes control-plane) nodes first, most of the time
      baseControlPlane: fc.constantFrom(0, 1, 3, 3, 3, 3, 5),
      zones: fc.constantFrom(0, 1, 3, 3),
      shapes: fc.array(roleSet, { minLength: 1, maxLength: 16 }),
      // the design's choices mostly (§ 1.4, § 6), any set of roles sometimes
      taints: fc.oneof(
        { weight: 3, arbitrary: fc.constant(false) },
        { weight: 3, arbitrary: fc.constantFrom<Role[]>(["compute", "network", "provisioning"], ["compute", "network", "storage", "provisioning"]) },
        { weight: 1, arbitrary: fc.constant(true) },
        { weight: 2, arbitrary: fc.subarray([...ROLES]) },
      ),
      bgp: fc.boolean(),
      services: fc.dictionary(fc.constantFrom(...OPENKEEL_SERVICES.map((s) => s.name)), fc.boolean(), { maxKeys: 4 }),
      conductors: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
      volumeReplicas: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) }),
      realBackends: fc.boolean(),
      externalNic: fc.boolean(),
      // mistakes, each rare
      mistake: fc.constantFrom("none", "none", "none", "none", "none", "none", "dropIP", "dupName", "dropZone", "noTalos", "kindName"),
      mistakeAt: fc.nat(),
    })
    .map((g) => {
      const size = g.size;
      const nodes: Record<string, unknown>[] = [];
      for (let i = 0; i < size; i++) {
        // a kind lab has one control-plane node (kind taints more of them with the upstream taint)
        const inBase = i < (g.production ? g.baseControlPlane : Math.min(1, g.baseControlPlane));
        // a kind node has no Kata runtime and no /dev/kvm (the host contract refuses Zun's containers there)
        const shape = g.production ? g.shapes[i % g.shapes.length] : g.shapes[i % g.shapes.length].filter((r) => r !== "containers");
        const roles = inBase ? (["controlPlane"] as Role[]) : shape;
        const node: Record<string, unknown> = {
          name: `node-${i + 1}`,
          roles: [...roles],
          ...(inBase || (size === 1 && !g.production) ? { kubernetesControlPlane: true } : {}),
          ...(g.zones > 0 ? { zone: ZONES[i % g.zones] } : {}),
          ...(g.production ? { internalIP: ip(i + 10), hostNetwork: "node" } : {}),
          // the external NIC of its host network (a kind node has Docker's eth0 only, which a chassis must not take)
          ...(g.production && g.externalNic && (roles.includes("network") || roles.includes("compute"))
            ? { labels: { "network.openkeel.io/external-nic": "bond1" } }
            : {}),
          // D3: production hypervisors and gateways carry their physnet bridge mappings
          ...(g.production && (roles.includes("network") || roles.includes("compute")) ? { bridgeMappings: "physnet1:br-ex" } : {}),
        };
        nodes.push(node);
      }
      if (!g.production) {
        // kind's own node names, so that the lab checks pass unless the mistake is the name
        const names = kindNodeNames(
          "openkeel-lab",
          nodes.map((n) => ({ kubernetesControlPlane: n.kubernetesControlPlane === true }) as never),
        );
        nodes.forEach((n, i) => (n.name = names[i]));
      }
      const at = g.mistakeAt % size;
      if (g.mistake === "dropIP" && g.production) delete nodes[at].internalIP;
      if (g.mistake === "dupName" && size > 1) nodes[at].name = nodes[(at + 1) % size].name;
      if (g.mistake === "dropZone") delete nodes[at].zone;
      if (g.mistake === "kindName" && !g.production) nodes[at].name = `lab-${at}`;
      const services: Record<string, unknown> = Object.fromEntries(Object.entries(g.services).map(([s, on]) => [s, { enabled: on }]));
      if (g.conductors !== undefined) services.ironic = { ...(services.ironic as object), replicas: { conductor: g.conductors } };
      // production Ironic reaches its BMC networks only (§ 2.2) and serves its provisioning VLAN (D7): named wherever it runs
      const ironic = g.services.ironic ?? nodes.some((n) => (n.roles as Role[]).includes("provisioning"));
      if (g.production && ironic)
        services.ironic = {
          ...(services.ironic as object),
          bmcNetworks: ["172.16.0.0/16"],
          provisioningNetwork: { cidr: "172.17.0.0/24", interface: "bond0.17" },
        };
      const platform: Record<string, unknown> = {};
      if (!g.production && g.realBackends) platform.realBackends = true;
      if (g.volumeReplicas !== undefined) platform.longhorn = { volumeReplicas: g.volumeReplicas };
      const raw: Record<string, unknown> = {
        environment: g.production ? "talos-production" : "kind-lab",
        topology: g.production ? (size >= 30 ? "large" : size >= 6 ? "medium" : "small") : "lab",
        taints: g.taints,
        bgp: g.bgp,
        nodes,
        ...(Object.keys(services).length ? { services } : {}),
        ...(Object.keys(platform).length ? { platform } : {}),
        ...(g.production && g.mistake !== "noTalos" ? { talos: TALOS } : {}),
        ...(g.production ? { hostNetworks: { node: HOST_NETWORK } } : {}),
        ...(g.production ? { cluster: { context: "admin@generated", apiServer: "https://10.0.0.1:6443" } } : {}),
      };
      return { raw, nodes: size };
    });
}
