// The judgements of the day-2 transitions (day2-transitions.ts), apart from the cluster so that
// each has a unit test that trips it (test/e2e/e2e-lib.test.ts): a label selector as the API
// server's query, the NodeHealthChecks' coverage, the Longhorn instance-manager PDB stand-in's
// rule, a drain's verdict, a DaemonSet rollout's verdict on one node, protected resources lost.

/** A metav1.LabelSelector, the fields a NodeHealthCheck's spec.selector has. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/**
 * The `labelSelector` query parameter that asks the API server for what `sel` selects (the same
 * conversion as metav1.LabelSelectorAsSelector). An operator it does not know is an error.
 */
export function labelSelectorQuery(sel: LabelSelector): string {
  const terms = Object.entries(sel.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(",");
    if (e.operator === "Exists") terms.push(e.key);
    else if (e.operator === "DoesNotExist") terms.push(`!${e.key}`);
    else if (e.operator === "In") terms.push(`${e.key} in (${values})`);
    else if (e.operator === "NotIn") terms.push(`${e.key} notin (${values})`);
    else throw new Error(`label selector operator ${e.operator} of ${e.key} is not one of In, NotIn, Exists, DoesNotExist`);
  }
  return terms.join(",");
}

/** What one NodeHealthCheck selects: by the render's report (placement.json), and by the API server. */
export interface NhcSelection {
  name: string;
  expected: readonly string[];
  selected: readonly string[];
}

/**
 * The disagreements of the NodeHealthChecks with the report, and § 5.6's rule: every node whose
 * state keeps it in the health checks is watched by exactly one check (one whose state leaves them,
 * maintenance or retiring, by none: its state label takes it out of every selector; one alone in
 * its group, `alone`, by none: platform/medik8s-groups.ts).
 */
export function nhcProblems(checks: readonly NhcSelection[], nodes: readonly { name: string; unwatched: boolean; alone?: boolean }[]): string[] {
  const problems: string[] = [];
  for (const c of checks) {
    const want = [...c.expected].sort().join(", ");
    const got = [...c.selected].sort().join(", ");
    if (want !== got) problems.push(`NodeHealthCheck ${c.name}: the API server selects ${got || "no node"}; the report says ${want || "no node"}`);
  }
  for (const n of nodes) {
    const by = checks.filter((c) => c.selected.includes(n.name)).map((c) => c.name);
    if (n.unwatched && by.length > 0) problems.push(`${n.name} is in a state that leaves the health checks, yet ${by.join(", ")} select(s) it`);
    else if (n.alone && by.length > 0) problems.push(`${n.name} is alone in its group, yet ${by.join(", ")} select(s) it`);
    if (!n.unwatched && !n.alone && by.length !== 1)
      problems.push(`${n.name} is watched by ${by.length} NodeHealthChecks (${by.join(", ") || "none"}); § 5.6 wants exactly one`);
  }
  return problems;
}

/** A replica of a Longhorn volume on the node whose instance manager the PDB protects. */
export interface NodeReplica {
  volume: string;
  /** desired and current state `stopped` (its volume is detached) */
  stopped: boolean;
  /** another node holds a PDB-protected healthy replica of the same volume */
  protectedElsewhere: boolean;
}

/**
 * Longhorn's rule for deleting a node's instance-manager PodDisruptionBudget
 * (longhorn-manager controller/instance_manager_controller.go, canDeleteInstanceManagerPDB, as
 * /work/notes/longhorn-kubeovn-facts.md reads it at 1.12.1): only on a cordoned node, only once
 * every volume is detached from it; then by the drain policy.
 */
export function instanceManagerPdbVerdict(
  policy: string,
  node: { cordoned: boolean; attachedVolumes: readonly string[]; replicas: readonly NodeReplica[] },
): { deletable: boolean; why: string } {
  if (!node.cordoned) return { deletable: false, why: "the node is not cordoned (not draining)" };
  if (node.attachedVolumes.length > 0) return { deletable: false, why: `some volumes are still attached: ${node.attachedVolumes.join(", ")}` };
  if (policy === "always-allow") return { deletable: true, why: "always-allow" };
  if (policy === "block-for-eviction" && node.replicas.length > 0) return { deletable: false, why: "some replicas block eviction (block-for-eviction)" };
  const counted = policy === "allow-if-replica-is-stopped" ? node.replicas.filter((r) => !r.stopped) : node.replicas;
  const alone = counted.find((r) => !r.protectedElsewhere);
  if (alone) return { deletable: false, why: `replica of ${alone.volume} has no pdb on another node (${policy})` };
  return {
    deletable: true,
    why: `${policy}: ${node.replicas.length} replica(s) on the node, ${counted.length} counted${counted.length ? ", each protected elsewhere" : ""}`,
  };
}

/** A pod on a node being drained, as the drain judges it. */
export interface DrainPod {
  id: string;
  uid: string;
  /** owned by a DaemonSet: a drain leaves it (IgnoreAllDaemonSets) */
  daemonSet: boolean;
  /** a mirror pod: the API server cannot delete it */
  mirror: boolean;
  terminating: boolean;
}

/** The pods a drain evicts: every pod but DaemonSet and mirror pods. */
export function podsToEvict(pods: readonly DrainPod[]): DrainPod[] {
  return pods.filter((p) => !p.daemonSet && !p.mirror);
}

/**
 * What a drain still waits for: the pods it listed when it started (kubectl's drain helper, which
 * NMO runs, evicts the pods of one listing and waits until they are gone), and the pods that came
 * since, which it does not wait for: a replacement that tolerates the cordon's
 * `node.kubernetes.io/unschedulable` taint (one tolerating every NoSchedule taint) may land on
 * the node again.
 */
export function drainLeft(listed: readonly DrainPod[], now: readonly DrainPod[]): { left: DrainPod[]; arrived: DrainPod[] } {
  const uids = new Set(listed.map((p) => p.uid));
  return { left: now.filter((p) => uids.has(p.uid)), arrived: podsToEvict(now).filter((p) => !uids.has(p.uid)) };
}

/** The verdict of a drain that ended (done or out of time): what was left and what refused it. */
export function drainProblems(node: string, left: readonly DrainPod[], refusals: ReadonlyMap<string, string>, seconds: number, limit: number): string[] {
  if (left.length === 0) return [];
  return [
    `the drain of ${node} did not finish within ${limit} s (${seconds.toFixed(0)} s): ${left.length} pod(s) left: ${left
      .map((p) => `${p.id}${refusals.has(p.id) ? ` (eviction refused: ${refusals.get(p.id)})` : p.terminating ? " (terminating)" : ""}`)
      .join("; ")}`,
  ];
}

/** A DaemonSet's pod on the node before and after the rollout. */
export interface AgentOnNode {
  daemonSet: string;
  /** the report says it runs there (placement.json eligible) */
  belongs: boolean;
  /** the pod on the node before the rollout (its uid), if any */
  before?: string | undefined;
  /** the pod on the node after it, with its controller-revision-hash, bound or Running */
  after?: { uid: string; revision: string; phase: string } | undefined;
  /** the DaemonSet's revision after the rollout (status.updatedNumberScheduled counts pods of it) */
  updatedRevision?: string | undefined;
}

/**
 * After a rollout of every DaemonSet while the node carries a taint: each DaemonSet the report
 * puts on the node has a new pod there, of the new revision, Running; none runs there that the
 * report keeps off it.
 */
export function rolloutProblems(node: string, taint: string, agents: readonly AgentOnNode[]): string[] {
  const problems: string[] = [];
  for (const a of agents) {
    if (!a.belongs) {
      if (a.after) problems.push(`${a.daemonSet}: a pod on ${node}, which placement.json keeps it off`);
      continue;
    }
    if (!a.after) problems.push(`${a.daemonSet}: no pod on ${node} after the rollout (does it tolerate ${taint}?)`);
    else if (a.after.uid === a.before) problems.push(`${a.daemonSet}: its pod on ${node} was not replaced by the rollout`);
    else if (a.updatedRevision && a.after.revision !== a.updatedRevision)
      problems.push(`${a.daemonSet}: its pod on ${node} is of revision ${a.after.revision}, not the rollout's ${a.updatedRevision}`);
    else if (a.after.phase !== "Running") problems.push(`${a.daemonSet}: its new pod on ${node} is ${a.after.phase}`);
  }
  return problems;
}

/** The protected resources (URNs) of the state before that the state after lacks. */
export function protectedLost(before: readonly { urn?: string; protect?: boolean }[], after: readonly { urn?: string }[]): string[] {
  const still = new Set(after.map((r) => r.urn));
  return before.filter((r) => r.protect && r.urn !== undefined && !still.has(r.urn)).map((r) => r.urn!);
}
