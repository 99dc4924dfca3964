// kubeconform -strict over every rendered object: Kubernetes' kinds against the schemas of
// KUBERNETES_VERSION (made from its OpenAPI by `npm run tools`), the CRDs against the offline folder
// when there is one ($OPENKEEL_SCHEMAS, else ../shared/schemas beside the checkout), else upstream at
// the pinned commits (a GitHub runner has no ../shared): the shipped stacks pass; a
// wrong, misplaced or mistyped field and a kind without a schema fail with kubeconform's message
// and the file; files that are not Kubernetes objects are never shown to it. One run goes through
// the real CLI; the others call the command in-process (tools/validate-command.ts), kubeconform a
// child process all the same. Where the schemas come from when none is named is decided by
// pickSchemas, tested here with folders made for the purpose.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { CRDS_CATALOG_COMMIT, KUBERNETES_VERSION } from "../../../platform/versions";
import {
  downloadFailures,
  failedResources,
  kubeconformArgs,
  offlineSchemasDir,
  schemaLocations,
  schemasFix,
  UPSTREAM_PROBE_URL,
  upstreamUnreachable,
  type Finding,
} from "../../../tools/kubeconform";
import { kubeOvnSchemasDir } from "../../../tools/kube-ovn-crds";
import { kubernetesSchemasDir } from "../../../tools/kubernetes-schemas";
import { UPSTREAM_CRD_LOCATION, UPSTREAM_DESCRIPTION, upstreamSchemasDir } from "../../../tools/upstream-schemas";
import { capture } from "../../../cli/cli";
import { pickSchemas, validateCommand } from "../../../tools/validate-command";
import { readTree } from "../../../cli/write";
import { tsCommand } from "../../../cli/ts-command";
import { requireTool } from "../../../tools/tools";
import { REPO, SHIPPED_STACKS } from "../../helpers/stacks";

/** The offline folder this checkout has, if any; without one the fixtures are validated upstream. */
const OFFLINE = offlineSchemasDir();
const SOURCE = OFFLINE ? ["--schemas", OFFLINE] : [];

/** The real CLI: once, for the process' own exit code and streams. */
function validateCli(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const { OPENKEEL_SCHEMAS: _drop, ...rest } = process.env;
  const r = spawnSync(...tsCommand(path.join(REPO, "scripts/validate.ts"), argv), { cwd: REPO, encoding: "utf8", env: { ...rest, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same command in-process (tools/validate-command.ts), with the same environment. */
function validate(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const { OPENKEEL_SCHEMAS: _drop, ...rest } = process.env;
  return capture((a, io) => validateCommand(a, io, { ...rest, ...env }), argv);
}

const temps: string[] = [];
afterAll(() => temps.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** A rendered/ folder with one stack: files relative to rendered/<stack>/, objects as data. */
function renderedFixture(stack: string, files: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-validate-"));
  temps.push(dir);
  for (const [rel, body] of Object.entries(files)) {
    const file = path.join(dir, stack, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, typeof body === "string" ? body : `# fixture\n${stringify(body)}`);
  }
  return dir;
}

const node = (name: string, metadata: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name, labels: { "node-role.openkeel.io/compute": "" }, ...metadata },
});

beforeAll(() => {
  // the globalSetup (test/setup/tools.ts) builds it where no offline folder is, and says why when it cannot
  if (!OFFLINE && !fs.existsSync(upstreamSchemasDir())) {
    throw new Error(`no offline schema folder, and ${upstreamSchemasDir()} was not built: see the [schemas] line of the test run`);
  }
});

/** An offline folder with one hand-written strict CRD schema (Widget of example.io/v1): what a folder named on purpose is given. */
function schemaFolderFixture(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-schemas-"));
  temps.push(dir);
  const crds = path.join(dir, "crds", "example.io");
  fs.mkdirSync(crds, { recursive: true });
  const str = { type: "string" };
  const spec = { type: "object", properties: { size: { type: "integer" } }, additionalProperties: false };
  fs.writeFileSync(
    path.join(crds, "widget_v1.json"),
    JSON.stringify({ type: "object", properties: { apiVersion: str, kind: str, metadata: { type: "object" }, spec }, additionalProperties: false }),
  );
  return dir;
}

const widget = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "example.io/v1",
  kind: "Widget",
  metadata: { name },
  spec: { size: 1 },
  ...extra,
});

/** The line validate starts with: what it judges by. */
const header = (schemas: string) =>
  `-strict, Kubernetes ${KUBERNETES_VERSION} (from its OpenAPI: ${path.relative(process.cwd(), kubernetesSchemasDir())}), CRD schemas: ${schemas}`;

describe("npm run validate: the shipped stacks", () => {
  it("every object of all four stacks is valid; with no flag, against ../shared/schemas when it is beside the checkout, else upstream", () => {
    const env = process.env.OPENKEEL_SCHEMAS ? { OPENKEEL_SCHEMAS: process.env.OPENKEEL_SCHEMAS } : {};
    const r = validateCli([], env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const picked = pickSchemas(undefined, env);
    expect(picked?.dir).toBe(OFFLINE);
    expect(r.stdout).toContain(header(picked ? `${picked.dir} (${picked.from})` : `upstream: ${UPSTREAM_DESCRIPTION}`));
    expect(SHIPPED_STACKS).toHaveLength(4);
    let total = 0;
    for (const stack of SHIPPED_STACKS) {
      const objects = [...readTree(path.join(REPO, "rendered", stack)).keys()].filter((f) => f.startsWith("objects/")).length;
      expect(objects).toBeGreaterThan(0);
      total += objects;
      expect(r.stdout).toMatch(new RegExp(`^${stack}: ${objects} objects valid$`, "m"));
    }
    expect(r.stdout).toMatch(new RegExp(`^validated 4 stack\\(s\\), ${total} object\\(s\\), 0 failed$`, "m"));
  });
});

describe("npm run validate: where the schemas come from", () => {
  /** Stack a: one valid Widget; stack b: one Widget with a misspelled field. */
  const twoStacks = () => {
    const dir = renderedFixture("a", { "objects/04-platform-config/w/widget-a.yaml": widget("a") });
    fs.mkdirSync(path.join(dir, "b", "objects"), { recursive: true });
    fs.writeFileSync(path.join(dir, "b", "objects", "widget-b.yaml"), stringify(widget("b", { spek: {} })));
    return dir;
  };

  it("takes the CRD schema folder from $OPENKEEL_SCHEMAS (its own schemas are what kubeconform reads), and --stack narrows to one stack", async () => {
    const folder = schemaFolderFixture();
    const rendered = twoStacks();
    const a = await validate(["--rendered", rendered, "--stack", "a"], { OPENKEEL_SCHEMAS: folder });
    expect(a.stderr).toBe("");
    expect(a.code).toBe(0);
    expect(a.stdout).toContain(header(`${folder} ($OPENKEEL_SCHEMAS)`));
    expect(a.stdout).toMatch(/^validated 1 stack\(s\), 1 object\(s\), 0 failed$/m);
    expect(a.stdout).not.toMatch(/^b:/m);
    const b = await validate(["--rendered", rendered, "--stack", "b"], { OPENKEEL_SCHEMAS: folder });
    expect(b.code).toBe(1);
    expect(b.stderr).toContain("widget-b.yaml: Widget b (example.io/v1): invalid: at /: additional properties 'spek' not allowed");
  });

  it("finds ../shared/schemas beside the checkout by itself; a flag or $OPENKEEL_SCHEMAS comes first; without any, upstream", async () => {
    const beside = schemaFolderFixture();
    const other = schemaFolderFixture();
    expect(pickSchemas(undefined, {}, beside)).toEqual({ dir: beside, from: "../shared/schemas, beside this checkout" });
    expect(pickSchemas(undefined, { OPENKEEL_SCHEMAS: other }, beside)).toEqual({ dir: other, from: "$OPENKEEL_SCHEMAS" });
    expect(pickSchemas(other, { OPENKEEL_SCHEMAS: beside }, beside)).toEqual({ dir: other, from: "--schemas" });
    expect(pickSchemas(undefined, {}, path.join(beside, "nonexistent"))).toBeUndefined();
    // the command itself, with nothing named: the folder beside it, whose schemas are the ones used
    const r = await capture((a, io) => validateCommand(a, io, {}, beside), ["--rendered", twoStacks()]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`CRD schemas: ${beside} (../shared/schemas, beside this checkout)`);
    expect(r.stdout).toMatch(/^a: 1 objects valid$/m);
    expect(r.stderr).toContain("widget-b.yaml: Widget b (example.io/v1): invalid: at /: additional properties 'spek' not allowed");
  });

  it("judges Kubernetes' own kinds by KUBERNETES_VERSION's schemas, never the CRD folder's: a field Kubernetes 1.34 added passes, a misspelled one fails", async () => {
    const pod = (spec: Record<string, unknown>) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", namespace: "openstack" },
      spec: { containers: [{ name: "c", image: "registry.example/c:1.0.0" }], ...spec },
    });
    const dir = renderedFixture("s", {
      "objects/03-platform/p/pod-new.yaml": pod({ hostnameOverride: "p.example" }),
      "objects/03-platform/p/pod-typo.yaml": pod({ hostnameOverrid: "p.example" }),
    });
    // the fixture folder has crds/ only: the Pod's schema is not read from it
    const r = await validate(["--rendered", dir], { OPENKEEL_SCHEMAS: schemaFolderFixture() });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^s: 2 objects: 1 valid, 1 invalid, 0 errors$/m);
    expect(r.stderr).toContain("pod-typo.yaml: Pod p (v1): invalid: at /spec: additional properties 'hostnameOverrid' not allowed");
    expect(r.stderr).not.toContain("pod-new.yaml");
  });

  it("a folder beside the checkout that is not a schema folder: exit 2, never a silent switch to upstream", () => {
    const beside = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-schemas-"));
    temps.push(beside);
    expect(() => pickSchemas(undefined, {}, beside)).toThrow(/no crds\/ .*\(found beside this checkout\)\. Fix: /);
  });
});

describe("npm run validate: objects that must fail", () => {
  it("a wrong field name: exit 1 with kubeconform's message and the file", async () => {
    const dir = renderedFixture("s", { "objects/01-node-roles/node-roles/node-a.yaml": node("a", { labelz: { x: "y" } }) });
    const r = await validate(["--rendered", dir, ...SOURCE]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^s: 1 objects: 0 valid, 1 invalid, 0 errors$/m);
    expect(r.stderr).toContain(
      `${dir}/s/objects/01-node-roles/node-roles/node-a.yaml: Node a (v1): invalid: at /metadata: additional properties 'labelz' not allowed`,
    );
  });

  it("a field in the wrong place and a field of the wrong type", async () => {
    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "api", namespace: "openstack", replicas: 2 },
      spec: {
        selector: { matchLabels: { app: "api" } },
        template: {
          metadata: { labels: { app: "api" } },
          spec: { containers: [{ name: "api", image: "registry.example/api:1.0.0", ports: [{ containerPort: "http" }] }] },
        },
      },
    };
    const dir = renderedFixture("s", { "objects/03-platform/api/deployment-openstack-api.yaml": deployment, "objects/01-node-roles/n/node-b.yaml": node("b") });
    const r = await validate(["--rendered", dir, ...SOURCE]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^s: 2 objects: 1 valid, 1 invalid, 0 errors$/m);
    const file = `${dir}/s/objects/03-platform/api/deployment-openstack-api.yaml: Deployment api (apps/v1): invalid:`;
    expect(r.stderr).toContain(`${file} at /metadata: additional properties 'replicas' not allowed`);
    expect(r.stderr).toMatch(
      new RegExp(`${file.replace(/[.()/]/g, "\\$&")} at /spec/template/spec/containers/0/ports/0/containerPort: got string, want integer`),
    );
    expect(r.stderr).not.toContain("node-b.yaml");
  });

  it("a patch of an object another writes (openkeel.io/apply-as: patch) may lack what the schema requires; a field of the wrong type still fails it", async () => {
    const csv = (annotations: Record<string, string>, extra: Record<string, unknown> = {}) => ({
      apiVersion: "operators.coreos.com/v1alpha1",
      kind: "ClusterServiceVersion",
      metadata: { name: "self-node-remediation.v0.13.0", namespace: "medik8s", annotations },
      ...extra,
    });
    const patch = { "openkeel.io/apply-as": "patch", "pulumi.com/waitFor": "jsonpath={.status.phase}=Succeeded" };
    const dir = renderedFixture("s", {
      "objects/04-platform-config/w/csv-patch.yaml": csv(patch),
      "objects/04-platform-config/w/csv-whole.yaml": csv({}),
      "objects/04-platform-config/w/csv-typo.yaml": csv(patch, { spec: { displayName: 3 } }),
    });
    const r = await validate(["--rendered", dir, ...SOURCE]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^s: 3 objects: 1 valid, 2 invalid, 0 errors$/m);
    // the same object as a whole object misses its spec; a patch with an unknown field fails on it
    expect(r.stderr).toContain(
      `${dir}/s/objects/04-platform-config/w/csv-whole.yaml: ClusterServiceVersion self-node-remediation.v0.13.0 (operators.coreos.com/v1alpha1): invalid: at /: missing property 'spec'`,
    );
    expect(r.stderr).toMatch(/csv-typo\.yaml: .* at \/spec\/displayName: got number, want string/);
    expect(r.stderr).not.toContain("csv-patch.yaml");
    // the bench's kubeconform run (one report, no -verbose) is judged the same way
    const k = spawnSync(requireTool("kubeconform"), kubeconformArgs(path.join(dir, "s", "objects"), OFFLINE), { encoding: "utf8" });
    expect(
      failedResources(k.stdout)
        .map((res) => path.basename(res.filename))
        .sort(),
    ).toEqual(["csv-typo.yaml", "csv-whole.yaml"]);
  });

  it("CRDs are checked against their schemas; a kind without a schema is an error, never skipped", async () => {
    const dir = renderedFixture("s", {
      "objects/02-crds-operators/snap/volumesnapshotclass-longhorn.yaml": {
        apiVersion: "snapshot.storage.k8s.io/v1",
        kind: "VolumeSnapshotClass",
        metadata: { name: "longhorn" },
        driver: "driver.longhorn.io",
        deletionPolicy: "Delete",
      },
      "objects/04-platform-config/nhc/nodehealthcheck-compute.yaml": {
        apiVersion: "remediation.medik8s.io/v1alpha1",
        kind: "NodeHealthCheck",
        metadata: { name: "compute" },
        spec: { minHealthy: "51%", selector: { matchExpressions: [{ key: "node-role.openkeel.io/compute", operator: "Exists" }] } },
      },
      "objects/04-platform-config/nhc/nodehealthcheck-bad.yaml": {
        apiVersion: "remediation.medik8s.io/v1alpha1",
        kind: "NodeHealthCheck",
        metadata: { name: "bad" },
        spec: { minHealthy: "51%", selectr: { matchLabels: { a: "b" } } },
      },
      "objects/04-platform-config/x/widget-w.yaml": { apiVersion: "widgets.example.com/v1", kind: "Widget", metadata: { name: "w" } },
    });
    const r = await validate(["--rendered", dir, ...SOURCE]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^s: 4 objects: 2 valid, 1 invalid, 1 errors$/m);
    expect(r.stderr).toContain(
      "nodehealthcheck-bad.yaml: NodeHealthCheck bad (remediation.medik8s.io/v1alpha1): invalid: at /spec: additional properties 'selectr' not allowed",
    );
    expect(r.stderr).toContain("widget-w.yaml: Widget w (widgets.example.com/v1): error: could not find schema for Widget");
  });

  it("validates only objects/: values, index, node configuration and a kind config are not Kubernetes objects", async () => {
    const dir = renderedFixture("s", {
      "objects/01-node-roles/node-roles/node-a.yaml": node("a"),
      "index.yaml": { stack: "s", phases: [] },
      "values/nova.yaml": { replicas: 2, conf: { nova: { DEFAULT: { debug: false } } } },
      "talos/controlplane.yaml": { machine: { kubelet: { extraArgs: { "rotate-server-certificates": "true" } } } },
      "kind-config.yaml": { kind: "Cluster", apiVersion: "kind.x-k8s.io/v1alpha4", nodes: [{ role: "control-plane" }] },
      "placement.md": "# placement\n",
    });
    const r = await validate(["--rendered", dir, ...SOURCE]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^s: 1 objects valid$/m);
  });
});

describe("npm run validate: usage", () => {
  it("a schema folder that does not exist: exit 2, naming the flag or variable", async () => {
    const a = await validate(["--schemas", "/nonexistent/schemas"]);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/^\/nonexistent\/schemas: no such folder \(from --schemas\)\. Fix: /m);
    const b = await validate([], { OPENKEEL_SCHEMAS: "/nonexistent/schemas" });
    expect(b.code).toBe(2);
    expect(b.stderr).toContain("(from $OPENKEEL_SCHEMAS)");
    expect(b.stderr).not.toMatch(/\bat .*\.ts:\d+/);
  });

  it("a stack that is not rendered: exit 2 with the fix", async () => {
    const r = await validate(["--stack", "nope", ...SOURCE]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/rendered\/nope\/: not rendered\. Fix: run `npm run render` first\./);
  });

  it("always -strict, never -ignore-missing-schemas; Kubernetes' kinds from KUBERNETES_VERSION's OpenAPI; CRDs upstream at a pinned commit without a folder", () => {
    const offline = kubeconformArgs("rendered/x/objects", "/s");
    expect(offline).toContain("-strict");
    expect(offline.join(" ")).toContain(`-kubernetes-version ${KUBERNETES_VERSION}`);
    expect(offline).not.toContain("-ignore-missing-schemas");
    const kinds = `${kubernetesSchemasDir()}/kubernetes/{{.NormalizedKubernetesVersion}}-standalone{{.StrictSuffix}}/{{.ResourceKind}}{{.KindSuffix}}.json`;
    expect(schemaLocations("/s")).toEqual([
      kinds,
      "/s/crds/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json",
      // Kube-OVN's kubeovn.io, converted from the pinned module's CRD file by `npm run tools`
      `${kubeOvnSchemasDir()}/crds/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json`,
    ]);
    // the folder of what the catalog lacks before it (a kind it has not is looked up in the next)
    expect(schemaLocations(undefined)).toEqual([
      kinds,
      `${upstreamSchemasDir()}/crds/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json`,
      `${kubeOvnSchemasDir()}/crds/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json`,
      UPSTREAM_CRD_LOCATION,
    ]);
    // kubeconform's own `default` (yannh/kubernetes-json-schema at master): never given, nor a branch of the catalog
    expect(schemaLocations(undefined)).not.toContain("default");
    expect(UPSTREAM_CRD_LOCATION).toBe(
      `https://raw.githubusercontent.com/datreeio/CRDs-catalog/${CRDS_CATALOG_COMMIT}/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json`,
    );
    expect(CRDS_CATALOG_COMMIT).toMatch(/^[0-9a-f]{40}$/);
    expect(kubeconformArgs("t", undefined)).not.toContain("-ignore-missing-schemas");
  });
});

describe("npm run validate: schemas that cannot be had", () => {
  it("upstream that does not answer is found out before kubeconform runs, with the reason", async () => {
    // port 1 on the loopback: refused at once, on any machine
    const why = await upstreamUnreachable("https://127.0.0.1:1/namespace-v1.json", 2000, {});
    expect(why).toMatch(/^127\.0\.0\.1:1: ECONNREFUSED/);
    // behind a proxy Node's https would not go the way kubeconform goes: not asked
    expect(await upstreamUnreachable("https://127.0.0.1:1/namespace-v1.json", 2000, { HTTPS_PROXY: "http://proxy:3128" })).toBeUndefined();
    expect(UPSTREAM_PROBE_URL).toBe(`https://raw.githubusercontent.com/datreeio/CRDs-catalog/${CRDS_CATALOG_COMMIT}/kubevirt.io/kubevirt_v1.json`);
  });

  it("the fix names --schemas and $OPENKEEL_SCHEMAS, and the folder beside the checkout when there is one", () => {
    expect(schemasFix(undefined)).toBe("pass --schemas <dir> or set OPENKEEL_SCHEMAS=<dir>, an offline schema folder laid out as ../shared/schemas");
    expect(schemasFix("../shared/schemas")).toMatch(/\(this checkout has one: --schemas \.\.\/shared\/schemas\)$/);
  });

  it("download failures are told apart from invalid objects (one line for all of them, not one per object)", () => {
    const f = (status: Finding["status"], message: string): Finding => ({
      file: "f.yaml",
      kind: "Node",
      name: "n",
      apiVersion: "v1",
      status,
      messages: [message],
    });
    const unfetched = f(
      "error",
      "failed downloading schema at https://raw.githubusercontent.com/x.json: dial tcp: lookup raw.githubusercontent.com: no such host",
    );
    const invalid = f("invalid", "at /metadata: additional properties 'x' not allowed");
    const missing = f("error", "could not find schema for Foo");
    expect(downloadFailures([unfetched, invalid, missing])).toEqual([unfetched]);
  });
});
