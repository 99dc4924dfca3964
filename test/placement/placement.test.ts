// The placement engine (§ 5.1, § 5.2): precedence, multi-role OR, tolerations always rendered.
import { describe, expect, it } from "vitest";
import { placementRoles, resolvePlacement } from "../../placement/chart-helper";
import { roleLabelKey, roleTaint, roleToleration } from "../../config/roles";

const hardened = { profile: "hardened" as const };

describe("role keys (D1)", () => {
  it("hardened keys in production, default keys in labs, taint keys the same in both", () => {
    expect(roleLabelKey("controlPlane", "hardened")).toBe("node-restriction.kubernetes.io/openkeel-control-plane");
    expect(roleLabelKey("controlPlane", "default")).toBe("node-role.openkeel.io/control-plane");
    expect(roleTaint("provisioning")).toEqual({ key: "node-role.openkeel.io/provisioning", effect: "NoSchedule" });
  });
});

describe("resolvePlacement", () => {
  it("one role: a nodeSelector on its label and the toleration of its taint", () => {
    expect(resolvePlacement({ role: "compute" }, hardened)).toEqual({
      nodeSelector: { "node-restriction.kubernetes.io/openkeel-compute": "" },
      tolerations: [{ key: "node-role.openkeel.io/compute", operator: "Exists", effect: "NoSchedule" }],
    });
  });

  it("several roles: one nodeSelectorTerm per role (OR) and every role's toleration", () => {
    const s = resolvePlacement({ roles: ["controlPlane", "network"] }, { profile: "default" });
    expect(s.nodeSelector).toBeUndefined();
    expect(s.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: "node-role.openkeel.io/control-plane", operator: "Exists" }] },
      { matchExpressions: [{ key: "node-role.openkeel.io/network", operator: "Exists" }] },
    ]);
    expect(s.tolerations).toEqual([roleToleration("controlPlane"), roleToleration("network")]);
  });

  it("the chart's default role applies when the placement names none", () => {
    const s = resolvePlacement(undefined, { ...hardened, defaultRole: "controlPlane" });
    expect(s.nodeSelector).toEqual({ "node-restriction.kubernetes.io/openkeel-control-plane": "" });
    expect(placementRoles({}, "controlPlane")).toEqual(["controlPlane"]);
  });

  it("the component's role beats the default role; roles beat role", () => {
    expect(placementRoles({ role: "compute" }, "controlPlane")).toEqual(["compute"]);
    expect(placementRoles({ role: "compute", roles: ["network", "compute"] }, "controlPlane")).toEqual(["network", "compute"]);
  });

  it("raw fields beat the role", () => {
    const raw = { "node-restriction.kubernetes.io/openkeel-control-plane": "", "topology.kubernetes.io/zone": "zone-a" };
    const s = resolvePlacement(
      {
        role: "controlPlane",
        nodeSelector: raw,
        tolerations: [{ operator: "Exists" }],
        priorityClassName: "mine",
        affinity: { podAntiAffinity: {} },
        topologySpreadConstraints: [{ maxSkew: 1 } as any],
      },
      { ...hardened, priorityClassName: "openkeel-control" },
    );
    expect(s).toEqual({
      nodeSelector: raw,
      tolerations: [{ operator: "Exists" }],
      priorityClassName: "mine",
      affinity: { podAntiAffinity: {} },
      topologySpreadConstraints: [{ maxSkew: 1 } as any],
    });
  });

  it("tolerations are rendered whether or not taints are on, and extra tolerations are added once", () => {
    const reserved = { key: "openkeel.io/reserved", operator: "Exists" as const, effect: "NoSchedule" as const };
    const s = resolvePlacement({ role: "compute", extraTolerations: [reserved, reserved] }, hardened);
    expect(s.tolerations).toEqual([roleToleration("compute"), reserved]);
  });

  it("the context's priority class applies unless the component sets its own", () => {
    expect(resolvePlacement({ role: "compute" }, { ...hardened, priorityClassName: "openkeel-vm" }).priorityClassName).toBe("openkeel-vm");
  });

  it("no role and no default renders no selector (a chart installed alone)", () => {
    expect(resolvePlacement(undefined, hardened)).toEqual({ tolerations: [] });
  });
});
