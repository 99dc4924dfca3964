// Failure domains (issue 39): what the cloud loses when a node fails, when a zone fails, while the
// inventory drains some nodes, and when one node more fails while they are drained. The feasibility
// model (./feasibility.ts) judges the transitions an operator asks for; this judges what nobody asks
// for. Each constraint of that model says what a loss costs of what its component owns (its `loss`:
// etcd's quorum here and in ./quorums.ts, OpenKeel's quorums, Swift, gateways, ingress, hypervisors
// and Ironic in openkeel/feasibility.ts, Longhorn's volumes in platform/longhorn-feasibility.ts,
// Kube-OVN's central in platform/kube-ovn.ts, NodeHealthCheck's fencing in platform/medik8s.ts),
// from the facts it reads of the Plan: at worst, where the scheduling leaves a choice (3 Galera
// members on 6 controlPlane nodes: any lost node may hold one, one per zone at most where a required
// zone anti-affinity says so).
//
// The table is plain data (placement/failure-table.ts): nodes with the same roles, zone and
// memberships are one row (their findings are the same, and a 5000-node inventory stays a few dozen
// rows). A stack that must survive a loss (production: any node; large: any zone, § 6.3) refuses a
// fatal one as a plan check, naming what it costs and the fix.
import type { LifecycleFacts } from "../config/lifecycle";
import { isDrained } from "../config/lifecycle";
import type { Check } from "../config/problems";
import { lossText, rowLevel, type FailureDomainRow, type FailureDomainTable, type LossFinding, type LossKind } from "../placement/failure-table";
import { Loss, type JudgedNode, type NodeConstraint } from "./feasibility";

interface Scenario {
  kind: LossKind;
  zone?: string | undefined;
  /** The row's nodes: a class (any one of them), a zone's, or the drained ones. */
  nodes: string[];
  loss: Loss;
}

/**
 * Nodes a loss cannot tell apart: the same roles, zone, control-plane membership, and the same
 * named lists among the facts (Kube-OVN's masters): one row, judged once for its first node.
 */
function nodeClasses(nodes: readonly JudgedNode[], facts: Readonly<Record<string, LifecycleFacts>>): string[][] {
  const memberships = new Map<string, string[]>();
  for (const [key, f] of Object.entries(facts)) {
    for (const [fact, value] of Object.entries(f)) {
      if (!Array.isArray(value)) continue;
      for (const name of value as readonly string[]) memberships.set(name, [...(memberships.get(name) ?? []), `${key}.${fact}`]);
    }
  }
  const classes = new Map<string, string[]>();
  for (const n of nodes) {
    const sig = JSON.stringify([[...n.roles].sort(), n.zone ?? "", n.kubernetesControlPlane === true, memberships.get(n.name) ?? []]);
    classes.set(sig, [...(classes.get(sig) ?? []), n.name]);
  }
  return [...classes.values()];
}

function scenarios(nodes: readonly JudgedNode[], facts: Readonly<Record<string, LifecycleFacts>>): Scenario[] {
  const classes = nodeClasses(nodes, facts);
  const out: Scenario[] = classes.map((c) => ({ kind: "node", nodes: c, loss: new Loss(nodes, new Set([c[0]])) }));
  const zones = [...new Set(nodes.flatMap((n) => (n.zone !== undefined ? [n.zone] : [])))].sort();
  for (const zone of zones) {
    const inZone = nodes.filter((n) => n.zone === zone).map((n) => n.name);
    out.push({ kind: "zone", zone, nodes: inZone, loss: new Loss(nodes, new Set(inZone)) });
  }
  const drained = nodes.filter((n) => isDrained(n.state)).map((n) => n.name);
  if (drained.length === 0) return out;
  const set = new Set(drained);
  out.push({ kind: "drained", nodes: drained, loss: new Loss(nodes, set, set) });
  for (const c of classes) {
    const up = c.filter((n) => !set.has(n));
    if (up.length > 0) out.push({ kind: "drained+node", nodes: up, loss: new Loss(nodes, new Set([...drained, up[0]]), set) });
  }
  return out;
}

/** The stack's zones, in order. */
function zonesOf(nodes: readonly JudgedNode[]): string[] {
  return [...new Set(nodes.flatMap((n) => (n.zone !== undefined ? [n.zone] : [])))].sort();
}

/** Every finding of a loss, each constraint's with its facts, each `what` once (the first says it). */
function findingsOf(loss: Loss, constraints: readonly NodeConstraint[], facts: Readonly<Record<string, LifecycleFacts>>): LossFinding[] {
  const seen = new Set<string>();
  return constraints
    .flatMap((c) => c.loss?.(loss, facts[c.key]) ?? [])
    .filter((f) => {
      if (seen.has(f.what)) return false;
      seen.add(f.what);
      return true;
    });
}

/**
 * The failure-domain table of an inventory: its nodes (the Plan's, with their zones and states),
 * the constraints of its components, the facts they read of its Plan, and the losses it must survive.
 */
export function failureDomainTable(
  nodes: readonly JudgedNode[],
  constraints: readonly NodeConstraint[],
  facts: Readonly<Record<string, LifecycleFacts>>,
  required: readonly LossKind[],
): FailureDomainTable {
  const rows: FailureDomainRow[] = scenarios(nodes, facts).map((s) => ({
    kind: s.kind,
    ...(s.zone !== undefined ? { zone: s.zone } : {}),
    nodes: s.nodes,
    findings: findingsOf(s.loss, constraints, facts),
  }));
  return { zones: zonesOf(nodes), drained: nodes.filter((n) => isDrained(n.state)).map((n) => n.name), required: [...required], rows };
}

const REQUIRED_REASON: Partial<Record<LossKind, string>> = {
  node: "a production stack survives the loss of any one node (§ 6.1: one node down leaves every quorum)",
  zone: "the large topology survives the loss of a zone (§ 6.3: one member per zone)",
};

const NODE_LOSS_CODE = "node-loss-fatal";
const ZONE_LOSS_CODE = "zone-loss-fatal";

/**
 * The plan check: a fatal loss the stack must survive is an error, per row, with what it costs and
 * each owner's fix. `nodeIndex`: a node's index in openkeel:nodes, for the key path.
 */
export function failureDomainChecks(table: FailureDomainTable, nodeIndex: (name: string) => number): Check[] {
  return table.rows
    .filter((r) => table.required.includes(r.kind) && rowLevel(r) === "fatal")
    .map((r) => {
      const fatal = r.findings.filter((f) => f.level === "fatal");
      const i = nodeIndex(r.nodes[0]);
      return {
        level: "error",
        code: r.kind === "zone" ? ZONE_LOSS_CODE : NODE_LOSS_CODE,
        message: `${lossText(r, table.drained)} would be fatal: ${fatal.map((f) => `${f.what}: ${f.message}`).join("; ")}`,
        reason: REQUIRED_REASON[r.kind],
        fix: [...new Set(fatal.flatMap((f) => (f.fix ? [f.fix] : [])))].join("; ") || "add nodes of the roles the findings name",
        path: r.kind === "node" && i >= 0 ? `openkeel:nodes[${i}]` : "openkeel:nodes",
      };
    });
}
