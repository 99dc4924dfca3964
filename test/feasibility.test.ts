// Day 2 that cannot dead-end (issue 21): each dead end of the issue as written, on the shipped
// stacks, and what the feasibility model (lifecycle/feasibility.ts) says instead — refused with the
// fix that works, or warned with the reason. Stacks are edited with the helpers of
// test/helpers/lifecycle.ts; renders are compared the way `npm run render` and the preview do.
import { describe, expect, it } from "vitest";
import { planStack } from "../environments";
import { untoleratedTaints } from "../placement/scheduling";
import { objectsOf, planOf, valuesOf } from "./helpers/plans";
import { mutatedConfig, shippedConfig } from "./helpers/lifecycle";

/** The taints of a disabled hypervisor (§ 4.1) and of a node NMO drains, as the issue names them. */
const COMPUTE_DISABLED = { key: "openkeel.io/compute-disabled", effect: "NoSchedule" as const };
const DRAIN = { key: "medik8s.io/drain", effect: "NoSchedule" as const };

const problems = (stack: string, ...edits: ((raw: any) => void)[]) =>
  planStack(mutatedConfig(stack, (raw) => edits.forEach((e) => e(raw)))).problems.map((p) => ({
    level: p.level,
    code: p.code,
    path: p.path,
    message: p.message,
    fix: p.fix,
  }));

describe("dead end 5: disabled hypervisors and draining nodes keep their agents", () => {
  const placement = planStack(shippedConfig("prod-medium")).placement!;
  const tolerations = (name: string) => placement.placements.find((p) => p.component.name === name)!.component.scheduling.tolerations ?? [];

  it.each([
    "openkeel-nova/computeAgent",
    "kubevirt/kubevirt/virt-handler",
    "longhorn/longhorn-manager",
    "longhorn/longhorn-csi-plugin+instance-managers",
    "openkeel-neutron/metadataAgent",
    "openkeel-neutron/chassis",
    "medik8s-remediation/self-node-remediation-config/self-node-remediation-agent",
  ])("%s tolerates openkeel.io/compute-disabled and medik8s.io/drain", (name) => {
    expect(untoleratedTaints([COMPUTE_DISABLED, DRAIN], tolerations(name))).toEqual([]);
  });

  it("the SNR agent tolerates everything (§ 5.6): {operator: Exists}", () => {
    const [config] = objectsOf(planOf("prod-medium"), "medik8s-remediation").filter((o) => o.kind === "SelfNodeRemediationConfig");
    expect((config as any).spec.customDsTolerations).toEqual([{ operator: "Exists" }]);
  });

  it("Longhorn's system-managed pods follow taintToleration, which lists both", () => {
    const setting: string = valuesOf(planOf("prod-medium"), "longhorn").defaultSettings.taintToleration;
    expect(setting.split(";")).toEqual(expect.arrayContaining(["openkeel.io/compute-disabled:NoSchedule", "medik8s.io/drain:NoSchedule"]));
  });

  it("a node agent that lacks one fails the placement check, at the stack key that placed it", () => {
    const found = problems("prod-medium", (raw) => {
      // the stack's extraTolerations replace the catalog's (stacks/README.md, placement.<component>)
      raw.services = { ...raw.services, nova: { placement: { computeAgent: { extraTolerations: [] } } } };
    });
    const at = "openkeel:services.nova.placement.computeAgent";
    expect(found.map((p) => [p.code, p.path])).toEqual([
      ["placement-agent-tolerations", at],
      ["placement-agent-tolerations", at],
      ["placement-reserved-host", at],
    ]);
    expect(found[0].message).toMatch(
      /^openkeel-nova\/computeAgent \(DaemonSet\) does not tolerate openkeel\.io\/compute-disabled:NoSchedule: a disabled hypervisor carries it/,
    );
  });
});

describe("dead end 4's setting: the drains of nodes with strict-local volumes can finish", () => {
  it("Longhorn's node drain policy lets a stopped last replica go (allow-if-replica-is-stopped, for D5)", () => {
    expect(valuesOf(planOf("prod-medium"), "longhorn").defaultSettings.nodeDrainPolicy).toBe("allow-if-replica-is-stopped");
  });
});
