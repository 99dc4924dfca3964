// Ironic's own plan checks (its descriptor's planChecks, openkeel/services/ironic.ts): each trips on
// a mutated shipped stack, through the stack's checks as every entry point runs them (planStack),
// and its conductors' count is its own replica rule, which only these checks judge.
import { describe, expect, it } from "vitest";
import type { LoadedConfig } from "../../config/schema";
import { planStack, resolveStack } from "../../environments";
import { ironic } from "../../openkeel/services/ironic";
import { mutatedConfig, shippedConfig, SHIPPED_STACKS } from "../helpers/stacks";

const errorsOf = (cfg: LoadedConfig) => planStack(cfg).problems.filter((p) => p.level === "error" || p.level === undefined);
const own = (cfg: LoadedConfig) => {
  const s = resolveStack(cfg);
  return ironic.planChecks!(cfg, s.topology, s.components);
};

describe("Ironic's plan checks", () => {
  it("find nothing in the shipped stacks", () => {
    for (const stack of SHIPPED_STACKS) expect(own(shippedConfig(stack)), stack).toEqual([]);
  });

  it("more Ironic conductors than provisioning nodes (D7), with both remediations", () => {
    const cfg = mutatedConfig("prod-medium", (r) => delete r.services.ironic.replicas.conductor);
    const check = errorsOf(cfg).find((c) => c.code === "ironic-conductors")!;
    expect(check.level).toBe("error");
    expect(check.path).toBe("openkeel:services.ironic.replicas.conductor");
    expect(check.message).toMatch(/2 Ironic conductor replicas but 1 provisioning node/);
    expect(check.fix).toMatch(/label more nodes with the provisioning role/);
    expect(check.fix).toMatch(/replicas\.conductor to 1/);
    expect(planStack(cfg).plan).toBeUndefined();
  });

  it("its BMC networks missing where it runs on machines, or set where it does not run", () => {
    const missing = own(mutatedConfig("prod-medium", (r) => delete r.services.ironic.bmcNetworks));
    expect(missing.map((c) => [c.code, c.path, c.fix])).toEqual([
      [
        "ironic-bmc-networks",
        "openkeel:services.ironic.bmcNetworks",
        "set openkeel:services.ironic.bmcNetworks to the CIDRs of the BMC networks, e.g. [10.50.0.0/24]",
      ],
    ]);
    const unused = own(mutatedConfig("prod-small", (r) => (r.services = { ironic: { bmcNetworks: ["10.50.0.0/24"] } })));
    expect(unused.map((c) => [c.code, c.message])).toEqual([
      ["ironic-bmc-networks", "openkeel:services.ironic.bmcNetworks is set, but Ironic does not run in this stack, so nothing reads it"],
    ]);
  });

  it("its conductors' count is the stack's, else two: the release's values follow it", () => {
    const conductors = (cfg: LoadedConfig) => {
      const unit = planStack(cfg)
        .plan!.phases.flatMap((p) => p.units)
        .find((u) => u.name === "openkeel-ironic");
      return unit?.kind === "HelmRelease" ? (unit.values as { conductor: { replicas: number } }).conductor.replicas : undefined;
    };
    expect(conductors(mutatedConfig("prod-large", (r) => (r.services.ironic.replicas = { conductor: 1 })))).toBe(1);
    expect(conductors(mutatedConfig("prod-large", (r) => delete r.services.ironic.replicas))).toBe(2);
  });
});
