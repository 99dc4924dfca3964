// The preview a reviewer reads: the structural diff, the per-stack model and its Markdown, and the
// CLI between two commits of a temporary repository — one compute node added to prod-medium shows
// exactly that Node patch and the values that changed, nothing else, byte-identical on a rerun.
// The first preview runs the real CLI (its exit code and streams); the others call the command
// in-process (review/preview-command.ts), whose two renders are child processes all the same.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { isDeepStrictEqual } from "node:util";
import { parse, parseAllDocuments, parseDocument, stringify } from "yaml";
import { GENERATED_HEADER } from "../../../render/render";
import { placementJson, renderPlan, type RenderedPlacement } from "../../../render/rendered";
import { placementMarkdown } from "../../../placement/picture";
import { readStack } from "../../../config/stack-file";
import { planStack } from "../../../environments";
import { hasErrors, previewAll, previewStack } from "../../../review/preview";
import type { StackPreview, Tree } from "../../../review/preview-model";
import { commentMarkdown, COMMENT_LIMIT, REPORT_MARKER, reportMarkdown, stackMarkdown } from "../../../review/preview-markdown";
import { inPlace } from "../../../review/replace-rules";
import { capture } from "../../../cli/cli";
import { tsCommand } from "../../../cli/ts-command";
import { previewCommand } from "../../../review/preview-command";
import { renderCommand } from "../../../pipeline/render-command";
import { readTree } from "../../../cli/write";
import { formatPath, type PathSegment } from "../../../config/problems";
import { diff, WHOLE_DOCUMENT } from "../../../render/diff";

/** A change's path as the preview writes it. */
const pathOf = (path: PathSegment[]) => formatPath(path, WHOLE_DOCUMENT);
import { REPO, STACKS_DIR } from "../../helpers/stacks";
import { cloneWorkingTree, git, GIT_ENV, tempFolders } from "../../helpers/repos";
import { STACK_DECLARATIONS } from "../../../environments/registry";

/** Temporary folders, removed after the file's tests. */
const tmp = tempFolders();

const y = (v: unknown) => GENERATED_HEADER + stringify(v);

describe("structural diff", () => {
  it("maps: added, removed and changed keys, with readable paths", () => {
    const changes = diff(
      { metadata: { labels: { "node-role.openkeel.io/compute": "", keep: "x" } }, spec: { replicas: 2 } },
      { metadata: { labels: { "node-role.openkeel.io/network": "", keep: "x" } }, spec: { replicas: 3 } },
    );
    expect(changes.map((c) => [pathOf(c.path), c.op, c.before, c.after])).toEqual([
      ['metadata.labels["node-role.openkeel.io/compute"]', "remove", "", undefined],
      ['metadata.labels["node-role.openkeel.io/network"]', "add", undefined, ""],
      ["spec.replicas", "change", 2, 3],
    ]);
  });

  it("lists of named items are matched by name: a field inside one is that field", () => {
    const a = {
      containers: [
        { name: "api", image: "api:1" },
        { name: "sidecar", image: "s:1" },
      ],
    };
    const b = {
      containers: [
        { name: "api", image: "api:2" },
        { name: "sidecar", image: "s:1" },
        { name: "new", image: "n:1" },
      ],
    };
    expect(diff(a, b).map((c) => [pathOf(c.path), c.op])).toEqual([
      ["containers[name=api].image", "change"],
      ["containers[name=new]", "add"],
    ]);
    const reordered = diff(a, { containers: [...a.containers].reverse() });
    expect(reordered).toEqual([{ path: ["containers"], op: "reorder", before: ["api", "sidecar"], after: ["sidecar", "api"] }]);
  });

  it("other lists are aligned: one inserted item is one addition, an edited item is its field", () => {
    expect(diff({ roles: ["compute", "storage"] }, { roles: ["network", "compute", "storage"] })).toEqual([
      { path: ["roles", 0], op: "add", after: "network" },
    ]);
    const tol = (effect: string) => ({ key: "node-role.openkeel.io/compute", operator: "Exists", effect });
    expect(diff({ t: [tol("NoSchedule"), tol("NoExecute")] }, { t: [tol("NoSchedule"), tol("PreferNoSchedule")] }).map((c) => pathOf(c.path))).toEqual([
      "t[1].effect",
    ]);
    expect(diff([1, 2, 3], [1, 3])).toEqual([{ path: [1], op: "remove", before: 2 }]);
  });

  it("very long lists are compared position by position", () => {
    const a = Array.from({ length: 3000 }, (_, i) => i);
    const b = a.map((v) => (v === 1500 ? -1 : v));
    expect(diff(a, b)).toEqual([{ path: [1500], op: "change", before: 1500, after: -1 }]);
  });

  it("no differences, no changes; a type change is one change", () => {
    expect(diff({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toEqual([]);
    expect(diff({ a: { b: 1 } }, { a: [1] })).toEqual([{ path: ["a"], op: "change", before: { b: 1 }, after: [1] }]);
    expect(pathOf([])).toBe("(whole document)");
  });
});

function tree(files: Record<string, unknown>): Tree {
  return new Map(Object.entries(files).map(([k, v]) => [k, typeof v === "string" ? v : y(v)]));
}

const index = (over: Record<string, unknown> = {}) => ({
  stack: "s",
  environment: "talos-production",
  topology: "medium",
  labelProfile: "hardened",
  taintedRoles: ["compute"],
  nodes: [{ name: "a", roles: ["compute"] }],
  warnings: [],
  phases: [
    {
      name: "node-roles",
      units: [{ name: "node-roles", kind: "Manifests", type: "openkeel:nodes:NodeRoles", objects: ["objects/01-node-roles/node-roles/node-a.yaml"] }],
    },
    {
      name: "openkeel",
      units: [
        {
          name: "nova",
          kind: "HelmRelease",
          type: "openkeel:openkeel:Release",
          release: "nova",
          namespace: "openstack",
          chart: { repository: "oci://registry.example/openkeel", chart: "nova", version: "1.0.0" },
          values: "values/nova.yaml",
        },
      ],
    },
  ],
  ...over,
});
const nodeA = { apiVersion: "v1", kind: "Node", metadata: { name: "a", labels: { "node-restriction.kubernetes.io/openkeel-compute": "" } } };

/** placement.json (and the placement.md drawn from it) of compute nodes and the Nova conductor on them. */
function placementFiles(nodes: string[], replicas: number): Record<string, string> {
  const data: RenderedPlacement = {
    stack: "s",
    topology: "medium",
    profile: "hardened",
    taintedRoles: [],
    nodes: nodes.map((name) => ({ name, roles: ["compute"], kubernetesControlPlane: false, state: "active", labels: {}, taints: [] })),
    components: [
      {
        name: "nova/conductor",
        source: "openkeel",
        unit: "nova",
        kind: "Deployment",
        replicas,
        designRoles: ["compute"],
        eligible: nodes,
        reasons: {},
        reaches: ["compute"],
      },
    ],
  };
  return { "placement.json": placementJson(data), "placement.md": placementMarkdown(data) };
}

describe("previewStack", () => {
  const base = tree({
    "index.yaml": index(),
    "objects/01-node-roles/node-roles/node-a.yaml": nodeA,
    "values/nova.yaml": { conductor: { replicas: 1 }, global: { nodeRoles: { compute: ["a"] } } },
    "kind/cluster.yaml": { kind: "Cluster", nodes: [{ role: "control-plane" }] },
    ...placementFiles(["a"], 1),
  });

  it("an unchanged render is unchanged, and says so", () => {
    const p = previewStack("s", base, new Map(base));
    expect(p.status).toBe("unchanged");
    expect(stackMarkdown(p)).toBe("### s — talos-production/medium\n\nNo changes.\n");
  });

  it("objects keep their identity across a file move; every kind of change lands in its section", () => {
    const head = tree({
      "index.yaml": index({
        warnings: [{ code: "single-conductor", message: "one Ironic conductor", remediation: "label a second node" }],
        phases: (index().phases as any[]).map((ph) => ({
          ...ph,
          units: ph.units.map((u: any) =>
            u.name === "nova"
              ? { ...u, chart: { ...u.chart, version: "1.1.0" } }
              : { ...u, objects: u.objects.map((o: string) => o.replace("01-", "02-")).concat("objects/02-node-roles/node-roles/node-b.yaml") },
          ),
        })),
      }),
      // same Node, in another folder: not an addition and a removal
      "objects/02-node-roles/node-roles/node-a.yaml": nodeA,
      "objects/02-node-roles/node-roles/node-b.yaml": { ...nodeA, metadata: { ...nodeA.metadata, name: "b" } },
      "values/nova.yaml": { conductor: { replicas: 2 }, global: { nodeRoles: { compute: ["a", "b"] } } },
      "kind/cluster.yaml": { kind: "Cluster", nodes: [{ role: "control-plane" }, { role: "worker" }] },
      ...placementFiles(["a", "b"], 2),
    });
    const p = previewStack("s", base, head);
    expect(p.status).toBe("changed");
    expect(p.objects.added.map((o) => `${o.kind}/${o.name}@${o.file} ${o.unit} ${o.patch}`)).toEqual([
      "Node/b@objects/02-node-roles/node-roles/node-b.yaml node-roles true",
    ]);
    expect(p.objects.removed).toEqual([]);
    expect(p.objects.changed).toEqual([]);
    expect(p.actions).toEqual([
      {
        action: "update",
        resource: "HelmRelease nova",
        unit: "nova",
        protected: false,
        detail: "chart.version; values conductor.replicas, global.nodeRoles.compute[1]",
      },
      { action: "create", resource: "Node b (patch)", unit: "node-roles", protected: false },
    ]);
    expect(p.values).toEqual([
      {
        unit: "nova",
        release: "nova",
        namespace: "openstack",
        op: "change",
        changes: [
          { path: ["conductor", "replicas"], op: "change", before: 1, after: 2 },
          { path: ["global", "nodeRoles", "compute", 1], op: "add", after: "b" },
        ],
      },
    ]);
    expect(p.units.find((u) => u.name === "nova")).toEqual({
      name: "nova",
      op: "change",
      changes: [{ path: ["chart", "version"], op: "change", before: "1.0.0", after: "1.1.0" }],
    });
    expect(p.warnings).toEqual({
      added: [{ code: "single-conductor", message: "one Ironic conductor", remediation: "label a second node" }],
      resolved: [],
      changed: [],
    });
    expect(p.settings).toEqual([]);
    expect(p.findings).toEqual([]);
    // placement.json and placement.md are summarised, not listed; kind/cluster.yaml field by field
    expect(p.placement).toEqual({
      components: [{ component: "nova/conductor", op: "changed", gained: ["b"], lost: [], replicas: { before: "1", after: "2" } }],
      nodes: [{ node: "b", op: "added", fields: ["role group: compute", "state: active", "zone: —", "taints: —"] }],
      lines: [],
    });
    expect(p.other.map((f) => f.file)).toEqual(["kind/cluster.yaml"]);
    expect(p.other[0].changes?.map((c) => pathOf(c.path))).toEqual(["nodes[1]"]);

    const md = stackMarkdown(p);
    expect(md).toContain("| create | Node b (patch) | node-roles |  |");
    expect(md).toContain("- new Node `b` (`v1`, applied as a NodePatch) — `objects/02-node-roles/node-roles/node-b.yaml`");
    expect(md).toContain("```diff\n@@ conductor.replicas @@\n- 1\n+ 2\n@@ global.nodeRoles.compute[1] @@\n+ b\n```");
    expect(md).toContain("`nova` (release `nova` in `openstack`): 2 field(s)");
    expect(md).toContain("@@ chart.version @@\n- 1.0.0\n+ 1.1.0");
    expect(md).toContain("- new plan-check warning **single-conductor**: one Ironic conductor. Fix: label a second node.");
    expect(md).not.toContain("node-a.yaml");
  });

  it("a stack only in the head is added, only in the base removed; settings changes are listed", () => {
    expect(previewStack("s", undefined, base).status).toBe("added");
    expect(previewStack("s", undefined, base).objects.added).toHaveLength(1);
    expect(previewStack("s", base, undefined).status).toBe("removed");
    expect(previewStack("s", base, undefined).actions.map((a) => a.action)).toEqual(["delete", "delete"]);
    const head = new Map(base);
    head.set("index.yaml", y(index({ taintedRoles: ["compute", "network"] })));
    expect(previewStack("s", base, head).settings).toEqual([{ path: ["taintedRoles", 1], op: "add", after: "network" }]);
  });

  it("files whose only change is a comment are left out", () => {
    const head = new Map(base);
    head.set("values/nova.yaml", `${base.get("values/nova.yaml")!}# a comment\n`);
    head.set("kind/cluster.yaml", base.get("kind/cluster.yaml")!.replace(GENERATED_HEADER, `${GENERATED_HEADER}# Nodes: a, b.\n`));
    head.set("placement.md", `<!-- generated -->\n${base.get("placement.md")!}`);
    head.set("notes.conf", "# about\nkey = 1\n");
    const withConf = new Map(base).set("notes.conf", "# about this file\nkey = 1\n");
    const p = previewStack("s", withConf, head);
    expect(p.other).toEqual([]);
    expect(p.placement).toBeUndefined();
    expect(p.status).toBe("unchanged");
  });
});

describe("actions: what pulumi up does with each object", () => {
  const unit = (name: string, objects: string[], protect = false) => ({
    name,
    kind: "Manifests",
    type: "openkeel:platform:X",
    objects,
    ...(protect ? { protect: true } : {}),
  });
  const idx = (...units: Record<string, unknown>[]) => index({ phases: [{ name: "platform-config", units }] });
  const sc = (params: Record<string, string>, extra: Record<string, unknown> = {}) => ({
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: "longhorn-vm" },
    provisioner: "driver.longhorn.io",
    reclaimPolicy: "Delete",
    parameters: params,
    ...extra,
  });
  const ds = (labels: Record<string, string>, image = "x:1") => ({
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: "agent", namespace: "kube-system" },
    spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: "a", image }] } } },
  });
  const SC = "objects/04/storage-classes/storageclass-longhorn-vm.yaml";
  const DS = "objects/04/agents/daemonset-agent.yaml";
  const pair = (protect: boolean, before: unknown, after: unknown, file = SC) => {
    const u = file === SC ? "storage-classes" : "agents";
    return previewStack(
      "s",
      tree({ "index.yaml": idx(unit(u, [file], protect)), [file]: before }),
      tree({ "index.yaml": idx(unit(u, [file], protect)), [file]: after }),
    );
  };

  it("a release whose dependencies alone change is no action (the engine orders its steps by them, never updates for them): the units section shows it", () => {
    const nova = (over: Record<string, unknown>) =>
      index({
        phases: [
          {
            name: "openkeel",
            units: [{ ...(index().phases[1].units[0] as Record<string, unknown>), ...over }],
          },
        ],
      });
    const values = { "values/nova.yaml": { api: { replicas: 1 } } };
    const p = previewStack(
      "s",
      tree({ "index.yaml": nova({ dependsOn: ["keystone"] }), ...values }),
      tree({ "index.yaml": nova({ dependsOn: ["keystone", "placement"], waitsFor: [{ unit: "placement", why: "agents register there" }] }), ...values }),
    );
    expect(p.actions).toEqual([]);
    expect(p.units.map((u) => [u.name, u.op, u.changes.map((c) => String(c.path[0]))])).toEqual([["nova", "change", ["dependsOn", "waitsFor"]]]);
    // with a chart change beside it, the update names the chart only
    const both = previewStack(
      "s",
      tree({ "index.yaml": nova({ dependsOn: ["keystone"] }), ...values }),
      tree({
        "index.yaml": nova({ dependsOn: ["placement"], chart: { repository: "oci://registry.example/openkeel", chart: "nova", version: "1.1.0" } }),
        ...values,
      }),
    );
    expect(both.actions.map((a) => [a.action, a.detail])).toEqual([["update", "chart.version"]]);
  });

  it("a StorageClass whose parameters change is replaced, with the field; protected, that is an error", () => {
    const free = pair(false, sc({ numberOfReplicas: "3" }), sc({ numberOfReplicas: "2" }));
    expect(free.actions).toEqual([
      {
        action: "replace",
        resource: "StorageClass longhorn-vm",
        unit: "storage-classes",
        protected: false,
        detail: "parameters.numberOfReplicas cannot change in place",
      },
    ]);
    expect(free.findings).toEqual([]);
    const guarded = pair(true, sc({ numberOfReplicas: "3" }), sc({ numberOfReplicas: "2" }));
    expect(guarded.findings.map((f) => [f.level, f.code])).toEqual([["error", "protected-replace"]]);
    expect(guarded.findings[0].message).toBe(
      "StorageClass longhorn-vm of unit storage-classes would be replaced: parameters.numberOfReplicas cannot change in place, and the unit is protected, so `pulumi up` refuses",
    );
    expect(hasErrors([guarded])).toBe(true);
    const md = stackMarkdown(guarded);
    expect(md).toContain("**❌ Errors: `pulumi up` would refuse or fail on these**");
    expect(md).toContain("| **replace** | StorageClass longhorn-vm | storage-classes 🔒 | parameters.numberOfReplicas cannot change in place |");
  });

  it("a field the API server will not update and the provider does not replace is an error, protected or not", () => {
    const p = pair(false, sc({ a: "1" }), sc({ a: "1" }, { reclaimPolicy: "Retain" }));
    expect(p.actions.map((a) => a.action)).toEqual(["update"]);
    expect(p.findings.map((f) => [f.code, f.message])).toEqual([
      ["update-refused", "StorageClass longhorn-vm: reclaimPolicy cannot be updated, and `pulumi up` would try (the Kubernetes API refuses it)"],
    ]);
  });

  it("a PriorityClass whose value or preemptionPolicy changes is replaced, deleted first, with a warning: its pods keep their old priority (issue 37)", () => {
    const PC = "objects/02/priority-classes/priorityclass-openkeel-vm.yaml";
    const pc = (extra: Record<string, unknown>) => ({
      apiVersion: "scheduling.k8s.io/v1",
      kind: "PriorityClass",
      metadata: { name: "openkeel-vm" },
      description: "d",
      ...extra,
    });
    const classes = (body: unknown) => tree({ "index.yaml": idx(unit("priority-classes", [PC])), [PC]: body });
    const p = previewStack("s", classes(pc({ value: 500000, preemptionPolicy: "Never" })), classes(pc({ value: 400000 })));
    expect(p.actions).toEqual([
      {
        action: "replace",
        resource: "PriorityClass openkeel-vm",
        unit: "priority-classes",
        protected: false,
        detail: "preemptionPolicy, value cannot change in place: deleted, then created again",
      },
    ]);
    expect(p.findings.map((f) => [f.level, f.code, f.message])).toEqual([
      [
        "warning",
        "priority-class-replace",
        'PriorityClass openkeel-vm: value 500000 → 400000, preemptionPolicy "Never" → unset, which the API server does not update in place, so pulumi up deletes the class and creates it again; running pods keep the priority they were admitted with until they are re-created, and a pod created in between is refused until its controller retries',
      ],
    ]);
    expect(hasErrors([p])).toBe(false);
    const md = stackMarkdown(p);
    expect(md).toContain(
      "| **replace** | PriorityClass openkeel-vm | priority-classes | preemptionPolicy, value cannot change in place: deleted, then created again |",
    );
    expect(md).toContain("Why: the Priority admission plugin resolves a pod's priority from its class when the pod is created");
    // its description alone is an update, with nothing to say
    const described = previewStack("s", classes(pc({ value: 500000 })), classes(pc({ value: 500000, description: "e" })));
    expect(described.actions.map((a) => a.action)).toEqual(["update"]);
    expect(described.findings).toEqual([]);
    expect(inPlace("scheduling.k8s.io/v1", "PriorityClass", diff({ value: 1 }, { value: 2 }), false)).toEqual({
      replaces: ["value"],
      refused: [],
      deleteFirst: true,
    });
  });

  it("a workload whose selector changes is replaced; its image is an update", () => {
    expect(pair(false, ds({ app: "a" }), ds({ app: "b" }), DS).actions[0]).toMatchObject({
      action: "replace",
      detail: "spec.selector.matchLabels.app cannot change in place",
    });
    expect(pair(false, ds({ app: "a" }), ds({ app: "a" }, "x:2"), DS).actions[0]).toMatchObject({ action: "update" });
  });

  it("deleting an object of a protected unit is an error; a protected unit gone whole is one error", () => {
    const before = tree({ "index.yaml": idx(unit("storage-classes", [SC], true)), [SC]: sc({ a: "1" }) });
    const objectGone = previewStack("s", before, tree({ "index.yaml": idx(unit("storage-classes", [], true)) }));
    expect(objectGone.actions).toEqual([{ action: "delete", resource: "StorageClass longhorn-vm", unit: "storage-classes", protected: true }]);
    expect(objectGone.findings.map((f) => f.code)).toEqual(["protected-delete"]);
    const unitGone = previewStack("s", before, tree({ "index.yaml": idx() }));
    expect(unitGone.findings.map((f) => f.message)).toEqual([
      "unit storage-classes (1 object(s)) would be deleted, and it is protected, so `pulumi up` refuses",
    ]);
  });

  it("patches (Node role labels) are only ever updated, whatever changes", () => {
    const node = (labels: Record<string, string>) => ({ apiVersion: "v1", kind: "Node", metadata: { name: "a", labels } });
    const f = "objects/01-node-roles/node-roles/node-a.yaml";
    const p = previewStack(
      "s",
      tree({ "index.yaml": idx(unit("node-roles", [f])), [f]: node({ x: "" }) }),
      tree({ "index.yaml": idx(unit("node-roles", [f])), [f]: node({ y: "" }) }),
    );
    expect(p.actions).toEqual([
      { action: "update", resource: "Node a (patch)", unit: "node-roles", protected: false, detail: "metadata.labels.x, metadata.labels.y" },
    ]);
  });
});

describe("replace rules", () => {
  const change = (path: (string | number)[], before?: unknown, after?: unknown) => ({ path, op: "change" as const, before, after });
  it("follow the provider's list and the API's immutable fields", () => {
    expect(inPlace("storage.k8s.io/v1", "StorageClass", [change(["provisioner"], "a", "b")], false)).toEqual({
      replaces: ["provisioner"],
      refused: [],
      deleteFirst: false,
    });
    expect(inPlace("storage.k8s.io/v1", "StorageClass", [change(["volumeBindingMode"], "Immediate", "WaitForFirstConsumer")], false)).toEqual({
      replaces: [],
      refused: ["volumeBindingMode"],
      deleteFirst: false,
    });
    expect(inPlace("apps/v1", "StatefulSet", [change(["spec", "volumeClaimTemplates", 0, "spec", "resources"], 1, 2)], false).replaces).toEqual([
      "spec.volumeClaimTemplates[0].spec.resources",
    ]);
    expect(inPlace("apps/v1", "StatefulSet", [change(["spec", "replicas"], 1, 3)], false).replaces).toEqual([]);
    expect(inPlace("batch/v1", "Job", [change(["spec", "template", "spec", "containers", 0, "image"], "a", "b")], false).replaces).toHaveLength(1);
    expect(inPlace("v1", "ConfigMap", [change(["data", "k"], "a", "b")], false).replaces).toEqual(["data.k"]);
    expect(inPlace("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", [change(["roleRef", "name"], "a", "b")], false).replaces).toEqual(["roleRef.name"]);
    expect(inPlace("v1", "Pod", [change(["spec", "containers", { name: "c" } as any, "image"], "a", "b")], false).replaces).toHaveLength(1);
    // a whole spec added: replaced only if the field inside differs
    expect(
      inPlace("apps/v1", "Deployment", [change(["spec"], { selector: { a: 1 }, replicas: 1 }, { selector: { a: 1 }, replicas: 2 })], false).replaces,
    ).toEqual([]);
    expect(inPlace("apps/v1", "Deployment", [change(["spec"], { selector: { a: 1 } }, { selector: { a: 2 } })], false).replaces).toEqual(["spec"]);
    // kinds the provider does not list, and patches: in place
    expect(inPlace("policy/v1", "PodDisruptionBudget", [change(["spec", "minAvailable"], 1, 2)], false).replaces).toEqual([]);
    expect(inPlace("storage.k8s.io/v1", "StorageClass", [change(["parameters", "x"], "1", "2")], true)).toEqual({
      replaces: [],
      refused: [],
      deleteFirst: false,
    });
  });
});

describe("the report", () => {
  const base: Tree = new Map([
    ["a/index.yaml", y(index({ stack: "a" }))],
    ["a/objects/01-node-roles/node-roles/node-a.yaml", y(nodeA)],
    ["b/index.yaml", y(index({ stack: "b" }))],
  ]);
  const head: Tree = new Map([...base, ["a/objects/01-node-roles/node-roles/node-b.yaml", y({ ...nodeA, metadata: { name: "b" } })]]);

  it("is deterministic, carries the marker, summarises every stack, and details only changed ones", () => {
    const stacks = previewAll(base, head);
    const input = { base: "`main` (abc)", stacks };
    const md = reportMarkdown(input);
    expect(reportMarkdown({ base: "`main` (abc)", stacks: previewAll(base, head) })).toBe(md);
    expect(md.startsWith(`${REPORT_MARKER}\n## Render preview\n`)).toBe(true);
    expect(md).toContain("| stack | create | update | replace | delete | errors | warnings |");
    expect(md).toContain("| a | 1 | 0 | 0 | 0 | 0 | 0 |");
    expect(md).toContain("| b (no changes) | 0 | 0 | 0 | 0 | 0 | 0 |");
    expect(md).toContain("### a — talos-production/medium");
    expect(md).not.toContain("### b");
    expect(md).not.toMatch(/\d{4}-\d{2}-\d{2}|\d{2}:\d{2}:\d{2}/);
    expect(commentMarkdown(input, md)).toBe(md);
  });

  it("policy results plug in per stack (the JSON of npm run policy -- --json) or as text", () => {
    const policy = {
      stacks: {
        a: { violations: [], passed: true },
        b: { violations: [{ policy: "d1-hardened-labels", resource: "node-x", message: "label key | not hardened" }], passed: false },
      },
    };
    const stacks = previewAll(base, head, { policy });
    const md = reportMarkdown({ base: "x", stacks, policyText: "2 violations\n" });
    expect(md).toContain("| a | 1 | 0 | 0 | 0 | 0 | 0 | ✅ passed |");
    expect(md).toContain("| b (no changes) | 0 | 0 | 0 | 0 | 0 | 0 | ❌ 1 violation(s) |");
    expect(md).toContain("|  | d1-hardened-labels | node-x | label key \\| not hardened |");
    expect(md).toContain("### Policy\n\n```text\n2 violations\n```");
    // the results themselves, as JSON, for whatever reads the comment
    const withJson = reportMarkdown({ base: "x", stacks, policyJson: JSON.stringify(policy, null, 2) });
    expect(withJson).toContain(
      `<details><summary>Policy results as JSON (<code>npm run policy -- --json</code>)</summary>\n\n\`\`\`json\n${JSON.stringify(policy, null, 2)}\n\`\`\`\n\n</details>`,
    );
    expect(previewAll(base, head).every((s) => s.policy === undefined)).toBe(true);
    // advisory findings only: passed, shown as a warning
    const advisory = previewAll(base, head, { policy: { stacks: { a: { violations: [{ policy: "p", level: "advisory", message: "m" }] } } } });
    expect(reportMarkdown({ base: "x", stacks: advisory })).toContain("| a | 1 | 0 | 0 | 0 | 0 | 0 | ⚠️ 1 violation(s) |");
  });

  it("a policy run that failed says so in every stack's row and section", () => {
    const stacks = previewAll(base, head, { policy: { error: "npm run policy -- --json wrote no report (exit 2)" } });
    const md = reportMarkdown({ base: "x", stacks });
    expect(md).toContain("| b (no changes) | 0 | 0 | 0 | 0 | 0 | 0 | ❌ failed to run |");
    expect(md).toContain("❌ The policy pack did not run: npm run policy -- --json wrote no report (exit 2)");
  });

  it("too long for a PR comment: the summary and a pointer to the artifact", () => {
    const big: StackPreview[] = previewAll(base, head).map((s) => ({ ...s, stack: s.stack + "x".repeat(COMMENT_LIMIT) }));
    const input = { base: "x", stacks: big };
    const comment = commentMarkdown(input);
    expect(comment.length).toBeLessThan(reportMarkdown(input).length);
    expect(comment).toContain("too long for a comment: see `report.md` in the workflow's `preview` artifact");
  });
});

// ---- the CLI between two commits ----

/** The real CLI, run in `repo`: once, for the process' own exit code and streams. */
function previewCli(repo: string, argv: string[]) {
  const r = spawnSync(...tsCommand(path.join(repo, "scripts/preview.ts"), argv), { cwd: repo, encoding: "utf8", env: GIT_ENV });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same command in-process (what the CLI runs: review/preview-command.ts), for `repo`; paths absolute. */
const preview = (repo: string, argv: string[]) => capture((a, io) => previewCommand(a, io, repo), argv);

/** prod-medium with one more compute node, a copy of an existing one. */
function addComputeNode(stackFile: string): void {
  const doc = parseDocument(fs.readFileSync(stackFile, "utf8"));
  const nodes = (doc.toJS() as any).config["openkeel:nodes"] as any[];
  const model = nodes.find((n) => n.roles.includes("compute"));
  expect(nodes.some((n) => n.name === "cmp-04")).toBe(false);
  doc.addIn(["config", "openkeel:nodes"], doc.createNode({ ...model, name: "cmp-04", internalIP: "10.30.1.14" }));
  fs.writeFileSync(stackFile, doc.toString());
}

describe("npm run preview between two commits", () => {
  let repo: string;
  let first: ReturnType<typeof previewCli>;
  let report: { stacks: StackPreview[] };
  let expected: {
    added: string[];
    changedObjects: string[];
    values: string[];
    warnings: string[];
    resolved: string[];
    changed: string[];
    other: string[];
    commentOnly: string[];
    stackFields: boolean;
  };

  beforeAll(async () => {
    repo = cloneWorkingTree(tmp("openkeel-preview-repo-"));
    addComputeNode(path.join(repo, "stacks/Pulumi.prod-medium.yaml"));
    git(repo, "commit", "-q", "-am", "prod-medium: one more compute node");
    const policy = path.join(repo, "policy-results.json");
    fs.writeFileSync(policy, JSON.stringify({ stacks: { "prod-large": { violations: [{ policy: "p", level: "advisory", resource: "r", message: "m" }] } } }));
    first = previewCli(repo, ["--base", "HEAD~1", "--out", ".preview", "--policy", policy]);
    report = JSON.parse(fs.readFileSync(path.join(repo, ".preview/report.json"), "utf8"));

    // What changed, independently of the preview: the two Plans rendered and compared byte by byte,
    // and the two render CLIs' outputs for the files outside objects/, values/ and index.yaml.
    const files = (dir: string) => new Map(renderPlan(planStack(readStack("prod-medium", dir, STACK_DECLARATIONS)).plan!).map((f) => [f.path, f.content]));
    const before = files(STACKS_DIR);
    const after = files(path.join(repo, "stacks"));
    const differs = (p: string) => before.has(p) && before.get(p) !== after.get(p);
    // a warning is its code and the key path it is about; its text may change (review/preview-warnings.ts)
    const warnings = (dir: string) =>
      new Map(planStack(readStack("prod-medium", dir, STACK_DECLARATIONS)).plan!.warnings.map((w) => [`${w.code} ${String(w.path)}`, w.message]));
    const [baseWarnings, headWarnings] = [warnings(STACKS_DIR), warnings(path.join(repo, "stacks"))];
    const out = tmp("openkeel-preview-head-");
    expect((await capture(renderCommand, ["--out", out, "--stack", "prod-medium", "--stacks-dir", path.join(repo, "stacks")])).code).toBe(0);
    const headTree = readTree(path.join(out, "prod-medium"));
    const baseTree = readTree(path.join(REPO, "rendered", "prod-medium"));
    // files outside objects/, values/ and index.yaml whose content (not only their comments) differs;
    // placement.json and placement.md are shown as the placement delta
    const outside = (p: string) => !["index.yaml", "placement.json", "placement.md"].includes(p) && !p.startsWith("objects/") && !p.startsWith("values/");
    const docs = (t: string | undefined) => (t === undefined ? undefined : parseAllDocuments(t).map((d) => d.toJS()));
    const differsInContent = (p: string) =>
      p.endsWith(".yaml") ? !isDeepStrictEqual(docs(baseTree.get(p)), docs(headTree.get(p))) : baseTree.get(p) !== headTree.get(p);
    // index.yaml beyond what other sections show (nodes as Node objects, phases as units, warnings,
    // the node-configuration files as those files)
    const stackFields = (t: Tree) => {
      // feasibility: what the removal guard reads, not a setting of the stack
      const { stack: _s, nodes: _n, phases: _p, warnings: _w, nodeConfig: _c, feasibility: _f, ...rest } = parse(t.get("index.yaml")!);
      return rest;
    };
    expected = {
      added: [...after.keys()].filter((p) => !before.has(p) && p.startsWith("objects/")),
      changedObjects: [...after.keys()].filter((p) => p.startsWith("objects/") && differs(p)),
      values: [...after.keys()].filter((p) => p.startsWith("values/") && (differs(p) || !before.has(p))).map((p) => p.slice(7, -5)),
      warnings: [...headWarnings.keys()].filter((k) => !baseWarnings.has(k)),
      resolved: [...baseWarnings.keys()].filter((k) => !headWarnings.has(k)),
      // ovs-two-stacks and machine-facts-missing name the nodes they are about: with one more node their messages change, the warnings stay
      changed: [...headWarnings].filter(([k, m]) => baseWarnings.has(k) && baseWarnings.get(k) !== m).map(([k, m]) => `${k}: ${baseWarnings.get(k)} → ${m}`),
      other: [...new Set([...baseTree.keys(), ...headTree.keys()])].filter((p) => outside(p) && differsInContent(p)).sort(),
      commentOnly: [...baseTree.keys()].filter((p) => outside(p) && headTree.has(p) && baseTree.get(p) !== headTree.get(p) && !differsInContent(p)),
      stackFields: !isDeepStrictEqual(stackFields(baseTree), stackFields(headTree)),
    };
  });

  it("exits 0 and writes a report per stack, the combined report, the comment and the data", () => {
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(fs.readdirSync(path.join(repo, ".preview")).sort()).toEqual(
      ["comment.md", "lab.md", "prod-large.md", "prod-medium.md", "prod-small.md", "report.json", "report.md"].sort(),
    );
    expect(first.stdout).toMatch(
      new RegExp(
        `^prod-medium: create 1, update \\d+, replace 0, delete 0, steps on 1 node\\(s\\), 0 error\\(s\\), ${expected.warnings.length + expected.changed.length} warning\\(s\\)$`,
        "m",
      ),
    );
    expect(first.stdout).toMatch(/^preview of 4 stack\(s\) against HEAD~1 \([0-9a-f]{12}\) → \.preview\/report\.md$/m);
  });

  it("lists exactly the Node patch of the new node, the values that changed, and nothing else", () => {
    expect(expected.added).toEqual(["objects/01-node-roles/node-roles/node-cmp-04.yaml"]);
    const pm = report.stacks.find((s) => s.stack === "prod-medium")!;
    expect(pm.status).toBe("changed");
    expect(pm.objects.added.map(({ apiVersion, kind, name, file }) => ({ apiVersion, kind, name, file }))).toEqual([
      { apiVersion: "v1", kind: "Node", name: "cmp-04", file: "objects/01-node-roles/node-roles/node-cmp-04.yaml" },
    ]);
    expect((pm.objects.added[0] as any).body.metadata.labels).toMatchObject({
      "node-restriction.kubernetes.io/openkeel-compute": "",
      "node-restriction.kubernetes.io/openkeel-storage": "",
    });
    expect(pm.objects.removed).toEqual([]);
    expect(pm.objects.changed.map((c) => c.ref.file)).toEqual(expected.changedObjects);
    expect(pm.values.map((v) => v.unit)).toEqual(expected.values);
    for (const v of pm.values) expect(v.op === "add" || v.changes.length > 0).toBe(true);
    expect(pm.units).toEqual([]);
    expect(pm.settings.length > 0).toBe(expected.stackFields);
    expect(pm.warnings.added.map((w) => `${w.code} ${w.path}`)).toEqual(expected.warnings);
    expect(pm.warnings.resolved.map((w) => `${w.code} ${w.path}`)).toEqual(expected.resolved);
    expect(pm.warnings.changed.map((c) => `${c.after.code} ${c.after.path}: ${c.before.message} → ${c.after.message}`)).toEqual(expected.changed);
    expect([...expected.changed].sort()).toEqual([
      expect.stringMatching(/^machine-facts-missing openkeel:nodes: 9 node\(s\) .* → 10 node\(s\) .*cmp-04/),
      expect.stringMatching(/^ovs-two-stacks openkeel:nodes: 5 node\(s\) .* → 6 node\(s\) .*cmp-04/),
    ]);
    expect(pm.other.map((f) => f.file)).toEqual(expected.other);
    expect(pm.policy).toBeUndefined();
    for (const s of report.stacks.filter((s) => s.stack !== "prod-medium")) expect(s.status, s.stack).toBe("unchanged");

    const md = fs.readFileSync(path.join(repo, ".preview/prod-medium.md"), "utf8");
    expect(md.startsWith(`${REPORT_MARKER}\n## prod-medium — talos-production/medium\n`)).toBe(true);
    expect(md).toContain("- new Node `cmp-04` (`v1`, applied as a NodePatch) — `objects/01-node-roles/node-roles/node-cmp-04.yaml`");
    expect(md.match(/^- new \S+ `[^`]+` \(`[^`]+`[^)]*\) — /gm)).toHaveLength(1);
    expect(md).toContain("| create | Node cmp-04 (patch) | node-roles |  |");
    for (const unit of expected.values) expect(md).toContain(`\`${unit}\``);
    if (expected.values.length === 0) expect(md).not.toContain("### Helm values");
    if (expected.changedObjects.length === 0) expect(md).not.toContain("**Changed**");
    expect(md).not.toContain("| **delete** |");
    expect(md).not.toContain("| **replace** |");
    expect(md).not.toContain("### Units");
    expect(md).not.toContain("Errors");
    if (!expected.stackFields) expect(md).not.toContain("### Stack (index.yaml)");
  });

  it("is compact: the placement delta instead of the table, the new node's install step, no file whose only change is a comment", () => {
    const md = fs.readFileSync(path.join(repo, ".preview/prod-medium.md"), "utf8");
    expect(md).toContain("- `kubevirt/kubevirt/virt-handler`: +cmp-04");
    // the stack sets Swift's members (3): the new node may take one, and takes none (no data moves)
    expect(md).toMatch(/^- `openkeel-swift\/storage`: \+cmp-04$/m);
    expect(md).toMatch(
      /^- node `cmp-04`: added \(role group: compute\+storage; state: active; zone: —; taints: `node-role\.openkeel\.io\/compute:NoSchedule`\)$/m,
    );
    expect(md).not.toContain("●");
    expect(md).toContain("- **cmp-04** (new: compute, storage)");
    // issue 21: a merge deploys, behind the stack's environment; the recipe is linked
    expect(md).toMatch(
      /^ {2}1\. before approving the deployment \(the merge's `pulumi up`\), install: .*talosctl apply-config --insecure --nodes 10\.30\.1\.14 /m,
    );
    expect(md).toMatch(/^ {2}1\. .*the recipe: docs\/node-configuration\.md#applying-the-talos-configuration$/m);
    // the group patch and schematic name their nodes in a header comment: changed files, unchanged content
    expect(expected.commentOnly).toEqual(expect.arrayContaining(["talos/patches/worker-compute+storage.yaml", "talos/schematics/worker-compute+storage.yaml"]));
    for (const f of expected.commentOnly) expect(md).not.toContain(`\`${f}\``);
    // the issue measured 209 lines for this change, 143 of them the rewritten placement table
    // (plus the changed ovs-two-stacks and machine-facts-missing warnings: a line each, old → new)
    // (plus one for Longhorn's hook Jobs, two components since their priority classes differ)
    expect(md.split("\n").length).toBeLessThan(91 + 2 * (expected.warnings.length + expected.resolved.length) + expected.changed.length);
    expect(md).toMatch(/^- changed plan-check warning \*\*ovs-two-stacks\*\* \(`openkeel:nodes`\): 5 node\(s\) .* → 6 node\(s\) .*cmp-04$/m);
    expect(md).not.toContain("Plan-check warnings resolved");
  });

  it("the combined report summarises every stack and carries the policy results", () => {
    const md = fs.readFileSync(path.join(repo, ".preview/report.md"), "utf8");
    const pm = report.stacks.find((s) => s.stack === "prod-medium")!;
    const updates = pm.actions.filter((a) => a.action === "update").length;
    expect(updates).toBe(pm.objects.changed.length + pm.values.length);
    expect(md).toContain(`| prod-medium | 1 | ${updates} | 0 | 0 | 0 | ${expected.warnings.length + expected.changed.length} | not run |`);
    expect(md).toContain("| lab (no changes) | 0 | 0 | 0 | 0 | 0 | 0 | not run |");
    expect(md).toContain("| prod-large (no changes) | 0 | 0 | 0 | 0 | 0 | 0 | ⚠️ 1 violation(s) |");
    expect(md).toContain("| advisory | p | r | m |");
    expect(md).toContain('```json\n{\n  "stacks": {\n    "prod-large": {');
    expect(fs.readFileSync(path.join(repo, ".preview/comment.md"), "utf8")).toBe(md);
  });

  it("is byte-identical when run again", async () => {
    const before = readTree(path.join(repo, ".preview"));
    fs.writeFileSync(path.join(repo, ".preview", "keep.txt"), "not ours\n");
    const again = await preview(repo, ["--base", "HEAD~1", "--out", path.join(repo, ".preview"), "--policy", path.join(repo, "policy-results.json")]);
    expect(again.code).toBe(0);
    const after = readTree(path.join(repo, ".preview"));
    expect(after.get("keep.txt")).toBe("not ours\n");
    after.delete("keep.txt");
    expect(after).toEqual(before);
  });

  it("usage errors exit 2 before rendering: no --base, an unknown ref, a bad policy file", async () => {
    const a = await preview(repo, []);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/--base <git-ref> is required/);
    const b = await preview(repo, ["--base", "no-such-branch"]);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/--base no-such-branch: no such commit in .*\. Fix: fetch it first/);
    const bad = path.join(repo, "bad-policy.json");
    fs.writeFileSync(bad, JSON.stringify({ stacks: { lab: { violations: [{ message: "no policy name" }] } } }));
    const c = await preview(repo, ["--base", "HEAD~1", "--policy", bad]);
    expect(c.code).toBe(2);
    expect(c.stderr).toMatch(/bad-policy\.json: expected \{"stacks"/);
    expect(c.stderr).not.toMatch(/\bat .*\.ts:\d+/);
  });

  it("a side that does not render: the report says so (marked failed, no earlier preview left), exit 2 for a broken working tree, 1 for a broken base", async () => {
    const out = path.join(repo, ".preview-broken");
    // an earlier, successful preview in the same folder (of one stack: what it leaves is the point): it must not stand for this run
    expect((await preview(repo, ["--base", "HEAD~1", "--out", out, "--stack", "prod-medium"])).code).toBe(0);
    expect(fs.existsSync(path.join(out, "prod-medium.md"))).toBe(true);
    const broken = path.join(repo, "stacks/Pulumi.broken.yaml");
    fs.writeFileSync(broken, "config:\n  openkeel:environment: talos-production\n  openkeel:topology: small\n  openkeel:nodes: 3\n");
    const head = await preview(repo, ["--base", "HEAD~1", "--out", out]);
    expect(head.code).toBe(2);
    expect(head.stderr).toMatch(/the working tree does not render \(exit 2\):\n.*Pulumi\.broken\.yaml: openkeel:nodes: must be array/);
    expect(head.stderr).toContain("report written to");
    expect(fs.readdirSync(out).sort()).toEqual(["comment.md", "report.json", "report.md"]);
    const comment = fs.readFileSync(path.join(out, "comment.md"), "utf8");
    expect(comment.startsWith(`${REPORT_MARKER}\n## Render preview — ❌ failed\n`)).toBe(true);
    expect(comment).toContain("The working tree does not render (exit 2): nothing was compared, and no earlier preview applies to this change.");
    expect(comment).toMatch(/Pulumi\.broken\.yaml: openkeel:nodes: must be array/);
    expect(JSON.parse(fs.readFileSync(path.join(out, "report.json"), "utf8"))).toMatchObject({
      stacks: [],
      failed: { what: "The working tree does not render (exit 2)" },
    });

    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "broken stack");
    fs.rmSync(broken);
    const base = await preview(repo, ["--base", "HEAD", "--out", out]);
    expect(base.code).toBe(1);
    expect(base.stderr).toMatch(/the base HEAD \([0-9a-f]{12}\) does not render \(exit 2\)/);
    expect(fs.readFileSync(path.join(out, "report.md"), "utf8")).toMatch(/The base HEAD \([0-9a-f]{12}\) does not render \(exit 2\): nothing was compared/);
  });

  it("--stack renders only the stacks named, on both sides: a stack file beside them that cannot be read is never read", async () => {
    // on both sides: committed, and in the working tree
    fs.writeFileSync(path.join(repo, "stacks/Pulumi.trap.yaml"), "config: [this is not a stack file\n");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "a stack file no render can read");
    const out = path.join(repo, ".preview-one");
    const whole = await preview(repo, ["--base", "HEAD", "--out", out]);
    expect(whole.code).toBe(2);
    expect(whole.stderr).toMatch(/the working tree does not render \(exit 2\):\n.*Pulumi\.trap\.yaml/);

    const one = await preview(repo, ["--base", "HEAD", "--out", out, "--stack", "prod-medium"]);
    expect(one.stderr).toBe("");
    expect(one.code).toBe(0);
    expect(one.stdout).toBe(
      `prod-medium: no changes\npreview of 1 stack(s) against HEAD (${git(repo, "rev-parse", "HEAD").slice(0, 12)}) → ${out}/report.md\n`,
    );
    expect(fs.readFileSync(path.join(out, "report.md"), "utf8")).toContain("(`prod-medium` only, --stack: rendered offline from both)");

    // a stack the change adds is on one side only: the base renders nothing
    fs.copyFileSync(path.join(repo, "stacks/Pulumi.lab.yaml"), path.join(repo, "stacks/Pulumi.lab-two.yaml"));
    const added = await preview(repo, ["--base", "HEAD", "--out", out, "--stack", "lab-two"]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/^lab-two: added, create \d+, /m);
    // a name on neither side: a usage error before anything renders
    const none = await preview(repo, ["--base", "HEAD", "--out", out, "--stack", "nowhere"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe("--stack nowhere: no stack file on either side (stacks/Pulumi.<name>.yaml).\n");
  });
});
