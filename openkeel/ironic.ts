// Ironic in a namespace of its own (§ 1.4, § 2.2, § 6.3): the conductor holds BMC credentials and
// drives the provisioning network, so its namespace keeps it apart from the other services, and a
// NetworkPolicy limits where its pods may connect: the BMC networks of the stack, the OpenKeel
// services it calls (Neutron ports, Glance images, Keystone, its database and message bus: seed 004
// interactions 7 and 8), its own pods, and the cluster DNS. Nothing else.
import type { LoadedConfig } from "../config/schema";
import { manifestsUnit, type K8sObject, type ManifestsUnit } from "../plan/plan";
import { namespace } from "../platform/context";
import { OPENKEEL_NAMESPACE } from "./names";

export const IRONIC_NAMESPACE = "openkeel-ironic";
const EGRESS_UNIT = "openkeel-ironic-egress";

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
