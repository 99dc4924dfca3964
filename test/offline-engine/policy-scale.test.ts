// The offline policy runner at inventory scale: the stack config travels to the pack in an
// environment variable, which Linux caps at 128 KiB (E2BIG past it). That a pack starts with such a
// config is proven where the production pack of policy.test.ts starts (a 2000-node stack's config).
import { describe, expect, it } from "vitest";
import { MAX_CONFIG_ENV, packConfigEnv } from "../../offline-engine/analyzer";
import { generatedProductionStack } from "../../bench/generate";
import { pulumiConfigMap } from "../../offline-engine/policy-run";

describe("the pack's config at scale", () => {
  const big = pulumiConfigMap(generatedProductionStack(2000).raw);

  it("passes the whole config while it fits, and the environment always", () => {
    const small = pulumiConfigMap(generatedProductionStack(20).raw);
    expect(JSON.parse(packConfigEnv(small))).toEqual(small);
    expect(JSON.stringify(big).length).toBeGreaterThan(MAX_CONFIG_ENV);
    const passed = JSON.parse(packConfigEnv(big));
    expect(Buffer.byteLength(packConfigEnv(big))).toBeLessThanOrEqual(MAX_CONFIG_ENV);
    expect(passed["openkeel:environment"]).toBe("talos-production");
    expect(passed["openkeel:nodes"]).toBeUndefined();
    expect(passed["openkeel:talos"]).toBe(big["openkeel:talos"]);
  });
});
