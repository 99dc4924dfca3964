import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // kubeconform and actionlint at their pins (platform/versions.ts, TOOLS) before any suite runs.
    globalSetup: ["test/setup/tools.ts"],
    // The Pulumi runtime mocks are process-global: files run in separate workers, tests in a file
    // run one after another.
    pool: "forks",
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
