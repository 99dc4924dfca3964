// What a change does to the failure domains (issue 39): the base's and the head's failure-domain
// tables (placement.json, lifecycle/failure-domains.ts) compared loss by loss, and every loss that a
// change makes worse — a component it leaves degraded or loses that it did not before — said as a
// finding of the preview: "after this change, losing zone zone-b is fatal: Galera: …". A loss the
// base did not have (a node lost while the change drains others) is compared with the same node's
// loss in the base and with the drain alone: what the combination adds.
// A loss the stack must survive and cannot never gets here: the head's render refuses it.
import type { Check } from "../config/problems";
import { isWorse, lossText, rowLevel, type FailureDomainRow, type FailureDomainTable, type LossFinding, type LossLevel } from "../placement/failure-table";

/** The level of each `what` of a row (absent: untouched, as good as holding). */
function levels(row: FailureDomainRow | undefined): Map<string, LossLevel> {
  return new Map((row?.findings ?? []).map((f) => [f.what, f.level]));
}

/** The base row a head row's node is compared with: the same kind of loss of that node, else its plain loss. */
function baseRowOf(base: FailureDomainTable, kind: FailureDomainRow["kind"], node: string): FailureDomainRow | undefined {
  const of = (k: FailureDomainRow["kind"]) => base.rows.find((r) => r.kind === k && r.nodes.includes(node));
  return kind === "drained+node" ? (of("drained+node") ?? of("node")) : of(kind);
}

/** Head rows split by the base row each of their nodes is compared with: the nodes that compare alike stay together. */
function pairs(base: FailureDomainTable, head: FailureDomainTable): { row: FailureDomainRow; before?: FailureDomainRow | undefined }[] {
  const out: { row: FailureDomainRow; before?: FailureDomainRow | undefined }[] = [];
  for (const row of head.rows) {
    if (row.kind === "zone") {
      const before = base.rows.find((r) => r.kind === "zone" && r.zone === row.zone);
      if (before) out.push({ row, before });
      continue;
    }
    if (row.kind === "drained") {
      out.push({ row, before: base.rows.find((r) => r.kind === "drained") });
      continue;
    }
    const byBase = new Map<FailureDomainRow, string[]>();
    // a node the base did not have has nothing to be worse than
    for (const n of row.nodes) {
      const before = baseRowOf(base, row.kind, n);
      if (before) byBase.set(before, [...(byBase.get(before) ?? []), n]);
    }
    for (const [before, nodes] of byBase) out.push({ row: { ...row, nodes }, before });
  }
  return out;
}

const describe = (f: LossFinding) => `${f.what}: ${f.message}`;
const VERDICT: Record<LossLevel, string> = { holds: "holds", degraded: "runs degraded", fatal: "is fatal" };

/** The preview's findings: one per loss a change makes worse, with what got worse and each owner's fix. */
export function failureDomainFindings(base: FailureDomainTable | undefined, head: FailureDomainTable | undefined): Check[] {
  if (!base || !head) return [];
  const findings: Check[] = [];
  const drain = levels(head.rows.find((r) => r.kind === "drained"));
  for (const { row, before } of pairs(base, head)) {
    const was = levels(before);
    // a node lost while others are drained: what the drain alone costs is the drain's row
    if (row.kind === "drained+node") for (const [what, level] of drain) if (isWorse(level, was.get(what) ?? "holds")) was.set(what, level);
    const worse = row.findings.filter((f) => isWorse(f.level, was.get(f.what) ?? "holds"));
    if (worse.length === 0) continue;
    const fatal = worse.some((f) => f.level === "fatal");
    findings.push({
      level: "warning",
      code: "failure-domain",
      message: `after this change, ${lossText(row, head.drained)} ${fatal ? "is fatal" : "runs degraded"}: ${worse.map(describe).join("; ")}`,
      reason: `in the base, ${before ? `${lossText(before.kind === "zone" ? before : { ...before, nodes: row.nodes }, base.drained)} ${VERDICT[rowLevel(before)]}` : "no node is drained"} (the failure-domain table of placement.md, docs/node-lifecycle.md)`,
      fix: [...new Set(worse.flatMap((f) => (f.fix ? [f.fix] : [])))].join("; ") || "see placement.md, Failure domains",
    });
  }
  return findings;
}
