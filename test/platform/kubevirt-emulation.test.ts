// Emulation never in production (issue 45, item 5): KubeVirt emulates (its CR's
// developerConfiguration.useEmulation) where the environment's traits count its nodes without
// /dev/kvm; an environment that also holds a cloud's inventory is refused on every stack, for what
// it is (its VMs without /dev/kvm), before the host contract could blame Zun's Kata or a node.
// No stack key reaches it: the trait is the environment's (topology/environment.ts).
import { afterEach, describe, expect, it } from "vitest";
import { formatCheck } from "../../cli/cli";
import { isError } from "../../config/problems";
import { planStack } from "../../environments";
import { ENVIRONMENTS } from "../../environments/registry";
import { findUnit, type Plan } from "../../plan/plan";
import { planOf } from "../helpers/plans";
import { mutatedConfig, PRODUCTION_STACKS, SHIPPED_STACKS, shippedConfig } from "../helpers/stacks";

const PRODUCTION = ENVIRONMENTS["talos-production"];
const registry = ENVIRONMENTS as Record<string, unknown>;
afterEach(() => {
  registry["talos-production"] = PRODUCTION;
});

/** Talos production as a careless change would leave it: its nodes counted without /dev/kvm. */
function productionWithoutKvm() {
  registry["talos-production"] = { ...PRODUCTION, traits: { ...PRODUCTION.traits, hardwareVirtualization: false } };
}

const useEmulation = (plan: Plan) => {
  const u = findUnit(plan, "kubevirt");
  const cr = u?.kind === "Manifests" ? u.objects.find((o) => o.kind === "KubeVirt") : undefined;
  return (cr?.spec as { configuration?: { developerConfiguration?: { useEmulation?: boolean } } } | undefined)?.configuration?.developerConfiguration
    ?.useEmulation;
};

describe("KubeVirt emulates only where the environment holds no cloud inventory", () => {
  it.each(SHIPPED_STACKS)("%s: no kubevirt-emulation", (stack) => {
    expect(planStack(shippedConfig(stack)).problems.filter((p) => p.code === "kubevirt-emulation")).toEqual([]);
  });

  it("production's KubeVirt runs VMs on KVM; the lab's (with its real backends) emulates, and is not refused", () => {
    for (const stack of PRODUCTION_STACKS) expect(useEmulation(planOf(stack)), stack).toBeUndefined();
    expect(useEmulation(planOf(mutatedConfig("lab", (raw) => (raw.platform = { realBackends: true }))))).toBe(true);
  });

  it.each(PRODUCTION_STACKS)(
    "%s, its environment counting no /dev/kvm: refused for what it is, the only error, naming the environment's file and the fix",
    (stack) => {
      productionWithoutKvm();
      const cfg = shippedConfig(stack);
      const r = planStack(cfg);
      expect(r.plan).toBeUndefined();
      const errors = r.problems.filter(isError);
      // prod-small runs Zun: its Kata needs /dev/kvm too, but the host contract is never reached
      expect(errors.map((e) => e.code)).toEqual(["kubevirt-emulation"]);
      expect(errors[0].message).toMatch(/^KubeVirt would run this cloud's VMs without \/dev\/kvm \(its CR's developerConfiguration\.useEmulation, /);
      expect(errors[0].message).toMatch(/runs on QEMU's emulated CPU, many times slower .*; § 2 runs virt-handler with \/dev\/kvm on every compute node$/);
      expect(errors[0].fix).toMatch(/^set hardwareVirtualization: true in the traits of environments\/talos-production\.ts /);
      expect(formatCheck(cfg.file, errors[0] as never)).toMatch(/^environments\/talos-production\.ts: error \[kubevirt-emulation\]: KubeVirt would run/);
    },
  );
});
