// MetalLB, the public ingress VIP of production (D8; issue 22 item 10): the pinned native manifest,
// its speaker and controller patched onto the ingress nodes and the control plane, the pool and
// its L2 advertisement from the stack, and the ingress Service of type LoadBalancer. The lab keeps
// its NodePorts; the patches are held to the pinned manifest in ../shared/mirror.
import fs from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { planStack } from "../environments";
import { INGRESS_SERVICE, INGRESS_SERVICE_UNIT } from "../openkeel/ingress";
import { METALLB_NAMESPACE, METALLB_POOL } from "../platform/metallb";
import { METALLB_NATIVE } from "../platform/versions";
import { findUnit, phase, type RemoteManifestUnit } from "../plan/plan";
import { object, objectsOf, planOf, shippedPlan } from "./helpers/plans";
import { configProblems, mutatedConfig, REPO, shippedConfig } from "./helpers/stacks";

const PROFILE_LABEL = (role: string) => `node-restriction.kubernetes.io/openkeel-${role}`;
const upstream = (): any[] => {
  const file = path.resolve(REPO, "../shared/mirror/files", METALLB_NATIVE.url.replace(/^https:\/\//, ""));
  return parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => d.toJS());
};
const rowOf = (stack: string, name: string) => shippedPlan(stack).placement!.placements.find((p) => p.component.name === name);
const checksOf = (cfg: ReturnType<typeof shippedConfig>, code: string) => planStack(cfg).problems.filter((p) => p.code === code);

describe("MetalLB in production (D8)", () => {
  it.each(["prod-medium", "prod-large"])("%s: the pinned manifest, then the placement patches, then the stack's pool", (stack) => {
    const plan = planOf(stack);
    const manifest = findUnit(plan, "metallb") as RemoteManifestUnit;
    expect(manifest.urls).toEqual(["https://raw.githubusercontent.com/metallb/metallb/v0.16.1/config/manifests/metallb-native.yaml"]);
    expect(manifest.protect).toBe(true);
    expect(phase(plan, "crds-operators").units).toContain(manifest);
    expect(phase(plan, "platform").units.map((u) => u.name)).toContain("metallb-placement");
    // after the controller that serves the six fail-closed webhooks: a later phase
    expect(phase(plan, "platform-config").units.map((u) => u.name)).toContain("metallb-pool");
    const cfg = shippedConfig(stack).platform.metallb!;
    const pool = object(plan, "IPAddressPool", METALLB_POOL);
    expect(pool.metadata.namespace).toBe(METALLB_NAMESPACE);
    expect(pool.spec).toEqual({ addresses: cfg.addresses, autoAssign: true, serviceAllocation: { namespaces: ["openkeel"] } });
    const l2 = object(plan, "L2Advertisement", METALLB_POOL);
    expect(l2.spec).toEqual({
      ipAddressPools: [METALLB_POOL],
      nodeSelectors: [
        { matchExpressions: [{ key: PROFILE_LABEL("control-plane"), operator: "Exists" }] },
        { matchExpressions: [{ key: PROFILE_LABEL("network"), operator: "Exists" }] },
      ],
      interfaces: cfg.interfaces,
    });
  });

  it("prod-medium: speakers on the ingress nodes (tainted network nodes included), the controller on the control plane", () => {
    const speaker = rowOf("prod-medium", "metallb-placement/speaker")!;
    expect(speaker.component.kind).toBe("DaemonSet");
    expect(speaker.component.designRoles).toEqual(["controlPlane", "network"]);
    expect([...speaker.eligible].sort()).toEqual(["cp-1", "cp-2", "cp-3", "net-1", "net-2"]);
    const controller = rowOf("prod-medium", "metallb-placement/controller")!;
    expect([...controller.eligible].sort()).toEqual(["cp-1", "cp-2", "cp-3"]);
    const ds = object(planOf("prod-medium"), "DaemonSet", "speaker");
    expect(ds.spec.template.spec.priorityClassName).toBe("system-node-critical");
    expect(ds.metadata.annotations).toMatchObject({ "openkeel.io/apply-as": "patch", "pulumi.com/patchForce": "true" });
  });

  it("the patches name the manifest's own workloads, selectors and containers, and keep its speaker tolerations", () => {
    const docs = upstream();
    const plan = planOf("prod-medium");
    for (const patch of objectsOf(plan, "metallb-placement") as any[]) {
      const theirs = docs.find((d) => d?.kind === patch.kind && d.metadata.name === patch.metadata.name && d.metadata.namespace === METALLB_NAMESPACE);
      expect(theirs, `${patch.kind} ${patch.metadata.name}`).toBeDefined();
      expect(patch.spec.selector).toEqual(theirs.spec.selector);
      expect(theirs.spec.template.spec.containers.map((c: { name: string }) => c.name)).toEqual(
        patch.spec.template.spec.containers.map((c: { name: string }) => c.name),
      );
      expect(patch.spec.template.spec.tolerations).toEqual(expect.arrayContaining(theirs.spec.template.spec.tolerations ?? []));
    }
    // its namespace is the manifest's, privileged at all three levels (the speaker is host-network)
    const ns = docs.find((d) => d?.kind === "Namespace");
    expect(ns.metadata.name).toBe(METALLB_NAMESPACE);
    for (const mode of ["enforce", "audit", "warn"]) expect(ns.metadata.labels[`pod-security.kubernetes.io/${mode}`]).toBe("privileged");
    // why the pool waits for the controller: its webhooks fail closed
    const hooks = docs.find((d) => d?.kind === "ValidatingWebhookConfiguration").webhooks;
    expect(hooks.find((h: any) => h.name === "ipaddresspoolvalidationwebhook.metallb.io").failurePolicy).toBe("Fail");
  });

  it("the ingress Service of type LoadBalancer selects the infrastructure chart's ingress pods", () => {
    const plan = planOf("prod-large");
    const svc = object(plan, "Service", INGRESS_SERVICE, INGRESS_SERVICE_UNIT);
    expect(svc.metadata.namespace).toBe("openkeel");
    expect(svc.spec).toMatchObject({
      type: "LoadBalancer",
      externalTrafficPolicy: "Local",
      selector: { "app.kubernetes.io/instance": "openkeel-chart", "app.kubernetes.io/component": "ingress" },
    });
    expect(findUnit(plan, INGRESS_SERVICE_UNIT)!.dependsOn).toEqual(["openkeel-chart"]);
  });

  it.each(["lab", "prod-small"])("%s: no MetalLB, no VIP (the lab keeps its NodePorts)", (stack) => {
    const plan = planOf(stack);
    for (const unit of ["metallb", "metallb-placement", "metallb-pool", INGRESS_SERVICE_UNIT]) expect(findUnit(plan, unit), unit).toBeUndefined();
  });
});

describe("MetalLB's settings", () => {
  it("a pool in the lab is refused: the lab does not install MetalLB", () => {
    const [p] = checksOf(
      mutatedConfig("lab", (r) => (r.platform = { metallb: { addresses: ["10.0.0.240/28"], interfaces: ["eth0"] } })),
      "platform-key-environment",
    );
    expect(p.code).toBe("platform-key-environment");
    expect(p.path).toBe("openkeel:platform.metallb");
  });

  it("addresses that are not IPv4 ranges, and interface names Linux would refuse, are schema errors", () => {
    const bad = (metallb: object) => configProblems("prod-medium", (r) => (r.platform = { metallb }));
    const [range] = bad({ addresses: ["203.0.113.20-203.0.113.10"], interfaces: ["bond1"] });
    expect(range.path).toBe("openkeel:platform.metallb.addresses[0]");
    expect(range.message).toBe("is not an IPv4 range");
    expect(range.fix).toMatch(/^write a CIDR such as/);
    const [nic] = bad({ addresses: ["203.0.113.0/28"], interfaces: ["a-name-far-too-long"] });
    expect(nic.path).toBe("openkeel:platform.metallb.interfaces[0]");
  });

  it("a pool over the Service range or a node's address is a plan error naming the entry", () => {
    const pool = (addresses: string[]) => mutatedConfig("prod-medium", (r) => (r.platform = { metallb: { addresses, interfaces: ["bond1"] } }));
    const [svc] = checksOf(pool(["10.96.0.0/28"]), "metallb-pool");
    expect(svc).toMatchObject({ level: "error", path: "openkeel:platform.metallb.addresses[0]" });
    expect(svc.message).toMatch(/overlaps openkeel:network\.serviceCIDR \(10\.96\.0\.0\/12\)/);
    const [node] = checksOf(pool(["203.0.113.0/28", "10.30.0.10-10.30.0.12"]), "metallb-pool");
    expect(node.path).toBe("openkeel:platform.metallb.addresses[1]");
    expect(node.message).toMatch(/holds cp-1's internalIP 10\.30\.0\.11/);
    expect(checksOf(shippedConfig("prod-medium"), "metallb-pool")).toEqual([]);
  });
});
