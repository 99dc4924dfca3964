// MetalLB, the public ingress VIP of production (D8; issue 22 item 10): the pinned native manifest,
// its speaker and controller patched onto the ingress nodes and the control plane, the pool and
// its L2 advertisement from the stack, and the ingress Service of type LoadBalancer. The lab keeps
// its NodePorts; the patches are held to the pinned manifest in ../shared/mirror. A re-apply of the
// manifest, at its pin or the next one, meets no field the patches own (issue 37: the 409).
import fs from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import type * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { leaveToPatches } from "../../../components/plan-unit";
import { planStack } from "../../../environments";
import program from "../../../index";
import { INGRESS_SERVICE, INGRESS_SERVICE_UNIT } from "../../../openkeel/ingress";
import { METALLB_NAMESPACE, METALLB_POOL } from "../../../platform/metallb";
import { METALLB_NATIVE } from "../../../platform/versions";
import { findUnit, phase, type RemoteManifestUnit } from "../../../plan/plan";
import { object, objectsOf, planOf, shippedPlan } from "../../helpers/plans";
import { runProgram } from "../../helpers/pulumi";
import { configProblems, mutatedConfig, pulumiConfigOf, REPO, shippedConfig, shippedRaw } from "../../helpers/stacks";
import { isPlainObject } from "../../../config/plain";
import { metallbSettings } from "../../../platform/metallb-settings";

const PROFILE_LABEL = (role: string) => `node-restriction.kubernetes.io/openkeel-${role}`;
const mirrored = (url: string) => path.resolve(REPO, "../shared/mirror/files", url.replace(/^https:\/\//, ""));
const readManifest = (file: string): any[] => parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => d.toJS());
const upstream = (): any[] => readManifest(mirrored(METALLB_NATIVE.url));
/** Every release of the native manifest the mirror holds: the pin and its predecessor (a bump re-applies the newer one). */
const mirroredReleases = (): { version: string; docs: any[] }[] => {
  const releases = path.resolve(mirrored(METALLB_NATIVE.url), `../../../../`);
  return fs
    .readdirSync(releases)
    .sort()
    .map((version) => ({ version, docs: readManifest(path.join(releases, version, "config/manifests/metallb-native.yaml")) }));
};

/**
 * The fields an apply sets, as server-side apply tracks them: a map's keys one by one, a list of
 * named items (containers) item by item (its merge key), any other list (tolerations: atomic in
 * the API) as one value.
 */
function appliedFields(v: unknown, at = "", out = new Map<string, string>()): Map<string, string> {
  if (Array.isArray(v) && v.length > 0 && v.every((i) => i !== null && typeof i === "object" && typeof i.name === "string")) {
    for (const i of v) appliedFields(i, `${at}[name=${i.name}]`, out);
  } else if (isPlainObject(v)) {
    for (const [k, x] of Object.entries(v)) appliedFields(x, at ? `${at}.${k}` : k, out);
  } else out.set(at, JSON.stringify(v));
  return out;
}

/** Fields two appliers both set with different values: what server-side apply refuses the second of (409) without force. */
function conflicts(applied: unknown, patch: unknown): string[] {
  const mine = appliedFields(applied);
  return [...appliedFields(patch)].filter(([f, v]) => !f.startsWith("metadata.annotations") && mine.has(f) && mine.get(f) !== v).map(([f]) => f);
}

/** An object of a remote manifest through the transform the metallb unit's children get. */
function asApplied(transform: pulumi.ResourceTransform, o: Record<string, unknown>): Record<string, unknown> {
  const args = { type: `kubernetes:apps/v1:${String(o.kind)}`, name: "x", custom: true, props: o, opts: {} } as unknown as pulumi.ResourceTransformArgs;
  return ((transform(args) as pulumi.ResourceTransformResult | undefined)?.props ?? o) as Record<string, unknown>;
}
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
    const cfg = metallbSettings(shippedConfig(stack).platform)!;
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

  it("a re-apply of the manifest, at its pin or the predecessor's, sets no field the placement patches hold with another value (no 409)", () => {
    const plan = planOf("prod-medium");
    const unit = findUnit(plan, "metallb") as RemoteManifestUnit;
    const transform = leaveToPatches(unit.patchedFields ?? []);
    const patches = objectsOf(plan, "metallb-placement");
    const releases = mirroredReleases();
    expect(releases.map((r) => r.version)).toContain(METALLB_NATIVE.version);
    for (const { version, docs } of releases) {
      for (const patch of patches) {
        const shipped = docs.find((d) => d?.kind === patch.kind && d.metadata.name === patch.metadata.name && d.metadata.namespace === METALLB_NAMESPACE);
        expect(conflicts(asApplied(transform, shipped), patch), `${version} ${patch.kind} ${patch.metadata.name}`).toEqual([]);
      }
      // what the check would find without the fields left out: the speaker's tolerations, which the forced patch owns
      const speaker = docs.find((d) => d?.kind === "DaemonSet" && d.metadata.name === "speaker");
      expect(conflicts(speaker, object(plan, "DaemonSet", "speaker")), version).toEqual(["spec.template.spec.tolerations"]);
    }
  });

  it("the fields left out are the patches' pod-spec fields, of the two patched objects alone, the rest of each object kept", () => {
    const plan = planOf("prod-medium");
    const transform = leaveToPatches((findUnit(plan, "metallb") as RemoteManifestUnit).patchedFields ?? []);
    const docs = upstream();
    const speaker = docs.find((d) => d?.kind === "DaemonSet" && d.metadata.name === "speaker");
    const applied = asApplied(transform, speaker) as any;
    expect(Object.keys(applied.spec.template.spec).sort()).toEqual(
      Object.keys(speaker.spec.template.spec)
        .filter((k) => k !== "tolerations")
        .sort(),
    );
    expect(applied.spec.template.spec.containers).toEqual(speaker.spec.template.spec.containers);
    expect(speaker.spec.template.spec.tolerations, "the shipped object is not changed").toHaveLength(2);
    const controller = asApplied(
      transform,
      docs.find((d) => d?.kind === "Deployment" && d.metadata.name === "controller"),
    ) as any;
    expect(controller.spec.template.spec.nodeSelector).toBeUndefined();
    const others = docs.filter((d) => d && !["DaemonSet", "Deployment"].includes(d.kind));
    for (const o of others) expect(asApplied(transform, o), `${o.kind} ${o.metadata.name}`).toBe(o);
    const component = {
      type: "openkeel:platform:MetalLB",
      name: "metallb",
      custom: false,
      props: speaker,
      opts: {},
    } as unknown as pulumi.ResourceTransformArgs;
    expect(transform(component)).toBeUndefined();
  });

  it("the program gives the metallb manifest that transform (under the mocks)", async () => {
    const run = await runProgram("prod-medium", pulumiConfigOf(shippedRaw("prod-medium")), program);
    const manifest = run.ofType("kubernetes:yaml/v2:ConfigFile").find((r) => r.name === "metallb")!;
    expect(manifest.inputs.file).toBe(METALLB_NATIVE.url);
    // leaveToPatches, and protectDataOnly (the unit owns CRDs: components/plan-unit.ts)
    expect(manifest.transforms).toBe(2);
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
    // Pulumi waits for its endpoints (the ingress pods of openkeel-chart) and its address (MetalLB's pool)
    expect(findUnit(plan, INGRESS_SERVICE_UNIT)!.dependsOn).toEqual(["metallb-pool", "openkeel-chart", "openkeel-namespace"]);
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
