// § 2's order of priority classes as an invariant (issue 45, item 2), a plan check on every stack
// (environments/priority.ts, platform/priority-classes.ts): the classes this repository creates
// keep it (infra > control > VMs, below Longhorn's, KubeVirt's and the built-in ones; VMs never
// preempt, infra does), and so does every tier map a release is given; a stack that overrides a
// release's map out of order is refused at its key, with the order in the fix; classes created out
// of order are refused on every stack, naming platform/priority-classes.ts.
import { describe, expect, it } from "vitest";
import { formatCheck } from "../../cli/cli";
import type { Check } from "../../config/problems";
import { planStack } from "../../environments";
import { PRIORITY_ORDER, priorityOrderChecks, UPSTREAM_PRIORITY_CLASSES } from "../../environments/priority";
import { upstreamPriorityClassesOf, type PlatformComponent } from "../../platform/component";
import { PRIORITY_CLASSES, priorityOrder, priorityOrderFindings } from "../../platform/priority-classes";
import { allUnits, type HelmReleaseUnit, type K8sObject, type Plan } from "../../plan/plan";
import { planOf } from "../helpers/plans";
import { mutatedConfig, SHIPPED_STACKS, shippedConfig } from "../helpers/stacks";

const ORDER =
  "system-node-critical (2000001000) > system-cluster-critical (2000000000) > longhorn-critical = kubevirt-cluster-critical (1000000000) > " +
  "openkeel-infra-critical (1000000: Galera, RabbitMQ, OVN central) > " +
  "openkeel-control (900000: the APIs, conductors, schedulers, workers and the operators' controllers) > " +
  "openkeel-vm (500000, never preempts: VMs (virt-launcher pods))";

/** prod-medium's Plan with one of the classes it creates changed. */
function withClass(tier: keyof typeof PRIORITY_CLASSES, change: (o: K8sObject) => void): Plan {
  const plan = planOf("prod-medium");
  const o = allUnits(plan)
    .flatMap((u) => (u.kind === "Manifests" ? u.objects : []))
    .find((x) => x.kind === "PriorityClass" && x.metadata.name === PRIORITY_CLASSES[tier])!;
  change(o);
  return plan;
}

/** A stack's refusals of the order, when a release's raw values give one of its tiers another class. */
function overridden(stack: string, service: string, tiers: Record<string, string>): Check[] {
  const cfg = mutatedConfig(stack, (raw) => {
    raw.services = {
      ...(raw.services ?? {}),
      [service]: { ...(raw.services?.[service] ?? {}), values: { global: { placementDefaults: { priorityClasses: tiers } } } },
    };
  });
  const r = planStack(cfg);
  expect(r.plan).toBeUndefined();
  return r.problems.filter((p): p is Check => p.code === "priority-order");
}

describe("the classes this repository creates keep § 2's order", () => {
  it.each(SHIPPED_STACKS)("%s: no finding", (stack) => expect(priorityOrderFindings(planOf(stack), UPSTREAM_PRIORITY_CLASSES)).toEqual([]));

  it("the order as every finding quotes it, highest first", () => expect(PRIORITY_ORDER).toBe(ORDER));

  it("an upstream's classes are its component's to declare (priorityClasses): each ranks in the order, and ours must stay below it", () => {
    const critical = { name: "x-critical", value: 1_050_000, source: "s" };
    const upstream = upstreamPriorityClassesOf([{ name: "X", priorityClasses: [critical] } as unknown as PlatformComponent]);
    expect(upstream).toEqual([critical]);
    expect(priorityOrder(upstream)).toContain("system-cluster-critical (2000000000) > x-critical (1050000) > openkeel-infra-critical (1000000");
    const raised = () => withClass("infra", (o) => (o.value = 1_100_000));
    expect(priorityOrderFindings(raised(), UPSTREAM_PRIORITY_CLASSES)).toEqual([]);
    expect(priorityOrderFindings(raised(), upstream).map((f) => f.message)).toEqual([
      "PriorityClass openkeel-infra-critical: Galera, RabbitMQ, OVN central run at openkeel-infra-critical (1100000): it is not below x-critical (1050000): it could preempt what the control plane runs on",
    ]);
    const twice = [
      { name: "X", priorityClasses: [critical] },
      { name: "Y", priorityClasses: [critical] },
    ] as unknown as PlatformComponent[];
    expect(() => upstreamPriorityClassesOf(twice)).toThrow("Y declares the priority class x-critical, which another component already does");
  });

  it("the VM class raised above the infrastructure and control classes: refused on the stack, naming the file, the order and what breaks", () => {
    const cfg = shippedConfig("prod-medium");
    const checks = priorityOrderChecks(
      withClass("vm", (o) => (o.value = 1_100_000)),
      cfg,
    );
    expect(checks).toEqual([
      {
        level: "error",
        code: "priority-order",
        file: "platform/priority-classes.ts",
        message:
          "PriorityClass openkeel-vm: VMs (virt-launcher pods) run at openkeel-vm (1100000, never preempts): it is not below openkeel-infra-critical (1000000) and openkeel-control (900000): " +
          "Galera, RabbitMQ, OVN central and the APIs, conductors, schedulers, workers and the operators' controllers could no longer preempt them",
        fix: `restore § 2's order, highest first: ${ORDER} (DESIGN_TIERS)`,
      },
    ]);
    // printed with the file that holds the mistake, not the stack file
    expect(formatCheck(cfg.file, checks[0])).toMatch(/^platform\/priority-classes\.ts: error \[priority-order\]: PriorityClass openkeel-vm: /);
  });

  it("a VM class that preempts, an infra class that does not, an infra class at Longhorn's value: each refused", () => {
    const cfg = shippedConfig("prod-medium");
    const messages = (plan: Plan) => priorityOrderChecks(plan, cfg).map((c) => c.message);
    expect(messages(withClass("vm", (o) => delete o.preemptionPolicy))).toEqual([
      "PriorityClass openkeel-vm: VMs (virt-launcher pods) run at openkeel-vm (500000): its pods preempt: a VM started on a full node would evict what runs below it, where § 2 has VMs preempt nothing",
    ]);
    expect(messages(withClass("infra", (o) => (o.preemptionPolicy = "Never")))).toEqual([
      "PriorityClass openkeel-infra-critical: Galera, RabbitMQ, OVN central run at openkeel-infra-critical (1000000, never preempts): its pods never preempt: a member that lost its node could not take a VM's place (§ 2)",
    ]);
    expect(messages(withClass("infra", (o) => (o.value = 1_000_000_000)))).toEqual([
      "PriorityClass openkeel-infra-critical: Galera, RabbitMQ, OVN central run at openkeel-infra-critical (1000000000): it is not below longhorn-critical and kubevirt-cluster-critical (1000000000): it could preempt what the control plane runs on",
    ]);
  });

  it("a value changed that keeps the order: no finding (the replacement warning is priority-class-replace's)", () => {
    expect(
      priorityOrderFindings(
        withClass("infra", (o) => (o.value = 950_000)),
        UPSTREAM_PRIORITY_CLASSES,
      ),
    ).toEqual([]);
  });
});

describe("a stack whose release runs a tier at a class out of order is refused at its key", () => {
  it("Nova's VMs at the infrastructure class (prod-medium): the key, what breaks, the fix with the order", () => {
    const [check, ...rest] = overridden("prod-medium", "nova", { vm: PRIORITY_CLASSES.infra });
    expect(rest).toEqual([]);
    expect(check.path).toBe("openkeel:services.nova.values.global.placementDefaults.priorityClasses.vm");
    expect(check.message).toBe(
      "release openkeel-nova, tier vm (openkeel-infra-critical): VMs (virt-launcher pods) run at openkeel-infra-critical (1000000): it is not below openkeel-infra-critical (1000000) and openkeel-control (900000): " +
        "Galera, RabbitMQ, OVN central and the APIs, conductors, schedulers, workers and the operators' controllers could no longer preempt them, and they would preempt the APIs, conductors, schedulers, workers and the operators' controllers; " +
        "its pods preempt: a VM started on a full node would evict what runs below it, where § 2 has VMs preempt nothing",
    );
    expect(check.fix).toBe(`remove the override (the release then runs its vm tier at openkeel-vm); § 2's order, highest first: ${ORDER}`);
  });

  it("Keystone's control tier at the VMs' class, Neutron's infra tier at the built-in node class: each refused", () => {
    expect(overridden("prod-small", "keystone", { control: PRIORITY_CLASSES.vm }).map((c) => [c.path, c.message])).toEqual([
      [
        "openkeel:services.keystone.values.global.placementDefaults.priorityClasses.control",
        "release openkeel-keystone, tier control (openkeel-vm): the APIs, conductors, schedulers, workers and the operators' controllers run at openkeel-vm (500000, never preempts): it is not above openkeel-vm (500000, never preempts): they could no longer preempt VMs (virt-launcher pods)",
      ],
    ]);
    expect(overridden("lab", "neutron", { infra: "system-node-critical" }).map((c) => c.message)).toEqual([
      "release openkeel-neutron, tier infra (system-node-critical): Galera, RabbitMQ, OVN central run at system-node-critical (2000001000): it is not below longhorn-critical and kubevirt-cluster-critical (1000000000): it could preempt what the control plane runs on",
    ]);
  });

  it("a stack that writes § 2's classes out: no finding", () => {
    const cfg = mutatedConfig("prod-medium", (raw) => {
      raw.services = {
        ...(raw.services ?? {}),
        nova: { ...(raw.services?.nova ?? {}), values: { global: { placementDefaults: { priorityClasses: { ...PRIORITY_CLASSES } } } } },
      };
    });
    expect(planStack(cfg).problems.filter((p) => p.code === "priority-order")).toEqual([]);
  });

  it("a tier map this repository writes out of order is its bug, never the stack's: thrown", () => {
    const plan = planOf("prod-medium");
    const nova = allUnits(plan).find((u): u is HelmReleaseUnit => u.kind === "HelmRelease" && u.name === "openkeel-nova")!;
    (nova.values as any).global.placementDefaults.priorityClasses.vm = PRIORITY_CLASSES.control;
    expect(() => priorityOrderChecks(plan, shippedConfig("prod-medium"))).toThrow(
      /^priority order of stack prod-medium: release openkeel-nova, tier vm \(openkeel-control\)/,
    );
  });
});
