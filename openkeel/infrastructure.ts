// Phase openkeel-infra: the namespace of the OpenKeel releases and the infrastructure release
// (openkeel-chart): the three PriorityClasses (§ 2), MariaDB Galera and RabbitMQ on the control
// plane with required host anti-affinity and volumes on the strict-local class (§ 2.1, D5), and the
// public ingress on the control plane and network nodes (D8).
import { z } from "zod";
import type { LoadedConfig } from "../config/schema";
import { type HelmReleaseUnit, helmReleaseUnit, type K8sObject, manifestsUnit, type ManifestsUnit } from "../plan/plan";
import { namespace } from "../platform/context";
import { INGRESS_ROLES, type LabelProfile } from "../config/roles";
import { volumeSchema } from "./catalog";
import { chartRef } from "./charts";
import type { StackContext } from "../platform/context";
import { quorumPlacement, replicasFor } from "./context";
import { memoizedByProfile, type ReleaseContract } from "./contract";
import { globalSchema, globalValue } from "./global";
import { imageRef, MARIADB_IMAGE, RABBITMQ_IMAGE } from "../platform/versions";
import { OPENKEEL_NAMESPACE } from "./names";
import { placementValueSchema } from "../config/placement";

export const NAMESPACE_UNIT = "openkeel-namespace";
export const INFRASTRUCTURE_UNIT = "openkeel-chart";
/** Galera and RabbitMQ: replicated quorums, sized by the quorum rule (openkeel/context.ts). */
export const QUORUM_MEMBERS = ["mariadb", "rabbitmq"] as const;
/** The pinned server image of each member: the chart hands it to the MariaDB and RabbitmqCluster CRs' `spec.image`. */
const MEMBER_IMAGES = { mariadb: MARIADB_IMAGE, rabbitmq: RABBITMQ_IMAGE } as const;
/** `repository:tag`, optionally `@sha256:…`: what a CR's `spec.image` takes. */
const IMAGE_REF = /^[a-z0-9][a-z0-9._/-]*(:\d+)?(\/[a-z0-9._-]+)*:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}(@sha256:[0-9a-f]{64})?$/;

export function infrastructureValues(ctx: StackContext): Record<string, unknown> {
  const member = (name: (typeof QUORUM_MEMBERS)[number]) => {
    const placement = quorumPlacement(ctx);
    return {
      replicas: replicasFor("quorum", placement, ctx),
      image: imageRef(MEMBER_IMAGES[name]),
      placement,
      storage: { storageClassName: ctx.storage.strictLocalClass },
    };
  };
  return {
    global: globalValue(ctx.topo),
    priorityClasses: { create: true },
    infrastructure: { mariadb: member("mariadb"), rabbitmq: member("rabbitmq") },
    ingress: { placement: { roles: [...INGRESS_ROLES] } },
  };
}

const infrastructureContracts = new WeakMap<object, Map<LabelProfile, ReleaseContract>>();
const INFRASTRUCTURE = {};

export function infrastructureContract(profile: LabelProfile): ReleaseContract {
  return memoizedByProfile(infrastructureContracts, INFRASTRUCTURE, profile, () => buildInfrastructureContract(profile));
}

function buildInfrastructureContract(profile: LabelProfile): ReleaseContract {
  const memberSchema = z.strictObject({
    replicas: z.number().int().min(0),
    image: z.string().refine((ref) => IMAGE_REF.test(ref) && !/:latest(@|$)/.test(ref), {
      message: "is not a pinned image. Fix: write repository:tag with an exact version, optionally @sha256:<digest>",
    }),
    placement: placementValueSchema(false),
    storage: volumeSchema,
  });
  return {
    schema: z.strictObject({
      global: globalSchema(profile),
      priorityClasses: z.strictObject({ create: z.boolean() }),
      infrastructure: z.strictObject({ mariadb: memberSchema, rabbitmq: memberSchema }),
      ingress: z.strictObject({ placement: placementValueSchema(false) }),
    }),
    components: [...QUORUM_MEMBERS, "ingress"],
    daemonSets: [],
    selfPlaced: [],
    placementPathOf: (parent) => {
      if (parent.length === 2 && parent[0] === "infrastructure") return `infrastructure.${String(parent[1])}.placement`;
      if (parent.length === 1 && parent[0] === "ingress") return "ingress.placement";
      return undefined;
    },
    isPlacement: (parent) => parent[parent.length - 1] === "placement",
  };
}

/**
 * Privileged: the releases in it run host-network node agents (OVN chassis, metadata agent,
 * ovn-bgp-agent), which the baseline Pod Security level rejects. Audit and warn at the same level
 * as the platform namespaces (platform/context.ts namespace): Talos keeps both at restricted by
 * default, which would flag every privileged pod of these releases on each rollout.
 */
export function namespaceUnit(more: K8sObject[] = []): ManifestsUnit {
  const objects: K8sObject[] = [namespace(OPENKEEL_NAMESPACE, "privileged"), ...more];
  // deleting a namespace would delete every OpenKeel volume claim in it
  return manifestsUnit(NAMESPACE_UNIT, "openkeel:openkeel:Namespace", objects, { protect: true });
}

export function infrastructureUnit(cfg: LoadedConfig, values: Record<string, unknown>): HelmReleaseUnit {
  // Galera and RabbitMQ hold every service's data
  return helmReleaseUnit(INFRASTRUCTURE_UNIT, "openkeel:openkeel:Infrastructure", OPENKEEL_NAMESPACE, chartRef(cfg, "infrastructure"), values, {
    protect: true,
    dependsOn: [NAMESPACE_UNIT],
  });
}
