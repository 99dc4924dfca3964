// The upgrade check of `npm run plan` and `npm run render`: per stack, the pins of this program
// (platform/versions.ts as loaded) against those of the stack's committed state (review/committed-pins.ts),
// judged by the upgrade rules (platform/upgrade-rules.ts, judged by platform/upgrades.ts), for the
// components the stack installs. The preview makes the same comparison between its two checkouts (review/preview-upgrades.ts).
import * as fs from "node:fs";
import * as path from "node:path";
import { EXIT_BAD_CONFIG, UserError } from "../cli/cli";
import { formatProblem, type Check } from "../config/problems";
import { componentUpgrades, ruleApplies, type ComponentUpgrade, type PinExports, type StackUse } from "../platform/upgrades";
import * as VERSIONS from "../platform/versions";
import { UPGRADE_RULES } from "../platform/upgrade-rules";
import { committedState, pinsOfSource, versionsAt, type CommittedState, type Fallback } from "./committed-pins";

/** This program's pins, and the text they were loaded from (a commit whose text is the same has the same pins). */
const HEAD_PINS: PinExports = { ...VERSIONS };
const HEAD_TEXT = fs.readFileSync(path.resolve(__dirname, "../platform/versions.ts"), "utf8");

export interface StackUpgrades {
  stack: string;
  /** What the pins were compared with; undefined when there was nothing to compare with (`note` says why). */
  where?: string | undefined;
  upgrades: ComponentUpgrade[];
  note?: string | undefined;
}

/** `Longhorn 1.12.1 → 1.12.2`, `MariaDB (Galera) 11.4.13: another digest`. */
export function upgradeLine(u: ComponentUpgrade): string {
  const m = u.moves[0];
  if (!m) return `${u.rule.component}: ${u.problems.length} problem(s)`;
  const what = m.from === m.to ? `${m.from}: another ${m.detailTo?.startsWith("sha256:") ? "digest" : "source"}` : `${m.from} → ${m.to}`;
  return `${u.rule.component} ${what}${u.moves.length > 1 ? ` (${u.moves.length} pins)` : ""}`;
}

/** The refused steps, each as one line naming the stack and what it was compared with. */
export function upgradeErrors(checks: StackUpgrades[]): string[] {
  return checks.flatMap((c) =>
    c.upgrades.flatMap((u) => u.problems.filter((p: Check) => p.level === "error").map((p) => `${c.stack}, against ${c.where}: ${formatProblem(p)}`)),
  );
}

/** Where each stack is judged: its committed state in the stacks folder's repository, or why there is none. */
export interface StackState {
  stack: string;
  state?: CommittedState;
  /** Why there is no committed state (no git work tree, no commit). */
  note?: string;
}

/**
 * The committed state of each stack in `repo` (the work tree of the stacks folder; undefined: none,
 * so nothing to compare with). `base` names it for every stack (an unknown ref is a usage error);
 * `fallback` is where a stack never deployed is judged instead of HEAD (the preview's base).
 */
export function stackStates(repo: string | undefined, stacks: readonly string[], base?: string, fallback?: Fallback): StackState[] {
  return stacks.map((stack) => {
    if (repo === undefined) {
      if (base !== undefined) throw new UserError(`--base ${base}: the stacks folder is in no git work tree to find it in`, EXIT_BAD_CONFIG);
      return { stack, note: "the stacks folder is in no git work tree: no committed state to compare with" };
    }
    const state = committedState(repo, stack, base, fallback);
    if (!state) {
      if (base !== undefined)
        throw new UserError(`--base ${base}: no such commit in ${repo}. Fix: fetch it first (git fetch origin main) or name another ref`, EXIT_BAD_CONFIG);
      return { stack, note: `${repo} has no commit: no committed state to compare with` };
    }
    return { stack, state };
  });
}

/** Per commit: its pins when they differ from this program's (undefined: the same file), or missing. */
type PinsAt = Map<string, { pins?: PinExports; missing: boolean }>;

/** The components a stack installs (`use`) whose pins moved since its committed state (`at`), in `repo`. */
function upgradesAt(repo: string, at: StackState, use: StackUse, cache: PinsAt): StackUpgrades {
  const { stack, state } = at;
  if (!state) return { stack, upgrades: [], note: at.note };
  let pinsAt = cache.get(state.commit);
  if (!pinsAt) {
    const text = versionsAt(repo, state.commit);
    const differs = text !== undefined && text !== HEAD_TEXT;
    pinsAt = { missing: text === undefined, ...(differs ? { pins: pinsOfSource(text, `platform/versions.ts at ${state.commit.slice(0, 12)}`) } : {}) };
    cache.set(state.commit, pinsAt);
  }
  if (pinsAt.missing) return { stack, where: state.where, upgrades: [], note: `${state.where} has no platform/versions.ts: no pins to compare with` };
  const pins = pinsAt.pins;
  const upgrades = pins ? componentUpgrades(pins, HEAD_PINS, UPGRADE_RULES).filter((u) => ruleApplies(u.rule, HEAD_PINS, use)) : [];
  return { stack, where: state.where, upgrades };
}

/**
 * For each stack, the components it installs whose pins moved since its committed state (`states`,
 * in the same order, from stackStates) in `repo`.
 */
export function stackUpgrades(repo: string | undefined, stacks: { stack: string; use: StackUse }[], states: readonly StackState[]): StackUpgrades[] {
  const cache: PinsAt = new Map();
  return stacks.map(({ stack, use }, i) => (repo === undefined ? { stack, upgrades: [], note: states[i].note } : upgradesAt(repo, states[i], use, cache)));
}
