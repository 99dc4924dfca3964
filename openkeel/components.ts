// The components of an OpenKeel service's chart, as its module declares them (./services/): each
// with its default placement (§ 2.2, § 5.1), how its replicas follow the topology, the keys of its
// own block the chart reads, whether it is a public API (and its NodePort in the lab), whether §
// 5.2 lists it, and its design row (§ 2). The values contract (./contract.ts) turns the keys into a
// strict schema: what is built and what is accepted stay together. Written once here: the builders
// the service modules share (an API, a worker, a component § 5.2 does not list, the chassis).
import { z } from "zod";
import { chassisLabelKey, RESERVED_TOLERATION, ROLES, roleLabelKey, roleToleration, type Role } from "../config/roles";
import type { StackContext } from "../platform/context";
import type { ReplicaRule } from "./context";
import type { PlacementValue } from "../config/placement";
import { CONTROL_PLANE, type DesignRoles, type WorkloadKind } from "../placement/workloads";

type ComponentKind = "Deployment" | "StatefulSet" | "DaemonSet";
/** A path inside a release's values. */
type ValuesPath = readonly string[];

/** What the design says about a component (§ 2): its roles, and where it must never be. */
export interface DesignRow {
  kind: WorkloadKind;
  roles: DesignRoles;
  /**
   * The OVN chassis: it covers too the roles a service the Plan holds makes chassis (the service's
   * `chassisRoles`).
   * @default false
   */
  chassis?: true;
  /**
   * The roles it may run on, and no other (the placement report refuses a node of another role).
   * @default none: the report checks the roles it reaches against `roles` only
   */
  confinedTo?: Role | readonly Role[];
  /**
   * Roles it must never run on.
   * @default none
   */
  forbiddenRoles?: Role[];
  /**
   * A node agent that must run on Masakari reserved hosts too (§ 5.6).
   * @default false
   */
  reservedHosts?: true;
}

/**
 * What § 2 and the decisions require of a component's pods beyond its nodes, where no chart
 * renders it (or, for the Ironic conductor, its template does): held on the objects the cluster
 * receives, after the post-render patches (./guarantees.ts).
 */
export interface PodGuarantee {
  /** The design row, as messages name it. */
  row: string;
  /** What carries it (the post-render patch and where it is built): what a fix restores. */
  source: string;
  /**
   * Required pod anti-affinity on the host over its own pods: one member per node.
   * @default false
   */
  hostApart?: true;
  /**
   * The same on the zone where the topology keeps members one per zone (§ 6.3).
   * @default false
   */
  zoneApart?: true;
  /**
   * Spread over the zones, where the stack's nodes carry several: zone anti-affinity or a zone spread constraint over its own pods.
   * @default false
   */
  zoneSpread?: true;
  /**
   * Its priority tier (`global.placementDefaults.priorityClasses.<tier>`).
   * @default none held
   */
  priority?: "infra" | "control";
  /**
   * At most this many pods evicted at once by a drain, all healthy (its PodDisruptionBudget).
   * @default none held
   */
  maxUnavailable?: number;
  /**
   * What writes that budget, where it is not what writes the rest.
   * @default `source`
   */
  budgetSource?: string;
  /**
   * The roles it must select, one nodeSelectorTerm or selector each, with their taints tolerated (a component § 5.2 does not list).
   * @default none held
   */
  roles?: readonly Role[];
}

/** A quorum member's guarantee: one per node, and one per zone where the topology keeps them so (§ 2.1, § 6.3). */
export const QUORUM_APART = { hostApart: true, zoneApart: true } as const;

/** A Deployment on the chart's default role, the control plane (§ 5.2): the design row of a component that says none. */
export const CONTROL_PLANE_DEPLOYMENT: DesignRow = { kind: "Deployment", roles: CONTROL_PLANE };

/** A public API: the lab reaches it on a fixed NodePort of 127.0.0.1 (`<component>.service`, ./endpoints.ts). */
export interface PublicApi {
  /** Its NodePort in the lab: one block of ten per service, in install order (30500 Keystone, 30510 Placement, …). */
  labNodePort: number;
}

interface ComponentBase {
  kind: ComponentKind;
  /**
   * How its replicas follow the topology. Absent for DaemonSets: one pod per node of the role.
   * @default none: no `<component>.replicas` is written
   */
  replicas?: ReplicaRule;
  /**
   * An optional component: its placement carries `enabled` (§ 5.1).
   * @default false
   */
  optional?: boolean;
  /**
   * Keys of the component's own block (`<component>.…`) besides `replicas`.
   * @default none: the values contract accepts `replicas` (and `nodeSelector`, `service` where they apply) only
   */
  settings?: Record<string, z.ZodType>;
  /**
   * A public API: the lab exposes it on its NodePort (`<component>.service`, ./endpoints.ts).
   * @default not public: no `<component>.service` is written
   */
  publicApi?: PublicApi;
  /**
   * Its row of the design (§ 2.1, § 2.2, § 5.1), written from the design, not from the placement
   * above: the placement checks hold what the release renders against it.
   * @default a Deployment on the control plane (CONTROL_PLANE_DEPLOYMENT)
   */
  design?: DesignRow;
  /**
   * A quorum of the OpenKeel control plane (OVN central's RAFT): as the feasibility model and the
   * failure domains name it, and what losing its majority costs (./feasibility.ts).
   * @default none: not a quorum
   */
  quorum?: { what: string; costs: string };
  /**
   * What § 2 requires of its pods that no chart renders, held after the post-render patches (./guarantees.ts).
   * @default none beyond its design row (and, § 5.2 not listing it, its roles and tier)
   */
  guarantee?: PodGuarantee;
  /**
   * A volume of its own that replicates its own data (D5: OVN central's RAFT, Swift's devices): its
   * `storageClassName` in the release's values must be the environment's strict-local class (./storage.ts).
   * @default none
   */
  strictLocalVolume?: { what: string; path: readonly string[] };
  /**
   * What the cloud loses with no pod of it: the end of the error for a count of 0 (./replicas.ts).
   * @default by what it is: an API leaves the cloud, a quorum keeps no member, another does none of its work
   */
  withoutIt?: string;
  /**
   * Its own judgement of a count above 0 (`needed`: what the topology gives it), in place of the
   * design's (./replicas.ts): what its own data needs of its members (Swift's replicas of an object).
   * @default the design's: an API's PodDisruptionBudget, a worker's standby, a quorum's odd count
   */
  replicaCheck?: (replicas: number, needed: number) => { message: string; fix: string } | undefined;
}

/**
 * A component § 5.2 "What is implemented" does not list: its chart reads no placement for it, and
 * its placement reaches the pod template as a post-render patch (./unlisted.ts). `priority`: the
 * tier its template would pass the helper (`global.placementDefaults.priorityClasses.<tier>`, §
 * 2: openkeel-control), `none` for a node agent. The policy pack judges the patch (the release's
 * post-render record), never a placement value: none stays in the values.
 */
export interface Unlisted {
  priority: "control" | "none";
  /**
   * An optional component: rendered by `<component>.enabled` (the switch its chart reads), and
   * without it by the chart's default (the metadata agent on, D4; ovn-bgp-agent off, § 5.1).
   * @default always rendered
   */
  switch?: "on" | "off";
}

export const UNLISTED: Unlisted = { priority: "control" };

/** Placed by the chart helper from `placement.<component>` (§ 5.1, § 5.2). */
export interface HelperPlaced extends ComponentBase {
  placement(ctx: StackContext): PlacementValue;
  /**
   * § 5.2's table does not list it (Neutron's worker and agents, Nova's scheduler, Swift, Heat,
   * Designate, Manila, EC2 API, Zun).
   * @default listed: the chart helper places it from `placement.<component>`
   */
  unlisted?: Unlisted;
  /**
   * A nodeSelector the chart reads besides the helper's, which wins over it when not empty (§ 5.2
   * "What is implemented": Neutron's `ovnCentral.nodeSelector`, Masakari's
   * `nodePlacement.<x>.nodeSelector`). The release writes the one the placement renders, so that
   * the chart's own default never decides.
   * @default none: the helper's nodeSelector alone
   */
  winningNodeSelector?: ValuesPath;
  /**
   * Tolerations the chart reads besides the helper's and adds to them (Masakari's `nodePlacement.<x>.tolerations`).
   * @default none: the helper's tolerations only
   */
  addedTolerations?: ValuesPath;
  /**
   * Its template renders the required host anti-affinity itself, whatever the values say (§ 5.2:
   * the Ironic conductor StatefulSet, "with required anti-affinity on the host"): no patch writes it.
   * @default false: only a post-render patch gives it one (./zone-spread.ts)
   */
  templateHostAntiAffinity?: true;
}

/**
 * Not placed by the chart helper: the chart reads `<component>.nodeSelector` only and tolerates
 * every taint (§ 5.2 "What is implemented": the OVN chassis, and the VPNaaS agent that follows it),
 * so it runs on every node its selector admits.
 */
interface SelfPlaced extends ComponentBase {
  kind: "DaemonSet";
  /** The `<component>.nodeSelector` the release writes, or none (a lab whose nodes carry no role). */
  nodeSelector(ctx: StackContext): Record<string, string> | undefined;
}

export type ComponentSpec = HelperPlaced | SelfPlaced;

export function isSelfPlaced(c: ComponentSpec): c is SelfPlaced {
  return !("placement" in c);
}

/** The components `openkeel:autoscaling` scales (§ 6.3, ./autoscaling.ts): the public APIs. */
export function isAutoscaled(c: ComponentSpec): boolean {
  return c.publicApi !== undefined && c.kind === "Deployment";
}

/** A component's design row (§ 2). */
export function designOf(c: ComponentSpec): DesignRow {
  return c.design ?? CONTROL_PLANE_DEPLOYMENT;
}

/** A secret is always a generated one: a literal in a stack file would end up in git. */
export const secretRefSchema = z.strictObject(
  { secretRef: z.string().min(1) },
  {
    error: "must be a generated secret, never a literal (stack files are committed). Fix: leave the key to this repository, which passes a Pulumi secret",
  },
);

const QUANTITY = /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;

/** A volume claim's class (D5: the environment's strict-local class for replicated members) and optional size. */
export const volumeSchema = z.strictObject({
  storageClassName: z.string().min(1),
  size: z.string().regex(QUANTITY, { message: "is not a Kubernetes quantity. Fix: write a size such as 20Gi" }).optional(),
});

/** Placed on a role (with more fields of the placement value). */
export const on =
  (role: Role, extra: Partial<PlacementValue> = {}) =>
  (): PlacementValue => ({ role, ...extra });

/**
 * Tolerations of the other tainted roles that the role's nodes also carry: Swift storage on the
 * compute+storage nodes of the medium topology (§ 6.2, compute tainted) must tolerate compute, or
 * it has no node at all (found by the placement report, issue 7).
 */
export function sharedNodeTolerations(role: Role, ctx: StackContext) {
  return ROLES.filter((r) => r !== role && ctx.topo.taintedRoles.includes(r) && ctx.topo.nodesByRole[role].some((n) => n.roles.includes(r))).map(
    roleToleration,
  );
}

/**
 * What a node agent of a hypervisor tolerates beside its role: Masakari's reserved hosts (§ 5.6),
 * and the taints of a disabled or draining node (StackContext.agentTolerations: the compute agent
 * must land on a disabled host to lift its taint, § 4.1).
 */
export const nodeAgentExtraTolerations = (ctx: StackContext) => [RESERVED_TOLERATION, ...ctx.agentTolerations];

/** An API Deployment on the control plane (3 replicas where there are 3 nodes, § 2.2), public: its NodePort in the lab. */
export const api = (labNodePort: number, replicas = 3): HelperPlaced => ({
  kind: "Deployment",
  placement: on("controlPlane"),
  replicas: { fixed: replicas },
  publicApi: { labNodePort },
});
/** A worker, conductor or scheduler on the control plane (2 replicas, maxUnavailable 1, § 2.2). */
export const worker = (replicas = 2): HelperPlaced => ({ kind: "Deployment", placement: on("controlPlane"), replicas: { fixed: replicas } });
/** A control-plane component § 5.2 does not list (its placement is a post-render patch, ./unlisted.ts). */
export const unlisted = (c: HelperPlaced): HelperPlaced => ({ ...c, unlisted: UNLISTED });

/**
 * The OVN chassis' nodes: those the node-roles phase labels with the chassis label (./node-metadata.ts).
 * Without role labels (a lab whose nodes carry none) there is nothing to select: every node.
 */
export function chassisSelector(ctx: StackContext): Record<string, string> | undefined {
  return ctx.rolesPassed ? { [chassisLabelKey(ctx.topo.profile)]: "" } : undefined;
}

/**
 * The design row of the OVN chassis (§ 1.2, § 3.1 mode B): on compute and network nodes, and on
 * the nodes a service makes chassis while it runs (its `chassisRoles`: containers nodes, § 2.2); it
 * tolerates every taint, so nothing but its selector keeps it elsewhere.
 */
export const CHASSIS: DesignRow = {
  kind: "DaemonSet",
  roles: ["compute", "network"],
  chassis: true,
  confinedTo: ["compute", "network", "containers"],
  reservedHosts: true,
};

/** The compute label of the stack's profile, when the releases get role labels (§ 5.2). */
export function computeLabel(ctx: StackContext): string | undefined {
  return ctx.rolesPassed ? roleLabelKey("compute", ctx.topo.profile) : undefined;
}
