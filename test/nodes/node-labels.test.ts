// Labels a node asserts itself (Talos machine.nodeLabels, kind nodes[].labels) can never carry a
// key NodeRestriction refuses: one such key on a Talos worker drops every label of the node, and a
// kubelet given one in --node-labels does not start. Tries, and fails to, emit one.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LoadedConfig } from "../../config/schema";
import { ForbiddenSelfLabelError, kubeletMaySetLabel, nodeSelfLabels, selfAssertedLabels } from "../../nodes/node-labels";
import type { K8sObject } from "../../plan/plan";
import { ROLES, roleLabelKey, roleOfLabelKey } from "../../config/roles";
import { planStack } from "../../environments";
import { mutatedConfig, SHIPPED_STACKS, shippedConfig } from "../helpers/stacks";

const FORBIDDEN_PREFIXES = ["node-restriction.kubernetes.io/", "node-role.kubernetes.io/"];

/** Every self-asserted label map a stack renders: Talos nodeLabels and kind node labels. */
function selfAssertedMaps(cfg: LoadedConfig): { where: string; labels: Record<string, string> }[] {
  const files = planStack(cfg).plan!.nodeConfig!.files;
  const out: { where: string; labels: Record<string, string> }[] = [];
  for (const f of files) {
    for (const d of f.documents as any[]) {
      if (d.machine?.nodeLabels) out.push({ where: f.path, labels: d.machine.nodeLabels });
      if (d.kind === "Cluster") for (const n of d.nodes) if (n.labels) out.push({ where: `${f.path} ${n.role}`, labels: n.labels });
    }
  }
  return out;
}

function nodePatches(cfg: LoadedConfig): K8sObject[] {
  const unit = planStack(cfg).plan!.phases[0].units.find((u) => u.name === "node-roles");
  return unit?.kind === "Manifests" ? unit.objects : [];
}

const labelName = fc.stringMatching(/^[a-z0-9]([a-z0-9._-]{0,30}[a-z0-9])?$/);

describe("kubeletMaySetLabel (NodeRestriction)", () => {
  it.each([
    ["node-restriction.kubernetes.io/openkeel-compute", false],
    ["fips.node-restriction.kubernetes.io/enabled", false],
    ["node-role.kubernetes.io/worker", false],
    ["node-role.kubernetes.io/control-plane", false],
    ["kubernetes.io/role", false],
    ["example.k8s.io/x", false],
    ["topology.kubernetes.io/zone", true],
    ["kubernetes.io/hostname", true],
    ["node.kubernetes.io/instance-type", true],
    ["kubelet.kubernetes.io/x", true],
    ["node-role.openkeel.io/compute", true],
    ["network.openkeel.io/external-nic", true],
    ["node.longhorn.io/create-default-disk", true],
    ["plain", true],
  ])("%s → %s", (key, allowed) => {
    expect(kubeletMaySetLabel(key)).toBe(allowed);
  });
});

describe("self-asserted labels can never carry a forbidden key", () => {
  it("selfAssertedLabels refuses node-role.kubernetes.io/* and node-restriction.kubernetes.io/* (any name, any subdomain)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...FORBIDDEN_PREFIXES, "x.node-restriction.kubernetes.io/"),
        labelName,
        fc.dictionary(fc.stringMatching(/^openkeel\.io\/[a-z]{1,10}$/), fc.constant("")),
        (prefix, name, allowed) => {
          const key = prefix + name;
          expect(() => selfAssertedLabels({ ...allowed, [key]: "" }, "test")).toThrow(ForbiddenSelfLabelError);
        },
      ),
    );
  });

  it("names every refused key and the node", () => {
    try {
      selfAssertedLabels({ "node-role.kubernetes.io/worker": "", "node-restriction.kubernetes.io/openkeel-compute": "", ok: "1" }, "node cmp-01");
      throw new Error("expected a refusal");
    } catch (e) {
      expect(e).toBeInstanceOf(ForbiddenSelfLabelError);
      expect((e as ForbiddenSelfLabelError).keys).toEqual(["node-restriction.kubernetes.io/openkeel-compute", "node-role.kubernetes.io/worker"]);
      expect((e as Error).message).toMatch(/^node cmp-01: .*node-roles phase/);
    }
  });

  it("the hardened role labels (D1) of a production node never become self-asserted", () => {
    const cfg = shippedConfig("prod-medium");
    for (const node of cfg.nodes) {
      const labels = nodeSelfLabels(node, "hardened");
      for (const role of node.roles) expect(labels[roleLabelKey(role, "hardened")]).toBeUndefined();
    }
  });

  it("a worker whose inventory asks for node-role.kubernetes.io/* and node-restriction.kubernetes.io/* labels: the NodePatch carries them, Talos never", () => {
    const cfg = mutatedConfig("prod-medium", (r) => {
      const cmp = r.nodes.find((n: any) => n.name === "cmp-01");
      cmp.labels["node-role.kubernetes.io/worker"] = "";
      cmp.labels["node-restriction.kubernetes.io/fips"] = "true";
      cmp.labels["openkeel.io/rack"] = "r12";
    });
    const patch = nodePatches(cfg).find((o) => o.metadata.name === "cmp-01")!;
    expect(patch.metadata.labels).toMatchObject({ "node-role.kubernetes.io/worker": "", "node-restriction.kubernetes.io/fips": "true" });
    const talos = selfAssertedMaps(cfg).find((m) => m.where === "talos/nodes/cmp-01.yaml")!;
    expect(talos.labels["openkeel.io/rack"]).toBe("r12");
    expect(Object.keys(talos.labels).filter((k) => !kubeletMaySetLabel(k))).toEqual([]);
  });

  it("on random inventories, no rendered self-asserted label map holds a forbidden key", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            prefix: fc.constantFrom(...FORBIDDEN_PREFIXES, "openkeel.io/", "topology.kubernetes.io/", "example.com/"),
            name: labelName,
            node: fc.nat(8),
          }),
          { maxLength: 6 },
        ),
        fc.constantFrom("prod-medium", "prod-small", "lab"),
        (extra, stack) => {
          const cfg = mutatedConfig(stack, (r) => {
            for (const e of extra) {
              const node = r.nodes[e.node % r.nodes.length];
              const key = e.prefix + e.name;
              // the zone and OpenKeel's role labels have keys of their own (the loader refuses them here)
              if (key === "topology.kubernetes.io/zone" || roleOfLabelKey(key)) continue;
              node.labels = { ...(node.labels ?? {}), [key]: "v" };
            }
          });
          for (const m of selfAssertedMaps(cfg)) {
            for (const k of Object.keys(m.labels)) {
              expect(
                FORBIDDEN_PREFIXES.some((p) => k.startsWith(p)),
                `${m.where}: ${k}`,
              ).toBe(false);
            }
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it.each(SHIPPED_STACKS)("%s: every self-asserted label is one a kubelet may set", (stack) => {
    for (const m of selfAssertedMaps(shippedConfig(stack))) {
      expect(
        Object.keys(m.labels).filter((k) => !kubeletMaySetLabel(k)),
        m.where,
      ).toEqual([]);
    }
  });

  it("the lab's kind node labels are its role labels with the own prefix", () => {
    const cfg = shippedConfig("lab");
    const kind = selfAssertedMaps(cfg).filter((m) => m.where.startsWith("kind/"));
    expect(kind).toHaveLength(1);
    const roleKeys = Object.keys(kind[0].labels).filter((k) => ROLES.some((r) => roleLabelKey(r, "default") === k));
    expect(roleKeys.sort()).toEqual(cfg.nodes[0].roles.map((r) => roleLabelKey(r, "default")).sort());
  });
});
