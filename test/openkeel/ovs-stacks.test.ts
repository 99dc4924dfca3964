// Two OVS stacks on one hypervisor (§ 3.1, § 7 Q1; issue 22 item 13): the repository configures no
// second integration bridge, and every stack where Kube-OVN's ovs-ovn and the OpenKeel chassis
// share nodes says so with a warning (an error would stop every production stack).
import { describe, expect, it } from "vitest";
import { planStack, resolveStack } from "../../environments";
import { neutron, OVS_TWO_STACKS } from "../../openkeel/services/neutron";
import { kubeOvn } from "../../platform/kube-ovn";
import { mutatedConfig, shippedConfig } from "../helpers/stacks";

const ovsWarnings = (cfg: ReturnType<typeof shippedConfig>) => {
  const r = planStack(cfg);
  expect(r.plan, r.problems.map((p) => p.message).join("; ")).toBeDefined();
  return r.plan!.warnings.filter((w) => w.code === OVS_TWO_STACKS);
};

describe("two OVS stacks on the chassis nodes (§ 7 Q1)", () => {
  it.each([
    ["prod-small", ["node-1", "node-2", "node-3"]],
    ["prod-medium", ["cmp-01", "cmp-02", "cmp-03", "net-1", "net-2"]],
  ])("%s: one warning naming every node where both run, the open question and the fix", (stack, nodes) => {
    const [w, ...more] = ovsWarnings(shippedConfig(stack));
    expect(more).toEqual([]);
    expect(w.level).toBe("warning");
    expect(w.message).toContain(`${nodes.length} node(s) run both Kube-OVN's ovs-ovn and the OpenKeel OVN chassis`);
    for (const n of nodes) expect(w.message).toContain(n);
    // the open question is the reason, the same for every stack (printed once for a run: cli/warnings.ts)
    expect(w.message).not.toMatch(/§ 7 Q1/);
    expect(w.reason).toMatch(/§ 7 Q1/);
    expect(w.fix).toMatch(/non-OVN primary CNI/);
  });

  it("prod-large: the 12 chassis nodes, the first six by name", () => {
    const [w] = ovsWarnings(shippedConfig("prod-large"));
    expect(w.message).toContain("12 node(s)");
    expect(w.message).toContain("cmp-a-01, cmp-a-02, cmp-a-03, cmp-b-01, cmp-b-02, cmp-b-03 and 6 more");
  });

  it("no Neutron, no chassis: no warning; the lab installs no Kube-OVN: none either", () => {
    expect(ovsWarnings(mutatedConfig("prod-medium", (r) => (r.services = { ...r.services, neutron: { enabled: false } })))).toEqual([]);
    expect(ovsWarnings(shippedConfig("lab"))).toEqual([]);
  });

  it("Neutron's plan checks read whether the stack installs Kube-OVN from the components they are handed", () => {
    const cfg = shippedConfig("prod-medium");
    const s = resolveStack(cfg);
    const codes = (installed: typeof s.components) => neutron.planChecks!(cfg, s.topology, installed).map((c) => c.code);
    expect(s.components).toContain(kubeOvn);
    expect(codes(s.components)).toEqual([OVS_TWO_STACKS]);
    expect(codes(s.components.filter((c) => c !== kubeOvn))).toEqual([]);
  });
});
