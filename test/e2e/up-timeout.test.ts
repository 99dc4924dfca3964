// The limit on one `pulumi up` before the e2e counts it as hung: the bench's first-up runs, which wait
// on every pod's readiness delay along the phase barriers' whole chain, get longer than the others.
import { describe, expect, it } from "vitest";
import type { StackRun } from "../../e2e/harness/stack-run";
import { upTimeoutMs } from "../../e2e/harness/up";

const run = (o: Partial<StackRun["o"]>) => ({ o: o as StackRun["o"] });

describe("a pulumi up's time limit", () => {
  it("is 45 min for the bench's first-up runs and 20 min for every other up", () => {
    expect(upTimeoutMs(run({ firstUpTiming: true }))).toBe(45 * 60_000);
    expect(upTimeoutMs(run({}))).toBe(20 * 60_000);
    expect(upTimeoutMs(run({ firstUpTiming: false }))).toBe(20 * 60_000);
  });
});
