// Phase openkeel-infra: the namespace of the OpenKeel releases and the infrastructure release
// (openkeel-chart): MariaDB Galera and RabbitMQ on the control plane with volumes on the
// strict-local class (§ 2.1, D5), and the public ingress on the control plane and network nodes
// (D8). The chart places the CRs by role only (§ 5.2 "What is implemented": the MariaDB CR's
// nodeSelector and tolerations; the RabbitmqCluster's node affinity, required host anti-affinity
// and tolerations): what § 2.1 and § 6.3 require beyond that (Galera's host anti-affinity, both
// members' zone anti-affinity in large, priority openkeel-infra-critical) are post-render patches
// of the release (plan/post-render.ts), which the placement reader applies before it judges; so is
// the ingress's placement (§ 5.2 lists no ingress: ./unlisted.ts), whose `ingress.placement` stays
// in the values for the policy pack's D8.
import { z } from "zod";
import type { LoadedConfig } from "../config/schema";
import { type HelmReleaseUnit, helmReleaseUnit, type K8sObject, manifestsUnit, type ManifestsUnit, type UnitContent } from "../plan/plan";
import { fact } from "../plan/needs";
import { namespace } from "../platform/context";
import { HOSTNAME_LABEL, INGRESS_ROLES, ZONE_LABEL, type LabelProfile } from "../config/roles";
import { volumeSchema } from "./components";
import { chartRef } from "./charts";
import type { StackContext } from "../platform/context";
import { quorumPlacement, replicasFor } from "./context";
import { memoizedByProfile, type ReleaseContract } from "./contract";
import { globalSchema, globalValue } from "./global";
import { imageRef, MARIADB_IMAGE, RABBITMQ_IMAGE } from "../platform/versions";
import { unlistedPostRender } from "./unlisted";
import { INFRASTRUCTURE_CHART, INFRASTRUCTURE_TYPE, OPENKEEL_NAMESPACE } from "./names";
import { placementValueSchema, type PlacementValue } from "../config/placement";
import type { PostRenderPatch } from "../plan/post-render";
import { PRIORITY_CLASSES } from "../platform/priority-classes";

/** The infrastructure release's row of the releases' table of docs/openkeel-values.md (npm run docs, ./docs-row.ts). */
export const INFRASTRUCTURE_DOCS = {
  components:
    "`infrastructure.mariadb.placement`, `infrastructure.rabbitmq.placement` (`role: controlPlane` only: anti-affinity and priority are post-render patches), the ingress (`roles: [controlPlane, network]`: a post-render patch, below; no value)",
  values: "`infrastructure.<m>.replicas`, `infrastructure.<m>.image` (below), `infrastructure.<m>.storage.storageClassName: longhorn-local`",
};

export const NAMESPACE_UNIT = "openkeel-namespace";
export const INFRASTRUCTURE_UNIT = "openkeel-chart";
/** Galera and RabbitMQ: replicated quorums, sized by the quorum rule (openkeel/context.ts). */
export const QUORUM_MEMBERS = ["mariadb", "rabbitmq"] as const;
/** The pinned server image of each member: the chart hands it to the MariaDB and RabbitmqCluster CRs' `spec.image`. */
const MEMBER_IMAGES = { mariadb: MARIADB_IMAGE, rabbitmq: RABBITMQ_IMAGE } as const;
/** `repository:tag`, optionally `@sha256:…`: what a CR's `spec.image` takes. */
const IMAGE_REF = /^[a-z0-9][a-z0-9._/-]*(:\d+)?(\/[a-z0-9._-]+)*:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}(@sha256:[0-9a-f]{64})?$/;

/** The role of a quorum member, as the chart reads it: anti-affinity comes from the patches. */
function memberPlacement(ctx: StackContext): PlacementValue {
  const { antiAffinity: _host, zoneAntiAffinity: _zone, ...byRole } = quorumPlacement(ctx);
  return byRole;
}

/** The CR names the chart renders (`<release>-<member>`). */
export const memberObjectName = (release: string, member: (typeof QUORUM_MEMBERS)[number]) => `${release}-${member}`;

/** The topology keys a member must be alone in: the host, and the zone in large (§ 6.3). */
function memberDomains(ctx: StackContext): string[] {
  const p = quorumPlacement(ctx);
  return [...(p.antiAffinity === "required" ? [HOSTNAME_LABEL] : []), ...(p.zoneAntiAffinity === "required" ? [ZONE_LABEL] : [])];
}

/** The kind of the Galera CR the chart renders, as its operator's component keys it (`<group>/<Kind>`). */
const GALERA_KIND = "k8s.mariadb.com/MariaDB";

/** The labels the operator of a CR of `kind` gives every pod of the CR `name` (`customKinds` of its component, handed over in the StackContext). */
function operatorPodLabels(ctx: StackContext, kind: string, name: string): Record<string, string> {
  const labels = ctx.kinds[kind]?.pods?.labels(name);
  if (!labels) throw new Error(`openkeel-chart renders a ${kind}, but no installed component says which pods its operator builds from it (customKinds)`);
  return labels;
}

/**
 * What § 2.1 and § 6.3 require of Galera and RabbitMQ that openkeel-chart does not render (§ 5.2).
 * MariaDB: the anti-affinity terms written out (mariadb-operator's `antiAffinityEnabled` yields the
 * host term only, is dropped when any other affinity is set, and is immutable), and
 * `priorityClassName` (immutable too: set at creation, docs/design-decisions.md). RabbitmqCluster:
 * the chart's host term with the zone term beside it (a merge patch replaces the list), and the
 * priority through `override.statefulSet` (the CR has no top-level field). The ingress, which § 5.2
 * does not list for the chart: its placement leaves the values for a patch (./unlisted.ts).
 */
export function infrastructurePostRender(
  ctx: StackContext,
  values: Record<string, unknown>,
  release = INFRASTRUCTURE_UNIT,
): { values: Record<string, unknown>; patches: PostRenderPatch[] } {
  const domains = memberDomains(ctx);
  const galera = memberObjectName(release, "mariadb");
  const rabbit = memberObjectName(release, "rabbitmq");
  // the pod labels each operator sets: mariadb-operator app.kubernetes.io/instance=<CR>, the RabbitMQ operator app.kubernetes.io/name=<CR>
  const galeraTerms = domains.map((topologyKey) => ({
    labelSelector: { matchExpressions: [{ key: "app.kubernetes.io/instance", operator: "In", values: [galera] }] },
    topologyKey,
  }));
  const rabbitTerms = domains.map((topologyKey) => ({ labelSelector: { matchLabels: { "app.kubernetes.io/name": rabbit } }, topologyKey }));
  const anti = (terms: unknown[]) => (terms.length > 0 ? { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms } } } : {});
  // § 2.1 "spread on zone": the zone term where the topology requires one member per zone, else a
  // soft spread where the nodes carry several zones (the RabbitMQ operator spreads its pods itself)
  const spread =
    !domains.includes(ZONE_LABEL) && ctx.topo.zones.length > 1
      ? {
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: ZONE_LABEL,
              whenUnsatisfiable: "ScheduleAnyway",
              labelSelector: { matchLabels: operatorPodLabels(ctx, GALERA_KIND, galera) },
            },
          ],
        }
      : {};
  const patches: PostRenderPatch[] = [
    {
      target: { kind: "MariaDB", name: galera },
      why: `§ 2.1: one Galera member per host (and per zone in large, § 6.3${spread.topologySpreadConstraints ? "; spread over the zones" : ""}) at openkeel-infra-critical; the chart renders the CR's nodeSelector and tolerations only (§ 5.2)`,
      patch: { spec: { priorityClassName: PRIORITY_CLASSES.infra, ...anti(galeraTerms), ...spread } },
    },
  ];
  // the chart renders the host term itself (§ 5.2); the zone term needs both written out
  const rabbitAnti = domains.includes(ZONE_LABEL) ? anti(rabbitTerms) : {};
  patches.push({
    target: { kind: "RabbitmqCluster", name: rabbit },
    why: `§ 2.1: RabbitMQ at openkeel-infra-critical${domains.includes(ZONE_LABEL) ? ", one member per zone (§ 6.3)" : ""}; the chart renders its node affinity, host anti-affinity and tolerations only (§ 5.2)`,
    patch: {
      spec: { ...rabbitAnti, override: { statefulSet: { spec: { template: { spec: { containers: [], priorityClassName: PRIORITY_CLASSES.infra } } } } } },
    },
  });
  // D8: § 5.2 lists no ingress for the chart, which reads no ingress.placement (./unlisted.ts): it leaves the values
  const ingress = unlistedPostRender(INFRASTRUCTURE_CHART, release, values, { ingress: "DaemonSet" });
  return { values: ingress.values, patches: [...patches, ...ingress.patches] };
}

export function infrastructureValues(ctx: StackContext): Record<string, unknown> {
  const member = (name: (typeof QUORUM_MEMBERS)[number]) => {
    const placement = memberPlacement(ctx);
    return {
      replicas: replicasFor("quorum", placement, ctx),
      image: imageRef(MEMBER_IMAGES[name]),
      placement,
      storage: { storageClassName: ctx.storage.strictLocalClass },
    };
  };
  return {
    global: globalValue(ctx.topo),
    infrastructure: { mariadb: member("mariadb"), rabbitmq: member("rabbitmq") },
    // a DaemonSet: back on a draining node after a rollout, like every node agent (StackContext.agentTolerations)
    ingress: { placement: { roles: [...INGRESS_ROLES], extraTolerations: [...ctx.agentTolerations] } },
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

export const RABBITMQ_BUDGET_UNIT = "openkeel-rabbitmq-budget";

/**
 * § 2.1: RabbitMQ's members drained one at a time (PDB maxUnavailable: 1). The cluster operator
 * v2.22.3 creates no PodDisruptionBudget (its code has none; its
 * docs/examples/production-ready/pod-disruption-budget.yaml applies one beside the cluster), so the
 * Plan writes it, over the label the operator's StatefulSet selects its pods by
 * (internal/metadata/label.go LabelSelector: app.kubernetes.io/name=<cluster>).
 */
export function rabbitmqBudgetUnit(release = INFRASTRUCTURE_UNIT): ManifestsUnit {
  const cluster = memberObjectName(release, "rabbitmq");
  const budget: K8sObject = {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name: cluster, namespace: OPENKEEL_NAMESPACE },
    spec: { maxUnavailable: 1, selector: { matchLabels: { "app.kubernetes.io/name": cluster } } },
  };
  return manifestsUnit(RABBITMQ_BUDGET_UNIT, "openkeel:openkeel:DisruptionBudget", [budget]);
}

/**
 * What openkeel-chart renders (§ 5.2 "What is implemented", e2e/charts/openkeel-chart): the MariaDB
 * and RabbitmqCluster CRs, which their operators' CRDs define and webhooks admit, and the ingress
 * DaemonSet, on the host network. The operators build Galera and RabbitMQ from the CRs afterwards:
 * the release does not wait for them, and nothing in the Plan does (see the services' releases).
 */
export const INFRASTRUCTURE_CONTENT: UnitContent = { uses: [fact.api("k8s.mariadb.com", "MariaDB"), fact.api("rabbitmq.com", "RabbitmqCluster")] };

export function infrastructureUnit(cfg: LoadedConfig, values: Record<string, unknown>, postRender: PostRenderPatch[] = []): HelmReleaseUnit {
  // Galera and RabbitMQ hold every service's data
  return helmReleaseUnit(INFRASTRUCTURE_UNIT, INFRASTRUCTURE_TYPE, OPENKEEL_NAMESPACE, chartRef(cfg, "infrastructure", INFRASTRUCTURE_CHART), values, {
    protect: true,
    postRender,
    content: INFRASTRUCTURE_CONTENT,
  });
}
