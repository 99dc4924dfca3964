// The CI figures (issue 23): what `.ci/run` costs on 2 cores with a cold engine build, from what the
// runs themselves wrote: the engine build's summary table (../shared/engine/build.sh's log), one
// `npm test` (the bench's own measure; .ci/run runs it twice), and every stack's e2e
// (`.e2e/<stack>/steps.json`), against the CI limit. Plain data and pure functions, read by
// `npm run bench -- --ci-figures`; the times are only ever read, never asserted.
import * as path from "node:path";
import type { Target } from "./bench-targets";

/**
 * A path as results.json records it: relative to the repository (`root`), with `/`, so that the
 * figures say nothing of the machine they ran on (its home, its clone's folder).
 */
export function repoPath(root: string, p: string): string {
  return path.relative(root, path.resolve(root, p)).split(path.sep).join("/") || ".";
}

/** The CI job's limit (issue 23): 90 minutes on 2 cores, the engine built cold. */
export const CI_LIMIT_MINUTES = 90;
/** The stacks .ci/e2e runs, in its order. */
export const CI_STACKS = ["prod-medium", "prod-large", "prod-small", "lab"];

export interface EngineBuild {
  totalSeconds: number;
  /** Seconds per binary, as the summary table prints them. */
  targets: Record<string, number>;
  /** Every binary was built (none kept from a cache): a cold build. */
  cold: boolean;
}

/** build.sh's summary: `<target> <built|kept> <secs> <size> <version>` rows and `total <n>s`; undefined when the log has none. */
export function engineBuildFromLog(text: string): EngineBuild | undefined {
  const total = /^total (\d+)s/m.exec(text);
  if (!total) return undefined;
  // the last table of the log (build.sh prints it once, at the end)
  const table = text.slice(text.lastIndexOf("target "));
  const rows = [...table.matchAll(/^(\S+)\s+(built|kept|up to date|skipped)\s+(\d+)\s/gm)];
  return {
    totalSeconds: Number(total[1]),
    targets: Object.fromEntries(rows.map((m) => [m[1], Number(m[3])])),
    cold: rows.length > 0 && rows.every((m) => m[2] === "built"),
  };
}

/**
 * A build without its log (e.g. one run by hand before this existed): from the file times build.sh
 * leaves in $OUT. It creates bin/ when it starts and writes bin/.stamps/<target> when a binary is
 * done, one target after the other; the first write of each stamp (its birth) is the cold build.
 */
export function engineBuildFromFileTimes(startMs: number, stamps: { target: string; bornMs: number }[]): EngineBuild | undefined {
  if (!startMs || stamps.length === 0 || stamps.some((s) => !s.bornMs || s.bornMs < startMs)) return undefined;
  const sorted = [...stamps].sort((a, b) => a.bornMs - b.bornMs);
  const targets = Object.fromEntries(sorted.map((s, i) => [s.target, Math.round((s.bornMs - (i === 0 ? startMs : sorted[i - 1].bornMs)) / 1000)]));
  return { totalSeconds: Math.round((sorted[sorted.length - 1].bornMs - startMs) / 1000), targets, cold: true };
}

export interface StackE2E {
  stack: string;
  seconds: number;
  ok: boolean;
  /** The D1–D8 mutated stacks ran (a step of that name is in the run). */
  policyMutations: boolean;
  /** The three slowest steps, `name: seconds`. */
  slowest: string[];
  /** What each timed pulumi up waited on (its timings.json, e2e/harness/timings.ts). */
  waits?: UpWaits[];
}

/** One timed pulumi up: the update's time and the longest chain of dependencies in it. */
export interface UpWaits {
  /** `first pulumi up`, `pin upgrade`, `upgrade` */
  up: string;
  seconds: number;
  chainSeconds: number;
  /** the chain's span (its first unit's start to its last unit's end) ÷ seconds */
  share: number;
  chain: string[];
}

/** The timed ups of a stack's timings.json (written by npm run e2e beside steps.json). */
export function upWaits(timings: Record<string, unknown>): UpWaits[] {
  return Object.entries(timings)
    .filter(([k, v]) => k !== "stack" && typeof v === "object" && v !== null && "chain" in v)
    .map(([up, v]) => {
      const t = v as { seconds: number; chain: { units: string[]; seconds: number; span?: number; share: number } };
      return { up, seconds: t.seconds, chainSeconds: t.chain.span ?? t.chain.seconds, share: t.chain.share, chain: t.chain.units };
    });
}

/** The bench's line of one timed up: the share of it spent waiting on the longest chain of dependencies. */
export function waitLine(stack: string, w: UpWaits): string {
  return `${stack} ${w.up}: ${(w.share * 100).toFixed(0)} % of the update (${w.chainSeconds} of ${w.seconds} s) waits on the longest chain of dependencies: ${w.chain.join(" → ")}`;
}

interface StepsJson {
  stack: string;
  ok: boolean;
  seconds: number;
  steps: { name: string; seconds: number; skipped?: boolean }[];
}

/** One stack's e2e from its steps.json. */
export function stackE2E(steps: StepsJson): StackE2E {
  const slowest = [...steps.steps].sort((a, b) => b.seconds - a.seconds).slice(0, 3);
  return {
    stack: steps.stack,
    seconds: Math.round(steps.seconds),
    ok: steps.ok,
    policyMutations: steps.steps.some((s) => /D1–D8/.test(s.name) && !s.skipped),
    slowest: slowest.map((s) => `${s.name}: ${Math.round(s.seconds)} s`),
  };
}

export interface CiFigures {
  engineBuild: (EngineBuild & { source: string }) | { measured: false; why: string };
  /** One npm test (the bench's wall time); .ci/run runs it twice. */
  npmTestSeconds: number | null;
  e2e: StackE2E[];
  /** Stacks of CI_STACKS without a steps.json. */
  missing: string[];
  /**
   * The engine build + two npm tests + every stack's e2e, one after the other. .ci/run overlaps
   * the build with npm ci and the tests, so this is an upper bound; null when a part is missing.
   */
  sequentialMinutes: number | null;
}

export function ciFigures(build: CiFigures["engineBuild"], npmTestSeconds: number | null, e2e: StackE2E[]): CiFigures {
  const missing = CI_STACKS.filter((s) => !e2e.some((x) => x.stack === s));
  const parts = "totalSeconds" in build && npmTestSeconds !== null && missing.length === 0;
  const seconds = parts ? build.totalSeconds + 2 * npmTestSeconds + e2e.reduce((sum, x) => sum + x.seconds, 0) : null;
  return { engineBuild: build, npmTestSeconds, e2e, missing, sequentialMinutes: seconds === null ? null : Math.round(seconds / 6) / 10 };
}

/** The bench's target for CI: the sequential sum against the limit (cold build included). */
export function ciTarget(f: CiFigures): Target {
  return {
    what: ".ci/run: cold engine build + npm test ×2 + the e2e of the four stacks, one after the other (.ci/run overlaps the first two)",
    value: f.sequentialMinutes,
    unit: "min",
    max: CI_LIMIT_MINUTES,
  };
}

/** What the bench prints of them. */
export function ciLines(f: CiFigures): string[] {
  const b = f.engineBuild;
  return [
    "totalSeconds" in b
      ? `engine build (${b.cold ? "cold" : "not cold: some binaries kept"}): ${b.totalSeconds} s (${Object.entries(b.targets)
          .map(([t, s]) => `${t} ${s} s`)
          .join(", ")}) — ${b.source}`
      : `*** engine build NOT MEASURED: ${b.why} ***`,
    `npm test: ${f.npmTestSeconds === null ? "not measured" : `${f.npmTestSeconds} s`} (×2 in .ci/run)`,
    ...f.e2e.map(
      (x) =>
        `e2e ${x.stack}: ${x.seconds} s, ${x.ok ? "PASS" : "FAIL"}${x.policyMutations ? ", with the D1–D8 mutated stacks" : ", --no-policy-mutations"}; slowest: ${x.slowest.join("; ")}`,
    ),
    ...f.e2e.flatMap((x) => (x.waits ?? []).map((w) => `e2e ${waitLine(x.stack, w)}`)),
    ...(f.missing.length ? [`*** e2e NOT MEASURED for ${f.missing.join(", ")} ***`] : []),
    `sequential sum: ${f.sequentialMinutes === null ? "not measured" : `${f.sequentialMinutes} min`} (limit ${CI_LIMIT_MINUTES} min)`,
  ];
}
