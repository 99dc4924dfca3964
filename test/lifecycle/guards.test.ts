// The removal guard's words (lifecycle/guards.ts): what a node holds is what the components say they
// keep on a node of its roles (their `holds`), in their order, the roles in the guard's; a role none
// of them names anything on holds its pods. The shipped environments' components name every role.
import { describe, expect, it } from "vitest";
import type { Role } from "../../config/roles";
import { resolveEnvironment } from "../../environments";
import type { Holding } from "../../lifecycle/contributor";
import { nodeRemovalChecks } from "../../lifecycle/guards";

/** The error of removing one active node of these roles, with these holdings, NMO draining (production's). */
function removal(
  roles: Role[],
  holdings?: readonly Holding[],
  kubernetesControlPlane = false,
  { drainer }: { drainer: string | undefined } = { drainer: "NMO" },
) {
  const checks = nodeRemovalChecks([{ name: "n-1", roles, kubernetesControlPlane, state: "active" }], [], "the base", { constraints: [], holdings, drainer });
  expect(checks.map((c) => c.code)).toEqual(["node-removal"]);
  return checks[0];
}

describe("what a removed node holds, as its components say it", () => {
  it("a role nothing names on holds its pods; no role at all, its pods", () => {
    expect(removal(["containers"]).message).toBe("node 'n-1' holds its pods (containers) and would be removed while it is active in the base");
    expect(removal([]).message).toBe("node 'n-1' holds its pods and would be removed while it is active in the base");
    // another role's holding says nothing of this one
    expect(removal(["containers"], [{ role: "storage", what: "replicas" }]).message).toMatch(/^node 'n-1' holds its pods \(containers\) and/);
  });

  it("what a component keeps on the role, the contributors in their order, the roles in the guard's", () => {
    const holdings: Holding[] = [
      { role: "compute", what: "VMs" },
      { role: "storage", what: "replicas", evicted: true },
      { role: "storage", what: "devices" },
      { role: "storage", what: "blobs" },
    ];
    expect(removal(["compute", "storage"], holdings, true).message).toBe(
      "node 'n-1' holds replicas, devices and blobs (storage), VMs (compute), an etcd member (Kubernetes control plane) and would be removed while it is active in the base",
    );
  });

  it("the fix names what retiring evicts first, beside the drain; nothing evicted: the drain alone", () => {
    expect(removal(["storage"], [{ role: "storage", what: "replicas", evicted: true }]).fix).toBe(
      "keep it, set state: retiring on it first, render, merge and pulumi up (its replicas are evicted, NMO drains it); remove it once both are done (docs/node-lifecycle.md)",
    );
    const twoEvicted: Holding[] = [
      { role: "storage", what: "replicas", evicted: true },
      { role: "storage", what: "blobs", evicted: true },
    ];
    expect(removal(["storage"], twoEvicted).fix).toMatch(/\(its replicas are evicted, its blobs are evicted, NMO drains it\); remove it once all are done/);
    // a holding of another role is not evicted from this node
    expect(removal(["compute"], twoEvicted).fix).toMatch(/\(NMO drains it, and the preview lists what to disable first\); remove it once that is done/);
    expect(removal(["storage"], [{ role: "storage", what: "devices" }]).fix).toBe(
      "keep it, set state: retiring on it first, render, merge and pulumi up (NMO drains it, and the preview lists what to disable first); remove it once that is done (docs/node-lifecycle.md)",
    );
  });

  it("where no component drains (the lab), the fix says to drain it by hand", () => {
    expect(removal(["storage"], [{ role: "storage", what: "replicas", evicted: true }], false, { drainer: undefined }).fix).toBe(
      "keep it, set state: retiring on it first, render, merge and pulumi up (its replicas are evicted, drain it yourself: kubectl drain n-1 --ignore-daemonsets --delete-emptydir-data); remove it once both are done (docs/node-lifecycle.md)",
    );
  });

  it("the shipped environments' components name what every role holds", () => {
    for (const [env, drain] of [
      ["talos-production", "NMO drains it"],
      ["kind-lab", "drain it yourself: kubectl drain n-1 --ignore-daemonsets --delete-emptydir-data"],
    ]) {
      const { holdings, drainer } = resolveEnvironment(env);
      const held = (role: Role) => removal([role], holdings, false, { drainer }).message.replace(/^node 'n-1' holds (.*) and would be removed .*$/, "$1");
      expect([held("storage"), held("controlPlane"), held("compute"), held("network"), held("containers"), held("provisioning")]).toEqual([
        "Longhorn replicas and the strict-local volumes of Swift storage (storage)",
        "the strict-local volumes of Galera, RabbitMQ and OVN central (controlPlane)",
        "VMs and a nova-compute service (compute)",
        "a gateway chassis (network)",
        "Zun containers (containers)",
        "an Ironic conductor (provisioning)",
      ]);
      expect(removal(["storage"], holdings, false, { drainer }).fix).toContain(`(its Longhorn replicas are evicted, ${drain}); remove it once both are done`);
    }
  });
});
