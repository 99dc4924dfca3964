// The schemas validation reads where no offline folder is (tools/upstream-schemas.ts): every source
// pinned (commits, release tags), every API group the stacks render served by one of them, the
// CRD → strict JSON schema conversion the one ../shared/schemas used (its medik8s schemas come back
// unchanged from CRDs made of them), and the built folder complete or absent, never half-made.
// Nothing here reaches the network: the online path itself runs only where upstream answers.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { MEDIK8S_CRDS, MEDIK8S_NHC, MEDIK8S_NMO, MEDIK8S_SNR, TALOS_CONFIG_SCHEMA, TALOS_VERSION } from "../../platform/versions";
import { offlineSchemasDir } from "../../tools/kubeconform";
import { KUBE_OVN_GROUP } from "../../tools/kube-ovn-crds";
import {
  BUILT_GROUPS,
  CATALOG_GROUPS,
  crdJsonSchemas,
  ensureUpstreamSchemas,
  manifestCrdSchemas,
  UPSTREAM_FILES,
  upstreamSchemasDir,
} from "../../tools/upstream-schemas";
import { crdFor, KINDS } from "../../e2e/standins/crds";
import { readTree } from "../../cli/write";
import { REPO, SHIPPED_STACKS } from "../helpers/stacks";

const temps: string[] = [];
afterAll(() => temps.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-upstream-"));
  temps.push(d);
  return d;
};

/** The API groups of Kubernetes itself (with the core group, ""): their kinds' schemas are made from KUBERNETES_VERSION's OpenAPI. */
const BUILT_IN = [
  "admissionregistration.k8s.io",
  "apiextensions.k8s.io",
  "apiregistration.k8s.io",
  "apps",
  "authentication.k8s.io",
  "authorization.k8s.io",
  "autoscaling",
  "batch",
  "certificates.k8s.io",
  "coordination.k8s.io",
  "discovery.k8s.io",
  "events.k8s.io",
  "flowcontrol.apiserver.k8s.io",
  "networking.k8s.io",
  "node.k8s.io",
  "policy",
  "rbac.authorization.k8s.io",
  "resource.k8s.io",
  "scheduling.k8s.io",
  "storage.k8s.io",
  "storagemigration.k8s.io",
];

describe("upstream schema sources", () => {
  it("the medik8s CRDs at the release tags of the pinned operators, the Talos schema at the Talos tag", () => {
    const base = "https://raw.githubusercontent.com/medik8s";
    expect(MEDIK8S_CRDS.map((p) => p.url)).toEqual([
      `${base}/node-healthcheck-operator/${MEDIK8S_NHC.version}/config/crd/bases/remediation.medik8s.io_nodehealthchecks.yaml`,
      `${base}/self-node-remediation/${MEDIK8S_SNR.version}/config/crd/bases/self-node-remediation.medik8s.io_selfnoderemediationconfigs.yaml`,
      `${base}/self-node-remediation/${MEDIK8S_SNR.version}/config/crd/bases/self-node-remediation.medik8s.io_selfnoderemediations.yaml`,
      `${base}/self-node-remediation/${MEDIK8S_SNR.version}/config/crd/bases/self-node-remediation.medik8s.io_selfnoderemediationtemplates.yaml`,
      `${base}/node-maintenance-operator/${MEDIK8S_NMO.version}/config/crd/bases/nodemaintenance.medik8s.io_nodemaintenances.yaml`,
    ]);
    expect(TALOS_CONFIG_SCHEMA.url).toBe(`https://raw.githubusercontent.com/siderolabs/talos/${TALOS_VERSION}/pkg/machinery/config/schemas/config.schema.json`);
    for (const url of UPSTREAM_FILES) expect(url, url).toMatch(/\/v\d+\.\d+\.\d+\//);
    expect(BUILT_GROUPS).toEqual(["remediation.medik8s.io", "self-node-remediation.medik8s.io", "nodemaintenance.medik8s.io"]);
    // one folder per set of pins: another pin, another folder, never a stale one
    expect(path.basename(upstreamSchemasDir())).toMatch(/^[0-9a-f]{12}$/);
  });

  it("every API group the shipped stacks render is served upstream: the pinned catalog, or the folder built from CRDs", () => {
    const groups = new Set<string>();
    for (const stack of SHIPPED_STACKS) {
      for (const [file, text] of readTree(path.join(REPO, "rendered", stack))) {
        if (!file.startsWith("objects/")) continue;
        for (const doc of parseAllDocuments(text)) {
          const apiVersion = (doc.toJS() as { apiVersion?: string } | null)?.apiVersion ?? "";
          const group = apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
          if (group && !BUILT_IN.includes(group)) groups.add(group);
        }
      }
    }
    expect(groups.size).toBeGreaterThan(4);
    // Kube-OVN's: converted from the pinned module's CRDs by `npm run tools`, in every mode
    const served = new Set([...CATALOG_GROUPS, ...BUILT_GROUPS, KUBE_OVN_GROUP]);
    expect([...groups].filter((g) => !served.has(g)).sort(), "a rendered group no upstream location serves").toEqual([]);
    // the check can fail: a group the stacks do not render yet is not served
    expect(served.has("longhorn.io")).toBe(false);
  });
});

describe("CRD → strict JSON schema", () => {
  const crd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    spec: {
      group: "example.com",
      names: { kind: "Widget", plural: "widgets" },
      versions: [
        {
          name: "v1",
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                apiVersion: { type: "string", description: "the server's words" },
                metadata: { type: "object", properties: { name: { type: "string", maxLength: 10 } } },
                spec: {
                  type: "object",
                  properties: {
                    size: { "x-kubernetes-int-or-string": true },
                    note: { type: "string", nullable: true },
                    parts: { type: "array", items: { type: "object", properties: { name: { type: "string", enum: ["a", "b"] } } } },
                    free: { type: "object", "x-kubernetes-preserve-unknown-fields": true, properties: { known: { type: "string" } } },
                    labels: { type: "object", additionalProperties: { type: "string" } },
                  },
                  "x-kubernetes-validations": [{ rule: "has(self.size)", message: "size is required" }],
                },
                status: { type: "object" },
              },
            },
          },
        },
        { name: "v1alpha1", served: false },
      ],
    },
  };

  it("unknown fields rejected where the CRD lists its fields; nullable, int-or-string, kept-unknown fields and maps as Kubernetes means them", () => {
    const [file, ...more] = crdJsonSchemas(crd);
    expect(more).toEqual([]); // a version without a schema has nothing to check against
    expect(file.file).toBe("crds/example.com/widget_v1.json");
    const s = file.schema as any;
    expect(s.additionalProperties).toBe(false);
    expect(s.properties.apiVersion).toEqual({ type: "string", enum: ["example.com/v1"] });
    expect(s.properties.kind).toEqual({ type: "string", enum: ["Widget"] });
    // metadata is the API server's: labels and annotations pass whatever the CRD says
    expect(s.properties.metadata).toEqual({ type: "object" });
    const spec = s.properties.spec;
    expect(spec.additionalProperties).toBe(false);
    expect(spec["x-kubernetes-validations"]).toEqual([{ rule: "has(self.size)", message: "size is required" }]);
    expect(spec.properties.size.anyOf).toEqual([{ type: "integer" }, { type: "string" }]);
    expect(spec.properties.note).toEqual({ type: ["string", "null"] });
    expect(spec.properties.parts.items.additionalProperties).toBe(false);
    expect(spec.properties.parts.items.properties.name.enum).toEqual(["a", "b"]);
    expect(spec.properties.free.additionalProperties).toBeUndefined();
    expect(spec.properties.labels.additionalProperties).toEqual({ type: "string" });
    // an object that lists no fields says nothing about them
    expect(s.properties.status).toEqual({ type: "object" });
  });

  it("reads every CRD of a multi-document manifest, and refuses what is not a CRD", () => {
    const other = { ...crd, spec: { ...crd.spec, names: { kind: "Gadget", plural: "gadgets" } } };
    const text = [crd, { apiVersion: "v1", kind: "Namespace", metadata: { name: "x" } }, other].map((d) => stringify(d)).join("---\n");
    expect(manifestCrdSchemas(text).map((f) => f.file)).toEqual(["crds/example.com/widget_v1.json", "crds/example.com/gadget_v1.json"]);
    expect(() => crdJsonSchemas({ kind: "CustomResourceDefinition", spec: {} })).toThrow(/not a CustomResourceDefinition/);
  });

  it("gives back the medik8s schemas of the schema folder from CRDs made of them (the conversion ../shared/schemas used)", () => {
    // here ../shared/schemas (converted from the CRDs at the pinned tags); on GitHub the folder built from those CRDs
    const folder = offlineSchemasDir() ?? upstreamSchemasDir();
    const kinds = Object.values(KINDS.medik8s).flat();
    expect(kinds.map((k) => k.group).sort()).toEqual(expect.arrayContaining(BUILT_GROUPS));
    let files = 0;
    for (const k of kinds) {
      for (const f of crdJsonSchemas(crdFor(folder, k, "test"))) {
        expect(f.schema, f.file).toEqual(JSON.parse(fs.readFileSync(path.join(folder, f.file), "utf8")));
        files++;
      }
    }
    expect(files).toBe(5);
  });
});

describe("the built folder", () => {
  /** Upstream as a map: each medik8s URL serves a CRD of its group, the Talos URL a JSON schema. */
  const fakeUpstream = (calls: string[], broken?: string) => async (url: string) => {
    calls.push(url);
    if (url === broken) throw new Error(`${url}: ENOTFOUND raw.githubusercontent.com`);
    if (url === TALOS_CONFIG_SCHEMA.url) return JSON.stringify({ $id: "talos" });
    const [group, plural] = path.posix.basename(url, ".yaml").split("_");
    const kind = plural[0].toUpperCase() + plural.slice(1, -1);
    const schema = { type: "object", properties: { spec: { type: "object", properties: { x: { type: "string" } } } } };
    return stringify({ kind: "CustomResourceDefinition", spec: { group, names: { kind }, versions: [{ name: "v1", schema: { openAPIV3Schema: schema } }] } });
  };

  it("is laid out as ../shared/schemas (crds/, talos/<minor>/), records what each URL served, and is built once", async () => {
    const dir = path.join(tempDir(), "built");
    const calls: string[] = [];
    expect(await ensureUpstreamSchemas(dir, fakeUpstream(calls))).toEqual({ dir, built: true });
    expect(calls.sort()).toEqual([...UPSTREAM_FILES].sort());
    const files = [...readTree(dir).keys()];
    expect(files).toContain("crds/remediation.medik8s.io/nodehealthcheck_v1.json");
    expect(files).toContain("crds/self-node-remediation.medik8s.io/selfnoderemediationtemplate_v1.json");
    expect(files).toContain("talos/v1.13/config.schema.json");
    const sources = JSON.parse(fs.readFileSync(path.join(dir, "SOURCES.json"), "utf8"));
    expect(sources.map((s: { url: string }) => s.url)).toEqual(UPSTREAM_FILES);
    for (const s of sources) expect(s.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(await ensureUpstreamSchemas(dir, fakeUpstream(calls))).toEqual({ dir, built: false });
    expect(calls).toHaveLength(UPSTREAM_FILES.length);
  });

  it("a file that cannot be fetched, or one without a CRD: an error naming its URL, and no folder", async () => {
    const parent = tempDir();
    const dir = path.join(parent, "built");
    await expect(ensureUpstreamSchemas(dir, fakeUpstream([], MEDIK8S_CRDS[1].url))).rejects.toThrow(
      `${MEDIK8S_CRDS[1].url}: ENOTFOUND raw.githubusercontent.com`,
    );
    const html = async (url: string) => (url === TALOS_CONFIG_SCHEMA.url ? "{}" : "<html>moved</html>");
    await expect(ensureUpstreamSchemas(dir, html)).rejects.toThrow(`${MEDIK8S_CRDS[0].url}: no CustomResourceDefinition in it`);
    expect(fs.readdirSync(parent)).toEqual([]);
  });
});
