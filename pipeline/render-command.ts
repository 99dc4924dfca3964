// `npm run render` as a function of its arguments: the CLI (scripts/render.ts), the tests and the
// benchmark run the same code, the last two in-process with the output captured.
// Nothing is written unless every named stack loads, passes its plan checks and keeps every unit
// that owns data (review/protected.ts). Each stack is written whole or not at all (cli/write.ts):
// SIGINT or SIGTERM stops the writing at the next file, leaving the stacks not yet written as they
// were; what an earlier render killed outright left is cleared first.
import { spawnSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import * as fs from "node:fs";
import * as path from "node:path";
import { INDEX_FILE, readIndex, RenderedFormatError, renderedIndex, renderPlan, type RenderedFile, type RenderedIndex } from "../render/rendered";
import { allUnits } from "../plan/plan";
import { args, EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, formatCheck, interruptible, planStacks, UserError, type Io } from "../cli/cli";
import { Interrupted } from "../cli/errors";
import { planWarnings, warningLines, type StackWarning } from "../cli/warnings";
import { describeLoss, PROTECTED_REMOVAL_CODE, protectedLosses } from "../review/protected";
import { nodeRemovalChecks } from "../lifecycle/guards";
import { clearLeftovers, removeStaleStacks, writeStackDir } from "../cli/write";
import { workTreeOf } from "../review/committed-pins";
import { stackUpgrades, upgradeErrors, upgradeLine, type StackUpgrades } from "../review/upgrade-check";
import { stackUse } from "../platform/upgrades";
import type { Plan } from "../plan/plan";
import { formatProblem, isError } from "../config/problems";
import { classReplacements, type StackClassReplacements } from "../review/class-replacements";
import { stackConstraints } from "../environments";
import { quorumMoveChecks } from "../openkeel/quorum-moves";

const RENDER_OPTIONS = {
  stack: { type: "string", multiple: true },
  out: { type: "string", default: "rendered" },
  "stacks-dir": { type: "string", default: "stacks" },
  /** A protected unit whose removal (or an object's) this render may write; repeatable. */
  "allow-removal": { type: "string", multiple: true },
  /** The committed state the upgrade check compares the pins with (default: deployed/<stack>, else HEAD). */
  base: { type: "string" },
  /** The caller compares the pins and the priority classes itself (npm run preview, between its two checkouts). */
  "skip-upgrade-check": { type: "boolean", default: false },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const RENDER_SCRIPT = path.resolve(__dirname, "../scripts/render.ts");

/** The previous render of a stack's index: its text and where it was read, for messages. */
interface PreviousIndex {
  text: string;
  where: string;
}

const git = (cwd: string, argv: string[]) => spawnSync("git", ["-C", cwd, ...argv], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });

/** The pins each rendered stack installs against its committed state (review/upgrade-check.ts), in the stacks folder's repository. */
export function renderedUpgrades(stacksDir: string, rendered: { plan: Plan; files: RenderedFile[] }[], base?: string): StackUpgrades[] {
  const stacks = rendered.map(({ plan, files }) => ({ stack: plan.stack, use: stackUse(renderedIndex(plan), new Map(files.map((f) => [f.path, f.content]))) }));
  return stackUpgrades(workTreeOf(stacksDir), stacks, base);
}

/**
 * What the stacks' committed state (the last deployed commit, or --base) says of this render: pins
 * moved further than upstream supports, and the PriorityClasses `pulumi up` replaces (read from
 * that commit's render of the stack).
 */
function againstCommittedState(
  stacksDir: string,
  out: string,
  rendered: { plan: Plan; files: RenderedFile[] }[],
  base: string | undefined,
): { upgrades: StackUpgrades[]; classes: StackClassReplacements[] } {
  const upgrades = renderedUpgrades(stacksDir, rendered, base);
  const classes = classReplacements(
    workTreeOf(stacksDir),
    rendered.map((r) => r.plan),
    base,
    committedRenderDir(stacksDir, out),
  );
  return { upgrades, classes };
}

/**
 * Where the stacks' repository commits the renders: the output folder, when it lies in that work
 * tree, else its `rendered/` (a render written elsewhere is compared with the committed one).
 */
export function committedRenderDir(stacksDir: string, out: string): string {
  const root = workTreeOf(stacksDir);
  if (root === undefined) return "rendered";
  let dir = path.resolve(out);
  while (!fs.existsSync(dir)) dir = path.dirname(dir);
  const rel = path
    .relative(root, path.join(fs.realpathSync(dir), path.relative(dir, path.resolve(out))))
    .split(path.sep)
    .join("/");
  return rel === "" || rel.startsWith("..") || path.isAbsolute(rel) ? "rendered" : rel;
}

/**
 * The committed version of a file (git `HEAD:<path>`) of work tree `root` (the output folder's:
 * asked once per render), or undefined when there is none, the file lies outside it, or HEAD has no
 * such file. The file itself may be missing.
 */
function committedFile(file: string, root: string | undefined): PreviousIndex | undefined {
  if (root === undefined) return undefined;
  let dir = path.dirname(path.resolve(file));
  while (!fs.existsSync(dir)) dir = path.dirname(dir);
  const rel = path
    .relative(root, path.join(fs.realpathSync(dir), path.relative(dir, path.resolve(file))))
    .split(path.sep)
    .join("/");
  if (rel.startsWith("../")) return undefined;
  const show = git(root, ["show", `HEAD:${rel}`]);
  return show.status === 0 ? { text: show.stdout, where: `git HEAD:${rel}` } : undefined;
}

/**
 * What the guards compare a stack's new Plan with. `previous` (the removal guard's): the render in
 * the output folder, else, when that folder (or the stack's render in it) is gone, its committed
 * version. `committed` (the node guard's): the committed render first (a node may leave only after
 * it was retiring in a committed, so reviewed and deployed, inventory), else the render on disk.
 */
function previousIndexes(out: string, stack: string, root: string | undefined): { previous: PreviousIndex; committed: PreviousIndex } | undefined {
  const file = path.join(out, stack, INDEX_FILE);
  const committed = committedFile(file, root);
  const onDisk = fs.existsSync(file) ? { text: fs.readFileSync(file, "utf8"), where: file } : undefined;
  const previous = onDisk ?? committed;
  return previous && { previous, committed: committed ?? previous };
}

/** A previous index (through the rendered model); one this code cannot read is the user's to move out of the way. */
function parseIndex(previous: PreviousIndex, file: string): RenderedIndex {
  try {
    return readIndex(previous.text, previous.where);
  } catch (e) {
    if (!(e instanceof RenderedFormatError)) throw e;
    throw new UserError(`${e.problem}. Fix: remove ${path.dirname(file)}/ or render elsewhere with --out`, EXIT_BAD_CONFIG);
  }
}

/**
 * Tests only: a pause of this many milliseconds at each turn of the writing, while a stack's
 * temporary folder exists, so that a test can stop the render there (test/render-interrupt.test.ts).
 */
const PAUSE_ENV = "OPENKEEL_RENDER_TEST_PAUSE_MS";

function testPause(): ((signal?: AbortSignal) => Promise<void>) | undefined {
  const ms = Number(process.env[PAUSE_ENV] ?? 0);
  return ms > 0 ? (signal) => sleep(ms, undefined, { signal }).catch(() => undefined) : undefined;
}

/** Write every rendered stack, each whole; a signal stops it between two files, and the message says which stacks were written. */
async function writeAll(out: string, rendered: { name: string; files: RenderedFile[] }[], written: (i: number) => void): Promise<void> {
  const done: string[] = [];
  const afterTurn = testPause();
  try {
    await interruptible(async (signal) => {
      for (const [i, { name, files }] of rendered.entries()) {
        await writeStackDir(out, name, files, { signal, afterTurn });
        done.push(name);
        written(i);
      }
    });
  } catch (e) {
    if (!(e instanceof Interrupted)) throw e;
    const left = rendered.map((r) => r.name).filter((n) => !done.includes(n));
    throw new Interrupted(
      e.signal,
      `render stopped by ${e.signal}: ${done.length ? `${done.map((n) => `${out}/${n}/`).join(", ")} written; ` : ""}` +
        `${left.map((n) => `${out}/${n}/`).join(", ")} as before (no stack half-written, no temporary folder left)`,
    );
  }
}

/** What the render says of a stack it wrote: its shape, where, and the upgrades it carries. */
function writtenLines(plan: Plan, files: number, out: string, u: StackUpgrades | undefined): string {
  const head = `${plan.stack}: ${plan.environment}/${plan.topology}, ${plan.nodes.length} nodes, ${allUnits(plan).length} units, ${files} files → ${out}/${plan.stack}/\n`;
  return u?.upgrades.length ? `${head}  upgrades against ${u.where}: ${u.upgrades.map(upgradeLine).join("; ")}\n` : head;
}

/** A stack's PriorityClass replacements against its committed render: warnings, under its line. */
function classLines(c: StackClassReplacements | undefined): string {
  return (c?.checks ?? []).map((check) => `  against ${c!.where}: ${formatProblem(check)}\n`).join("");
}

export async function renderCommand(argv: string[], io: Io): Promise<number> {
  const opts = args(RENDER_OPTIONS, argv, RENDER_SCRIPT);
  const out = opts.out!;
  const allowed = new Set(opts["allow-removal"] ?? []);
  const stacks = planStacks(opts.stack, opts["stacks-dir"], io.progress);
  const rendered = stacks.map((s) => ({ s, files: renderPlan(s.plan, s.result.placement) }));

  // Data-owning units the previous render (normally the committed one) had and this one drops.
  const refused: string[] = [];
  const removalWarnings: StackWarning[] = [];
  const notes: string[] = [];
  const root = workTreeOf(out);
  for (const { s } of rendered) {
    const file = path.join(out, s.plan.stack, INDEX_FILE);
    const found = previousIndexes(out, s.plan.stack, root);
    if (!found) {
      notes.push(`${s.plan.stack}: no previous render to guard the units that own data against (${file} is absent, and git HEAD holds none)`);
      continue;
    }
    const { previous, committed } = found;
    const index = parseIndex(previous, file);
    // the same text (the render on disk is the committed one, or there is only one) is parsed once
    const before = committed.text === previous.text ? index : parseIndex(committed, file);
    // judged with what the committed render runs (its facts), else with this render's
    const removal = [
      ...nodeRemovalChecks(before.nodes, s.plan.nodes, committed.where, stackConstraints(s.config), before.feasibility ?? s.plan.feasibility),
      // a running quorum's spread changed under members its strict-local volumes pin (issue 39)
      ...quorumMoveChecks(before, s.plan, committed.where),
    ];
    for (const c of removal) {
      if (isError(c)) refused.push(formatCheck(s.config.file, c));
      else removalWarnings.push({ stack: s.plan.stack, file: s.config.file, warning: c });
    }
    for (const loss of protectedLosses(index, s.plan)) {
      const what = `${describeLoss(loss)} (${previous.where} has it)`;
      if (allowed.has(loss.unit)) {
        notes.push(
          `${s.plan.stack}: ${what}: allowed by --allow-removal ${loss.unit}; pulumi up refuses it until you run pulumi state unprotect, and then leaves it in the cluster (retainOnDelete)`,
        );
        continue;
      }
      refused.push(
        formatCheck(s.config.file, {
          level: "error",
          code: PROTECTED_REMOVAL_CODE,
          message: what,
          fix: `keep it in the stack, or, if its data may go, render with --allow-removal ${loss.unit} and follow docs/operating.md "Removing a unit that owns data"`,
        }),
      );
    }
  }
  const { upgrades, classes } = opts["skip-upgrade-check"]
    ? { upgrades: [], classes: [] }
    : againstCommittedState(
        opts["stacks-dir"]!,
        out,
        rendered.map(({ s, files }) => ({ plan: s.plan, files })),
        opts.base,
      );
  refused.push(...upgradeErrors(upgrades));
  if (refused.length > 0) throw new UserError(refused.join("\n"), EXIT_CHECKS_FAILED);

  const cleared = clearLeftovers(out);
  if (cleared) io.out(`${cleared}\n`);
  await writeAll(
    out,
    rendered.map(({ s, files }) => ({ name: s.plan.stack, files })),
    (i) => io.out(writtenLines(rendered[i].s.plan, rendered[i].files.length, out, upgrades[i]) + classLines(classes[i])),
  );
  // each warning once for the run, however many stacks have it (cli/warnings.ts)
  const warnings = [...planWarnings(stacks), ...removalWarnings];
  for (const line of warningLines(warnings)) io.out(`${line}\n`);
  for (const note of notes) io.out(`${note}\n`);
  if (!opts.stack?.length) {
    for (const gone of removeStaleStacks(
      out,
      rendered.map((r) => r.s.plan.stack),
    )) {
      io.out(`${gone}: no stack file any more, removed ${out}/${gone}/\n`);
    }
  }
  const classWarnings = classes.reduce((n, c) => n + (c?.checks.length ?? 0), 0);
  io.out(`rendered ${rendered.length} stack(s), ${warnings.length + classWarnings} warning(s)\n`);
  return 0;
}
