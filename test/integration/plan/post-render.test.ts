// Issue 22, items 1, 3 and 6: what the design requires of objects the charts render but read no
// value for reaches them through post-render patches of the Plan — applied by Helm through the
// release's `postrender` executable, and by the placement readers before they judge — and the
// priority classes exist before the first unit that names one.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { deployPlan } from "../../../components/deploy";
import { postRenderExecutable, postRenderManifests } from "../../../components/post-render";
import { planStack, resolveEnvironment } from "../../../environments";
import { priorityClassChecks } from "../../../environments/priority";
import { applyPostRender, mergePatch, PostRenderError, type PostRenderPatch } from "../../../plan/post-render";
import { allUnits, findUnit, type HelmReleaseUnit, type Plan } from "../../../plan/plan";
import { releasePatches } from "../../../policy/rules/post-render";
import { planComponents, type Component } from "../../../placement/workloads";
import { PRIORITY_CLASSES_UNIT } from "../../../platform/priority-classes";
import { renderPlan } from "../../../render/rendered";
import { previewStack } from "../../../review/preview";
import { planOf, release, shippedPlan } from "../../helpers/plans";
import { runProgram } from "../../helpers/pulumi";
import { antiAffinityPostRender } from "../../../openkeel/zone-spread";
import { mutatedConfig, shippedConfig } from "../../helpers/stacks";

const REPO = path.resolve(__dirname, "../../..");
const HOST = "kubernetes.io/hostname";
const ZONE = "topology.kubernetes.io/zone";

function component(plan: Plan, name: string): Component {
  const c = planComponents(plan, resolveEnvironment(plan.environment).readers).find((x) => x.name === name);
  if (!c) throw new Error(`no component ${name}`);
  return c;
}

/** A copy of a Plan whose release `name` has no post-render patches (what main rendered). */
function withoutPatches(plan: Plan, name: string): Plan {
  const copy = structuredClone(plan);
  delete (findUnit(copy, name) as HelmReleaseUnit).postRender;
  return copy;
}

describe("merge patches (RFC 7386)", () => {
  it("merges maps key by key, replaces lists and scalars, removes keys set to null; neither side changes", () => {
    const target = { spec: { nodeSelector: { a: "1" }, tolerations: [{ key: "x" }], keep: true, drop: 1 } };
    const patch = { spec: { nodeSelector: { b: "2" }, tolerations: [], drop: null } };
    expect(mergePatch(target, patch)).toEqual({ spec: { nodeSelector: { a: "1", b: "2" }, tolerations: [], keep: true } });
    expect(target.spec.drop).toBe(1);
    expect(patch.spec.drop).toBeNull();
  });

  it("a patch whose target is missing, or named twice, is an error naming the release, the target and why", () => {
    const p: PostRenderPatch = { target: { kind: "MariaDB", name: "db" }, why: "the reason", patch: { spec: {} } };
    expect(() => applyPostRender("rel", [{ kind: "Deployment", metadata: { name: "db" } }], [p])).toThrow(PostRenderError);
    expect(() => applyPostRender("rel", [], [p])).toThrow(/release rel: no MariaDB db in its manifests .*the reason/);
    const twice = [
      { kind: "MariaDB", metadata: { name: "db" } },
      { kind: "MariaDB", metadata: { name: "db" } },
    ];
    expect(() => applyPostRender("rel", twice, [p])).toThrow(/2 MariaDB db .*ambiguous/);
  });
});

describe("item 1: Galera and RabbitMQ get what § 2.1 and § 6.3 require, after the chart (§ 5.2)", () => {
  it.each(["prod-small", "prod-medium", "prod-large"])("%s: the chart's values carry the role only; the patches carry anti-affinity and priority", (stack) => {
    const plan = planOf(stack);
    const u = release(plan, "openkeel-chart");
    const v = u.values as { infrastructure: Record<string, { placement: unknown }>; priorityClasses?: unknown };
    for (const m of ["mariadb", "rabbitmq"]) expect(v.infrastructure[m].placement).toEqual({ role: "controlPlane" });
    expect(v.priorityClasses).toBeUndefined();
    const byKind = Object.fromEntries((u.postRender ?? []).map((p) => [p.target.kind, p]));
    // and the ingress's placement (§ 5.2 lists no ingress: openkeel/unlisted.ts)
    expect(Object.keys(byKind).sort()).toEqual(["DaemonSet", "MariaDB", "RabbitmqCluster"]);
    expect(byKind.DaemonSet.target.name).toBe("openkeel-chart-ingress");
    expect(byKind.MariaDB.target.name).toBe("openkeel-chart-mariadb");
    expect((byKind.MariaDB.patch.spec as Record<string, unknown>).priorityClassName).toBe("openkeel-infra-critical");
    expect(JSON.stringify(byKind.RabbitmqCluster.patch)).toContain('"priorityClassName":"openkeel-infra-critical"');
  });

  it.each([
    ["prod-medium", [HOST], [HOST]],
    ["prod-large", [HOST, ZONE], [HOST, ZONE]],
  ])("%s: the placement model judges the patched CRs (Galera %j, RabbitMQ %j); without the patches Galera has none", (stack, galera, rabbit) => {
    const plan = planOf(stack);
    expect(component(plan, "openkeel-chart/mariadb").requiredAntiAffinity).toEqual(galera);
    expect(component(plan, "openkeel-chart/rabbitmq").requiredAntiAffinity).toEqual(rabbit);
    // what main judged as enforced: the chart alone renders no anti-affinity for Galera, only the host for RabbitMQ
    const bare = withoutPatches(plan, "openkeel-chart");
    expect(component(bare, "openkeel-chart/mariadb").requiredAntiAffinity).toEqual([]);
    expect(component(bare, "openkeel-chart/rabbitmq").requiredAntiAffinity).toEqual([HOST]);
  });

  it("rendered/<stack>/postrender/openkeel-chart.yaml holds the patches, and index.yaml points at it", () => {
    for (const stack of ["lab", "prod-small", "prod-medium", "prod-large"]) {
      const dir = path.join(REPO, "rendered", stack);
      const docs = parseAllDocuments(fs.readFileSync(path.join(dir, "postrender", "openkeel-chart.yaml"), "utf8")).map((d) => d.toJS());
      expect(docs[0]).toEqual(release(planOf(stack), "openkeel-chart").postRender);
      expect(fs.readFileSync(path.join(dir, "index.yaml"), "utf8")).toContain("postRender: postrender/openkeel-chart.yaml");
    }
  });
});

describe("item 1: OVN central's zone anti-affinity in large is a patch of openkeel-neutron (no chart reads zoneAntiAffinity)", () => {
  const NAME = "openkeel-neutron-ovn-central";

  it("large: the values carry neither term's key (no chart reads them); the patch writes the host and the zone term on the StatefulSet", () => {
    const u = release(planOf("prod-large"), "openkeel-neutron");
    expect((u.values as { placement: Record<string, unknown> }).placement.ovnCentral).toEqual({ role: "controlPlane" });
    const anti = (u.postRender ?? []).filter((p) => p.target.name === NAME);
    expect(anti.map((p) => p.target)).toEqual([{ kind: "StatefulSet", name: NAME }]);
    const terms = (anti[0].patch as { spec: { template: { spec: { affinity: { podAntiAffinity: Record<string, { topologyKey: string }[]> } } } } }).spec
      .template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution;
    expect(terms.map((t) => t.topologyKey)).toEqual([HOST, ZONE]);
    // medium has no zones: its patch writes the host term alone
    const medium = (release(planOf("prod-medium"), "openkeel-neutron").postRender ?? []).filter((p) => p.target.name === NAME);
    expect(medium.map((p) => p.target)).toEqual([{ kind: "StatefulSet", name: NAME }]);
    expect(JSON.stringify(medium[0].patch)).not.toContain(ZONE);
  });

  it("the target is the object the contract chart renders: <release>-<kebab key>, selected by instance and name", () => {
    const chart = fs.readFileSync(path.join(REPO, "e2e/charts/openkeel-neutron/templates/openkeel-neutron.yaml"), "utf8");
    const line = chart.split("\n").find((l) => l.includes('"key" "ovnCentral"'))!;
    expect(line).toContain('"kind" "StatefulSet"');
    expect(line).not.toMatch(/"name" /);
    const helper = fs.readFileSync(path.join(REPO, "e2e/charts/_shared/_openkeel.tpl"), "utf8");
    expect(helper).toContain('$name := printf "%s-%s" $root.Release.Name (.name | default (kebabcase .key))');
    expect(helper).toContain('$selector := dict "app.kubernetes.io/instance" $root.Release.Name "app.kubernetes.io/name" $name');
  });

  it("a preferred zone term goes beside the preferred host term; a raw podAntiAffinity is kept and the helper's host term is not added", () => {
    const values = {
      placement: {
        api: { role: "controlPlane", antiAffinity: "preferred", zoneAntiAffinity: "preferred" },
        worker: {
          affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: "rack" }] } },
          antiAffinity: "required",
          zoneAntiAffinity: "required",
        },
        other: { role: "compute", zoneAntiAffinity: "required" },
      },
    };
    const { values: out, patches } = antiAffinityPostRender("openkeel-x", values, { api: "Deployment", worker: "StatefulSet" });
    // a component the chart does not have keeps its key, for the values contract to name it
    expect((out.placement as Record<string, unknown>).other).toEqual(values.placement.other);
    expect(JSON.stringify(out)).not.toMatch(/"(api|worker)":\{[^}]*(zoneAntiAffinity|antiAffinity)/);
    const anti = (i: number) =>
      (patches[i].patch as { spec: { template: { spec: { affinity: { podAntiAffinity: Record<string, unknown[]> } } } } }).spec.template.spec.affinity
        .podAntiAffinity;
    expect(patches.map((p) => p.target)).toEqual([
      { kind: "Deployment", name: "openkeel-x-api" },
      { kind: "StatefulSet", name: "openkeel-x-worker" },
    ]);
    expect(JSON.stringify(anti(0).preferredDuringSchedulingIgnoredDuringExecution)).toMatch(new RegExp(`"${HOST}".*"${ZONE}"`));
    expect(anti(0).requiredDuringSchedulingIgnoredDuringExecution).toBeUndefined();
    expect((anti(1).requiredDuringSchedulingIgnoredDuringExecution as { topologyKey: string }[]).map((t) => t.topologyKey)).toEqual(["rack", ZONE]);
  });

  it("the model judges the patched pod template: host and zone terms count from the patch, never from a value no chart reads", () => {
    const plan = planOf("prod-large");
    expect(component(plan, "openkeel-neutron/ovnCentral").requiredAntiAffinity).toEqual([HOST, ZONE]);
    const bare = withoutPatches(plan, "openkeel-neutron");
    // placement.ovnCentral.antiAffinity: required stays in the values (D2 judges it), but § 5.2's helper renders no affinity
    expect(component(bare, "openkeel-neutron/ovnCentral").requiredAntiAffinity).toBeUndefined();
    // main's values: zoneAntiAffinity in the values, which no chart renders
    const values = (findUnit(bare, "openkeel-neutron") as HelmReleaseUnit).values as { placement: { ovnCentral: Record<string, unknown> } };
    values.placement.ovnCentral.zoneAntiAffinity = "required";
    expect(component(bare, "openkeel-neutron/ovnCentral").requiredAntiAffinity).toBeUndefined();
  });

  it("the host term no template renders is a patch too (OVN central, Swift storage); the Ironic conductor's template renders its own", () => {
    const plan = planOf("prod-medium");
    for (const [release, key, kind] of [
      ["openkeel-neutron", "ovnCentral", "StatefulSet"],
      ["openkeel-swift", "storage", "StatefulSet"],
    ] as const) {
      const unit = findUnit(plan, release) as HelmReleaseUnit;
      const patch = unit.postRender?.find(
        (p) => p.target.name === `${release}-${key === "ovnCentral" ? "ovn-central" : key}` && JSON.stringify(p.patch).includes("podAntiAffinity"),
      );
      expect(patch?.target.kind).toBe(kind);
      expect(JSON.stringify(patch?.patch)).toContain(`"topologyKey":"${HOST}"`);
      expect(component(plan, `${release}/${key}`).requiredAntiAffinity).toEqual([HOST]);
      expect(component(withoutPatches(plan, release), `${release}/${key}`).requiredAntiAffinity).toBeUndefined();
    }
    const ironic = findUnit(plan, "openkeel-ironic") as HelmReleaseUnit;
    expect(ironic.postRender?.some((p) => JSON.stringify(p.patch).includes("podAntiAffinity"))).toBe(false);
    expect(component(withoutPatches(plan, "openkeel-ironic"), "openkeel-ironic/conductor").requiredAntiAffinity).toEqual([HOST]);
  });
});

/** The objects the contract chart renders for the infrastructure release, the way Helm streams them. */
const CHART_STREAM = `---
# Source: openkeel-chart/templates/infrastructure.yaml
apiVersion: k8s.mariadb.com/v1alpha1
kind: MariaDB
metadata:
  name: openkeel-chart-mariadb
spec:
  replicas: 3
  nodeSelector:
    node-restriction.kubernetes.io/openkeel-control-plane: ""
---
# Source: openkeel-chart/templates/infrastructure.yaml
apiVersion: rabbitmq.com/v1beta1
kind: RabbitmqCluster
metadata:
  name: openkeel-chart-rabbitmq
spec:
  replicas: 3
---
# Source: openkeel-chart/templates/secrets.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: openkeel-chart-untouched
---
# Source: openkeel-chart/templates/ingress.yaml
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: openkeel-chart-ingress
`;

describe("item 1: Helm runs the post-renderer", () => {
  it("the release's postrender is a path relative to the project root, content-addressed, the same on every run", async () => {
    const plan = planOf("prod-large");
    const run = await runProgram("prod-large", {}, async () => {
      deployPlan(plan);
    });
    const releases = run.ofType("kubernetes:helm.sh/v3:Release");
    const chart = releases.find((r) => r.name === "openkeel-chart")!;
    expect(chart.inputs.postrender).toMatch(/^\.postrender\/openkeel-chart-[0-9a-f]{16}$/);
    expect(releases.find((r) => r.name === "kube-ovn")!.inputs.postrender).toMatch(/^\.postrender\/kube-ovn-[0-9a-f]{16}$/);
    expect(releases.find((r) => r.name === "openkeel-keystone")!.inputs.postrender).toBeUndefined();
    expect(postRenderExecutable(release(plan, "openkeel-chart"), fs.mkdtempSync(path.join(os.tmpdir(), "pr-")))).toBe(chart.inputs.postrender);
  });

  it("the executable reads Helm's stream on stdin and writes it patched on stdout, untouched documents as they were", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "pr-"));
    fs.symlinkSync(path.join(REPO, "node_modules"), path.join(root, "node_modules"));
    for (const dir of ["scripts", "cli"]) fs.symlinkSync(path.join(REPO, dir), path.join(root, dir));
    const u = release(planOf("prod-large"), "openkeel-chart");
    const exe = postRenderExecutable(u, root)!;
    // Helm runs it from the provider's working directory: any directory
    const r = spawnSync(path.join(root, exe), [], { input: CHART_STREAM, encoding: "utf8", cwd: os.tmpdir() });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const out = parseAllDocuments(r.stdout).map((d) => d.toJS());
    expect(out.map((o) => o.kind)).toEqual(["MariaDB", "RabbitmqCluster", "ConfigMap", "DaemonSet"]);
    // the ingress: § 5.2 lists none, its placement is the release's patch (openkeel/unlisted.ts)
    expect(out[3].spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toHaveLength(2);
    expect(out[0].spec.priorityClassName).toBe("openkeel-infra-critical");
    expect(out[0].spec.nodeSelector).toEqual({ "node-restriction.kubernetes.io/openkeel-control-plane": "" });
    expect(out[0].spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.map((t: { topologyKey: string }) => t.topologyKey)).toEqual([
      HOST,
      ZONE,
    ]);
    expect(r.stdout).toContain("# Source: openkeel-chart/templates/secrets.yaml\napiVersion: v1\nkind: ConfigMap");
    expect(postRenderManifests(CHART_STREAM, { release: u.release, patches: u.postRender! })).toBe(r.stdout);
  });

  it("the executable starts as every command does (cli/ts-run.cjs), and is written again when changed or no longer executable", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "pr-"));
    const u = release(planOf("prod-medium"), "openkeel-chart");
    const exe = path.join(root, postRenderExecutable(u, root)!);
    const script = fs.readFileSync(exe, "utf8");
    expect(script).toContain('exec node -r "$root/cli/ts-run.cjs" "$root/scripts/postrender.ts"');
    fs.chmodSync(exe, 0o644);
    postRenderExecutable(u, root);
    expect(fs.statSync(exe).mode & 0o777).toBe(0o755);
    fs.writeFileSync(exe, "#!/bin/sh\nexit 0\n");
    fs.writeFileSync(`${exe}.json`, "{}");
    postRenderExecutable(u, root);
    expect(fs.readFileSync(exe, "utf8")).toBe(script);
    expect(JSON.parse(fs.readFileSync(`${exe}.json`, "utf8")).release).toBe(u.release);
  });

  it("a chart that no longer renders a target makes the executable fail (exit 1) with the patch's reason", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "pr-"));
    fs.symlinkSync(path.join(REPO, "node_modules"), path.join(root, "node_modules"));
    for (const dir of ["scripts", "cli"]) fs.symlinkSync(path.join(REPO, dir), path.join(root, dir));
    const exe = postRenderExecutable(release(planOf("prod-medium"), "openkeel-chart"), root)!;
    const r = spawnSync(path.join(root, exe), [], {
      input: CHART_STREAM.split("---\n# Source: openkeel-chart/templates/ingress.yaml")[0].replace(/kind: MariaDB/, "kind: Other"),
      encoding: "utf8",
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/post-render of release openkeel-chart: no MariaDB openkeel-chart-mariadb in its manifests \(the patch has no target: § 2\.1/);
    expect(r.stderr).not.toMatch(/at .*\.ts:\d+/);
  });
});

describe("item 1: the release's post-render record, what the policy pack judges of its patches", () => {
  it.each(["prod-large", "prod-medium", "lab"])(
    "%s: every patched release registers its record beside it, and the pack reads it back as the executable's input",
    async (stack) => {
      const plan = planOf(stack);
      const run = await runProgram(stack, {}, async () => {
        deployPlan(plan);
      });
      const view = (r: { type: string; name: string; urn: string; inputs: Record<string, unknown> }) => ({
        type: r.type,
        name: r.name,
        urn: r.urn,
        props: r.inputs,
      });
      const resources = [...run.ofType("kubernetes:helm.sh/v3:Release"), ...run.ofType("kubernetes:core/v1:ConfigMap")].map(view);
      const patched = allUnits(plan).filter((u): u is HelmReleaseUnit => u.kind === "HelmRelease" && (u.postRender?.length ?? 0) > 0);
      expect(patched.length).toBeGreaterThan(stack === "lab" ? 2 : 5);
      for (const u of patched) {
        const r = resources.find((x) => x.type === "kubernetes:helm.sh/v3:Release" && x.name === u.name)!;
        const record = resources.find((x) => x.name === `${u.name}:configmap:${u.namespace}/${u.release}-post-render`);
        expect(record?.props.metadata, u.name).toMatchObject({ namespace: u.namespace, annotations: { "openkeel.io/post-render-of": u.release } });
        const read = releasePatches(resources, r);
        expect(read.problem, u.name).toBeUndefined();
        expect(read.patches, u.name).toEqual(u.postRender!.map((p) => ({ kind: p.target.kind, name: p.target.name, patch: p.patch })));
      }
      // a release without patches has no record and needs none
      const plain = resources.find((x) => x.name === "openkeel-keystone")!;
      expect(releasePatches(resources, plain)).toEqual({ patches: [] });
      // one byte of the record changed, or the record gone: the pack says it cannot judge the patches
      const neutron = resources.find((x) => x.name === "openkeel-neutron");
      if (neutron) {
        const others = resources.filter((x) => !x.name.endsWith("/openkeel-neutron-post-render"));
        const record = resources.find((x) => x.name.endsWith("/openkeel-neutron-post-render"))!;
        const data = (record.props.data as Record<string, string>)["post-render.json"];
        const forged = { ...record, props: { ...record.props, data: { "post-render.json": data.replace("compute", "computE") } } };
        expect(releasePatches([...others, forged], neutron).problem?.message).toMatch(/is not what its post-renderer applies/);
        expect(releasePatches(others, neutron).problem?.message).toMatch(/has no post-render record/);
      }
    },
  );
});

describe("item 6: kube-ovn-controller as the chart renders it, kept on the masters by a patch", () => {
  it("the model reads the chart (any Linux node, every NoSchedule taint) and the patch adds the master label", () => {
    const plan = planOf("prod-medium");
    const controller = component(plan, "kube-ovn/kube-ovn-controller");
    expect(controller.scheduling.nodeSelector).toEqual({ "kubernetes.io/os": "linux", "kube-ovn/role": "master" });
    expect(controller.scheduling.tolerations).toEqual([
      { operator: "Exists", effect: "NoSchedule" },
      { key: "CriticalAddonsOnly", operator: "Exists" },
    ]);
    const bare = component(withoutPatches(plan, "kube-ovn"), "kube-ovn/kube-ovn-controller");
    expect(bare.scheduling.nodeSelector).toEqual({ "kubernetes.io/os": "linux" });
    const placement = shippedPlan("prod-medium").placement!;
    expect(placement.placements.find((x) => x.component.name === "kube-ovn/kube-ovn-controller")?.eligible).toEqual(["cp-1", "cp-2", "cp-3"]);
  });

  it("kube-ovn-monitor is a component: one replica on a master, NoSchedule tolerated but not NoExecute", () => {
    const monitor = component(planOf("prod-medium"), "kube-ovn/kube-ovn-monitor");
    expect(monitor.replicas).toBe(1);
    expect(monitor.scheduling.nodeSelector).toEqual({ "kubernetes.io/os": "linux", "kube-ovn/role": "master" });
    expect(monitor.scheduling.tolerations?.some((t) => t.effect === "NoExecute")).toBe(false);
  });
});

describe("item 3: priority classes exist before the first unit that names one", () => {
  it("§ 2's classes are created first in crds-operators; the operators that use them wait for that unit", () => {
    const plan = planOf("prod-medium");
    const first = plan.phases.find((p) => p.name === "crds-operators")!.units[0];
    expect(first.name).toBe(PRIORITY_CLASSES_UNIT);
    expect(first.kind === "Manifests" && first.objects.map((o) => o.metadata.name)).toEqual(["openkeel-infra-critical", "openkeel-control", "openkeel-vm"]);
    for (const u of ["cert-manager", "mariadb-operator", "node-feature-discovery"]) expect(findUnit(plan, u)!.dependsOn).toContain(PRIORITY_CLASSES_UNIT);
    expect((release(plan, "cert-manager").values as { global: unknown }).global).toEqual({ priorityClassName: "openkeel-control" });
    expect(release(plan, "mariadb-operator").values).toMatchObject({
      priorityClassName: "openkeel-control",
      webhook: { priorityClassName: "openkeel-control" },
      certController: { priorityClassName: "openkeel-control" },
    });
    const nfd = release(plan, "node-feature-discovery").values as { priorityClassName: string; worker: Record<string, unknown> };
    expect(nfd.priorityClassName).toBe("openkeel-control");
    // never both: the worker template would render the key twice
    expect(nfd.worker.priorityClassName).toBeUndefined();
  });

  it("a class this repository names before it exists is a bug (thrown); one the stack file names is the stack's error", () => {
    const plan = planOf("prod-medium");
    const early = structuredClone(plan);
    const cm = findUnit(early, "cert-manager")!;
    cm.dependsOn = cm.dependsOn!.filter((d) => d !== PRIORITY_CLASSES_UNIT);
    expect(() => priorityClassChecks(early, shippedConfig("prod-medium"))).toThrow(/cert-manager .*priority class openkeel-control does not exist yet/);
    expect(priorityClassChecks(plan, shippedConfig("prod-medium"))).toEqual([]);
    const cfg = mutatedConfig("prod-medium", (raw) => {
      raw.services = { ...(raw.services ?? {}), keystone: { placement: { api: { priorityClassName: "gold" } } } };
    });
    const r = planStack(cfg);
    const check = r.problems.find((p) => p.code === "priority-class-missing");
    expect(check?.message).toMatch(/openkeel-keystone .*priority class gold does not exist yet/);
    expect(check?.path).toBe("openkeel:services.keystone.placement.api.priorityClassName");
    expect(r.plan).toBeUndefined();
  });

  it("an upstream class is usable only once the artifact that creates it is applied", () => {
    const plan = planOf("prod-medium");
    const early = structuredClone(plan);
    (findUnit(early, "cert-manager") as HelmReleaseUnit).values.global = { priorityClassName: "longhorn-critical" };
    expect(() => priorityClassChecks(early, shippedConfig("prod-medium"))).toThrow(
      /longhorn-critical does not exist yet \(unit longhorn, which it does not wait for/,
    );
  });
});

describe("item 1: the preview flags a change of MariaDB's immutable fields in a patch", () => {
  const treeOf = (plan: Plan) => new Map(renderPlan(plan).map((f) => [f.path, f.content]));

  it("a Galera created without openkeel-infra-critical: operator-immutable (the CR must be replaced)", () => {
    const head = planOf("prod-medium");
    const base = structuredClone(head);
    const galera = (findUnit(base, "openkeel-chart") as HelmReleaseUnit).postRender!.find((p) => p.target.kind === "MariaDB")!;
    delete (galera.patch.spec as Record<string, unknown>).priorityClassName;
    const p = previewStack("prod-medium", treeOf(base), treeOf(head));
    const f = p.findings.filter((x) => x.code === "operator-immutable");
    expect(f.map((x) => x.message)).toEqual([
      expect.stringMatching(/^MariaDB openkeel-chart-mariadb of release openkeel-chart: spec\.priorityClassName changes \(unset → "openkeel-infra-critical"\)/),
    ]);
    // the same patches on both sides, or a release the base does not have: nothing to refuse
    expect(previewStack("prod-medium", treeOf(head), treeOf(head)).findings.filter((x) => x.code === "operator-immutable")).toEqual([]);
  });
});
