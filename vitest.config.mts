import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globalSetup: ["test/setup/tools.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: "shared", include: ["test/**/*.test.ts"], exclude: ["test/placement-cli.test.ts"], isolate: false } },
      { extends: true, test: { name: "isolated", include: ["test/placement-cli.test.ts"] } },
    ],
  },
});
