// Issue 46: a stack's first `pulumi up` with the phases as barriers against the graph derived from
// what each unit uses (plan/needs.ts), side by side in one bench run: the same program and stack,
// each on a fresh cluster whose kwok holds every pod as a kubelet pulling and starting it would
// (e2e/harness/readiness.ts), one after the other. Plain data and pure functions (the verdicts are
// unit-tested in test/bench/first-up.test.ts); the times are only ever read, never asserted.
import type { DeployGraph } from "../plan/needs";
import type { ReadinessDelays } from "../e2e/harness/readiness";
import type { Target } from "./bench-targets";

/** The stack issue 46 names: its first up was one chain of eleven releases. */
export const FIRST_UP_STACK = "prod-large";
/** The derived graph's first up, at most this share of the phase barriers'. */
export const FIRST_UP_RATIO_GOAL = 0.6;
/** Its longest chain of units, at most. */
export const FIRST_UP_CHAIN_GOAL = 6;

/** One first up: its update's time (the engine's timestamps) and the longest chain of units that waited on each other. */
export interface FirstUpRun {
  graph: DeployGraph;
  /** The update, its first step to its last (e2e/harness/timings.ts). */
  seconds: number;
  chain: { units: string[]; seconds: number; span: number; share: number };
  /** The 1-minute load average when it ended (the machine is shared). */
  load?: number | undefined;
  report: string;
}

export type FirstUpComparison =
  | { measured: true; stack: string; delays: ReadinessDelays; runs: FirstUpRun[]; ratio: number }
  | { measured: false; stack: string; why: string; runs: FirstUpRun[] };

/** A run from the e2e's timings.json of its stack (`first pulumi up`); undefined when it holds none. */
export function firstUpRun(graph: DeployGraph, timings: Record<string, unknown>, report: string, load?: number): FirstUpRun | undefined {
  const t = timings["first pulumi up"] as { seconds?: number; chain?: FirstUpRun["chain"] } | undefined;
  if (typeof t?.seconds !== "number" || !t.chain) return undefined;
  return { graph, seconds: t.seconds, chain: t.chain, ...(load !== undefined ? { load } : {}), report };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** Both runs compared: the derived graph's update time over the phase barriers'. */
export function compareFirstUps(stack: string, delays: ReadinessDelays, barriers: FirstUpRun, derived: FirstUpRun): FirstUpComparison {
  if (barriers.graph !== "phase-barriers" || derived.graph !== "dependencies")
    throw new Error("compareFirstUps: the phase barriers' run first, then the derived graph's");
  if (barriers.seconds <= 0) return { measured: false, stack, why: "the phase barriers' first up took no time: not a measurement", runs: [barriers, derived] };
  return { measured: true, stack, delays, runs: [barriers, derived], ratio: round2(derived.seconds / barriers.seconds) };
}

/** The two targets: the ratio, and the derived graph's longest chain; "not measured" without a comparison. */
export function firstUpTargets(c: FirstUpComparison | undefined): Target[] {
  const derived = c?.measured ? c.runs.find((r) => r.graph === "dependencies") : undefined;
  const load = derived?.load !== undefined ? { load: derived.load } : {};
  return [
    {
      what: `first pulumi up of ${FIRST_UP_STACK} with readiness delays: derived dependencies ÷ phase barriers`,
      value: c?.measured ? c.ratio : null,
      unit: "×",
      max: FIRST_UP_RATIO_GOAL,
      ...load,
    },
    {
      what: `the same: longest chain of units, derived dependencies`,
      value: derived ? derived.chain.units.length : null,
      unit: "units",
      max: FIRST_UP_CHAIN_GOAL,
      ...load,
    },
  ];
}

/** The bench's lines: each run's time and chain, and the ratio. */
export function firstUpLines(c: FirstUpComparison): string[] {
  const run = (r: FirstUpRun) =>
    `first pulumi up of ${c.stack}, ${r.graph}: ${r.seconds} s; longest chain ${r.chain.units.length} units, ${r.chain.seconds} s of their own (${(r.chain.share * 100).toFixed(0)} % of the update): ${r.chain.units.join(" → ")}`;
  if (!c.measured) return [...c.runs.map(run), `*** first pulumi up, ${c.stack}: NOT MEASURED (${c.why}) ***`];
  return [
    `readiness delays: each pod ${c.delays.minSeconds}–${c.delays.maxSeconds} s from bound to started (e2e/harness/readiness.ts)`,
    ...c.runs.map(run),
    `first pulumi up of ${c.stack}: derived dependencies ÷ phase barriers = ${c.ratio}× (goal ≤ ${FIRST_UP_RATIO_GOAL}×)`,
  ];
}
