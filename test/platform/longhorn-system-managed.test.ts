// Longhorn's system-managed components (§ 2.3, § 5.3; issue 22 item 4): the CSI sidecar
// Deployments and the RWX share managers are rows of the placement report; the share managers of
// Manila's class run on storage nodes only; the sidecars follow the CSI plugin (1.12.1 has no
// setting of their own), a deviation docs/design-decisions.md records.
import { describe, expect, it } from "vitest";
import { resolveEnvironment, resolveStack } from "../../environments";
import { LONGHORN_RWX_CLASS } from "../../platform/longhorn";
import { placementReport } from "../../placement/report";
import { planComponents } from "../../placement/workloads";
import { findUnit, type ManifestsUnit } from "../../plan/plan";
import { object, planOf, valuesOf, shippedPlan } from "../helpers/plans";
import { mutatedConfig, PRODUCTION_STACKS, shippedConfig } from "../helpers/stacks";

const labWithBackends = () => mutatedConfig("lab", (r) => (r.platform = { realBackends: true }));
const reportOf = (stack: string) => shippedPlan(stack).placement!;
const row = (stack: string, name: string) => reportOf(stack).placements.find((p) => p.component.name === name);

describe("the CSI sidecars: rows of their own, where the CSI plugin may run", () => {
  it.each(PRODUCTION_STACKS)("%s: attacher, provisioner, resizer, snapshotter, 3 replicas each, on the CSI plugin's nodes", (stack) => {
    const plugin = row(stack, "longhorn/longhorn-csi-plugin+instance-managers")!;
    for (const name of ["attacher", "provisioner", "resizer", "snapshotter"]) {
      const p = row(stack, `longhorn/csi-${name}`);
      expect(p, name).toBeDefined();
      expect(p!.component).toMatchObject({ kind: "Deployment", replicas: 3, designRoles: ["controlPlane", "storage"] });
      expect(p!.eligible).toEqual(plugin.eligible);
    }
  });

  it("prod-medium: § 2.3 says control plane or storage, 1.12.1 also lets them on the tainted hypervisors and the provisioning node", () => {
    expect(row("prod-medium", "longhorn/csi-attacher")!.reaches).toEqual(["controlPlane", "compute", "storage", "provisioning"]);
  });
});

describe("RWX share managers (Manila): on storage nodes, through their class", () => {
  it.each([
    ["prod-small", ["node-1", "node-2", "node-3"]],
    ["prod-medium", ["cmp-01", "cmp-02", "cmp-03"]],
    ["prod-large", ["sto-1", "sto-2", "sto-3", "sto-4", "sto-5", "sto-6", "sto-7", "sto-8", "sto-9"]],
  ])("%s: the share managers of longhorn-rwx may run on the storage nodes alone", (stack, storage) => {
    const p = row(stack, `storage-classes/${LONGHORN_RWX_CLASS}/share-manager`)!;
    expect(p.component).toMatchObject({ kind: "Pods", designRoles: ["storage"], confinedTo: "storage" });
    expect([...p.eligible].sort()).toEqual([...storage].sort());
  });

  it("the class selects the storage label of the stack's profile; Manila's shares are told the class", () => {
    const sc = object(planOf("prod-medium"), "StorageClass", LONGHORN_RWX_CLASS);
    expect(sc.provisioner).toBe("driver.longhorn.io");
    expect(sc.parameters).toMatchObject({
      shareManagerNodeSelector: "node-restriction.kubernetes.io/openkeel-storage:",
      nodeSelector: "storage",
      numberOfReplicas: "3",
    });
    expect(valuesOf(planOf("prod-medium"), "openkeel-manila").share).toEqual({ replicas: 2, storageClassName: LONGHORN_RWX_CLASS });
    const lab = planOf(labWithBackends());
    expect(object(lab, "StorageClass", LONGHORN_RWX_CLASS).parameters.shareManagerNodeSelector).toBe("node-role.openkeel.io/storage:");
    expect(valuesOf(lab, "openkeel-manila").share.storageClassName).toBe(LONGHORN_RWX_CLASS);
  });

  it("the lab without Longhorn has no RWX class, and tells Manila none", () => {
    const plan = planOf("lab");
    expect(findUnit(plan, "storage-classes")).toBeUndefined();
    expect(valuesOf(plan, "openkeel-manila").share.storageClassName).toBeUndefined();
  });

  it("a class whose share managers could leave the storage nodes is a placement error naming them", () => {
    const cfg = shippedConfig("prod-large");
    const plan = structuredClone(planOf(cfg));
    const sc = (findUnit(plan, "storage-classes") as ManifestsUnit).objects.find((o) => o.metadata.name === LONGHORN_RWX_CLASS)!;
    (sc.parameters as Record<string, string>).shareManagerNodeSelector = "node-restriction.kubernetes.io/openkeel-compute:";
    const report = placementReport(
      plan,
      resolveStack(cfg).topology,
      planComponents(plan, resolveEnvironment().readers),
      resolveEnvironment(plan.environment).placementChecks,
    );
    const [e] = report.checks.filter((c) => c.code === "placement-forbidden");
    expect(e.message).toMatch(/^storage-classes\/longhorn-rwx\/share-manager \(Pods\) may run on cmp-a-01, .*which lack the storage role/);
  });
});
