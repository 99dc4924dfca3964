// Node roles and their label/taint keys (design § 1.1, § 1.2, § 5.1; decision D1).

export const ROLES = ["controlPlane", "compute", "network", "storage", "containers", "provisioning"] as const;
export type Role = (typeof ROLES)[number];

/** `default` keys are for labs; `hardened` keys are the only ones allowed in production (D1). */
export const LABEL_PROFILES = ["default", "hardened"] as const;
export type LabelProfile = (typeof LABEL_PROFILES)[number];

export const DEFAULT_ROLE_PREFIX = "node-role.openkeel.io/";
export const HARDENED_ROLE_PREFIX = "node-restriction.kubernetes.io/openkeel-";

/** Upstream marker of Kubernetes control-plane nodes; not an OpenKeel role (§ 1.2). */
export const K8S_CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane";
export const ZONE_LABEL = "topology.kubernetes.io/zone";
export const HOSTNAME_LABEL = "kubernetes.io/hostname";

/** Where the public ingress runs, and so where its VIP is announced from (D8). */
export const INGRESS_ROLES: readonly Role[] = ["controlPlane", "network"];

/** Label Masakari puts on the hosts of a failover segment (§ 1.1); those nodes are its NodeHealthChecks' to heal (§ 5.6). */
export const HA_SEGMENT_LABEL = "openkeel.io/ha-segment";

/** Taint of Masakari reserved hosts (§ 5.6): only the compute DaemonSets tolerate it. */
export const RESERVED_TAINT_KEY = "openkeel.io/reserved";

/** `controlPlane` → `control-plane`: the spelling of label and taint keys. */
export function roleSlug(role: Role): string {
  return role.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

export function roleLabelKey(role: Role, profile: LabelProfile): string {
  return (profile === "hardened" ? HARDENED_ROLE_PREFIX : DEFAULT_ROLE_PREFIX) + roleSlug(role);
}

export interface Taint {
  key: string;
  value?: string | undefined;
  effect: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
}

/** As the API reads it: an absent field and an undefined one are the same. */
export interface Toleration {
  key?: string | undefined;
  operator?: "Exists" | "Equal" | undefined;
  value?: string | undefined;
  effect?: "NoSchedule" | "PreferNoSchedule" | "NoExecute" | undefined;
  tolerationSeconds?: number | undefined;
}

/**
 * The taint key stays `node-role.openkeel.io/<role>` in every profile: NodeRestriction
 * restricts labels, not taints (§ 5.2).
 */
export function roleTaint(role: Role): Taint {
  return { key: DEFAULT_ROLE_PREFIX + roleSlug(role), effect: "NoSchedule" };
}

export function roleToleration(role: Role): Toleration {
  const taint = roleTaint(role);
  return { key: taint.key, operator: "Exists", effect: taint.effect };
}

/** Masakari reserved hosts (§ 5.6): the toleration of the node agents that must run there. */
export const RESERVED_TOLERATION: Toleration = { key: RESERVED_TAINT_KEY, operator: "Exists", effect: "NoSchedule" };

/**
 * The Node annotation of a chassis' physnet bridge mappings (`physnet1:br-ex[,…]`, § 3.2, D3). The
 * design names it as a label, but `:` is no label character, so it is an annotation, written by the
 * node-roles phase from the inventory's `bridgeMappings`.
 */
export const BRIDGE_MAPPINGS_ANNOTATION = "network.openkeel.io/bridge-mappings";
/**
 * The OVS bond the chassis builds as the node's external NIC (§ 3.2; the external-nic label names
 * it): JSON {name, interfaces, bond_mode, lacp, mtu_request}, keyed as OVS's own Port and
 * Interface columns, on the nodes whose external NIC is a bond OVS owns (openkeel:hostNetworks.*.ovs).
 */
export const EXTERNAL_BOND_ANNOTATION = "network.openkeel.io/external-bond";
/** § 3.2: the host NIC the OVN chassis adds to its physnet bridge (br-ex), set by the administrator. */
export const EXTERNAL_NIC_LABEL = "network.openkeel.io/external-nic";

/** The taint Masakari puts on a reserved host (§ 5.6: `openkeel.io/reserved=true:NoSchedule`). */
export const RESERVED_TAINT: Taint = { key: RESERVED_TAINT_KEY, value: "true", effect: "NoSchedule" };

/**
 * The label of the nodes that run the OpenKeel OVN chassis. The chassis DaemonSet is not placed by
 * role: it reads `chassis.nodeSelector` and tolerates every taint (§ 5.2 "What is implemented"), and
 * a nodeSelector is an AND of labels, so "compute OR network (OR containers)" needs a label of its
 * own, which the node-roles phase writes from the roles. Hardened in production like the role labels
 * (D1): the chassis is privileged and holds the OVN southbound credentials, so a kubelet must not be
 * able to attract it by labelling itself.
 */
export function chassisLabelKey(profile: LabelProfile): string {
  return profile === "hardened" ? `${HARDENED_ROLE_PREFIX}ovn-chassis` : "openkeel.io/ovn-chassis";
}

/** A role as `global.nodeRoles.roles.<role>` defines it (§ 5.1): its label key and its taint. */
export interface RoleDefinition {
  label: string;
  taint: Taint;
}

/** Every role's definition in a label profile: what the node-roles phase applies and the charts read. */
export function roleDefinitions(profile: LabelProfile): Record<Role, RoleDefinition> {
  return Object.fromEntries(ROLES.map((r) => [r, { label: roleLabelKey(r, profile), taint: roleTaint(r) }])) as Record<Role, RoleDefinition>;
}

/** The role whose label key this is, in either profile, or undefined. */
export function roleOfLabelKey(key: string): { role: Role; profile: LabelProfile } | undefined {
  for (const profile of LABEL_PROFILES) {
    for (const role of ROLES) {
      if (roleLabelKey(role, profile) === key) return { role, profile };
    }
  }
  return undefined;
}
