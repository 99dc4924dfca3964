// Issue 47 item 2: what an operator does with an object of its custom kind is its component's
// knowledge (`customKinds` of its descriptor, platform/context.ts), handed to the machinery that
// judges the object before the operator acts on it: the pods mariadb-operator and the RabbitMQ
// operator build from openkeel-chart's CRs, with their labels and Galera's own budget
// (openkeel/guarantees.ts, openkeel/infrastructure.ts), and the readers that place them
// (openkeel/workloads.ts); what a change meets (review/operator-findings.ts): the fields
// mariadb-operator's webhook refuses to change, the NodeHealthChecks NHC's holds.
import { describe, expect, it } from "vitest";
import { resolveEnvironment, resolveStack } from "../../environments";
import { postRenderGuarantees } from "../../openkeel/guarantees";
import { infrastructurePostRender, infrastructureValues } from "../../openkeel/infrastructure";
import { findUnit, type HelmReleaseUnit, type Plan } from "../../plan/plan";
import { planComponents } from "../../placement/workloads";
import { customKind, customKindsOf } from "../../platform/context";
import { mariadbOperator } from "../../platform/mariadb-operator";
import { medik8s } from "../../platform/medik8s";
import { rabbitmqOperator } from "../../platform/rabbitmq-operator";
import { RenderedStack, renderPlan } from "../../render/rendered";
import { heldCheckFindings, postRenderFindings } from "../../review/operator-findings";
import { changesOf } from "../../review/preview-diff";
import type { ObjectRef } from "../../review/preview-model";
import { planOf } from "../helpers/plans";
import { mutatedConfig, shippedConfig } from "../helpers/stacks";

describe("what the operators do with objects of their kinds", () => {
  it("the post-render guarantees judge openkeel-chart's CRs on the pods their operators build, and without the operators' kinds on no pods at all", () => {
    const cfg = shippedConfig("prod-medium");
    const plan = planOf(cfg);
    const kinds = resolveStack(cfg).kinds;
    expect(postRenderGuarantees(plan, cfg, kinds)).toEqual({ checks: [], bugs: [] });
    const bare = postRenderGuarantees(plan, cfg, {}).bugs.map((c) => c.message);
    expect(bare).toContainEqual(
      expect.stringMatching(/^openkeel-chart\/mariadb \(MariaDB openkeel-chart-mariadb\): its post-render patch's .* matches none of its pods \(labels \{\}\)/),
    );
    expect(bare).toContainEqual(
      expect.stringMatching(
        /^openkeel-chart\/rabbitmq \(RabbitmqCluster openkeel-chart-rabbitmq\) has no required pod anti-affinity on kubernetes\.io\/hostname/,
      ),
    );
    // Galera's budget is the one mariadb-operator writes; RabbitMQ's operator writes none, so the Plan's is judged
    const onlyRabbit = postRenderGuarantees(plan, cfg, customKindsOf([rabbitmqOperator])).bugs.map((c) => c.message);
    expect(onlyRabbit.filter((m) => m.startsWith("openkeel-chart/rabbitmq"))).toEqual([]);
    expect(onlyRabbit).toContainEqual(expect.stringMatching(/^openkeel-chart\/mariadb .* has no PodDisruptionBudget over its pods/));
  });

  it("Galera's zone spread selects the pods by the labels its operator's kind gives them; without it the patch is refused, named", () => {
    const cfg = mutatedConfig("prod-medium", (raw) => {
      raw.nodes.forEach((n: any, i: number) => (n.zone = `zone-${"abc"[i % 3]}`));
    });
    const ctx = resolveStack(cfg).ctx;
    const galera = infrastructurePostRender(ctx, infrastructureValues(ctx)).patches.find((p) => p.target.kind === "MariaDB");
    expect((galera!.patch as any).spec.topologySpreadConstraints[0].labelSelector).toEqual({
      matchLabels: customKind(ctx.kinds, { apiVersion: "k8s.mariadb.com/v1alpha1", kind: "MariaDB" })?.pods?.labels("openkeel-chart-mariadb"),
    });
    expect(() => infrastructurePostRender({ ...ctx, kinds: {} }, infrastructureValues(ctx))).toThrow(
      "openkeel-chart renders a k8s.mariadb.com/MariaDB, but no installed component says which pods its operator builds from it (customKinds)",
    );
  });

  it("openkeel-chart's members are placed by the readers of their operators' components, and without them refused, named", () => {
    const cfg = shippedConfig("prod-small");
    const plan = planOf(cfg);
    const { readers } = resolveStack(cfg);
    const members = planComponents(plan, readers).filter((c) => c.name.startsWith("openkeel-chart/") && c.name !== "openkeel-chart/ingress");
    expect(members.map((c) => [c.name, c.kind])).toEqual([
      ["openkeel-chart/mariadb", "StatefulSet"],
      ["openkeel-chart/rabbitmq", "StatefulSet"],
    ]);
    const { MariaDB: _galera, ...others } = readers.objects ?? {};
    expect(() => planComponents(plan, { ...readers, objects: others })).toThrow(
      "placement: no component reads MariaDB, which openkeel-chart renders for mariadb; its operator's component must register a reader",
    );
  });

  it("a kind's name is one component's: a second claim is a bug, named", () => {
    expect(Object.keys(customKindsOf([mariadbOperator, rabbitmqOperator]))).toEqual(["k8s.mariadb.com/MariaDB", "rabbitmq.com/RabbitmqCluster"]);
    expect(() => customKindsOf([mariadbOperator, { name: "Other galera", customKinds: { "example.com/MariaDB": {} } }])).toThrow(
      "Other galera claims the kind example.com/MariaDB, whose name another component's kind already has",
    );
  });

  it("a changed patch of a field mariadb-operator's webhook holds immutable is refused with its kind's reason, and not without its kind", () => {
    const head = planOf("prod-medium");
    const base = structuredClone(head);
    const galera = (findUnit(base, "openkeel-chart") as HelmReleaseUnit).postRender!.find((p) => p.target.kind === "MariaDB")!;
    delete (galera.patch.spec as Record<string, unknown>).priorityClassName;
    const rendered = (plan: Plan, where: string) => new RenderedStack(new Map(renderPlan(plan).map((f) => [f.path, f.content])), where);
    const c = changesOf(rendered(base, "the base"), rendered(head, "this change"));
    expect(postRenderFindings(c.b, c.h, c.bi, customKindsOf([mariadbOperator])).map((f) => [f.code, f.reason])).toEqual([
      ["operator-immutable", "mariadb-operator's webhook marks the field immutable; only a new CR takes it"],
    ]);
    expect(postRenderFindings(c.b, c.h, c.bi, customKindsOf([rabbitmqOperator]))).toEqual([]);
  });

  it("a NodeHealthCheck deleted is held by NHC's webhook with Medik8s' kinds (the preview's), and by nothing without them", () => {
    const check: ObjectRef = {
      apiVersion: "remediation.medik8s.io/v1alpha1",
      kind: "NodeHealthCheck",
      name: "openkeel-storage",
      file: "f.yaml",
      protected: false,
      patch: false,
    };
    const objects = { added: [], removed: [check], changed: [] };
    expect(heldCheckFindings(objects, customKindsOf([medik8s])).map((f) => f.code)).toEqual(["nhc-held-change"]);
    expect(heldCheckFindings(objects, resolveEnvironment().kinds).map((f) => f.code)).toEqual(["nhc-held-change"]);
    expect(heldCheckFindings(objects, customKindsOf([mariadbOperator]))).toEqual([]);
    // a patch of an object never deletes it
    expect(heldCheckFindings({ ...objects, removed: [{ ...check, patch: true }] }, customKindsOf([medik8s]))).toEqual([]);
  });
});
