// The bench's verdicts and its engine comparison, as pure functions: the goals each kind of target
// holds to, the fastest try, the speedup, why the engine is not measured, and how a timed
// `pulumi preview --policy-pack policy` is judged. No time is measured here.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { memoryFolder } from "../../bench/measure";
import {
  compareEngine,
  ENGINE_STACKS,
  engineLine,
  engineTargets,
  engineUnavailable,
  fastest,
  goal,
  holds,
  shown,
  verdict,
  type Target,
} from "../../bench/bench-targets";
import {
  CI_LIMIT_MINUTES,
  CI_STACKS,
  ciFigures,
  ciLines,
  ciTarget,
  engineBuildFromFileTimes,
  engineBuildFromLog,
  repoPath,
  stackE2E,
  upWaits,
  waitLine,
} from "../../bench/ci-figures";
import { previewProblem, resourceCounts } from "../../e2e/harness/pulumi";
import { REPO } from "../helpers/stacks";

const target = (value: number | null, bound: Partial<Target>): Target => ({ what: "t", value, unit: "×", ...bound });

describe("bench targets", () => {
  it("max, below and min each hold at their own edge", () => {
    expect(holds(target(2, { max: 2 }))).toBe(true);
    expect(holds(target(2.01, { max: 2 }))).toBe(false);
    expect(holds(target(1023.9, { below: 1024 }))).toBe(true);
    expect(holds(target(1024, { below: 1024 }))).toBe(false);
    expect(holds(target(5, { min: 5 }))).toBe(true);
    expect(holds(target(4.99, { min: 5 }))).toBe(false);
  });

  it("a target without a value is not measured, never held", () => {
    const t = target(null, { min: 5 });
    expect(holds(t)).toBe(false);
    expect(shown(t)).toBe("not measured");
    expect(verdict(t)).toBe("not measured");
  });

  it("a target with no bound or two bounds is a bug of the bench", () => {
    expect(() => holds(target(1, {}))).toThrow(/exactly one of max, below, min/);
    expect(() => holds(target(1, { max: 2, min: 1 }))).toThrow(/exactly one/);
  });

  it("prints goals and values with their units", () => {
    expect(goal(target(1, { max: 2 }))).toBe("≤ 2×");
    expect(goal({ what: "t", value: 1, unit: "MiB", below: 1024 })).toBe("< 1024 MiB");
    expect(goal(target(1, { min: 5 }))).toBe("≥ 5×");
    expect(shown({ what: "t", value: 812, unit: "ms", max: 4000 })).toBe("812 ms");
    expect(verdict(target(3, { min: 5 }))).toBe("NO");
    expect(verdict(target(6, { min: 5 }))).toBe("yes");
  });
});

describe("bench: the engine comparison", () => {
  it("keeps the fastest try of each side and their ratio", () => {
    const r = compareEngine("lab", [31.2, 28.4, 29.9], [2.31, 1.95, 2.02], ".e2e/preview-timing/lab/report.md");
    expect(r).toEqual({
      stack: "lab",
      measured: true,
      engineSeconds: 28.4,
      engineTries: [31.2, 28.4, 29.9],
      offlineSeconds: 1.95,
      offlineTries: [2.31, 1.95, 2.02],
      speedup: 14.56,
      report: ".e2e/preview-timing/lab/report.md",
    });
    expect(engineLine(r)).toBe(
      "pulumi preview --policy-pack policy, lab: 28.4 s (fastest of 31.2, 28.4, 29.9 s); npm run policy -- --stack lab: 1.95 s (fastest of 3); offline 14.56× faster",
    );
  });

  it("refuses an empty or invalid set of tries", () => {
    expect(() => fastest([])).toThrow(/no valid time/);
    expect(() => fastest([1, Number.NaN])).toThrow(/no valid time/);
    expect(() => compareEngine("lab", [10], [0], "r")).toThrow(/no time/);
  });

  it("one ≥ 10× target per stack (issue 25); a stack not measured shows as such", () => {
    const lab = compareEngine("lab", [20], [2], "r");
    const targets = engineTargets([lab, { stack: "prod-medium", measured: false, why: "the engine run failed: step x" }]);
    expect(ENGINE_STACKS).toEqual(["lab", "prod-medium"]);
    expect(targets.map((t) => [t.what, t.value, goal(t), verdict(t)])).toEqual([
      ["offline policy vs pulumi preview --policy-pack policy, lab", 10, "≥ 10×", "yes"],
      ["offline policy vs pulumi preview --policy-pack policy, prod-medium", null, "≥ 10×", "not measured"],
    ]);
    expect(engineTargets([]).every((t) => verdict(t) === "not measured")).toBe(true);
    expect(verdict(engineTargets([compareEngine("lab", [19], [2], "r")])[0])).toBe("NO");
    // the load the tries ran at goes with the figure
    expect(engineTargets([compareEngine("lab", [20], [2], "r", 3.5)])[0].load).toBe(3.5);
  });

  it("says why the engine is not measured: skipped, binaries missing, no cluster script", () => {
    const base = { skip: false, missing: [], clusterScript: "/x/cluster.sh", clusterScriptExists: true };
    expect(engineUnavailable(base)).toBeUndefined();
    expect(engineUnavailable({ ...base, skip: true, missing: ["pulumi"] })).toBe("--skip-engine");
    expect(engineUnavailable({ ...base, missing: ["pulumi", "pulumi-language-nodejs"] })).toMatch(/^not on PATH: pulumi, pulumi-language-nodejs \(/);
    expect(engineUnavailable({ ...base, clusterScriptExists: false })).toBe("no cluster script at /x/cluster.sh (OPENKEEL_E2E_CLUSTER_SCRIPT)");
    expect(engineUnavailable({ ...base, missing: ["kubectl"], clusterScriptExists: false })).toMatch(/kubectl.*; no cluster script/);
    expect(engineLine({ stack: "lab", measured: false, why: "x", report: "r.md" })).toBe("pulumi preview --policy-pack policy, lab: NOT MEASURED (x); r.md");
  });
});

describe("e2e: judging a timed pulumi preview --policy-pack policy", () => {
  const clean = [
    "Previewing update (lab):",
    "",
    "Policies:",
    "    ✅ openkeel-placement@v0.1.0 (local: policy)",
    "",
    "Resources:",
    "    42 unchanged",
    "",
    "Duration: 20s",
    "",
  ].join("\n");

  it("reads the Resources block, with or without changes", () => {
    expect(resourceCounts(clean)).toEqual({ unchanged: 42 });
    expect(resourceCounts("Resources:\n    + 1 to create\n    ~ 2 to update\n    +-1 to replace\n    4 changes. 40 unchanged\n")).toEqual({
      create: 1,
      update: 2,
      replace: 1,
      unchanged: 40,
    });
    expect(resourceCounts("error: boom\n")).toBeUndefined();
  });

  it("passes a clean preview and names what is wrong with any other", () => {
    expect(previewProblem(0, clean, "openkeel-placement")).toBeUndefined();
    expect(previewProblem(255, clean, "openkeel-placement")).toBe("exit 255");
    expect(previewProblem(0, clean.replace("    42 unchanged", "    ~ 1 to update\n    1 change. 41 unchanged"), "openkeel-placement")).toBe(
      "changes proposed: 1 to update",
    );
    expect(previewProblem(0, "Previewing update (lab):\n", "openkeel-placement")).toBe("no Resources: summary in the output");
    expect(previewProblem(0, clean.replace("42 unchanged", "+ 42 to create"), "openkeel-placement")).toBe("changes proposed: 42 to create");
    expect(previewProblem(0, clean.replace("openkeel-placement", "other-pack"), "openkeel-placement")).toBe(
      "no sign of the policy pack openkeel-placement in the output",
    );
  });
});

describe("the CI figures (issue 23)", () => {
  const log = [
    "== building pulumi v3.276.0",
    "target                       result   secs    size  version",
    "pulumi                       built     793    117M  v3.276.0",
    "kube-apiserver               built     819    101M  v1.36.3",
    "total 1612s; binaries in /root/.cache/openkeel-engine/bin",
  ].join("\n");
  const steps = (stack: string, seconds: number, mutations: boolean) => ({
    stack,
    ok: true,
    seconds,
    steps: [
      { name: "pulumi up --yes --policy-pack policy", seconds: seconds / 2 },
      ...(mutations ? [{ name: "policy pack D1–D8: mutated stacks, real engine vs npm run policy", seconds: seconds / 4 }] : []),
      { name: "render (npm run render)", seconds: 5 },
    ],
  });

  it("reads build.sh's summary: the total, each binary, and whether every one was built (cold)", () => {
    expect(engineBuildFromLog(log)).toEqual({ totalSeconds: 1612, targets: { pulumi: 793, "kube-apiserver": 819 }, cold: true });
    expect(engineBuildFromLog(log.replace("built     819", "kept        0"))?.cold).toBe(false);
    expect(engineBuildFromLog("== building pulumi\n(interrupted)")).toBeUndefined();
  });

  it("without a log: each binary from the birth of its stamp after the previous one, the total from bin/'s birth", () => {
    const t0 = Date.UTC(2026, 11, 1, 10, 0, 0);
    const stamps = [
      { target: "pulumi-resource-kubernetes", bornMs: t0 + 900_000 },
      { target: "pulumi", bornMs: t0 + 600_000 },
      { target: "kwok", bornMs: t0 + 960_500 },
    ];
    expect(engineBuildFromFileTimes(t0, stamps)).toEqual({
      totalSeconds: 961,
      targets: { pulumi: 600, "pulumi-resource-kubernetes": 300, kwok: 61 },
      cold: true,
    });
    // no birth times (0), or a stamp older than bin/ (not this build's): not a measure
    expect(engineBuildFromFileTimes(0, stamps)).toBeUndefined();
    expect(engineBuildFromFileTimes(t0, [...stamps, { target: "etcd", bornMs: t0 - 1 }])).toBeUndefined();
    expect(engineBuildFromFileTimes(t0, [])).toBeUndefined();
  });

  it("sums the engine build, npm test twice and every stack's e2e, against the 90-minute limit", () => {
    const e2e = CI_STACKS.map((s, i) => stackE2E(steps(s, 600 + i * 60, s === "prod-medium")));
    expect(e2e[0].policyMutations).toBe(true);
    expect(e2e[1].policyMutations).toBe(false);
    expect(e2e[0].slowest[0]).toBe("pulumi up --yes --policy-pack policy: 300 s");
    const f = ciFigures({ ...engineBuildFromLog(log)!, source: "log" }, 60, e2e);
    // 1612 + 2 × 60 + 600 + 660 + 720 + 780 = 4492 s
    expect(f.sequentialMinutes).toBe(74.9);
    expect(holds(ciTarget(f))).toBe(true);
    expect(ciTarget(f).max).toBe(CI_LIMIT_MINUTES);
    const over = ciFigures({ totalSeconds: 4550, targets: {}, cold: true, source: "log" }, 60, e2e);
    expect(holds(ciTarget(over))).toBe(false);
  });

  it("records paths relative to the repository, and results.json holds no absolute path (issue 47 item 6: the machine's folders are not a figure)", () => {
    expect(repoPath("/w/clone", "/w/clone/.e2e/engine-build.log")).toBe(".e2e/engine-build.log");
    expect(repoPath("/w/clone", ".e2e")).toBe(".e2e");
    expect(repoPath("/w/clone", "/home/ci/.cache/openkeel-engine")).toBe("../../home/ci/.cache/openkeel-engine");
    expect(repoPath("/w/clone", "/w/clone")).toBe(".");
    const strings = (v: unknown): string[] => (typeof v === "string" ? [v] : typeof v === "object" && v !== null ? Object.values(v).flatMap(strings) : []);
    const results = JSON.parse(fs.readFileSync(path.join(REPO, "bench", "results.json"), "utf8"));
    // a folder of two levels or more from the root (a mention of /proc is no path of the machine's)
    const absolute = /(^|[\s(:"'])\/(?!proc\b)[\w.-]+\/[\w.-]+/;
    expect(strings(results).filter((s) => absolute.test(s) || s.includes(os.homedir()))).toEqual([]);
    expect(absolute.test("/work/ci-cold/.e2e/engine-build.log")).toBe(true);
  });

  it("a missing part is not measured, never a smaller sum", () => {
    const f = ciFigures({ measured: false, why: "no log" }, 60, [stackE2E(steps("lab", 300, false))]);
    expect(f.missing).toEqual(["prod-medium", "prod-large", "prod-small"]);
    expect(f.sequentialMinutes).toBeNull();
    expect(verdict(ciTarget(f))).toBe("not measured");
    expect(ciLines(f)).toContain("*** engine build NOT MEASURED: no log ***");
  });
});

describe("the deploy's waits (issue 37 item 7)", () => {
  it("prints each timed up's share on the longest chain of dependencies, from the e2e's timings.json", () => {
    const timings = {
      stack: "prod-medium",
      "first pulumi up": { log: "up", seconds: 200, chain: { units: ["kube-ovn", "cert-manager", "openkeel-chart"], seconds: 150, share: 0.75 } },
      "pin upgrade": { log: "upgrade-up", seconds: 100, chain: { units: ["longhorn"], seconds: 40, share: 0.4 } },
    };
    const waits = upWaits(timings);
    expect(waits.map((w) => waitLine("prod-medium", w))).toEqual([
      "prod-medium first pulumi up: 75 % of the update (150 of 200 s) waits on the longest chain of dependencies: kube-ovn → cert-manager → openkeel-chart",
      "prod-medium pin upgrade: 40 % of the update (40 of 100 s) waits on the longest chain of dependencies: longhorn",
    ]);
    const f = ciFigures({ measured: false, why: "no log" }, null, [{ ...stackE2E({ stack: "prod-medium", ok: true, seconds: 10, steps: [] }), waits }]);
    expect(ciLines(f)).toContain(`e2e ${waitLine("prod-medium", waits[0])}`);
  });
});

describe("where the anchored inventory's renders write", () => {
  it("a fresh folder in memory (/dev/shm) where one can be made, else none: the bench then writes to disk", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-shm-"));
    try {
      const a = memoryFolder("work", root)!;
      const b = memoryFolder("work", root)!;
      expect(path.dirname(a)).toBe(root);
      expect(path.basename(a)).toMatch(/^openkeel-bench-work-/);
      expect(a).not.toBe(b);
      expect(fs.readdirSync(a)).toEqual([]);
      expect(memoryFolder("work", path.join(root, "absent"))).toBeUndefined();
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
