// The test run's own setup (test/setup/tools.ts): one temporary folder for the whole run, which the
// workers and everything they start inherit as TMPDIR, made once although every project of
// vitest.config.mts calls the global setup.
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

describe("the test run's temporary folder", () => {
  it("is one openkeel-tests-* folder, not nested in another: the global setup ran once", () => {
    const tmp = process.env.TMPDIR!;
    expect(os.tmpdir()).toBe(tmp);
    expect(path.basename(tmp)).toMatch(/^openkeel-tests-/);
    expect(path.basename(path.dirname(tmp))).not.toMatch(/^openkeel-tests-/);
  });
});
