// The bench's measurements with the real engine, each on clusters of its own through the e2e driver:
// `pulumi preview --policy-pack policy` against the offline policy run (issue 25), and prod-large's
// first `pulumi up` with the phases as barriers against the derived dependencies (issue 46), with
// `--first-up-only`'s record of the latter in results.json.
import * as fs from "node:fs";
import * as path from "node:path";
import { writeWhole } from "../cli/write";
import { tsCommand } from "../cli/ts-command";
import { defaultClusterScript, defaultMirrorDir, timeEnginePreviews, timeFirstUps } from "../e2e/harness/driver";
import { which } from "../e2e/harness/proc";
import { READINESS_DELAYS } from "../e2e/harness/readiness";
import { REPO_ROOT } from "../tools/tools";
import {
  compareEngine,
  ENGINE_BINARIES,
  ENGINE_STACKS,
  engineUnavailable,
  goal,
  holds,
  shown,
  verdict,
  type EngineStackResult,
  type Target,
} from "./bench-targets";
import { waitLine } from "./ci-figures";
import { stackWaits } from "./ci-record";
import { compareFirstUps, FIRST_UP_STACK, firstUpLines, firstUpRun, firstUpTargets, type FirstUpComparison, type FirstUpRun } from "./first-up";
import { load1, measure } from "./measure";
import type { BenchOptions } from "./options";

/** What every engine measurement of the bench runs as: a fresh cluster each, nothing kept, no e2e extras. */
const benchRun = (clusterScript: string, schemasDir: string) => ({
  keep: false,
  clusterScript,
  schemasDir,
  mirrorDir: defaultMirrorDir(REPO_ROOT),
  outRoot: path.join(REPO_ROOT, ".e2e"),
  interrupt: false,
  policyMutations: false,
  transitions: false,
});

export type EnginePreview = { measured: true; tries: number; stacks: EngineStackResult[] } | { measured: false; why: string };

export type FirstUpResult = FirstUpComparison | { measured: false; why: string };

/**
 * `pulumi preview --policy-pack policy` of each deployed stack of ENGINE_STACKS (what an operator
 * runs before every change) through the e2e driver's preview-timing mode (a cluster of its own per
 * stack, one pulumi up, `tries` previews), against `npm run policy -- --stack <s>` as a developer
 * runs it (tsx start included), `offlinePerTurn` times after each preview: taken in turns, both
 * sides see the same machine. The fastest of each side is compared.
 */
export async function enginePreviewTimes(skip: boolean, schemas: string, tries: number, offlinePerTurn: number): Promise<EnginePreview> {
  const clusterScript = defaultClusterScript(REPO_ROOT);
  const why = engineUnavailable({ skip, missing: ENGINE_BINARIES.filter((b) => !which(b)), clusterScript, clusterScriptExists: fs.existsSync(clusterScript) });
  if (why) return { measured: false, why };
  const offline = new Map<string, number[]>();
  /** The highest load seen while a stack's sides were taken. */
  const loadAt = new Map<string, number>();
  const turn = async (stack: string) => {
    for (let i = 0; i < offlinePerTurn; i++) {
      loadAt.set(stack, Math.max(loadAt.get(stack) ?? 0, load1()));
      const p = await measure(...tsCommand(path.join(REPO_ROOT, "scripts", "policy.ts"), ["--stack", stack]), false);
      if (p.code !== 0) throw new Error(`npm run policy -- --stack ${stack} failed:\n${p.stdout}${p.stderr}`);
      offline.set(stack, [...(offline.get(stack) ?? []), p.wallMs / 1000]);
    }
  };
  const timed = await timeEnginePreviews({
    repoRoot: REPO_ROOT,
    stacks: ENGINE_STACKS,
    ...benchRun(clusterScript, schemas),
    previewTiming: { tries, turn },
    log: (line) => process.stderr.write(`bench: engine: ${line}\n`),
  });
  if ("cannotRun" in timed) return { measured: false, why: timed.cannotRun };
  // what the deploy before the previews waited on: its share on the longest chain of dependencies
  for (const t of timed)
    for (const w of stackWaits(path.join(REPO_ROOT, ".e2e", "preview-timing"), t.stack)) process.stderr.write(`bench: engine: ${waitLine(t.stack, w)}\n`);
  const stacks: EngineStackResult[] = [];
  for (const t of timed) {
    const report = path.relative(REPO_ROOT, t.report);
    if (!t.ok) stacks.push({ stack: t.stack, measured: false, why: `the engine run failed: ${t.failure}`, report });
    else stacks.push(compareEngine(t.stack, t.seconds, offline.get(t.stack)!, report, loadAt.get(t.stack)));
  }
  return { measured: true, tries, stacks };
}

/**
 * Issue 46: prod-large's first `pulumi up` with the phases as barriers, then with the derived
 * dependencies, each on a fresh cluster with the e2e's readiness delays (the e2e driver's
 * first-up-timing mode), one after the other; each run's update time and longest chain, their ratio.
 */
export async function firstUpComparison(
  skip: boolean,
  schemas: string,
  portOffset: number | undefined,
): Promise<FirstUpComparison | { measured: false; why: string }> {
  const clusterScript = defaultClusterScript(REPO_ROOT);
  const why = engineUnavailable({ skip, missing: ENGINE_BINARIES.filter((b) => !which(b)), clusterScript, clusterScriptExists: fs.existsSync(clusterScript) });
  if (why) return { measured: false, why };
  const runs: FirstUpRun[] = [];
  for (const graph of ["phase-barriers", "dependencies"] as const) {
    process.stderr.write(`bench: first pulumi up of ${FIRST_UP_STACK}, ${graph}…\n`);
    const timed = await timeFirstUps({
      repoRoot: REPO_ROOT,
      stacks: [FIRST_UP_STACK],
      ...benchRun(clusterScript, schemas),
      firstUpTiming: true,
      deployGraph: graph,
      readinessDelays: READINESS_DELAYS,
      portOffset,
      log: (line) => process.stderr.write(`bench: first up: ${line}\n`),
    });
    if ("cannotRun" in timed) return { measured: false, why: timed.cannotRun };
    const t = timed[0];
    const run = t.ok ? firstUpRun(graph, t.timings!, path.relative(REPO_ROOT, t.report), load1()) : undefined;
    if (!run)
      return {
        measured: false,
        stack: FIRST_UP_STACK,
        why: `the ${graph} run failed: ${t.failure ?? "no timings"} (${path.relative(REPO_ROOT, t.report)})`,
        runs,
      };
    runs.push(run);
  }
  return compareFirstUps(FIRST_UP_STACK, READINESS_DELAYS, runs[0], runs[1]);
}

/** `--first-up-only`: results.json's `firstUp` and its targets replaced, everything else kept. */
export async function recordFirstUp(o: BenchOptions): Promise<void> {
  const file = path.resolve(REPO_ROOT, o.out);
  const firstUp = await firstUpComparison(false, o.schemas, o.portOffset);
  const previous = JSON.parse(fs.readFileSync(file, "utf8")) as { targets?: Target[] };
  const mine = firstUpTargets(firstUp.measured ? firstUp : undefined);
  const targets = [...(previous.targets ?? []).filter((t) => !mine.some((m) => m.what === t.what)), ...mine.map((t) => ({ ...t, holds: holds(t) }))];
  writeWhole(file, `${JSON.stringify({ ...previous, firstUp: { recordedAt: new Date().toISOString(), ...firstUp }, targets }, null, 2)}\n`);
  console.log(
    [
      ...firstUpSummary(firstUp),
      ...mine.map((t) => `| ${t.what} | ${shown(t)} | ${goal(t)} | ${verdict(t)} | ${t.load ?? "n/a"} |`),
      `written to ${o.out}`,
    ].join("\n"),
  );
}

export function firstUpSummary(firstUp: FirstUpResult): string[] {
  return "stack" in firstUp ? firstUpLines(firstUp) : [`*** first pulumi up, phase barriers vs derived dependencies: NOT MEASURED (${firstUp.why}) ***`];
}
