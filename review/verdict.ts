// One verdict per change (issue 38): `npm run plan`, `npm run render`, `npm run preview` and the
// deploy gate (deploy.yml runs `npm run plan`) judge each stack's transition with the same checks
// against the same reference (./reference.ts: what is deployed, `deployed/<stack>`, else the commit
// the change builds on). The checks are the preview's findings between the reference's render and
// the new one (./preview.ts: data-owning units lost, replacements and updates the API refuses, the
// node guards and the feasibility model, drains in sequence, Swift's rings, upgrades by the rules),
// and the order of deploys: a change is never judged against a deployed commit it does not contain.
// The plan checks and placement checks of the stack itself run before, in every entry point alike
// (cli/cli.ts planStacks).
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { EXIT_BAD_CONFIG, formatCheck, UserError } from "../cli/cli";
import type { StackWarning } from "../cli/warnings";
import { isError, type Check } from "../config/problems";
import { hasTrait } from "../config/lifecycle";
import { INDEX_FILE, readIndex, RenderedFormatError, RenderedStack, renderedIndex, type RenderedFile } from "../render/rendered";
import type { Plan } from "../plan/plan";
import { stackUse } from "../platform/upgrades";
import { deployedRef, workTreeOf, type CommittedState } from "./committed-pins";
import { transitionFindings } from "./preview";
import type { Judged } from "./preview-model";
import { renderedFolderIn, stackReference, type Reference } from "./reference";
import { stackStates, stackUpgrades, type StackUpgrades } from "./upgrade-check";

const git = (repo: string, argv: string[]) => spawnSync("git", ["-C", repo, ...argv], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });

export const DEPLOY_ORDER_CODE = "deploy-order";

/**
 * A change judged against a deployed commit it does not contain (a branch behind main, a re-run of
 * an older deploy, main rewritten): `pulumi up` of it would take back what that commit deployed.
 */
export function deployOrderFindings(repo: string | undefined, state: CommittedState | undefined, stack: string): Check[] {
  if (repo === undefined || !state?.deployed) return [];
  const r = spawnSync("git", ["-C", repo, "merge-base", "--is-ancestor", state.commit, "HEAD"]);
  // 1: not an ancestor; anything else (a shallow history without it) is no judgement
  if (r.status !== 1) return [];
  return [
    {
      level: "error",
      code: DEPLOY_ORDER_CODE,
      message: `HEAD does not contain ${state.name}, the last deployed commit: deploying it would take back what that commit deployed (an older commit, a branch behind main, or main rewritten)`,
      fix: `build on main as it is now (git fetch, then rebase or merge origin/main); the deploy only ever moves ${deployedRef(stack)} forward`,
    },
  ];
}

/**
 * Where a node's retirement was merged but not deployed: the newest commit after `from` (what is
 * deployed) up to HEAD, on the first-parent line, whose committed render of the stack has it
 * retiring (`commit 1a2b3c4d5e6f (subject)`).
 */
export function retiredAtFinder(
  repo: string,
  from: CommittedState | undefined,
  renderedDir: string,
  stack: string,
): ((node: string) => string | undefined) | undefined {
  if (!from?.deployed) return undefined;
  const file = `${renderedDir ? `${renderedDir}/` : ""}${stack}/${INDEX_FILE}`;
  let commits: { commit: string; subject: string; nodes?: Map<string, string | undefined> }[] | undefined;
  return (node) => {
    commits ??= git(repo, ["log", "--first-parent", "--format=%H%x09%s", `${from.commit}..HEAD`, "--", file])
      .stdout.split("\n")
      .filter(Boolean)
      .map((l) => ({ commit: l.slice(0, l.indexOf("\t")), subject: l.slice(l.indexOf("\t") + 1) }));
    for (const c of commits) {
      if (!c.nodes) {
        const show = git(repo, ["show", `${c.commit}:${file}`]);
        c.nodes = new Map(show.status === 0 ? readIndex(show.stdout, `${c.commit}:${file}`).nodes.map((n) => [n.name, n.state]) : []);
      }
      if (hasTrait(c.nodes.get(node), "leavesInventory")) return `commit ${c.commit.slice(0, 12)} (${c.subject})`;
    }
    return undefined;
  };
}

/** One stack's verdict: what its transition was judged against, what it found, and its upgrades. */
export interface StackVerdict {
  stack: string;
  reference: Reference;
  findings: Check[];
  upgrades: StackUpgrades;
}

/**
 * The verdicts of planned stacks, each with its render (`files`): judged in the stacks folder's
 * repository (`base` names the reference by hand), or, outside git, against the previous render in
 * `out` when given.
 */
export function verdicts(
  stacksDir: string,
  rendered: readonly { plan: Plan; files: RenderedFile[] }[],
  o: { base?: string | undefined; out?: string | undefined } = {},
): StackVerdict[] {
  const repo = workTreeOf(stacksDir);
  const states = stackStates(
    repo,
    rendered.map((r) => r.plan.stack),
    o.base,
  );
  const renderedDir = repo === undefined ? undefined : renderedFolderIn(repo, stacksDir);
  const parsed = new Map<string, unknown[]>();
  const upgrades = stackUpgrades(
    repo,
    rendered.map(({ plan, files }) => ({ stack: plan.stack, use: stackUse(renderedIndex(plan), new Map(files.map((f) => [f.path, f.content]))) })),
    states,
  );
  return rendered.map(({ plan, files }, i) => {
    const stack = plan.stack;
    const head = new Map(files.map((f) => [f.path, f.content]));
    const { state, note } = states[i];
    const reference = stackReference({ repo, stack, state, note, renderedDir, head, parsed, ...(o.out ? { onDisk: path.join(o.out, stack) } : {}) });
    const judged: Judged = { where: reference.name };
    const retiredAt = repo !== undefined && renderedDir !== undefined ? retiredAtFinder(repo, state, renderedDir, stack) : undefined;
    if (retiredAt) judged.retiredAt = retiredAt;
    const findings = [
      ...deployOrderFindings(repo, state, stack),
      ...transitionFindings(reference.render, new RenderedStack(head, `this change/${stack}`, parsed), judged),
    ];
    return { stack, reference, findings, upgrades: upgrades[i] };
  });
}

/** A verdict's finding as a line: the stack, what it was judged against, then the problem in the stack file. */
export function verdictLine(v: StackVerdict, file: string, c: Check): string {
  return `${v.stack}, against ${v.reference.where}: ${formatCheck(file, c)}`;
}

/**
 * What a refused run prints of the verdicts (`errors`: whether any stack's transition has one): the
 * errors, one line each, and with them the warnings, which a run that goes on prints once for the
 * run instead (verdictWarnings): a refusal shows the whole verdict, as the preview does.
 */
export function verdictErrors(vs: readonly StackVerdict[], files: ReadonlyMap<string, string>): string[] {
  const errors = vs.flatMap((v) => v.findings.filter(isError).map((c) => verdictLine(v, files.get(v.stack) ?? "", c)));
  if (errors.length === 0) return [];
  return [...errors, ...vs.flatMap((v) => v.findings.filter((c) => !isError(c)).map((c) => verdictLine(v, files.get(v.stack) ?? "", c)))];
}

/**
 * The verdicts of the rendered stacks, or none when the caller judges them itself (`skip`: the
 * preview, against its reference; drift compares files only); a reference render this code cannot
 * read is the user's to move out of the way.
 */
export function judged(
  stacksDir: string,
  rendered: readonly { plan: Plan; files: RenderedFile[] }[],
  o: { base?: string | undefined; out?: string | undefined; skip?: boolean | undefined },
): StackVerdict[] {
  if (o.skip) return [];
  try {
    return verdicts(stacksDir, rendered, o);
  } catch (e) {
    if (!(e instanceof RenderedFormatError)) throw e;
    const fix = o.out ? `remove ${o.out}/<stack>/ or render elsewhere with --out` : "judge against another commit with --base";
    throw new UserError(`${e.problem}. Fix: ${fix}`, EXIT_BAD_CONFIG);
  }
}

/** The verdicts' findings that are no errors, as the run's warnings (printed once: cli/warnings.ts), each naming what it was judged against. */
export function verdictWarnings(vs: readonly StackVerdict[], files: ReadonlyMap<string, string>): StackWarning[] {
  return vs.flatMap((v) =>
    v.findings
      .filter((c) => !isError(c))
      .map((c) => ({ stack: v.stack, file: files.get(v.stack) ?? "", warning: { ...c, message: `${c.message} (against ${v.reference.where})` } })),
  );
}
