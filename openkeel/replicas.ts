// Replica counts that break the cloud (issue 38), refused with what they would break. § 2's
// PodDisruptionBudgets assume the design's counts: an API keeps all but one of its replicas available
// (minAvailable 2 of 3, § 2.2; 1 of 2 for Skyline and the ovn-octavia-provider), a Lease-elected
// worker runs a standby beside its leader (maxUnavailable 1 of 2), a quorum keeps an odd number of
// members (§ 2.1: 3, one per node). A count the stack sets below that leaves a drain that can never
// finish, an API with no pod, a leader with no standby, a quorum that survives no failure. Where an
// HPA owns an API's count (openkeel:autoscaling, ./autoscaling.ts) a count outside its bounds is
// fought over: the HPA scales it back at its next sync, Helm sets it again at every upgrade.
// Judged on the release's final values; only what the stack set is its mistake (a count the
// topology caps, a 1-node lab's, is the topology's: placement and the plan checks speak of it).
import type { AutoscalingConfig } from "../config/schema";
import { valueAt } from "../config/problems";
import { isOwnRule } from "./context";
import { isAutoscaled, type ComponentSpec } from "./components";
import type { ContractIssue } from "./contract";

/** A component's replica count, against what the design and the topology give it. */
export interface ReplicaCount {
  service: string;
  /** Its release: `openkeel-<service>`. */
  release: string;
  component: string;
  spec: ComponentSpec;
  /** The final `<component>.replicas`. */
  replicas: number;
  /** What the design gives it on this topology (./context.ts replicasFor): the count a lower one is judged against. */
  needed: number;
}

/** What the component does for the cloud, for an error that says what goes with it. */
function role(c: ReplicaCount): string {
  if (c.spec.withoutIt) return c.spec.withoutIt;
  if (c.spec.publicApi) return `the ${c.service} API leaves the cloud`;
  if (c.spec.replicas === "quorum") return `${c.service} ${c.component} keeps no member, and what it stores is gone`;
  return `${c.service} ${c.component} does none of its work`;
}

/** The design's count of a fixed-size component (§ 2.2), undefined for the others. */
const designCount = (c: ReplicaCount) => (typeof c.spec.replicas === "object" && !isOwnRule(c.spec.replicas) ? c.spec.replicas.fixed : undefined);

function noPod(c: ReplicaCount): ContractIssue {
  return {
    path: [c.component, "replicas"],
    code: "replicas-none",
    level: "error",
    message: `0 replicas of ${c.release} ${c.component}: no pod; ${role(c)}`,
    fix: `remove the override (the design's ${c.needed}), or turn the service off with openkeel:services.${c.service}.enabled: false`,
  };
}

/** An API below its design count: its PodDisruptionBudget (minAvailable: all but one) lets no pod go. */
function apiIssue(c: ReplicaCount, design: number): ContractIssue | undefined {
  const minAvailable = design - 1;
  if (c.replicas > minAvailable) return undefined;
  return {
    path: [c.component, "replicas"],
    code: "replicas-below-design",
    level: "error",
    message: `${c.replicas} replica(s) of the ${c.service} API, whose PodDisruptionBudget keeps ${minAvailable} available (§ 2.2: minAvailable ${minAvailable} of ${design}): no pod may be evicted, so the drain of a node that runs one can never finish (maintenance and retirement wait forever)`,
    fix: `set at least ${minAvailable + 1} (the design's ${design}), or remove the override`,
  };
}

/** A Lease-elected worker alone: its maxUnavailable 1 evicts the leader, and no standby takes over. */
function workerIssue(c: ReplicaCount, design: number): ContractIssue | undefined {
  if (c.replicas >= Math.min(design, 2) || design < 2) return undefined;
  return {
    path: [c.component, "replicas"],
    code: "replicas-below-design",
    level: "error",
    message: `${c.replicas} replica of ${c.release} ${c.component}, a worker that elects its leader by a Lease with a standby beside it (§ 2.2: ${design}, maxUnavailable 1): a drain or a failure of its node leaves no standby to take the Lease, and ${c.service} ${c.component} stops until its pod starts elsewhere`,
    fix: `set ${design} (the design's), or remove the override`,
  };
}

/** A quorum (OVN central's RAFT) with an even or smaller count than the topology gives it. */
function quorumIssue(c: ReplicaCount): ContractIssue | undefined {
  const even = c.replicas % 2 === 0;
  if (!even && c.replicas >= c.needed) return undefined;
  return {
    path: [c.component, "replicas"],
    code: "replicas-quorum",
    level: "error",
    message: even
      ? `${c.replicas} members of ${c.release} ${c.component}, a quorum: a majority of ${c.replicas} is ${c.replicas / 2 + 1}, so it survives no more failed members than ${c.replicas - 1} would, and a split into two halves stops both`
      : `${c.replicas} member(s) of ${c.release} ${c.component}, a quorum the topology gives ${c.needed} (§ 2.1: one per controlPlane node, 3 from 3 on): with ${c.replicas}, the loss of one member stops it`,
    fix: `set ${c.needed} (an odd count, one per node it may run on), or remove the override`,
  };
}

/** An API an HPA scales, with a count outside the HPA's bounds. */
function autoscaledIssue(c: ReplicaCount, bounds: AutoscalingConfig["apis"]): ContractIssue | undefined {
  if (c.replicas >= bounds.minReplicas && c.replicas <= bounds.maxReplicas) return undefined;
  return {
    path: [c.component, "replicas"],
    code: "replicas-autoscaler",
    level: "error",
    message: `${c.replicas} replicas of the ${c.service} API, which a HorizontalPodAutoscaler keeps between ${bounds.minReplicas} and ${bounds.maxReplicas} (openkeel:autoscaling.apis): the HPA scales it back at its next sync, and Helm sets ${c.replicas} again at every upgrade of the release`,
    fix: `remove the override: the release starts the API at the HPA's floor (minReplicas ${bounds.minReplicas}); change openkeel:autoscaling.apis to move the bounds`,
  };
}

/** A count below what the component's own data needs (its `replicaCheck`). */
function ownIssue(c: ReplicaCount, check: NonNullable<ComponentSpec["replicaCheck"]>): ContractIssue | undefined {
  const issue = check(c.replicas, c.needed);
  return issue && { path: [c.component, "replicas"], code: "replicas-below-design", level: "error", ...issue };
}

/** What a component's final count breaks, if anything. */
export function replicaIssue(c: ReplicaCount, autoscaling: AutoscalingConfig | undefined): ContractIssue | undefined {
  if (c.replicas === 0) return noPod(c);
  if (c.spec.replicaCheck) return ownIssue(c, c.spec.replicaCheck);
  if (autoscaling && isAutoscaled(c.spec)) return autoscaledIssue(c, autoscaling.apis);
  if (c.spec.replicas === "quorum") return quorumIssue(c);
  const design = designCount(c);
  // a count the topology caps (fewer nodes than the design's) is judged against that cap
  if (design === undefined || c.replicas >= c.needed) return undefined;
  // the chart's PodDisruptionBudget is the design's, whatever the topology caps
  return c.spec.publicApi && c.spec.kind === "Deployment" ? apiIssue(c, design) : workerIssue(c, design);
}

/** The final count of a component in a release's values, if it has one. */
export function finalReplicas(values: Record<string, unknown>, component: string): number | undefined {
  const n = valueAt(values, [component, "replicas"]);
  return typeof n === "number" ? n : undefined;
}
