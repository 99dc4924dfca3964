// Remediation that holds (issue 45 item 3, § 5.6): the rule our NodeHealthChecks keep on every
// production stack, judged on the checks the Plan holds (the nodes each selector selects and its
// maxUnhealthy, as ./medik8s-groups.ts records them for the failure domains), not on the model that
// drew them. § 5.6: a fenced hypervisor's VMs are Masakari's to evacuate, and Masakari acts only once
// it is fenced; "maxUnhealthy stops remediation storms"; the control plane's check fences one node
// at a time, "so that a Galera or RabbitMQ quorum is never fenced away". The rule:
//
// A role here is a group of ./medik8s-groups.ts: the first role of a node, whose check watches it.
// 1. Independent failures are fenced (`nhc-independent-failures`): any single failure of a node that
//    has a peer in its role, and one failure in each of any two zones of a role that holds no
//    quorum (two faults, not one cause), unless those two are all of the role (2 below then wins).
// 2. No cluster-wide event fences every member of a role at once (`nhc-storm-guard`): every node
//    NotReady for the unhealthy duration (the API path, a CNI rollout) must trip some check's storm
//    guard among the role's checks. A check fences all its nodes once maxUnhealthy reaches their
//    count (NHC v0.12.0 internal/controller/nodehealthcheck_controller.go 336–347: HealthyNodes
//    0 ≥ minHealthy 0): a check of one node always fences.
// 3. What a loss leaves to a human is what the failure-domain table says (docs/node-lifecycle.md):
//    the table reads the same recorded selections (NHC_CONSTRAINT), so it cannot say other than
//    what the checks do.
//
// Our checks keep it by construction (medik8s-groups.ts): a finding that only this repository's
// code can cause (a check drawn across zones, a check of one node) is its bug, which planStack
// throws; a stack's maxUnhealthy that leaves a role's checks no storm guard is the stack's error.
import type { Check } from "../config/problems";
import type { PlacementCheck, PlacementFacts } from "../placement/report";
import { isQuorumGroup, listIn, NHC_CONSTRAINT, NHC_REPO, nhcFences, nhcGroupOf, plannedChecks, type NhcGroup, type PlannedCheck } from "./medik8s-groups";

const INDEPENDENT_CODE = "nhc-independent-failures";
const STORM_CODE = "nhc-storm-guard";

interface Member {
  name: string;
  zone?: string | undefined;
}

interface Judged {
  checks: PlannedCheck[];
  /** Each role's nodes (its group's: the Kubernetes control plane as one), whatever their state. */
  roles: Map<NhcGroup, Member[]>;
  /** The group of each node: the check it is in is drawn for that group. */
  groupOf: Map<string, NhcGroup | undefined>;
  /** The check that selects each node (overlaps are placement-nhc-overlap's). */
  checkOf: Map<string, PlannedCheck>;
}

function judged({ plan }: Pick<PlacementFacts, "plan">): Judged | undefined {
  const checks = plannedChecks(plan.feasibility?.[NHC_CONSTRAINT.key]);
  if (checks.length === 0) return undefined;
  const roles = new Map<NhcGroup, Member[]>();
  for (const n of plan.nodes) {
    const group = nhcGroupOf(n);
    if (group) listIn(roles, group, { name: n.name, zone: n.zone });
  }
  const checkOf = new Map<string, PlannedCheck>();
  for (const c of checks) for (const n of c.nodes) if (!checkOf.has(n)) checkOf.set(n, c);
  return { checks, roles, groupOf: new Map(plan.nodes.map((n) => [n.name, nhcGroupOf(n)])), checkOf };
}

const describe = (c: PlannedCheck) => `${c.name} selects ${c.nodes.length} node(s) with maxUnhealthy ${c.maxUnhealthy}`;

/** A single failure of a node with a peer in its role, not fenced: a check whose maxUnhealthy allows none (ours allow at least one). */
function singleFailures(j: Judged): Check[] {
  const withPeers = new Set([...j.roles.values()].filter((m) => m.length >= 2).flatMap((m) => m.map((x) => x.name)));
  const checks = new Set([...withPeers].flatMap((n) => j.checkOf.get(n) ?? []));
  return [...checks]
    .filter((c) => !nhcFences(c.nodes.length, 1, c.maxUnhealthy).fences)
    .map((c) => ({
      level: "error",
      code: INDEPENDENT_CODE,
      message: `NodeHealthCheck ${describe(c)}: a single failure of one of its nodes (${c.nodes[0]}) is not fenced (${NHC_REPO} 336–347)`,
      reason: "§ 5.6: a failed node is fenced, so that its pods, volumes and VMs move to its peers",
      fix: "give the check a maxUnhealthy of at least 1 (platform/medik8s-groups.ts)",
    }));
}

/** Two nodes of one role that holds no quorum, in two zones, selected by one check drawn for that role: the first such pair, unless they are the whole role. */
function pairAcrossZones(c: PlannedCheck, j: Judged): [Member, Member, NhcGroup] | undefined {
  const group = j.groupOf.get(c.nodes[0]);
  if (group === undefined || isQuorumGroup(group)) return undefined;
  const members = j.roles.get(group) ?? [];
  const selected = new Set(c.nodes);
  const mine = members.filter((m) => m.zone !== undefined && selected.has(m.name));
  const other = mine.find((m) => m.zone !== mine[0]?.zone);
  // two of two: the whole role, whose loss rule 2 keeps from fencing
  return other && members.length > 2 ? [mine[0], other, group] : undefined;
}

/** One failure in each of two zones, both selected by one check that fences neither. */
function zonePairs(j: Judged): Check[] {
  return j.checks.flatMap((c): Check[] => {
    const pair = pairAcrossZones(c, j);
    if (!pair || nhcFences(c.nodes.length, 2, c.maxUnhealthy).fences) return [];
    const [a, b, group] = pair;
    return [
      {
        level: "error",
        code: INDEPENDENT_CODE,
        message: `NodeHealthCheck ${describe(c)} across zones: one failure in each of two zones (${a.name} in ${a.zone}, ${b.name} in ${b.zone}) is 2 of its nodes unhealthy, more than it allows, and it fences neither (storm protection, ${NHC_REPO} 336–347): two independent faults left to a human${group === "compute" ? ", their VMs not evacuated (evacuation waits for the fencing)" : ""}`,
        reason:
          "§ 5.6 and the failure domains (docs/node-lifecycle.md): failures in two zones are two faults, each fenced; several in one zone are one cause, a human's",
        fix: `draw the ${group} nodes' checks per zone (platform/medik8s-groups.ts nhcChecks: one check per zone holding two or more of them; the nodes alone in their zone joined, fencing a failure in each of two zones)`,
      },
    ];
  });
}

/** Whether a check fences every node it selects when all of them fail. */
const fencesAll = (c: PlannedCheck) => nhcFences(c.nodes.length, c.nodes.length, c.maxUnhealthy).fences;

interface Storm {
  role: NhcGroup;
  nodes: string[];
  checks: PlannedCheck[];
}

/** The roles whose every node a cluster-wide event fences: each watched, by a check that fences all it selects. */
function storms(j: Judged): Storm[] {
  const out: Storm[] = [];
  for (const [role, members] of j.roles) {
    if (!members.every((m) => j.checkOf.has(m.name))) continue;
    const checks = [...new Set(members.map((m) => j.checkOf.get(m.name)!))];
    if (checks.every(fencesAll)) out.push({ role, nodes: members.map((m) => m.name), checks });
  }
  return out;
}

function stormCheck(s: Storm, j: Judged): Check {
  const sized = s.checks.filter((c) => c.nodes.length >= 2);
  const group = sized.length > 0 ? j.groupOf.get(sized[0].nodes[0]) : undefined;
  const setting = group === undefined ? undefined : `openkeel:platform.medik8s.maxUnhealthy.${group}`;
  const smallest = Math.min(...sized.map((c) => c.nodes.length));
  return {
    level: "error",
    code: STORM_CODE,
    message: `a cluster-wide event (every node NotReady for the unhealthy duration: the API path, a CNI rollout) would fence every ${s.role} node at once (${s.nodes.join(", ")}): ${s.checks.map(describe).join("; ")}, and a check fences all its nodes once maxUnhealthy reaches their count (${NHC_REPO} 336–347)`,
    reason: "§ 5.6: maxUnhealthy stops remediation storms; a role fenced whole at once (every gateway, every hypervisor) is an outage the event itself was not",
    fix: setting
      ? `set ${setting} below ${smallest} (a count, or a percentage under 100%), so that each of its checks leaves a storm guard`
      : `join the ${s.role} nodes' one-node checks into one check across their zones (platform/medik8s-groups.ts nhcChecks)`,
    ...(setting ? { path: setting } : {}),
  };
}

/**
 * Whether the stack's setting is why: a check of the role has two or more nodes, which a lower
 * maxUnhealthy would give a storm guard; with one-node checks only, the code drew them.
 */
const ofTheSetting = (s: Storm) => s.checks.some((c) => c.nodes.length >= 2);

/** The rule's findings that only this repository's code can cause: thrown as its bugs by planStack. */
const ruleOfTheCode: PlacementCheck = {
  origin: "code",
  check: (facts) => {
    const j = judged(facts);
    if (!j) return [];
    return [
      ...singleFailures(j),
      ...zonePairs(j),
      ...storms(j)
        .filter((s) => !ofTheSetting(s))
        .map((s) => stormCheck(s, j)),
    ];
  },
};

/** A storm guard the stack's maxUnhealthy takes away. */
const stormGuard: PlacementCheck = {
  check: (facts) => {
    const j = judged(facts);
    return j
      ? storms(j)
          .filter(ofTheSetting)
          .map((s) => stormCheck(s, j))
      : [];
  },
};

/** The rule, as placement checks Medik8s registers with the report. */
export const REMEDIATION_RULE: readonly PlacementCheck[] = [ruleOfTheCode, stormGuard];
