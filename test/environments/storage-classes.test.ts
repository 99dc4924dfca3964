// Issue 14, items 1 and 6: the StorageClasses the releases ask for exist in their stack, and the
// volumes that replicate their own data (D5: Galera, RabbitMQ, OVN central, Swift) ask for the
// environment's strict-local class, held in production to one replica on the pod's node.
import { describe, expect, it } from "vitest";
import { valueAt } from "../../config/problems";
import { planStack } from "../../environments";
import { ENVIRONMENTS } from "../../environments/registry";
import { storageClassChecks } from "../../environments/storage";
import { STRICT_LOCAL_VOLUMES } from "../../openkeel/storage";
import { findUnit, type HelmReleaseUnit, type Plan } from "../../plan/plan";
import { object, planOf } from "../helpers/plans";
import { mutatedConfig, PRODUCTION_STACKS, SHIPPED_STACKS, shippedConfig } from "../helpers/stacks";

const classesOf = (plan: Plan) =>
  STRICT_LOCAL_VOLUMES.flatMap((v) => {
    const u = findUnit(plan, v.release) as HelmReleaseUnit | undefined;
    return u ? [[v.what, valueAt(u.values, v.path)]] : [];
  });

describe("the strict-local class comes from the environment", () => {
  it("the lab without real backends: Galera, RabbitMQ, OVN central and Swift on kind's own local-path class", () => {
    expect(classesOf(planOf("lab"))).toEqual([
      ["Galera", "standard"],
      ["RabbitMQ", "standard"],
      ["OVN central", "standard"],
      ["Swift storage", "standard"],
    ]);
    expect(ENVIRONMENTS["kind-lab"].storage(shippedConfig("lab")).provided).toEqual([
      { name: "standard", provisioner: "rancher.io/local-path", source: "kubernetes-sigs/kind pkg/build/nodeimage/const_storage.go", isDefault: true },
    ]);
  });

  it("the lab with real backends and production: longhorn-local, created by the stack itself", () => {
    const lab = planStack(mutatedConfig("lab", (r) => (r.platform = { realBackends: true }))).plan!;
    for (const plan of [lab, ...PRODUCTION_STACKS.map((s) => planOf(s))]) {
      // large's Swift devices are on its HDD capacity tier (§ 6.3), strict-local as well
      for (const [what, cls] of classesOf(plan))
        expect(cls, `${plan.stack} ${what}`).toBe(plan.stack === "prod-large" && what === "Swift storage" ? "longhorn-capacity" : "longhorn-local");
      expect(object(plan, "StorageClass", "longhorn-local").parameters).toMatchObject({ numberOfReplicas: "1", dataLocality: "strict-local" });
    }
  });

  it.each(SHIPPED_STACKS)("%s: every class a release or object asks for exists", (stack) => {
    const cfg = shippedConfig(stack);
    expect(storageClassChecks(planOf(stack), cfg, ENVIRONMENTS[cfg.environment].storage(cfg))).toEqual([]);
  });
});

describe("the storage class checks, tripped", () => {
  it("a misspelt class in a stack's values: an error naming the release and the key", () => {
    const r = planStack(
      mutatedConfig("prod-medium", (raw) => (raw.services.swift = { values: { storage: { devices: { storageClassName: "longhorn-lcoal" } } } })),
    );
    expect(r.plan).toBeUndefined();
    expect(r.problems.filter((c) => c.level === "error")).toEqual([
      {
        level: "error",
        code: "storage-class-missing",
        path: "openkeel:services.swift.values.storage.devices.storageClassName",
        message:
          "release openkeel-swift, values key storage.devices.storageClassName: StorageClass longhorn-lcoal does not exist in this stack: its volumes would stay Pending",
        fix: "name one of longhorn-local (created here), longhorn-vm (created here), longhorn-rwx (created here)",
      },
    ]);
  });

  it("production, a strict-local volume moved to a replicated class: D5 error (the class's parameters, not its name)", () => {
    const r = planStack(
      mutatedConfig("prod-small", (raw) => (raw.services = { neutron: { values: { ovnCentral: { storage: { storageClassName: "longhorn-vm" } } } } })),
    );
    const [c] = r.problems.filter((x) => x.level === "error");
    expect(c.code).toBe("d5-strict-local");
    expect(c.path).toBe("openkeel:services.neutron.values.ovnCentral.storage.storageClassName");
    expect(c.message).toMatch(
      /OVN central replicates its own data, but StorageClass longhorn-vm is not one strict-local replica \(parameters\.numberOfReplicas is "3", not "1"; parameters\.dataLocality is "best-effort", not "strict-local"\)/,
    );
  });

  it("the lab may keep its local-path class (not Longhorn): D5's parameters are a production rule", () => {
    const cfg = mutatedConfig("lab", (raw) => (raw.services = { swift: { values: { storage: { devices: { storageClassName: "standard" } } } } }));
    expect(planStack(cfg).problems).toEqual([]);
  });

  it("a class this repository wrote, missing or not strict-local, is a bug: a plain Error, never a stack problem", () => {
    const cfg = shippedConfig("prod-medium");
    const storage = ENVIRONMENTS[cfg.environment].storage(cfg);
    const missing = structuredClone(planOf("prod-medium"));
    ((findUnit(missing, "openkeel-chart") as HelmReleaseUnit).values as any).infrastructure.mariadb.storage.storageClassName = "nope";
    expect(() => storageClassChecks(missing, cfg, storage)).toThrow(
      /release openkeel-chart, values key infrastructure\.mariadb\.storage\.storageClassName: StorageClass nope does not exist/,
    );
    const replicated = structuredClone(planOf("prod-medium"));
    object(replicated, "StorageClass", "longhorn-local").parameters.numberOfReplicas = "3";
    expect(() => storageClassChecks(replicated, cfg, storage)).toThrow(
      /Galera replicates its own data, but StorageClass longhorn-local is not one strict-local replica/,
    );
  });
});
