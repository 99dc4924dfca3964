// What a change does to the nodes, judged against the reference's render (review/preview.ts lists
// these among a change's findings): the removal guard and the drain sequence (lifecycle/guards.ts,
// with the feasibility model's constraints of the stack's environment), and a running quorum's zone
// spread changed under its strict-local members (openkeel/quorum-moves.ts).
import type { Check } from "../config/problems";
import { resolveEnvironment } from "../environments";
import { drainSequenceChecks, nodeRemovalChecks } from "../lifecycle/guards";
import { quorumMoveChecks } from "../openkeel/quorum-moves";
import type { Index, Judged } from "./preview-model";

/**
 * A node leaving without having been retiring in the reference, a removal that breaks what the
 * feasibility model holds, a drain that starts while another node comes back (lifecycle/guards.ts),
 * judged with the facts of the reference's render.
 */
export function nodeFindings(bi: Index, hi: Index, judged: Judged): Check[] {
  const { constraints, holdings, drainer } = resolveEnvironment(bi.environment || hi.environment);
  const removal = nodeRemovalChecks(bi.nodes, hi.nodes, judged.where, {
    constraints,
    facts: bi.feasibility ?? hi.feasibility,
    retiredAt: judged.retiredAt,
    holdings,
    drainer,
  });
  const sequence = drainSequenceChecks(bi.nodes, hi.nodes, judged.where, constraints, hi.feasibility ?? bi.feasibility);
  // a running quorum's zone spread changed under members its strict-local volumes pin (issue 39)
  const moves = quorumMoveChecks(bi, hi, judged.where);
  return [...removal, ...sequence, ...moves].map((c) => ({
    level: c.level,
    code: c.code,
    message: c.message,
    ...(c.reason ? { reason: c.reason } : {}),
    fix: c.fix,
    ...(c.path ? { path: c.path } : {}),
  }));
}
