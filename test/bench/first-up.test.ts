// Issue 46: the bench's comparison of the first pulumi up, phase barriers vs derived dependencies
// (bench/first-up.ts): the ratio, the targets and the lines from the e2e's timings.
import { describe, expect, it } from "vitest";
import { holds } from "../../bench/bench-targets";
import { compareFirstUps, firstUpLines, firstUpRun, firstUpTargets, FIRST_UP_CHAIN_GOAL, FIRST_UP_RATIO_GOAL } from "../../bench/first-up";

const timings = (seconds: number, units: string[]) => ({
  stack: "prod-large",
  "first pulumi up": { log: "up", seconds, chain: { units, seconds: seconds - 5, span: seconds - 2, share: (seconds - 2) / seconds } },
});
const delays = { minSeconds: 10, maxSeconds: 40 };

describe("the first-up comparison", () => {
  const barriers = firstUpRun(
    "phase-barriers",
    timings(
      500,
      Array.from({ length: 11 }, (_, i) => `u${i}`),
    ),
    "b.md",
    3,
  )!;
  const derived = firstUpRun("dependencies", timings(260, ["a", "b", "c", "d", "e", "f"]), "d.md", 4)!;

  it("reads each run's update and chain from its timings; none without a first up", () => {
    expect(barriers).toMatchObject({ graph: "phase-barriers", seconds: 500, load: 3, report: "b.md" });
    expect(firstUpRun("dependencies", { stack: "prod-large" }, "x.md")).toBeUndefined();
  });

  it("the ratio of the derived graph's update to the barriers'; its targets: ratio ≤ 0.6, chain ≤ 6 units", () => {
    const c = compareFirstUps("prod-large", delays, barriers, derived);
    expect(c).toMatchObject({ measured: true, ratio: 0.52 });
    const targets = firstUpTargets(c);
    expect(targets.map((t) => [t.value, t.max, t.unit, holds(t)])).toEqual([
      [0.52, FIRST_UP_RATIO_GOAL, "×", true],
      [6, FIRST_UP_CHAIN_GOAL, "units", true],
    ]);
    expect(firstUpLines(c).at(-1)).toBe("first pulumi up of prod-large: derived dependencies ÷ phase barriers = 0.52× (goal ≤ 0.6×)");
    // a slower derived run, or a longer chain, does not hold
    const slow = compareFirstUps("prod-large", delays, barriers, {
      ...derived,
      seconds: 400,
      chain: { ...derived.chain, units: [...derived.chain.units, "g"] },
    });
    expect(firstUpTargets(slow).map(holds)).toEqual([false, false]);
  });

  it("not measured: both targets say so; runs in the wrong order are a bug", () => {
    expect(firstUpTargets(undefined).map((t) => t.value)).toEqual([null, null]);
    expect(() => compareFirstUps("prod-large", delays, derived, barriers)).toThrow(/phase barriers' run first/);
  });
});
