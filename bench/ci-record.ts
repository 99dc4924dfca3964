// `npm run bench -- --ci-figures`: the CI figures of a CI run (issue 23), read from its files (the
// engine build's log or file times, each stack's e2e reports) and recorded in results.json's `ci`.
import * as fs from "node:fs";
import * as path from "node:path";
import { writeWhole } from "../cli/write";
import { REPO_ROOT } from "../tools/tools";
import { goal, holds, shown, verdict, type Target } from "./bench-targets";
import {
  ciFigures,
  ciLines,
  ciTarget,
  engineBuildFromFileTimes,
  engineBuildFromLog,
  repoPath,
  stackE2E,
  upWaits,
  CI_STACKS,
  type CiFigures,
  type StackE2E,
  type UpWaits,
} from "./ci-figures";
import type { BenchOptions } from "./options";
import { loads } from "./measure";

/** The first build in `out` (build.sh's $OUT), from the birth times of bin/ and of bin/.stamps/*. */
function engineBuildFromOut(out: string): CiFigures["engineBuild"] {
  const stamps = path.join(out, "bin", ".stamps");
  if (!fs.existsSync(stamps)) return { measured: false, why: `no ${repoPath(REPO_ROOT, stamps)}` };
  const born = fs.readdirSync(stamps).map((target) => ({ target, bornMs: fs.statSync(path.join(stamps, target)).birthtimeMs }));
  const start = fs.statSync(path.join(out, "bin")).birthtimeMs;
  const build = engineBuildFromFileTimes(start, born);
  if (!build) return { measured: false, why: `no usable birth times in ${repoPath(REPO_ROOT, stamps)} (none kept, or a stamp older than bin/)` };
  const at = (ms: number) => new Date(ms).toISOString().slice(0, 19);
  return { ...build, source: `file times of ${repoPath(REPO_ROOT, out)}: bin/ created ${at(start)}Z, last stamp ${at(start + build.totalSeconds * 1000)}Z` };
}

function collectCiFigures(c: NonNullable<BenchOptions["ciFigures"]>, npmTestSeconds: number | null): CiFigures {
  if (c.engineOut !== undefined) return ciFigures(engineBuildFromOut(c.engineOut), npmTestSeconds, stacksE2E(c.e2eDir));
  const text = fs.existsSync(c.engineBuildLog) ? fs.readFileSync(c.engineBuildLog, "utf8") : undefined;
  const build = text === undefined ? undefined : engineBuildFromLog(text);
  const e2e = stacksE2E(c.e2eDir);
  const log = repoPath(REPO_ROOT, c.engineBuildLog);
  const why = text === undefined ? `no ${log}` : `no build.sh summary in ${log}`;
  return ciFigures(build ? { ...build, source: log } : { measured: false, why }, npmTestSeconds, e2e);
}

/** Each stack's e2e of CI_STACKS that has a steps.json in `dir`, with its timed ups (timings.json) where it has them. */
function stacksE2E(dir: string): StackE2E[] {
  return CI_STACKS.filter((s) => fs.existsSync(path.join(dir, s, "steps.json"))).map((s) => ({
    ...stackE2E(JSON.parse(fs.readFileSync(path.join(dir, s, "steps.json"), "utf8"))),
    waits: stackWaits(dir, s),
  }));
}

/** A stack's timed ups from its timings.json in `dir` (none without one). */
export function stackWaits(dir: string, stack: string): UpWaits[] {
  const f = path.join(dir, stack, "timings.json");
  return fs.existsSync(f) ? upWaits(JSON.parse(fs.readFileSync(f, "utf8"))) : [];
}

/** `--ci-figures`: results.json's `ci` (and its target) replaced, everything else kept. */
export function recordCiFigures(o: BenchOptions & { ciFigures: NonNullable<BenchOptions["ciFigures"]> }): void {
  const file = path.resolve(REPO_ROOT, o.out);
  const previous = JSON.parse(fs.readFileSync(file, "utf8")) as { npmTest?: { wallMs?: number }; targets?: Target[] };
  const npmTestMs = previous.npmTest?.wallMs;
  const ci = {
    recordedAt: new Date().toISOString(),
    loadAverage: loads(),
    ...collectCiFigures(o.ciFigures, npmTestMs === undefined ? null : Math.round(npmTestMs / 1000)),
  };
  const target = ciTarget(ci);
  const targets = [...(previous.targets ?? []).filter((t) => t.what !== target.what), { ...target, holds: holds(target) }];
  writeWhole(file, `${JSON.stringify({ ...previous, ci, targets }, null, 2)}\n`);
  console.log([...ciLines(ci), `| ${target.what} | ${shown(target)} | ${goal(target)} | ${verdict(target)} |`, `written to ${o.out}`].join("\n"));
}
