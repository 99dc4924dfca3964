// Issue 23 (found by the e2e on the real manifests): the RabbitMQ operators' manifests hold
// cert-manager Issuers and Certificates and the same rabbitmq-system Namespace. So cert-manager's
// CRDs are the program's own (cert-manager.crds.yaml, before the chart), which the provider's yaml/v2
// component needs to know those kinds in the preview of a new cluster; both operators wait for
// cert-manager; and each applies the shared Namespace with force on field conflicts.
import type * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { forceConflicts } from "../../components/plan-unit";
import { allUnits, findUnit } from "../../plan/plan";
import { CERT_MANAGER_CHART, CERT_MANAGER_CRDS } from "../../platform/versions";
import { planOf } from "../helpers/plans";
import { SHIPPED_STACKS } from "../helpers/stacks";

describe("cert-manager and the RabbitMQ operators", () => {
  it.each(SHIPPED_STACKS)("%s: cert-manager's CRDs from its release manifest, protected, before the chart, which installs none", (stack) => {
    const plan = planOf(stack);
    const names = allUnits(plan).map((u) => u.name);
    const crds = findUnit(plan, "cert-manager-crds")!;
    expect(crds).toMatchObject({ kind: "RemoteManifest", urls: [CERT_MANAGER_CRDS.url], version: CERT_MANAGER_CHART.version, protect: true });
    const chart = findUnit(plan, "cert-manager")!;
    expect(chart.kind === "HelmRelease" && chart.values.crds).toEqual({ enabled: false });
    expect(chart.dependsOn).toContain("cert-manager-crds");
    expect(names.indexOf("cert-manager-crds")).toBeLessThan(names.indexOf("cert-manager"));
  });

  it.each(SHIPPED_STACKS)("%s: both RabbitMQ operators wait for cert-manager and apply rabbitmq-system with force", (stack) => {
    const plan = planOf(stack);
    for (const name of ["rabbitmq-cluster-operator", "rabbitmq-messaging-topology-operator"]) {
      const unit = findUnit(plan, name)!;
      expect(unit.dependsOn, name).toEqual(expect.arrayContaining(["cert-manager-crds", "cert-manager"]));
      expect(unit.kind === "RemoteManifest" && unit.forceConflicts, name).toEqual(["Namespace rabbitmq-system"]);
    }
  });

  it("the force is the named objects' alone: pulumi.com/patchForce on them, nothing on the others or on components", () => {
    const transform = forceConflicts(["Namespace rabbitmq-system"]);
    const args = (custom: boolean, props: Record<string, unknown>) =>
      ({ type: "kubernetes:core/v1:Namespace", name: "x", custom, props, opts: {} }) as unknown as pulumi.ResourceTransformArgs;
    const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: "rabbitmq-system", labels: { a: "b" }, annotations: { c: "d" } } };
    const out = transform(args(true, ns)) as pulumi.ResourceTransformResult;
    expect(out.props.metadata).toEqual({ name: "rabbitmq-system", labels: { a: "b" }, annotations: { c: "d", "pulumi.com/patchForce": "true" } });
    expect(transform(args(true, { ...ns, metadata: { name: "other" } }))).toBeUndefined();
    expect(transform(args(true, { kind: "ServiceAccount", metadata: { name: "rabbitmq-system", namespace: "rabbitmq-system" } }))).toBeUndefined();
    expect(transform(args(false, ns))).toBeUndefined();
  });
});
