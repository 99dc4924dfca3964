// The independent copies kept on purpose agree with the code they check: the policy pack's reading
// of a placement value (policy/rules/placement.ts) with the chart-helper rules
// (placement/chart-helper.ts), its reading of the chassis' nodes (policy/rules/neutron.ts) with the
// placement report, the scheduler-filter oracle (helpers/scheduling.ts) with the placement engine
// (placement/scheduling.ts), Longhorn's own parsers (helpers/longhorn.ts) with the lenient
// readers of platform/longhorn.ts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ROLES, roleDefinitions, roleLabelKey, roleOfLabelKey, type LabelProfile, type Role, type Taint, type Toleration } from "../../config/roles";
import type { PlacementValue } from "../../config/placement";
import { resolvePlacement, type RoleDefinitions, type Scheduling } from "../../placement/chart-helper";
import { isEligible } from "../../placement/scheduling";
import { formatLonghornNodeSelector, formatLonghornTolerations, parseLonghornNodeSelector, parseLonghornTolerations } from "../../platform/longhorn-names";
import { effectivePlacement } from "../../policy/rules/placement";
import { NODE_PATCH_TYPE } from "../../policy/rules/common";
import { patchedNodes, selectedNodes } from "../../policy/rules/neutron";
import type { HelmReleaseUnit } from "../../plan/plan";
import * as oracle from "../helpers/longhorn";
import { fits } from "../helpers/scheduling";
import { SHIPPED_STACKS } from "../helpers/stacks";
import { shippedPlan } from "../helpers/plans";

const SEED = 20261130;

/** The role sets a scheduling selects (OR of ANDs), read through the label keys of the definitions. */
function selectedRoles(s: Scheduling, defs: RoleDefinitions): string[] {
  const roleOf = (key: string) => (Object.entries(defs) as [Role, { label?: string }][]).find(([, d]) => d.label === key)?.[0] ?? roleOfLabelKey(key)?.role;
  const toRoles = (keys: string[]) => [...new Set(keys.map(roleOf).filter((r): r is Role => r !== undefined))].sort().join("+");
  const selector = Object.keys(s.nodeSelector ?? {});
  const terms = s.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms && terms.length > 0) {
    return terms
      .map((t) => toRoles([...(t.matchExpressions ?? []).filter((e) => e.operator === "Exists" || e.operator === "In").map((e) => e.key), ...selector]))
      .sort();
  }
  return selector.length > 0 ? [toRoles(selector)] : [];
}

function policyRoles(placement: unknown, values: Record<string, unknown>, defaultRole?: Role): string[] {
  return effectivePlacement(placement, values, defaultRole)
    .terms.map((t) => [...t].sort().join("+"))
    .sort();
}

const role = fc.constantFrom(...ROLES);
const toleration = fc.record({
  key: fc.constantFrom("a", "b", "node-role.openkeel.io/compute"),
  operator: fc.constantFrom("Exists" as const, "Equal" as const),
  effect: fc.constantFrom("NoSchedule" as const, "NoExecute" as const),
});

describe("the policy pack reads placements as the chart helper renders them", () => {
  it("on every component of every shipped stack", () => {
    let compared = 0;
    for (const stack of SHIPPED_STACKS) {
      const { plan } = shippedPlan(stack);
      for (const u of plan!.phases.flatMap((p) => p.units)) {
        if (u.kind !== "HelmRelease" || !u.type.startsWith("openkeel:openkeel:")) continue;
        const values = (u as HelmReleaseUnit).values;
        const defs = ((values.global as any)?.nodeRoles?.roles ?? {}) as RoleDefinitions;
        for (const [name, p] of Object.entries((values.placement ?? {}) as Record<string, PlacementValue>)) {
          const rendered = resolvePlacement(p, { roles: defs, defaultRole: "controlPlane" });
          expect(policyRoles(p, values, "controlPlane"), `${stack} ${u.name} placement.${name}`).toEqual(selectedRoles(rendered, defs));
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(50);
  });

  it("on generated placements, with and without global.nodeRoles", () => {
    const placement = fc.record(
      {
        role,
        roles: fc.uniqueArray(role, { minLength: 1, maxLength: 3 }),
        extraTolerations: fc.array(toleration, { maxLength: 2 }),
        nodeSelector: fc.dictionary(fc.constantFrom(...ROLES.map((r) => roleLabelKey(r, "hardened")), "topology.kubernetes.io/zone"), fc.constant("")),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(placement, fc.boolean(), fc.constantFrom<LabelProfile>("default", "hardened"), (p, passRoles, profile) => {
        const defs = passRoles ? roleDefinitions(profile) : {};
        const values = passRoles ? { global: { nodeRoles: { taints: false, roles: defs } } } : {};
        const rendered = resolvePlacement(p as PlacementValue, { roles: defs, defaultRole: "controlPlane" });
        expect(policyRoles(p, values, "controlPlane")).toEqual(selectedRoles(rendered, defs));
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe("the policy pack reads the OVN chassis' nodes as the placement report computes them", () => {
  it.each(SHIPPED_STACKS)("%s: the Node patches chassis.nodeSelector admits are the chassis' eligible nodes", (stack) => {
    const { plan, placement } = shippedPlan(stack);
    const patches = plan!.phases
      .flatMap((p) => p.units)
      .flatMap((u) => (u.kind === "Manifests" ? u.objects : []))
      .filter((o) => o.kind === "Node");
    const views = patches.map((o) => ({ type: NODE_PATCH_TYPE, name: o.metadata.name, urn: o.metadata.name, props: { metadata: o.metadata } }));
    const neutron = plan!.phases.flatMap((p) => p.units).find((u) => u.name === "openkeel-neutron") as HelmReleaseUnit;
    const selector = (neutron.values.chassis as { nodeSelector?: unknown }).nodeSelector;
    const eligible = placement!.placements.find((p) => p.component.name === "openkeel-neutron/chassis")!.eligible;
    expect(
      selectedNodes(selector, patchedNodes(views))
        .map((n) => n.name)
        .sort(),
    ).toEqual([...eligible].sort());
  });
});

describe("the scheduler-filter oracle agrees with the placement engine", () => {
  it("on generated nodes and pods (selectors, required affinity, taints, tolerations)", () => {
    const key = fc.constantFrom("a", "b", "c");
    const value = fc.constantFrom("", "x", "y");
    const labels = fc.dictionary(key, value);
    const taint: fc.Arbitrary<Taint> = fc
      .record({
        key,
        value: fc.constantFrom(undefined, "x"),
        effect: fc.constantFrom("NoSchedule" as const, "NoExecute" as const, "PreferNoSchedule" as const),
      })
      .map((t) => (t.value === undefined ? { key: t.key, effect: t.effect } : (t as Taint)));
    const tol: fc.Arbitrary<Toleration> = fc.record(
      {
        key,
        operator: fc.constantFrom("Exists" as const, "Equal" as const),
        value: fc.constantFrom("", "x"),
        effect: fc.constantFrom(undefined, "NoSchedule" as const, "NoExecute" as const),
      },
      { requiredKeys: ["key", "operator"] },
    );
    const requirement = fc.record({
      key,
      operator: fc.constantFrom("In" as const, "NotIn" as const, "Exists" as const, "DoesNotExist" as const),
      values: fc.array(value, { minLength: 1, maxLength: 2 }),
    });
    const pod = fc.record(
      {
        nodeSelector: fc.dictionary(key, value, { maxKeys: 2 }),
        affinity: fc
          .array(fc.record({ matchExpressions: fc.array(requirement, { minLength: 1, maxLength: 2 }) }), { minLength: 1, maxLength: 2 })
          .map((terms) => ({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } })),
        tolerations: fc.array(tol, { maxLength: 3 }),
      },
      { requiredKeys: ["tolerations"] },
    );
    fc.assert(
      fc.property(labels, fc.array(taint, { maxLength: 2 }), pod, (l, taints, p) => {
        expect(fits({ labels: l, taints }, p)).toBe(isEligible(p, { name: "n", labels: l, taints }));
      }),
      { seed: SEED, numRuns: 500 },
    );
  });
});

describe("Longhorn's own parsers read what platform/longhorn.ts writes as it reads it", () => {
  it("taint tolerations and node selectors, generated", () => {
    const key = fc.constantFrom("node-role.openkeel.io/compute", "openkeel.io/reserved", "dedicated");
    const tol = fc.record({
      key,
      operator: fc.constantFrom("Exists" as const, "Equal" as const),
      value: fc.constantFrom("x", "gpu"),
      effect: fc.constantFrom("NoSchedule" as const, "NoExecute" as const, "PreferNoSchedule" as const),
    });
    fc.assert(
      fc.property(fc.array(tol, { maxLength: 4 }), fc.dictionary(key, fc.constantFrom("", "true", "x")), (tols, selector) => {
        const t = formatLonghornTolerations(tols.map((x) => (x.operator === "Exists" ? { key: x.key, operator: x.operator, effect: x.effect } : x)));
        expect(parseLonghornTolerations(t)).toEqual(oracle.parseLonghornTolerations(t));
        const s = formatLonghornNodeSelector(selector);
        expect(parseLonghornNodeSelector(s)).toEqual(oracle.parseLonghornNodeSelector(s));
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});
