// Ironic: bare metal (§ 1.4, § 2.2, § 6.3, D7). Its API on the control plane, its conductors one
// per provisioning node, on the provisioning VLAN through Multus. In a namespace of its own: the
// conductor holds BMC credentials and drives the provisioning network, so its namespace keeps it
// apart from the other services, and a NetworkPolicy limits where its pods may connect: the BMC
// networks of the stack, the OpenKeel services it calls (Neutron ports, Glance images, Keystone,
// its database and message bus: seed 004 interactions 7 and 8), its own pods, and the cluster DNS.
// Nothing else. Its own keys of `openkeel:services.ironic`: the BMC networks and the provisioning
// VLAN, which its plan checks hold to whether it runs; its conductors' count, to its provisioning nodes.
import { z } from "zod";
import { attachmentNetworkSchema, networkCidrSchema } from "../../config/network";
import type { Check } from "../../config/problems";
import type { Config, LoadedConfig } from "../../config/schema";
import { addFirst, concerned, downList, nodeList, ofTotal, type NodeConstraint } from "../../lifecycle/feasibility";
import type { ComponentHostNeeds } from "../../plan/host";
import { manifestsUnit, type K8sObject, type ManifestsUnit } from "../../plan/plan";
import type { PostRenderPatch } from "../../plan/post-render";
import { num, obj, type Obj } from "../../placement/workloads";
import type { StackContext } from "../../platform/context";
import { attachmentNetworkObjects, MULTUS_NETWORKS_ANNOTATION, multusNetworksAnnotation, type AttachmentNetworkRef } from "../../platform/kube-ovn";
import type { Topology } from "../../topology/topology";
import { serviceEnabled } from "../../topology/services";
import { api, on } from "../components";
import { OPENKEEL_NAMESPACE, releaseName, workloadObjectName } from "../names";
import { openkeelService, releaseValues } from "../service";

const IRONIC = "ironic";

/** Its own keys of `openkeel:services.ironic`. */
const STACK_KEYS = {
  /** § 2.2 ("own namespace, egress only to the BMC network"): the BMC networks its conductors may reach, for its NetworkPolicy. */
  bmcNetworks: z.array(networkCidrSchema).min(1).optional(),
  /** § 1.4, § 2.2 (D7): the provisioning VLAN the conductors attach to (PXE, DHCP, TFTP of the machines). */
  provisioningNetwork: attachmentNetworkSchema.optional(),
};

/** Ironic's own keys of a stack, as the loader read them (with STACK_KEYS, which its descriptor declares). */
function ironicKeys(cfg: Pick<Config, "services">): Partial<z.infer<z.ZodObject<typeof STACK_KEYS>>> {
  return (cfg.services[IRONIC] ?? {}) as Partial<z.infer<z.ZodObject<typeof STACK_KEYS>>>;
}

const IRONIC_NAMESPACE = "openkeel-ironic";
const EGRESS_UNIT = "openkeel-ironic-egress";
const PROVISIONING_NETWORK_UNIT = "openkeel-ironic-provisioning-network";
/** The conductor's interface on the provisioning VLAN (its dnsmasq listens there). */
const PROVISIONING_INTERFACE = "prov0";

/** The label Kubernetes puts on every namespace (NamespaceDefaultLabelName, GA in 1.22). */
const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

/**
 * Egress of every pod of the namespace. Kubernetes NetworkPolicies govern the pod network only:
 * the provisioning VLAN, a Multus secondary interface (§ 2.2), and a conductor on the host network
 * are outside their reach.
 */
function egressUnit(cfg: LoadedConfig): ManifestsUnit {
  const bmc = ironicKeys(cfg).bmcNetworks ?? [];
  const policy: K8sObject = {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: "ironic-egress", namespace: IRONIC_NAMESPACE },
    spec: {
      podSelector: {},
      policyTypes: ["Egress"],
      egress: [
        // IPMI, Redfish and virtual media: every port of the BMC networks
        ...(bmc.length > 0 ? [{ to: bmc.map((cidr) => ({ ipBlock: { cidr } })) }] : []),
        // the OpenKeel services, Galera and RabbitMQ; and the API and conductors among themselves
        { to: [{ namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: OPENKEEL_NAMESPACE } } }, { podSelector: {} }] },
        {
          to: [{ namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }],
          ports: [
            { protocol: "UDP", port: 53 },
            { protocol: "TCP", port: 53 },
          ],
        },
      ],
    },
  };
  return manifestsUnit(EGRESS_UNIT, "openkeel:openkeel:IronicEgress", [policy]);
}

/** § 1.4, § 2.2 (D7): the provisioning VLAN's attachment, in Ironic's namespace. */
function ironicProvisioningNetwork(cfg: LoadedConfig): AttachmentNetworkRef | undefined {
  const network = ironicKeys(cfg).provisioningNetwork;
  return network ? { name: "provisioning-net", namespace: IRONIC_NAMESPACE, subnet: "ironic-provisioning-net", network } : undefined;
}

/** The provisioning network's NetworkAttachmentDefinition and Subnet, before the conductors that attach to it. */
function provisioningUnit(cfg: LoadedConfig): ManifestsUnit | undefined {
  const ref = ironicProvisioningNetwork(cfg);
  return ref ? manifestsUnit(PROVISIONING_NETWORK_UNIT, "openkeel:openkeel:IronicProvisioningNetwork", attachmentNetworkObjects(ref)) : undefined;
}

/**
 * The conductor's pod template attaches to the provisioning VLAN as prov0. No OpenKeel chart reads
 * pod annotations (§ 5.2 "What is implemented": the helper renders nodeSelector, tolerations and
 * priorityClassName), so the Multus annotation reaches the StatefulSet as a post-render patch. None
 * when the release renders no conductor (0 replicas, or disabled).
 */
function conductorPostRender(cfg: LoadedConfig, release: string, values: Obj): PostRenderPatch[] {
  const ref = ironicProvisioningNetwork(cfg);
  const conductor = obj(values.conductor);
  const rendered = String(obj(obj(values.placement).conductor).enabled) !== "false" && String(conductor.enabled) !== "false";
  if (!ref || !rendered || conductor.replicas === 0) return [];
  return [
    {
      target: { kind: "StatefulSet", name: workloadObjectName(release, "conductor") },
      why: "§ 2.2: the conductor on the provisioning VLAN through Multus (D7); the chart reads no pod annotations (§ 5.2)",
      patch: {
        spec: { template: { metadata: { annotations: { [MULTUS_NETWORKS_ANNOTATION]: multusNetworksAnnotation([{ ref, iface: PROVISIONING_INTERFACE }]) } } } },
      },
    },
  ];
}

/** § 2.2 (D7): the conductor's provisioning VLAN, through its Multus interface. */
function ironicNeeds(ctx: StackContext): ComponentHostNeeds[] {
  const ref = ironicProvisioningNetwork(ctx.cfg);
  if (!ref) return [];
  return [
    {
      component: `${releaseName(IRONIC)}/conductor`,
      needs: [
        {
          attachment: { namespace: ref.namespace, name: ref.name },
          configPath: "openkeel:services.ironic.provisioningNetwork",
          why: "§ 2.2 (D7): the conductor's dnsmasq serves PXE on the provisioning VLAN through its Multus interface",
        },
      ],
    },
  ];
}

/** An Ironic network key (`openkeel:services.ironic.<key>`): what it is for, and its example. */
interface IronicNetworkKey {
  key: "bmcNetworks" | "provisioningNetwork";
  check: string;
  /** why Ironic on machines cannot do without it */
  missing: string;
  /** what nothing does with it when Ironic does not run */
  unused: string;
  example: string;
}

const IRONIC_NETWORK_KEYS: readonly IronicNetworkKey[] = [
  {
    // § 2.2: the conductor's namespace lets it reach the BMC network only; where the nodes are
    // machines that network must be named, or the conductors could reach no BMC at all
    key: "bmcNetworks",
    check: "ironic-bmc-networks",
    missing: "its namespace lets the conductors reach the BMC networks only, so they could manage no node",
    unused: "nothing reads it",
    example: "to the CIDRs of the BMC networks, e.g. [10.50.0.0/24]",
  },
  {
    // § 1.4, § 2.2 (D7): the conductor serves DHCP, PXE and TFTP on the provisioning VLAN
    key: "provisioningNetwork",
    check: "ironic-provisioning-network",
    missing: "its conductors would have no interface on the provisioning VLAN, so no machine could boot from them (PXE, DHCP, TFTP)",
    unused: "no pod attaches to it",
    example: "to the VLAN's range and the provisioning nodes' NIC on it, e.g. {cidr: 10.50.0.0/24, interface: bond0.50}",
  },
];

/** The conductors' count: the stack's, else two (a conductor left when one's node is down: its constraint below). */
function conductorReplicas(cfg: Pick<Config, "services">): number {
  return cfg.services[IRONIC]?.replicas.conductor ?? DEFAULT_CONDUCTORS;
}
const DEFAULT_CONDUCTORS = 2;

/** Its plan checks: its BMC and provisioning networks set exactly when it runs, and a provisioning node per conductor (D7). */
function ironicPlanChecks(cfg: Config, topo: Topology): Check[] {
  const checks: Check[] = [];
  const error = (code: string, message: string, fix: string, path: string) => checks.push({ level: "error", code, message, fix, path });
  const provisioning = topo.nodesByRole.provisioning.length;
  const runs = serviceEnabled(cfg, topo, IRONIC);
  for (const k of IRONIC_NETWORK_KEYS) {
    const path = `openkeel:services.ironic.${k.key}`;
    const set = ironicKeys(cfg)[k.key] !== undefined;
    if (runs && !set && topo.environment.physicalNetworks) {
      error(k.check, `Ironic runs, but ${path} is not set: ${k.missing}`, `set ${path} ${k.example}`, path);
    } else if (!runs && set) {
      error(
        k.check,
        `${path} is set, but Ironic does not run in this stack, so ${k.unused}`,
        "remove it, or run Ironic (provisioning nodes, or openkeel:services.ironic.enabled: true)",
        path,
      );
    }
  }

  const replicas = conductorReplicas(cfg);
  if (runs && provisioning > 0 && replicas > provisioning) {
    error(
      "ironic-conductors",
      `${replicas} Ironic conductor replicas but ${provisioning} provisioning node(s): each conductor needs its own provisioning node (D7, required anti-affinity)`,
      `label more nodes with the provisioning role, or set openkeel:services.ironic.replicas.conductor to ${provisioning}`,
      "openkeel:services.ironic.replicas.conductor",
    );
  }
  return checks;
}

/** The conductors, one per provisioning node (D7): each manages its share of the bare-metal nodes. */
const CONDUCTORS: NodeConstraint = {
  key: "ironic",
  facts: (plan) => {
    const conductors = num(obj(releaseValues(plan, releaseName(IRONIC))?.conductor).replicas);
    return conductors === undefined ? undefined : { conductors };
  },
  loss(loss, facts) {
    const all = loss.all("provisioning");
    const up = loss.up("provisioning");
    if (typeof facts?.conductors !== "number" || up.length === all.length) return [];
    const left = `${ofTotal(up.length, all.length)} provisioning node(s) left for ${facts.conductors} conductor(s)`;
    if (up.length > 0) return [{ what: "Ironic", level: "holds", message: `${left}: the conductors left take over the bare-metal nodes (Ironic's hash ring)` }];
    return [
      {
        what: "Ironic",
        level: "degraded",
        message: `${left}: bare-metal deployments and power actions wait until one is back; running bare-metal servers are untouched`,
        fix: "a second provisioning node (one pair per provisioning network, § 6.3)",
      },
    ];
  },
  judge(inv, facts) {
    const conductors = facts?.conductors;
    const down = inv.down("provisioning");
    if (typeof conductors !== "number" || !concerned(inv, down)) return [];
    const leaving = inv.leaving("provisioning");
    const staying = inv.staying("provisioning");
    if (leaving.length > 0 && staying.length < conductors) {
      return [
        {
          level: "error",
          code: "ironic-conductors",
          message: `${inv.judging === "removal" ? "removing" : "retiring"} ${nodeList(leaving)} leaves ${staying.length} provisioning node(s) for the ${conductors} Ironic conductor(s), one per node (D7, required anti-affinity)`,
          fix: `${addFirst("a provisioning node", leaving)}; or lower openkeel:services.ironic.replicas.conductor`,
          path: inv.path(leaving),
        },
      ];
    }
    const up = inv.up("provisioning");
    if (up.length >= conductors) return [];
    return [
      {
        level: "warning",
        code: "ironic-conductors",
        message: `${downList(down)} would leave ${up.length} provisioning node(s) up for the ${conductors} Ironic conductor(s): a conductor evicted there cannot start elsewhere (one per node, D7), and the bare-metal nodes it manages wait for it`,
        fix: "take one provisioning node at a time, and only while no bare-metal deployment runs; a second provisioning node keeps a conductor up",
        path: inv.path(down),
      },
    ];
  },
};

export const ironic = openkeelService({
  name: IRONIC,
  chart: "openkeel-ironic",
  components: {
    api: api(30640),
    conductor: {
      kind: "StatefulSet",
      placement: on("provisioning", { antiAffinity: "required" }),
      // the stack's count, which its plan checks hold to the provisioning nodes
      replicas: { own: (ctx) => conductorReplicas(ctx.cfg) },
      templateHostAntiAffinity: true,
      design: { kind: "StatefulSet", roles: ["provisioning"], confinedTo: "provisioning" },
      guarantee: { row: "§ 2.2 Ironic conductor (D7)", source: "the host term its chart's template renders (§ 5.2)", hostApart: true },
    },
  },
  requiredRole: "provisioning",
  stackKeys: STACK_KEYS,
  attachmentNetworks: [{ key: "provisioningNetwork", what: "Ironic's provisioning network" }],
  planChecks: ironicPlanChecks,
  // privileged, like `openkeel` (enforce, audit and warn): the conductor's dnsmasq needs NET_ADMIN
  // and NET_RAW, and the design's documented exception runs it on the host network (§ 2.2)
  namespace: { name: IRONIC_NAMESPACE, podSecurity: "privileged" },
  apiJob: true,
  postRender: (ctx, release, values) => conductorPostRender(ctx.cfg, release, values),
  // its egress policy before any of its pods (§ 2.2), and the provisioning VLAN before the conductors
  infrastructureUnits: (ctx) => {
    const provisioning = provisioningUnit(ctx.cfg);
    return [egressUnit(ctx.cfg), ...(provisioning ? [provisioning] : [])];
  },
  host: ironicNeeds,
  constraints: [CONDUCTORS],
  holds: [{ role: "provisioning", what: "an Ironic conductor" }],
  concern: "bare metal",
  docs: {
    components:
      "`api` (controlPlane); `conductor` (provisioning, required anti-affinity, D7; its Multus annotation `k8s.v1.cni.cncf.io/networks`, `prov0` on the provisioning network, is a post-render patch, `postrender/openkeel-ironic.yaml`: no chart reads pod annotations)",
    values: "`conductor.replicas` = `openkeel:services.ironic.replicas.conductor` (default 2, at most one per provisioning node)",
  },
});
