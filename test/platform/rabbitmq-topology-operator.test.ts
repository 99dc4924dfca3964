// Issue 14, item 11: the RabbitMQ Messaging Topology Operator (§ 2.3; the vhosts, users and
// permissions of seed 004), pinned, after cert-manager (its webhook certificate) and the cluster
// operator (its RabbitmqCluster CRD), in production and in the lab.
import { describe, expect, it } from "vitest";
import { addComponents, kindOffersOf, type PlatformComponent } from "../../platform/component";
import { rabbitmqTopologyOperator } from "../../platform/rabbitmq-topology-operator";
import { RABBITMQ_MESSAGING_TOPOLOGY_OPERATOR } from "../../platform/versions";
import { emptyPhases, findUnit, phase, type Plan } from "../../plan/plan";
import { withDependencies } from "../../plan/needs";
import { contextOf, planOf } from "../helpers/plans";
import { SHIPPED_STACKS, shippedConfig } from "../helpers/stacks";

describe("the messaging topology operator", () => {
  it.each(SHIPPED_STACKS)("%s: the pinned release manifest, after cert-manager and the cluster operator, protected", (stack) => {
    const plan = planOf(stack);
    const unit = findUnit(plan, "rabbitmq-messaging-topology-operator")!;
    expect(unit).toMatchObject({ kind: "RemoteManifest", urls: [RABBITMQ_MESSAGING_TOPOLOGY_OPERATOR.url], version: "v1.19.2", protect: true });
    expect(unit.dependsOn).toEqual(expect.arrayContaining(["cert-manager", "rabbitmq-cluster-operator"]));
    expect(phase(plan, "crds-operators").units).toContain(unit);
    expect(RABBITMQ_MESSAGING_TOPOLOGY_OPERATOR.url).toMatch(/\/releases\/download\/v1\.19\.2\/messaging-topology-operator-with-certmanager\.yaml$/);
  });

  it("an environment that lists it before cert-manager leaves its Certificates and Issuer without a provider: a bug in this repository, not a stack mistake", () => {
    const cfg = shippedConfig("lab");
    const plan: Plan = {
      stack: "x",
      environment: "kind-lab",
      topology: "lab",
      labelProfile: "default",
      taintedRoles: [],
      nodes: [],
      cluster: { context: "kind-x" },
      phases: emptyPhases(),
      warnings: [],
    };
    const ctx = contextOf(cfg);
    const components = [rabbitmqTopologyOperator] as PlatformComponent[];
    addComponents(plan, ctx, components);
    const { unmet } = withDependencies(plan, { podNetwork: true, storageClasses: [] }, kindOffersOf(components));
    // composePlan throws on such a use (test/plan/needs.test.ts)
    expect(unmet.filter((u) => u.unit === "rabbitmq-messaging-topology-operator").map((u) => u.fact)).toEqual([
      "api cert-manager.io/Certificate",
      "api cert-manager.io/Issuer",
    ]);
  });
});
