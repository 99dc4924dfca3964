import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The Pulumi runtime mocks are process-global: files run in separate workers, tests in a file
    // run one after another.
    pool: "forks",
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
