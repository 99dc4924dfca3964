// The bench's targets (issues 16 and 25) and the engine comparison: plain data and pure functions, so that
// the verdicts, the speedup and "why not measured" are unit-tested (test/bench/bench-targets.test.ts)
// while the times themselves are only ever read, never asserted.

export interface Target {
  what: string;
  value: number | null;
  unit: "×" | "ms" | "MiB" | "min" | "units";
  /** Holds when value ≤ max, value < below, or value ≥ min (exactly one of them is set). */
  max?: number | undefined;
  below?: number | undefined;
  min?: number | undefined;
  /** The 1-minute load average when the figure was taken (the machine is shared). */
  load?: number | undefined;
}

export function holds(t: Target): boolean {
  const bounds = [t.max, t.below, t.min].filter((b) => b !== undefined).length;
  if (bounds !== 1) throw new Error(`target "${t.what}" needs exactly one of max, below, min (has ${bounds})`);
  if (t.value === null) return false;
  if (t.max !== undefined) return t.value <= t.max;
  if (t.below !== undefined) return t.value < t.below;
  return t.value >= t.min!;
}

const withUnit = (n: number, unit: Target["unit"]) => (unit === "×" ? `${n}×` : `${n} ${unit}`);

/** The goal as printed: `≤ 2×`, `< 1024 MiB`, `≥ 5×`. */
export function goal(t: Target): string {
  if (t.max !== undefined) return `≤ ${withUnit(t.max, t.unit)}`;
  if (t.below !== undefined) return `< ${withUnit(t.below, t.unit)}`;
  return `≥ ${withUnit(t.min!, t.unit)}`;
}

export const shown = (t: Target) => (t.value === null ? "not measured" : withUnit(t.value, t.unit));
export const verdict = (t: Target) => (t.value === null ? "not measured" : holds(t) ? "yes" : "NO");

// ---- the engine: `pulumi preview --policy-pack policy` vs the offline `npm run policy` ----

/** The stacks issue 16 names for the comparison. */
export const ENGINE_STACKS = ["lab", "prod-medium"];
/** How much faster the offline path must be than what an operator otherwise waits for (issue 25; issue 16 asked 5×). */
export const ENGINE_SPEEDUP_GOAL = 10;
/** What the driver needs on PATH (pulumi-resource-random: the program generates its secrets with it). */
export const ENGINE_BINARIES = ["pulumi", "pulumi-language-nodejs", "pulumi-resource-kubernetes", "pulumi-resource-random", "kubectl"];

/** Why the engine cannot be timed here, or undefined when it can. */
export function engineUnavailable(o: { skip: boolean; missing: string[]; clusterScript: string; clusterScriptExists: boolean }): string | undefined {
  if (o.skip) return "--skip-engine";
  const why: string[] = [];
  if (o.missing.length) why.push(`not on PATH: ${o.missing.join(", ")} (../shared/engine/build.sh puts them in $HOME/.cache/openkeel-engine/bin)`);
  if (!o.clusterScriptExists) why.push(`no cluster script at ${o.clusterScript} (OPENKEEL_E2E_CLUSTER_SCRIPT)`);
  return why.length ? why.join("; ") : undefined;
}

/** The fastest try: the machine is shared, and the minimum is the least disturbed figure. */
export function fastest(seconds: number[]): number {
  if (seconds.length === 0 || seconds.some((s) => !Number.isFinite(s) || s < 0)) throw new Error(`no valid time among [${seconds.join(", ")}]`);
  return Math.min(...seconds);
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export type EngineStackResult =
  | {
      stack: string;
      measured: true;
      engineSeconds: number;
      engineTries: number[];
      offlineSeconds: number;
      offlineTries: number[];
      speedup: number;
      report: string;
      /** The highest 1-minute load average while the tries ran. */
      load?: number;
    }
  | { stack: string; measured: false; why: string; report?: string };

/** One stack's comparison from every try of both sides: the fastest of each, and their ratio. */
export function compareEngine(stack: string, engineTries: number[], offlineTries: number[], report: string, load?: number): EngineStackResult {
  const engine = fastest(engineTries);
  const offline = fastest(offlineTries);
  if (offline === 0) throw new Error("the offline path took no time: not a measurement");
  return {
    stack,
    measured: true,
    engineSeconds: round2(engine),
    engineTries: engineTries.map(round2),
    offlineSeconds: round2(offline),
    offlineTries: offlineTries.map(round2),
    speedup: round2(engine / offline),
    report,
    ...(load !== undefined ? { load } : {}),
  };
}

/** One target per stack of ENGINE_STACKS; a stack without a result is "not measured". */
export function engineTargets(results: EngineStackResult[]): Target[] {
  return ENGINE_STACKS.map((stack) => {
    const r = results.find((x) => x.stack === stack);
    return {
      what: `offline policy vs pulumi preview --policy-pack policy, ${stack}`,
      value: r?.measured ? r.speedup : null,
      unit: "×",
      min: ENGINE_SPEEDUP_GOAL,
      ...(r?.measured && r.load !== undefined ? { load: r.load } : {}),
    };
  });
}

/** The bench's line for one stack. */
export function engineLine(r: EngineStackResult): string {
  if (!r.measured) return `pulumi preview --policy-pack policy, ${r.stack}: NOT MEASURED (${r.why})${r.report ? `; ${r.report}` : ""}`;
  return `pulumi preview --policy-pack policy, ${r.stack}: ${r.engineSeconds} s (fastest of ${r.engineTries.join(", ")} s); npm run policy -- --stack ${r.stack}: ${r.offlineSeconds} s (fastest of ${r.offlineTries.length}); offline ${r.speedup}× faster`;
}
