// The terminal summary of a placement report (`npm run plan`): one line per component with the
// nodes it can run on, whole role groups abbreviated.
import { failureSummary } from "./failure-table";
import { nodeGroups } from "./picture";
import type { PlacementReport } from "./report";

/** "controlPlane (3), cmp-01" : role groups all of whose nodes are eligible by name and count. */
function compactNodes(eligible: string[], r: Pick<PlacementReport, "nodes">): string {
  const set = new Set(eligible);
  const parts: string[] = [];
  for (const g of nodeGroups(r.nodes)) {
    const inGroup = g.nodes.filter((n) => set.has(n.name)).map((n) => n.name);
    if (inGroup.length === 0) continue;
    if (inGroup.length === g.nodes.length && g.nodes.length > 1) parts.push(`${g.name} (${g.nodes.length})`);
    else parts.push(...inGroup);
  }
  return parts.join(", ") || "no node";
}

export function placementSummary(r: PlacementReport): string[] {
  if (r.placements.length === 0) return ["placement: no component places pods yet"];
  const verdict = r.checks.length === 0 ? "every placement check passed" : `${r.checks.length} placement check(s) failed`;
  const lines = [`placement: ${r.placements.length} component(s) on ${r.nodes.length} node(s), ${verdict}`];
  const width = Math.max(...r.placements.map((p) => p.component.name.length));
  for (const p of r.placements) {
    const c = p.component;
    const count = c.kind === "DaemonSet" ? "" : c.replicas !== undefined ? ` ×${c.replicas}` : "";
    lines.push(`  ${c.name.padEnd(width)}  ${`${c.kind}${count}`.padEnd(16)} ${p.eligible.length}/${r.nodes.length}: ${compactNodes(p.eligible, r)}`);
  }
  // the largest loss the stack survives, right under the verdict: what an operator weighs a change by
  const failure = failureSummary(r.failureDomains);
  return failure ? [lines[0], failure, ...lines.slice(1)] : lines;
}
