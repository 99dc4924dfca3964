// `npm run render` as a function of its arguments: the CLI (scripts/render.ts), the tests and the
// benchmark run the same code, the last two in-process with the output captured.
// Nothing is written unless every named stack loads, passes its plan checks and its transition's
// checks against what is deployed (review/verdict.ts: the same verdict as npm run plan, the preview
// and the deploy gate). Each stack is written whole or not at all (cli/write.ts):
// SIGINT or SIGTERM stops the writing at the next file, leaving the stacks not yet written as they
// were; what an earlier render killed outright left is cleared first.
import { setTimeout as sleep } from "node:timers/promises";
import * as path from "node:path";
import { renderPlan, type RenderedFile } from "../render/rendered";
import { allUnits, type Plan } from "../plan/plan";
import { args, EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, interruptible, planStacks, UserError, type Io } from "../cli/cli";
import { Interrupted } from "../cli/errors";
import { planWarnings, warningLines } from "../cli/warnings";
import { clearLeftovers, removeStaleStacks, writeStackDir } from "../cli/write";
import { upgradeErrors, upgradeLine } from "../review/upgrade-check";
import { judged, verdictErrors, verdictWarnings, type StackVerdict } from "../review/verdict";

const RENDER_OPTIONS = {
  stack: { type: "string", multiple: true },
  out: { type: "string", default: "rendered" },
  "stacks-dir": { type: "string", default: "stacks" },
  /** The committed state the stacks are judged against (default: deployed/<stack>, else HEAD). */
  base: { type: "string" },
  /** The caller judges the transition itself (npm run preview, against its reference) or compares files only (npm run drift). */
  "skip-transition-checks": { type: "boolean", default: false },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const RENDER_SCRIPT = path.resolve(__dirname, "../scripts/render.ts");

/**
 * `--allow-removal` left no trace in the pull request, and the deploy never knew of it: the allowance
 * is the stack's `openkeel:allowRemoval`, reviewed, shown by the preview and honoured by the deploy.
 */
function refuseAllowRemoval(argv: readonly string[]): void {
  const units = argv.flatMap((a, i) => (a === "--allow-removal" ? [argv[i + 1] ?? "<unit>"] : a.startsWith("--allow-removal=") ? [a.slice(16)] : []));
  if (units.length === 0) return;
  throw new UserError(
    `--allow-removal ${units.join(", ")}: an allowance on the command line leaves no trace in the pull request, and the deploy would not know of it. ` +
      `Fix: add openkeel:allowRemoval: [${units.join(", ")}] to the stack file: reviewed in the pull request, shown by the preview, honoured by the deploy (docs/operating.md "Removing a unit that owns data")`,
    EXIT_BAD_CONFIG,
  );
}

/**
 * Tests only: a pause of this many milliseconds at each turn of the writing, while a stack's
 * temporary folder exists, so that a test can stop the render there (test/integration/pipeline/render-interrupt.test.ts).
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

/** What the render says of a stack it wrote: its shape, where, what it was judged against, and the upgrades it carries. */
function writtenLines(plan: Plan, files: number, out: string, v: StackVerdict | undefined): string {
  const head = `${plan.stack}: ${plan.environment}/${plan.topology}, ${plan.nodes.length} nodes, ${allUnits(plan).length} units, ${files} files → ${out}/${plan.stack}/\n`;
  const r = v?.reference;
  const judgedLine = !r ? "" : r.render ? `  judged against ${r.where}\n` : `  transition not judged: ${r.note ?? `nothing at ${r.where}`}\n`;
  const u = v?.upgrades;
  return `${head}${judgedLine}${u?.upgrades.length ? `  upgrades against ${u.where}: ${u.upgrades.map(upgradeLine).join("; ")}\n` : ""}`;
}

export async function renderCommand(argv: string[], io: Io): Promise<number> {
  refuseAllowRemoval(argv);
  const opts = args(RENDER_OPTIONS, argv, RENDER_SCRIPT);
  const out = opts.out!;
  const stacks = planStacks(opts.stack, opts["stacks-dir"], io.progress);
  const rendered = stacks.map((s) => ({ s, files: renderPlan(s.plan, s.result.placement) }));
  const files = new Map(stacks.map((s) => [s.plan.stack, s.config.file]));

  // every stack's transition, judged against what is deployed (else the committed state): review/verdict.ts
  const vs = judged(
    opts["stacks-dir"]!,
    rendered.map(({ s, files: f }) => ({ plan: s.plan, files: f })),
    { base: opts.base, out, skip: opts["skip-transition-checks"] },
  );
  const refused = [...verdictErrors(vs, files), ...upgradeErrors(vs.map((v) => v.upgrades))];
  if (refused.length > 0) throw new UserError(refused.join("\n"), EXIT_CHECKS_FAILED);

  const cleared = clearLeftovers(out);
  if (cleared) io.out(`${cleared}\n`);
  await writeAll(
    out,
    rendered.map(({ s, files: f }) => ({ name: s.plan.stack, files: f })),
    (i) => io.out(writtenLines(rendered[i].s.plan, rendered[i].files.length, out, vs[i])),
  );
  // each warning once for the run, however many stacks have it (cli/warnings.ts)
  const warnings = [...planWarnings(stacks), ...verdictWarnings(vs, files)];
  for (const line of warningLines(warnings)) io.out(`${line}\n`);
  if (!opts.stack?.length) {
    for (const gone of removeStaleStacks(
      out,
      rendered.map((r) => r.s.plan.stack),
    )) {
      io.out(`${gone}: no stack file any more, removed ${out}/${gone}/\n`);
    }
  }
  io.out(`rendered ${rendered.length} stack(s), ${warnings.length} warning(s)\n`);
  return 0;
}
