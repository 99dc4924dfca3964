// Ironic in a namespace of its own (§ 1.4, § 2.2, § 6.3): the conductor holds BMC credentials and
// drives the provisioning network, so its namespace keeps it apart from the other services, and a
// NetworkPolicy limits where its pods may connect: the BMC networks of the stack, the OpenKeel
// services it calls (Neutron ports, Glance images, Keystone, its database and message bus: seed 004
// interactions 7 and 8), its own pods, and the cluster DNS. Nothing else.
import type { LoadedConfig } from "../config/schema";
import { manifestsUnit, type K8sObject, type ManifestsUnit } from "../plan/plan";
import type { PostRenderPatch } from "../plan/post-render";
import { namespace } from "../platform/context";
import { attachmentNetworkObjects, MULTUS_NETWORKS_ANNOTATION, multusNetworksAnnotation, type AttachmentNetworkRef } from "../platform/kube-ovn";
import { workloadObjectName } from "./zone-spread";
import { OPENKEEL_NAMESPACE } from "./names";
import { obj, type Obj } from "../placement/workloads";

export const IRONIC_NAMESPACE = "openkeel-ironic";
const EGRESS_UNIT = "openkeel-ironic-egress";
export const PROVISIONING_NETWORK_UNIT = "openkeel-ironic-provisioning-network";
/** The conductor's interface on the provisioning VLAN (its dnsmasq listens there). */
export const PROVISIONING_INTERFACE = "prov0";

/** The label Kubernetes puts on every namespace (NamespaceDefaultLabelName, GA in 1.22). */
const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

/**
 * Privileged, like `openkeel` (enforce, audit and warn): the conductor's dnsmasq needs NET_ADMIN
 * and NET_RAW, and the design's documented exception runs it on the host network (§ 2.2).
 */
export function ironicNamespace(): K8sObject {
  return namespace(IRONIC_NAMESPACE, "privileged");
}

/**
 * Egress of every pod of the namespace. Kubernetes NetworkPolicies govern the pod network only:
 * the provisioning VLAN, a Multus secondary interface (§ 2.2), and a conductor on the host network
 * are outside their reach.
 */
export function ironicEgressUnit(cfg: LoadedConfig): ManifestsUnit {
  const bmc = cfg.services.ironic?.bmcNetworks ?? [];
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
export function ironicProvisioningNetwork(cfg: LoadedConfig): AttachmentNetworkRef | undefined {
  const network = cfg.services.ironic?.provisioningNetwork;
  return network ? { name: "provisioning-net", namespace: IRONIC_NAMESPACE, subnet: "ironic-provisioning-net", network } : undefined;
}

/** The provisioning network's NetworkAttachmentDefinition and Subnet, before the conductors that attach to it. */
export function ironicProvisioningUnit(cfg: LoadedConfig): ManifestsUnit | undefined {
  const ref = ironicProvisioningNetwork(cfg);
  return ref ? manifestsUnit(PROVISIONING_NETWORK_UNIT, "openkeel:openkeel:IronicProvisioningNetwork", attachmentNetworkObjects(ref)) : undefined;
}

/**
 * The conductor's pod template attaches to the provisioning VLAN as prov0. No OpenKeel chart reads
 * pod annotations (§ 5.2 "What is implemented": the helper renders nodeSelector, tolerations and
 * priorityClassName), so the Multus annotation reaches the StatefulSet as a post-render patch. None
 * when the release renders no conductor (0 replicas, or disabled).
 */
export function conductorPostRender(cfg: LoadedConfig, release: string, values: Obj): PostRenderPatch[] {
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
