// One entry per OpenKeel service release: its components with their default placement (§ 2.2,
// § 5.1), how their replicas follow the topology, and the values that carry the decisions (D2, D3,
// D4, D5, D6, D7). Each entry also declares the keys it emits, which the values contract
// (contract.ts) turns into a strict schema: what is built here and what is accepted stay together.
import { z } from "zod";
import type { ServiceName } from "../config/schema";
import { secretRef } from "../plan/plan";
import { NODE_AGENT_TOLERATIONS } from "../config/lifecycle";
import { BRIDGE_MAPPINGS_ANNOTATION, chassisLabelKey, RESERVED_TOLERATION, ROLES, roleLabelKey, roleToleration, ZONE_LABEL, type Role } from "../config/roles";
import type { StackContext } from "../platform/context";
import { quorumPlacement, type ReplicaRule } from "./context";
import { labelKey, nodeSelectorSchema, tolerationSchema } from "../config/k8s";
import { METADATA_PROXY_SECRET, releaseName } from "./names";
import { workloadSelector } from "./zone-spread";
import { IRONIC_NAMESPACE } from "./ironic";
import { masakariValues, SEGMENT_HEALTH_CHECKS, segmentHealthChecksSchema } from "./masakari";
import type { PlacementValue } from "../config/placement";

type WorkloadKind = "Deployment" | "StatefulSet" | "DaemonSet";
/** A path inside a release's values. */
type ValuesPath = readonly string[];

interface ComponentBase {
  kind: WorkloadKind;
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
   * A public API: the lab exposes it on a fixed NodePort (`<component>.service`, ./endpoints.ts).
   * @default not public: no `<component>.service` is written
   */
  publicApi?: true;
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

const UNLISTED: Unlisted = { priority: "control" };

/** Placed by the chart helper from `placement.<component>` (§ 5.1, § 5.2). */
interface HelperPlaced extends ComponentBase {
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
  return c.publicApi === true && c.kind === "Deployment";
}

/** A service's entry of the catalog: one release of its chart. */
export interface ServiceSpec {
  /** Its workloads by the chart's component key (`placement.<key>`, `<key>.replicas`). */
  components: Record<string, ComponentSpec>;
  /**
   * The release's namespace.
   * @default "openkeel" (OPENKEEL_NAMESPACE)
   */
  namespace?: string;
  /**
   * Top-level keys besides `global`, `placement` and the component blocks.
   * @default none
   */
  settings?: Record<string, z.ZodType>;
  /**
   * Values beyond placement and replicas.
   * @default none: `global`, `placement` and the component blocks only
   */
  values?(ctx: StackContext): Record<string, unknown>;
}

/** A secret is always a generated one: a literal in a stack file would end up in git. */
const secretRefSchema = z.strictObject(
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

/** D6 (§ 4.2): the compute agent subtracts the live requests of non-VM pods from the inventories. */
const DYNAMIC_RESERVATION = {
  enabled: true,
  debounceSeconds: 30,
  thresholds: { vcpu: 1, memoryMiB: 256 },
} as const;

const dynamicReservationSchema = z.strictObject({
  enabled: z.boolean(),
  debounceSeconds: z.number().int().min(0),
  thresholds: z.strictObject({ vcpu: z.number().min(0), memoryMiB: z.number().int().min(0) }),
});

const on =
  (role: Role, extra: Partial<PlacementValue> = {}) =>
  (): PlacementValue => ({ role, ...extra });

/**
 * Tolerations of the other tainted roles that the role's nodes also carry: Swift storage on the
 * compute+storage nodes of the medium topology (§ 6.2, compute tainted) must tolerate compute, or
 * it has no node at all (found by the placement report, issue 7).
 */
function sharedNodeTolerations(role: Role, ctx: StackContext) {
  return ROLES.filter((r) => r !== role && ctx.topo.taintedRoles.includes(r) && ctx.topo.nodesByRole[role].some((n) => n.roles.includes(r))).map(
    roleToleration,
  );
}

/**
 * What a node agent of a hypervisor tolerates beside its role: Masakari's reserved hosts (§ 5.6),
 * and the taints of a disabled or draining node (NODE_AGENT_TOLERATIONS: the compute agent must
 * land on a disabled host to lift its taint, § 4.1).
 */
const NODE_AGENT_EXTRA_TOLERATIONS = [RESERVED_TOLERATION, ...NODE_AGENT_TOLERATIONS];

/** An API Deployment on the control plane (3 replicas where there are 3 nodes, § 2.2). */
const api = (replicas = 3): HelperPlaced => ({ kind: "Deployment", placement: on("controlPlane"), replicas: { fixed: replicas }, publicApi: true });
/** A worker, conductor or scheduler on the control plane (2 replicas, maxUnavailable 1, § 2.2). */
const worker = (replicas = 2): HelperPlaced => ({ kind: "Deployment", placement: on("controlPlane"), replicas: { fixed: replicas } });
/** A control-plane component § 5.2 does not list (its placement is a post-render patch, ./unlisted.ts). */
const unlisted = (c: HelperPlaced): HelperPlaced => ({ ...c, unlisted: UNLISTED });

/**
 * The OVN chassis' nodes: those the node-roles phase labels with the chassis label (./node-metadata.ts).
 * Without role labels (a lab whose nodes carry none) there is nothing to select: every node.
 */
function chassisSelector(ctx: StackContext): Record<string, string> | undefined {
  return ctx.rolesPassed ? { [chassisLabelKey(ctx.topo.profile)]: "" } : undefined;
}

/** Masakari's `nodePlacement.<x>` (§ 5.2 "What is implemented"): a nodeSelector that wins over the role, tolerations added to it. */
const masakariNodePlacement = z.strictObject({ nodeSelector: nodeSelectorSchema.optional(), tolerations: z.array(tolerationSchema).optional() });
const masakari = (base: HelperPlaced, key: string): HelperPlaced => ({
  ...base,
  winningNodeSelector: ["nodePlacement", key, "nodeSelector"],
  addedTolerations: ["nodePlacement", key, "tolerations"],
});

/**
 * § 2.2: Swift storage spreads over the zones (Swift zones are its failure domains), softly: a
 * zone short of storage nodes still takes its members (the baseline's ScheduleAnyway, § 2).
 */
function swiftZoneSpread(): NonNullable<PlacementValue["topologySpreadConstraints"]>[number] {
  const labelSelector = { matchLabels: workloadSelector(releaseName("swift"), "storage") };
  return { maxSkew: 1, topologyKey: ZONE_LABEL, whenUnsatisfiable: "ScheduleAnyway" as const, labelSelector };
}

/** The compute label of the stack's profile, when the releases get role labels (§ 5.2). */
function computeLabel(ctx: StackContext): string | undefined {
  return ctx.rolesPassed ? roleLabelKey("compute", ctx.topo.profile) : undefined;
}

export const SERVICE_CATALOG: Record<ServiceName, ServiceSpec> = {
  keystone: { components: { api: api() } },
  placement: { components: { api: api() } },
  nova: {
    components: {
      api: api(),
      conductor: worker(),
      scheduler: unlisted(worker()),
      // noVNC and the serial console: the user's browser connects to it
      consoleProxy: { ...worker(), publicApi: true },
      computeAgent: {
        kind: "DaemonSet",
        placement: on("compute", { extraTolerations: NODE_AGENT_EXTRA_TOLERATIONS }),
        settings: { dynamicReservation: dynamicReservationSchema },
      },
      ironicAgent: {
        kind: "Deployment",
        optional: true,
        // one active (Lease): publishes Ironic nodes to Placement, only useful with Ironic
        placement: (ctx) => ({ role: "controlPlane", enabled: ctx.serviceOn("ironic") }),
        replicas: { fixed: 1 },
      },
    },
    settings: {
      config: z.strictObject({
        // the driver and the compute agent must find the same hypervisors (§ 5.2)
        kubernetes: z.strictObject({ compute_role_label: labelKey }).optional(),
      }),
      metadata: z.strictObject({ sharedSecret: secretRefSchema }),
    },
    values: (ctx) => {
      const label = computeLabel(ctx);
      return {
        computeAgent: { dynamicReservation: { ...DYNAMIC_RESERVATION, thresholds: { ...DYNAMIC_RESERVATION.thresholds } } },
        config: label ? { kubernetes: { compute_role_label: label } } : {},
        metadata: { sharedSecret: secretRef(METADATA_PROXY_SECRET) },
      };
    },
  },
  neutron: {
    components: {
      api: api(),
      worker: unlisted(worker()),
      ovnCentral: {
        kind: "StatefulSet",
        placement: quorumPlacement,
        replicas: "quorum",
        // its own nodeSelector wins over the role (§ 5.2); an older chart's default was the lab key
        winningNodeSelector: ["ovnCentral", "nodeSelector"],
        settings: { storage: volumeSchema, nodeSelector: nodeSelectorSchema.optional() },
      },
      // compute and network nodes, and containers nodes when Zun runs (their containers get Neutron
      // ports, § 1.2, § 2.2): the chassis label says which (./node-metadata.ts)
      chassis: {
        kind: "DaemonSet",
        nodeSelector: chassisSelector,
        // our contract for the chart: the Node annotation its physnet bridge mappings are read from
        settings: { bridgeMappingsAnnotation: labelKey },
      },
      metadataAgent: {
        kind: "DaemonSet",
        optional: true,
        // a VM Masakari evacuates to a reserved host still asks 169.254.169.254 (D4, § 5.6)
        placement: on("compute", { enabled: true, extraTolerations: NODE_AGENT_EXTRA_TOLERATIONS }),
        settings: { sharedSecret: secretRefSchema },
        unlisted: { priority: "none", switch: "on" },
      },
      bgpAgent: {
        kind: "DaemonSet",
        optional: true,
        // distributed FIPs leave from the hypervisors, so they announce them too (D3), reserved ones included
        placement: (ctx) => ({ roles: ["network", "compute"], enabled: ctx.cfg.bgp, extraTolerations: NODE_AGENT_EXTRA_TOLERATIONS }),
        unlisted: { priority: "none", switch: "off" },
      },
    },
    settings: {
      backend: z.enum(["ovn-nb", "kube-ovn"]),
      gateway: z.strictObject({ floatingIpMode: z.enum(["centralized", "distributed"]) }),
    },
    values: (ctx) => ({
      backend: "ovn-nb",
      gateway: { floatingIpMode: "distributed" },
      // § 3.2: the chassis reads its wiring from its own Node; the mappings cannot be a label (`:`)
      chassis: { bridgeMappingsAnnotation: BRIDGE_MAPPINGS_ANNOTATION },
      ovnCentral: { storage: { storageClassName: ctx.storage.strictLocalClass } },
      metadataAgent: { sharedSecret: secretRef(METADATA_PROXY_SECRET) },
    }),
  },
  // § 5.2: API and Jobs (placement.api) on the control plane; FWaaS has no agent with OVN
  "neutron-fwaas": { components: { api: api() } },
  "neutron-vpnaas": {
    // § 5.2: the agent DaemonSet follows the chassis (agent.nodeSelector): it runs the IPsec
    // processes in the router namespaces of the chassis it shares the node with
    components: { api: api(), agent: { kind: "DaemonSet", nodeSelector: chassisSelector } },
  },
  glance: { components: { api: api() } },
  cinder: { components: { api: api(), workers: worker() } },
  manila: {
    components: {
      api: unlisted(api()),
      scheduler: unlisted(worker()),
      // our contract for the chart: the class of the shares' RWX volumes, whose share managers
      // (NFS servers) run on storage nodes (§ 2.2, § 2.3: platform/longhorn.ts longhorn-rwx)
      share: { ...worker(), settings: { storageClassName: z.string().min(1).optional() }, unlisted: UNLISTED },
    },
    values: (ctx) => (ctx.storage.sharedClass ? { share: { storageClassName: ctx.storage.sharedClass } } : {}),
  },
  swift: {
    components: {
      proxy: unlisted(api()),
      storage: {
        kind: "StatefulSet",
        placement: (ctx) => {
          const extra = sharedNodeTolerations("storage", ctx);
          return {
            role: "storage",
            antiAffinity: "required",
            ...(extra.length > 0 ? { extraTolerations: extra } : {}),
            ...(ctx.topo.zones.length > 1 ? { topologySpreadConstraints: [swiftZoneSpread()] } : {}),
          };
        },
        replicas: "perNode",
        settings: { devices: volumeSchema },
        unlisted: UNLISTED,
      },
    },
    // our contract for the chart: the ring puts each device in the Swift zone its node's zone label names (§ 6.3)
    settings: { ring: z.strictObject({ zoneLabel: labelKey }).optional() },
    values: (ctx) => ({
      // the HDD capacity tier where the storage nodes have one (§ 6.3), else D5's strict-local class
      storage: { devices: { storageClassName: ctx.storage.capacityClass ?? ctx.storage.strictLocalClass } },
      ...(ctx.topo.zones.length > 0 ? { ring: { zoneLabel: ZONE_LABEL } } : {}),
    }),
  },
  heat: { components: { api: unlisted(api()), apiCfn: unlisted({ ...worker(), publicApi: true }), engine: unlisted(worker()) } },
  barbican: { components: { api: api(), worker: worker() } },
  designate: {
    components: { api: unlisted(api()), central: unlisted(worker()), sink: unlisted(worker()), externalDns: unlisted(worker(1)) },
  },
  masakari: {
    components: { api: masakari(api(), "api"), engine: masakari(worker(), "engine") },
    settings: {
      nodePlacement: z.strictObject({ api: masakariNodePlacement.optional(), engine: masakariNodePlacement.optional() }).optional(),
      // our contract for the chart (§ 5.6): what Masakari puts in each segment's NodeHealthCheck (./masakari.ts)
      [SEGMENT_HEALTH_CHECKS]: segmentHealthChecksSchema.optional(),
    },
    values: (ctx) => masakariValues(ctx.remediation),
  },
  ironic: {
    // § 1.4, § 2.2, § 6.3: its own namespace, egress to the BMC networks (./ironic.ts)
    namespace: IRONIC_NAMESPACE,
    components: {
      api: api(),
      conductor: {
        kind: "StatefulSet",
        placement: on("provisioning", { antiAffinity: "required" }),
        replicas: "ironicConductors",
      },
    },
  },
  skyline: { components: { api: api(2) } },
  "ovn-octavia-provider": { components: { api: api(2) } },
  zun: {
    components: {
      api: unlisted(api()),
      computeAgent: { kind: "DaemonSet", placement: on("containers", { extraTolerations: NODE_AGENT_EXTRA_TOLERATIONS }), unlisted: { priority: "none" } },
    },
    settings: {
      config: z.strictObject({
        kubernetes: z
          .strictObject({
            // a node with both roles belongs to Nova's agent (§ 1.4); Zun must read the same label
            nova_compute_label: labelKey.optional(),
            // § 2.2: the containers' and capsules' Pods tolerate the containers role (they run on
            // the node Zun's scheduler picked, through the kata RuntimeClass, ./zun.ts)
            compute_toleration: tolerationSchema,
          })
          .optional(),
      }),
    },
    values: (ctx) => {
      const label = computeLabel(ctx);
      return { config: { kubernetes: { ...(label ? { nova_compute_label: label } : {}), compute_toleration: roleToleration("containers") } } };
    },
  },
  "ec2-api": { components: { api: unlisted(api()) } },
};
