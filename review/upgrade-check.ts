// The upgrade check of `npm run plan` and `npm run render`: per stack, the pins of this program
// (platform/versions.ts as loaded) against those of the stack's committed state (review/committed-pins.ts),
// judged by the upgrade rules (platform/upgrades.ts), for the components the stack installs. The
// preview makes the same comparison between its two checkouts (review/preview-upgrades.ts).
import * as fs from "node:fs";
import * as path from "node:path";
import { EXIT_BAD_CONFIG, UserError } from "../cli/cli";
import { formatProblem, type Check } from "../config/problems";
import { componentUpgrades, ruleApplies, type ComponentUpgrade, type PinExports, type StackUse } from "../platform/upgrades";
import * as VERSIONS from "../platform/versions";
import { committedState, pinsOfSource, versionsAt } from "./committed-pins";

/** This program's pins, and the text they were loaded from (a commit whose text is the same has the same pins). */
const HEAD_PINS: PinExports = { ...VERSIONS };
const HEAD_TEXT = fs.readFileSync(path.resolve(__dirname, "../platform/versions.ts"), "utf8");

export interface StackUpgrades {
  stack: string;
  /** What the pins were compared with; undefined when there was nothing to compare with (`note` says why). */
  where?: string;
  upgrades: ComponentUpgrade[];
  note?: string;
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

/**
 * For each stack, the components it installs whose pins moved since its committed state in `repo`
 * (the work tree of the stacks folder; undefined: none, so nothing to compare with). `base` names
 * the committed state for every stack (the PR workflow's base branch); an unknown ref is a usage error.
 */
export function stackUpgrades(repo: string | undefined, stacks: { stack: string; use: StackUse }[], base?: string): StackUpgrades[] {
  /** Per commit: its pins when they differ from this program's (undefined: the same file), or missing. */
  const basePins = new Map<string, { pins?: PinExports; missing: boolean }>();
  return stacks.map(({ stack, use }) => {
    if (repo === undefined) {
      if (base !== undefined) throw new UserError(`--base ${base}: the stacks folder is in no git work tree to find it in`, EXIT_BAD_CONFIG);
      return { stack, upgrades: [], note: "the stacks folder is in no git work tree: no committed pins to compare with" };
    }
    const state = committedState(repo, stack, base);
    if (!state) {
      if (base !== undefined)
        throw new UserError(`--base ${base}: no such commit in ${repo}. Fix: fetch it first (git fetch origin main) or name another ref`, EXIT_BAD_CONFIG);
      return { stack, upgrades: [], note: `${repo} has no commit: no committed pins to compare with` };
    }
    let at = basePins.get(state.commit);
    if (!at) {
      const text = versionsAt(repo, state.commit);
      const differs = text !== undefined && text !== HEAD_TEXT;
      at = { missing: text === undefined, ...(differs ? { pins: pinsOfSource(text, `platform/versions.ts at ${state.commit.slice(0, 12)}`) } : {}) };
      basePins.set(state.commit, at);
    }
    if (at.missing) return { stack, where: state.where, upgrades: [], note: `${state.where} has no platform/versions.ts: no pins to compare with` };
    const pins = at.pins;
    const upgrades = pins ? componentUpgrades(pins, HEAD_PINS, VERSIONS.UPGRADE_RULES).filter((u) => ruleApplies(u.rule, HEAD_PINS, use)) : [];
    return { stack, where: state.where, upgrades };
  });
}
