// Issue 47 item 2: whether a LoadBalancer Service gets an address is the knowledge of the component
// that gives it one (`loadBalancer` of its descriptor: MetalLB with the stack's pool), handed to the
// builders through the StackContext: OpenKeel writes its ingress VIP (D8) only then.
import { describe, expect, it } from "vitest";
import { ingressServiceUnits, INGRESS_SERVICE_UNIT } from "../../openkeel/ingress";
import { resolveStack } from "../../environments/resolve";
import { stackContext } from "../../platform/context";
import { metallb } from "../../platform/metallb";
import { shippedConfig } from "../helpers/stacks";

describe("a LoadBalancer Service's address, from the component that gives it", () => {
  it("prod-large: MetalLB with its pool gives one, and the ingress VIP is written", () => {
    const { ctx } = resolveStack(shippedConfig("prod-large"));
    expect(ctx.loadBalancer).toBe(true);
    expect(ingressServiceUnits(ctx).map((u) => u.name)).toEqual([INGRESS_SERVICE_UNIT]);
  });

  it("the same stack without MetalLB among the installed components: no address, no VIP (the pool's block alone gives none)", () => {
    const { cfg, topology, ctx, components } = resolveStack(shippedConfig("prod-large"));
    const without = stackContext(
      cfg,
      topology,
      ctx.storage,
      components.filter((c) => c !== metallb),
      ctx.agentTolerations,
    );
    expect(without.loadBalancer).toBeUndefined();
    expect(ingressServiceUnits(without)).toEqual([]);
  });

  it("MetalLB without a pool gives none", () => {
    const { ctx } = resolveStack(shippedConfig("prod-small"));
    expect(metallb.loadBalancer?.(ctx)).toBe(false);
    expect(ingressServiceUnits(ctx)).toEqual([]);
  });
});
