// The plan-check warnings of a run, printed once: a warning several stacks share — the same code,
// reason and fix, which is what it means — is one block naming each stack's own part (its file, key
// path and message), instead of the same paragraph per stack (ovs-two-stacks: six hundred
// characters on every production stack). A warning of one stack is its usual line.
import { formatProblem, problemPath, type Check } from "../config/problems";

export interface StackWarning {
  stack: string;
  /** The stack file the warning is about. */
  file: string;
  warning: Check;
}

/** The plan-check warnings of planned stacks, each with its stack and file. */
export function planWarnings(stacks: readonly { plan: { stack: string; warnings: readonly Check[] }; config: { file: string } }[]): StackWarning[] {
  return stacks.flatMap(({ plan, config }) => plan.warnings.map((warning) => ({ stack: plan.stack, file: config.file, warning })));
}

const meaning = (w: Check) => JSON.stringify([w.code, w.reason ?? "", w.fix]);

/** The lines to print for a run's warnings, each meaning once, in the order first met. */
export function warningLines(warnings: readonly StackWarning[]): string[] {
  const groups = new Map<string, StackWarning[]>();
  for (const w of warnings) groups.set(meaning(w.warning), [...(groups.get(meaning(w.warning)) ?? []), w]);
  return [...groups.values()].flatMap((group) => {
    const stacks = [...new Set(group.map((g) => g.stack))];
    if (group.length === 1) return [formatProblem({ ...group[0].warning, file: group[0].file })];
    const { code, reason, fix } = group[0].warning;
    return [
      `warning [${code}] in ${stacks.length === 1 ? stacks[0] : `${stacks.length} stacks (${stacks.join(", ")})`}:${reason ? ` ${reason}.` : ""} Fix: ${fix}`,
      ...group.map((g) => `  ${[g.file, problemPath(g.warning)].filter(Boolean).join(": ")}: ${g.warning.message}`),
    ];
  });
}
