import * as fs from "node:fs";
import * as path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { defineConfig } from "vitest/config";

/**
 * The integration suites (test/integration/: a spawned pack, a CLI in a child process, git, a real
 * tool, the Pulumi program, thousands of generated nodes) run after the unit suites, so those report
 * first; `npm run test:fast` (OPENKEEL_TESTS=fast) runs the unit suites alone. Among them the
 * heaviest start first, these in this order, so that two workers finish together.
 */
const INTEGRATION = "test/integration/";
const HEAVIEST = [
  "test/integration/review/urn-graph.test.ts",
  "test/integration/placement/chart-placement.test.ts",
  "test/integration/placement/node-images.test.ts",
  "test/integration/plan/unit-content.test.ts",
  "test/integration/policy/policy.test.ts",
  "test/integration/review/preview.test.ts",
  "test/integration/platform/upgrades.test.ts",
  "test/integration/plan/properties.test.ts",
  "test/integration/policy/policy-cli.test.ts",
  "test/integration/cli/cli.test.ts",
  "test/integration/cli/bad-stacks.test.ts",
  "test/integration/review/drift.test.ts",
  "test/integration/pipeline/render-interrupt.test.ts",
  "test/integration/review/warnings.test.ts",
  "test/integration/tools/validate.test.ts",
  "test/integration/tools/talos-machinery.test.ts",
  "test/integration/tools/tools.test.ts",
  "test/integration/render/render.test.ts",
  "test/integration/repository/workflow.test.ts",
];
/**
 * vi.mock replaces a module for its own file: every file that mocks one gets a fresh module graph
 * (in the shared graph its mock would leak into the files after it). Found by reading the files,
 * so a new one cannot be forgotten.
 */
const ISOLATED = (fs.readdirSync("test", { recursive: true }) as string[])
  .filter((f) => f.endsWith(".test.ts"))
  .map((f) => path.join("test", f))
  .filter((f) => fs.readFileSync(f, "utf8").includes("vi.mock("))
  .sort();

const FAST_ONLY = process.env.OPENKEEL_TESTS === "fast";

/** The isolated suites first (their worker then goes on with the others), the unit suites, the integration suites. */
const rank = (spec: TestSpecification) => {
  const file = spec.moduleId.slice(spec.project.config.root.length + 1);
  if (ISOLATED.includes(file)) return 0;
  if (!file.startsWith(INTEGRATION)) return 1;
  const heavy = HEAVIEST.indexOf(file);
  return 2 + (heavy >= 0 ? heavy : HEAVIEST.length);
};

class FastFirst extends BaseSequencer {
  async sort(files: TestSpecification[]) {
    return [...files].sort((a, b) => rank(a) - rank(b) || (a.moduleId < b.moduleId ? -1 : a.moduleId > b.moduleId ? 1 : 0));
  }
}

export default defineConfig({
  test: {
    // kubeconform and actionlint at their pins (platform/versions.ts, TOOLS) before any suite runs.
    globalSetup: ["test/setup/tools.ts"],
    // Each worker is a process, and runs its files one after another: the Pulumi runtime mocks are
    // process-global, and every run sets them up afresh (offline-engine/mock-run.ts). Files share the
    // worker's modules (isolate: false): importing the Pulumi SDK and the plan modules again for
    // every file cost more than most suites' tests. Two workers on two cores: the slow suites wait
    // on child processes (packs, CLIs, kubeconform) much of the time.
    // Each file's transform kept on disk between runs (keyed by its content): a rerun of the suites
    // skips most of the transform and import (in test:fast, transform 4.7 s → 0.7 s, import 11 s →
    // 6.6 s). Under node_modules/.cache, so that the bench's fresh-cache npm test starts without it,
    // as a fresh clone does.
    experimental: { fsModuleCache: true, fsModuleCachePath: "node_modules/.cache/vitest-modules" },
    pool: "forks",
    maxWorkers: 2,
    sequence: { sequencer: FastFirst },
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // One project for the fast and the slow suites: a worker goes on from one file to the next
    // only within a project, so a second one would start a fresh worker, and import everything
    // again, when the slow suites begin.
    projects: [
      { extends: true, test: { name: "isolated", include: FAST_ONLY ? ISOLATED.filter((f) => !f.startsWith(INTEGRATION)) : ISOLATED } },
      {
        extends: true,
        test: { name: "suites", include: ["test/**/*.test.ts"], exclude: [...ISOLATED, ...(FAST_ONLY ? [`${INTEGRATION}**`] : [])], isolate: false },
      },
    ],
  },
});
