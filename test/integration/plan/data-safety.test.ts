// Units that own data are protected (Pulumi `protect` + `retainOnDelete`), and a stack change that
// would drop one (or an object of one) stops `npm run render` unless the stack's openkeel:allowRemoval
// lists it (the reviewed marker; `--allow-removal` on the command line is refused, pointing at it).
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { allUnits, type Plan, type Unit } from "../../../plan/plan";
import { planStack } from "../../../environments";
import { capture } from "../../../cli/cli";
import { generatedProductionStack } from "../../../bench/generate";
import { stringify } from "yaml";
import { readIndex, readRenderedDir, RenderedStack, renderPlan } from "../../../render/rendered";
import { transitionFindings } from "../../../review/preview";
import { renderCommand } from "../../../pipeline/render-command";
import { readTree } from "../../../cli/write";
import { planOf, shippedPlan } from "../../helpers/plans";
import { shippedRun } from "../../helpers/pulumi";
import { mutatedConfig, REPO, SHIPPED_STACKS, tempStacks } from "../../helpers/stacks";
import { loadConfig } from "../../../config/load";
import type * as pulumi from "@pulumi/pulumi";
import { protectDataOnly } from "../../../components/plan-unit";
import { STACK_DECLARATIONS } from "../../../environments/registry";

/** Kinds whose objects hold data or whose deletion deletes data (a Namespace takes its volumes, a CRD its objects). */
const DATA_KINDS = new Set(["Namespace", "StorageClass", "CustomResourceDefinition", "KubeVirt", "CDI"]);

/** Releases and upstream manifests that own data, and why: written from what they install, not from the code. */
const DATA_OWNERS: Record<string, string> = {
  "kube-ovn": "OVN northbound/southbound databases and the Subnet/IP CRDs",
  "cert-manager-crds": "the Certificate and Issuer CRDs (cert-manager.crds.yaml)",
  "mariadb-operator-crds": "the MariaDB CRDs: deleting them deletes every Galera cluster",
  "rabbitmq-cluster-operator": "the RabbitmqCluster CRD",
  "rabbitmq-messaging-topology-operator": "the Vhost, User and Permission CRDs",
  "kubevirt-operator": "the KubeVirt CRD",
  "cdi-operator": "the CDI CRD",
  metallb: "the IPAddressPool CRD: deleting it frees the ingress VIP",
  olm: "Subscription and ClusterServiceVersion CRDs",
  longhorn: "every volume and Longhorn's CRDs",
  "openkeel-chart": "MariaDB Galera and RabbitMQ with their volumes",
  "openkeel-glance": "the image store",
  "openkeel-swift": "the object store",
};

function ownsData(u: Unit): boolean {
  if (u.name.startsWith("snapshot-crd-")) return true; // each is one CRD file
  if (u.kind === "Manifests") return u.objects.some((o) => DATA_KINDS.has(o.kind));
  return u.name in DATA_OWNERS;
}

function plans(): Plan[] {
  const labBackends = mutatedConfig("lab", (raw) => (raw.platform = { realBackends: true }));
  const generated = generatedProductionStack(60);
  return [
    ...SHIPPED_STACKS.map((s) => planOf(s)),
    planStack(labBackends).plan!,
    planStack(loadConfig(generated.raw, { stack: generated.stack, file: "generated" }, STACK_DECLARATIONS)).plan!,
  ];
}

describe("what owns data is protected", () => {
  it.each(plans().map((p) => [p.stack === "lab" && allUnits(p).some((u) => u.name === "longhorn") ? "lab (realBackends)" : p.stack, p] as const))(
    "%s: exactly the units that own data are protected",
    (_name, plan) => {
      const wrong = allUnits(plan)
        .filter((u) => ownsData(u) !== (u.protect === true))
        .map((u) => `${u.name}: owns data ${ownsData(u)}, protected ${u.protect === true}`);
      expect(wrong).toEqual([]);
    },
  );
});

describe("a protected pinned manifest", () => {
  it("protects the objects that own data (its CRDs, its Namespaces), keeps every object it applies retained on delete, so a newer release may drop the others", () => {
    const t = protectDataOnly();
    const run = (type: string, custom = true) =>
      t({ type, name: "olm:olm/x", custom, props: {}, opts: { protect: true, retainOnDelete: true } } as pulumi.ResourceTransformArgs);
    expect((run("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition") as pulumi.ResourceTransformResult).opts).toEqual({
      protect: true,
      retainOnDelete: true,
    });
    expect((run("kubernetes:core/v1:Namespace") as pulumi.ResourceTransformResult).opts).toEqual({ protect: true, retainOnDelete: true });
    // what OLM v0.38.0 no longer ships (v0.37.0's), and an operator: not protected, still retained
    for (const type of [
      "kubernetes:cert-manager.io/v1:Certificate",
      "kubernetes:apps/v1:Deployment",
      "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration",
    ])
      expect((run(type) as pulumi.ResourceTransformResult).opts, type).toEqual({ protect: false, retainOnDelete: true });
    // the group itself (a component) keeps the unit's options
    expect(run("kubernetes:yaml/v2:ConfigGroup", false)).toBeUndefined();
  });
});

describe.each(SHIPPED_STACKS)("stack %s under the Pulumi mocks", (stack) => {
  const shipped = shippedRun(stack);

  it("registers every resource of a protected unit with protect and retainOnDelete (but its release's post-render record, replaced when a patch changes: components/plan-unit.ts), and no other", () => {
    const plan = planOf(stack);
    const protectedUnits = new Set(
      allUnits(plan)
        .filter((u) => u.protect)
        .map((u) => shipped.run.byName(u.name).urn),
    );
    const custom = shipped.run.resources.filter((r) => r.custom && r.type !== "random:index/randomPassword:RandomPassword");
    const wrong = custom
      .filter((r) => (protectedUnits.has(r.parent) && !isPostRenderRecord(r)) !== (r.protect && r.retainOnDelete))
      .map((r) => `${r.name}: protect ${r.protect}, retainOnDelete ${r.retainOnDelete}`);
    expect(wrong).toEqual([]);
    expect(custom.filter((r) => r.protect).length).toBeGreaterThan(0);
    for (const r of custom.filter(isPostRenderRecord)) expect(r.protect || r.retainOnDelete, r.name).toBeFalsy();
  });
});

/** A release's post-render record (components/post-render.ts): the ConfigMap `<release>-post-render`. */
function isPostRenderRecord(r: { type: string; name: string }): boolean {
  return r.type === "kubernetes:core/v1:ConfigMap" && r.name.endsWith("-post-render");
}

describe("the render refuses to drop a unit that owns data", () => {
  const medium = fs.readFileSync(path.join(REPO, "stacks/Pulumi.prod-medium.yaml"), "utf8");
  const withGlanceOff = medium.replace("  openkeel:services:\n", "  openkeel:services:\n    glance:\n      enabled: false\n");
  const marked = (text: string, ...units: string[]) => text.replace("config:\n", `config:\n  openkeel:allowRemoval: [${units.join(", ")}]\n`);

  async function renderedOnce(text: string) {
    const dir = tempStacks({ s: text });
    const out = path.join(dir, "out");
    const first = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    expect(first.code, first.stderr).toBe(0);
    return { dir, out, file: path.join(dir, "Pulumi.s.yaml") };
  }

  it("turning a protected service off: exit 1 naming the unit, what it was judged against and the fix, nothing written", async () => {
    expect(withGlanceOff).not.toBe(medium);
    const { dir, out, file } = await renderedOnce(medium);
    const before = readTree(out);
    fs.writeFileSync(file, withGlanceOff);
    const r = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `s, against the render in ${path.join(out, "s")} (the stacks folder is in no git work tree: no committed state to compare with): ` +
        `${file}: error [protected-delete]: unit openkeel-glance (release openkeel-glance) would be deleted, and it is protected, so \`pulumi up\` refuses. ` +
        `Why: the unit owns data (protect + retainOnDelete). ` +
        `Fix: keep it in the stack, or, if its data may go, add the unit to openkeel:allowRemoval in this change (docs/operating.md, "Removing a unit that owns data")\n` +
        // a refusal shows the whole verdict: the warnings too
        `s, against the render in ${path.join(out, "s")} (the stacks folder is in no git work tree: no committed state to compare with): ` +
        `${file}: warning [service-removed]: service glance goes away: \`pulumi up\` uninstalls release openkeel-glance. ` +
        "Why: the stack no longer enables it (openkeel:services); its API leaves the cloud. Fix: if the cloud still needs it, enable it again (openkeel:services.glance)\n",
    );
    expect(readTree(out)).toEqual(before);
  });

  it("--allow-removal is refused, pointing at openkeel:allowRemoval; the stack's marker lets the unit go, says so, and writes", async () => {
    const { dir, out, file } = await renderedOnce(medium);
    fs.writeFileSync(file, withGlanceOff);
    const flag = await capture(renderCommand, ["--stacks-dir", dir, "--out", out, "--allow-removal", "openkeel-glance"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(
      /^--allow-removal openkeel-glance: an allowance on the command line leaves no trace in the pull request.* Fix: add openkeel:allowRemoval: \[openkeel-glance\] to the stack file/,
    );
    // a marker for another unit allows nothing here, and says it is unused
    fs.writeFileSync(file, marked(withGlanceOff, "openkeel-swift"));
    const other = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("error [protected-delete]: unit openkeel-glance");
    fs.writeFileSync(file, marked(withGlanceOff, "openkeel-glance"));
    const r = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /openkeel:allowRemoval: warning \[removal-allowed\]: unit openkeel-glance \(release openkeel-glance\) would be deleted.*: allowed, openkeel:allowRemoval lists openkeel-glance \(against the render in /,
    );
    expect(fs.existsSync(path.join(out, "s", "values", "openkeel-glance.yaml"))).toBe(false);
    // the index records the marker, which the preview shows as a setting of the stack
    expect(readRenderedDir(path.join(out, "s")).index.allowRemoval).toEqual(["openkeel-glance"]);
    // the next render is judged against the new one: nothing left to allow, and the marker is said to be unused
    const again = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("warning [allow-removal-unused]: openkeel:allowRemoval lists openkeel-glance, which loses nothing against the render in");
  });

  it("turning the lab's real backends off names Longhorn, the StorageClasses and every other data unit", async () => {
    const lab = fs.readFileSync(path.join(REPO, "stacks/Pulumi.lab.yaml"), "utf8");
    const { dir, out, file } = await renderedOnce(`${lab}  openkeel:platform:\n    realBackends: true\n`);
    fs.writeFileSync(file, lab);
    const r = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    expect(r.code).toBe(1);
    const units = [...r.stderr.matchAll(/error \[protected-delete\]: unit (\S+) \(.*?\) would be deleted/g)].map((m) => m[1]).sort();
    expect(units).toEqual(
      ["cdi", "cdi-operator", "kubevirt", "kubevirt-operator", "longhorn", "storage-classes", ...units.filter((u) => u.startsWith("snapshot-crd-"))].sort(),
    );
    expect(units.filter((u) => u.startsWith("snapshot-crd-")).length).toBeGreaterThan(0);
    // the namespace of Longhorn goes too: an object of a unit that stays
    expect(r.stderr).toMatch(/error \[protected-delete\]: Namespace longhorn-system of unit platform-namespaces would be deleted/);
  });

  it("a StorageClass dropped from the storage-classes unit, or a unit no longer protected, is a loss", () => {
    const committed = readTree(path.join(REPO, "rendered/prod-medium"));
    const head = new RenderedStack(committed, "this change");
    expect(transitionFindings(new RenderedStack(committed, "the base"), head, { where: "the base" })).toEqual([]);
    // the base had one more class in the unit, and had openkeel-swift protected where the change has it not
    const index = readIndex(committed.get("index.yaml")!, "index.yaml");
    const classes = index.phases.flatMap((p) => p.units).find((u) => u.name === "storage-classes")!;
    const old = "objects/04-platform-config/storage-classes/storageclass-old-fast.yaml";
    classes.objects!.push(old);
    const base = new Map(committed);
    base.set("index.yaml", stringify(index));
    base.set(old, "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: old-fast\nprovisioner: driver.longhorn.io\n");
    const unprotected = readIndex(committed.get("index.yaml")!, "index.yaml");
    delete unprotected.phases.flatMap((p) => p.units).find((u) => u.name === "openkeel-swift")!.protect;
    const after = new Map(committed);
    after.set("index.yaml", stringify(unprotected));
    const found = transitionFindings(new RenderedStack(base, "the base"), new RenderedStack(after, "this change"), { where: "the base" });
    expect(found.map((f) => [f.level, f.code])).toEqual([
      ["error", "protected-delete"],
      ["error", "protected-unprotect"],
    ]);
    expect(found[0].message).toBe("StorageClass old-fast of unit storage-classes would be deleted, and the unit is protected, so `pulumi up` refuses");
    expect(found[1].message).toMatch(/^unit openkeel-swift owns data and would lose its protection/);
  });

  it("the committed render of every stack keeps every protected unit of its plan", () => {
    for (const stack of SHIPPED_STACKS) {
      const committed = readTree(path.join(REPO, "rendered", stack));
      const plan = planOf(stack);
      const fresh = new Map(renderPlan(plan, shippedPlan(stack).placement).map((f) => [f.path, f.content]));
      const found = transitionFindings(new RenderedStack(committed, "rendered"), new RenderedStack(fresh, "fresh"), { where: "rendered" });
      expect(
        found.filter((f) => f.code.startsWith("protected-")),
        stack,
      ).toEqual([]);
    }
  });
});
