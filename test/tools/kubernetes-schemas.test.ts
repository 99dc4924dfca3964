// The conversion of Kubernetes' OpenAPI into kubeconform's strict schemas (tools/kubernetes-schemas.ts),
// rule by rule on a small OpenAPI document, and the built folder: complete or absent, built once,
// a loud error when the module cannot be had. The conversion of a whole release, held to
// ../shared/schemas: test/integration/tools/kubernetes-schemas.test.ts.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { KUBERNETES_VERSION } from "../../platform/versions";
import {
  ensureKubernetesSchemas,
  KUBERNETES_MODULE,
  KUBERNETES_OPENAPI_FILE,
  kubernetesJsonSchemas,
  kubernetesSchemasDir,
  kubernetesSchemasRoot,
  pythonJson,
  requireKubernetesSchemas,
  schemaFileName,
  strictFolder,
} from "../../tools/kubernetes-schemas";
import { ToolError } from "../../tools/tools";

const temps: string[] = [];
afterAll(() => temps.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-k8s-schemas-"));
  temps.push(d);
  return d;
};

const ref = (name: string, extra: Record<string, unknown> = {}) => ({ $ref: `#/definitions/${name}`, ...extra });
const META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const PROPS = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";

/** A Widget kind of group example.io/v1 and what it refers to, shaped as Kubernetes' swagger.json. */
function openapi(): Record<string, unknown> {
  return {
    swagger: "2.0",
    definitions: {
      [META]: {
        description: "meta",
        properties: { name: { type: "string" }, labels: { type: "object", additionalProperties: { type: "string" } } },
        type: "object",
      },
      [INT_OR_STRING]: { description: "int or string", format: "int-or-string", type: "string" },
      [QUANTITY]: { description: "quantity", type: "string" },
      [PROPS]: { description: "recursive", properties: { items: ref(PROPS), type: { type: "string" } }, type: "object" },
      "io.k8s.api.example.v1.WidgetSpec": {
        description: "spec",
        properties: {
          size: ref(QUANTITY, { description: "dropped with the $ref" }),
          port: ref(INT_OR_STRING),
          selector: ref(META),
          schema: ref(PROPS),
          tags: { items: { type: "string" }, type: "array" },
          "caf\u00e9": { type: "string" },
        },
        required: ["selector"],
        type: "object",
      },
      "io.k8s.api.example.v1.Widget": {
        description: "a widget",
        properties: { apiVersion: { type: "string" }, kind: { type: "string" }, metadata: ref(META), spec: ref("io.k8s.api.example.v1.WidgetSpec") },
        required: ["spec"],
        type: "object",
        "x-kubernetes-group-version-kind": [{ group: "example.io", kind: "Widget", version: "v1" }],
      },
      "io.k8s.api.example.v1.WidgetList": {
        properties: {
          apiVersion: { type: "string" },
          items: { items: ref("io.k8s.api.example.v1.Widget"), type: "array" },
          kind: { type: "string" },
          metadata: ref(META),
        },
        type: "object",
        "x-kubernetes-group-version-kind": [{ group: "example.io", kind: "WidgetList", version: "v1" }],
      },
      "io.k8s.api.core.v1.Thing": {
        properties: { apiVersion: { type: "string" }, kind: { type: "string" }, metadata: ref(META) },
        "x-kubernetes-group-version-kind": [{ group: "", kind: "Thing", version: "v1" }],
      },
      "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions": {
        properties: { apiVersion: { type: "string" }, kind: { type: "string" } },
        "x-kubernetes-group-version-kind": [{ group: "", kind: "DeleteOptions", version: "v1" }],
      },
    },
  };
}

const widget = () => JSON.parse(kubernetesJsonSchemas(openapi()).get("widget-example-v1.json")!) as Record<string, any>;

describe("kubernetesJsonSchemas: openapi2jsonschema --expanded --kubernetes --stand-alone --strict", () => {
  it("writes one file per kind an object can be, named as kubeconform looks it up: no *List, no kind without metadata", () => {
    expect([...kubernetesJsonSchemas(openapi()).keys()]).toEqual(["thing-v1.json", "widget-example-v1.json"]);
    expect(schemaFileName("io.k8s.api.apps.v1.Deployment")).toBe("deployment-apps-v1.json");
    expect(schemaFileName("io.k8s.api.core.v1.ConfigMap")).toBe("configmap-v1.json");
    expect(schemaFileName("io.k8s.apimachinery.pkg.apis.meta.v1.Status")).toBe("status-meta-v1.json");
  });

  it("accepts only the group-version-kind's apiVersion and kind, and no field the kind does not list, at any depth", () => {
    const w = widget();
    expect(w.properties.apiVersion.enum).toEqual(["example.io/v1"]);
    expect(w.properties.kind.enum).toEqual(["Widget"]);
    expect(w.additionalProperties).toBe(false);
    expect(w.properties.spec.additionalProperties).toBe(false);
    expect(w.properties.spec.properties.selector.additionalProperties).toBe(false);
    expect(JSON.parse(kubernetesJsonSchemas(openapi()).get("thing-v1.json")!).properties.apiVersion.enum).toEqual(["v1"]);
  });

  it("inlines every $ref (its sibling keys go), and a recursive definition as any object", () => {
    const w = widget();
    expect(JSON.stringify(w)).not.toContain("$ref");
    expect(w.properties.metadata.description).toBe("meta");
    expect(w.properties.spec.properties.schema).toEqual({ type: ["object", "null"] });
  });

  it("admits null for every field the owner does not require; the kind's own fields always; required nested ones never", () => {
    const spec = widget().properties.spec;
    expect(spec.type).toEqual(["object", "null"]); // required by the kind, but the kind's own fields are all nullable
    expect(spec.properties.selector.type).toBe("object"); // required by its owner
    expect(spec.properties.tags).toEqual({ items: { type: ["string", "null"] }, type: ["array", "null"] });
    expect(widget().type).toBe("object");
  });

  it("takes int-or-string as string or integer, and a quantity as string or number", () => {
    const spec = widget().properties.spec;
    expect(spec.properties.port).toEqual({ oneOf: [{ type: ["string", "null"] }, { type: ["integer", "null"] }] });
    expect(spec.properties.size).toEqual({ oneOf: [{ type: ["string", "null"] }, { type: ["number", "null"] }] });
  });

  it("writes as Python's json.dumps(indent=2): non-ASCII escaped, the dialect last, no newline at the end", () => {
    const text = kubernetesJsonSchemas(openapi()).get("widget-example-v1.json")!;
    expect(text).toContain('"caf\\u00e9"');
    expect(text.endsWith('"$schema": "http://json-schema.org/schema#"\n}')).toBe(true);
    expect(pythonJson({ a: "\u007f\u2019", b: [], c: {} })).toBe('{\n  "a": "\\u007f\\u2019",\n  "b": [],\n  "c": {}\n}');
  });

  it("refuses what is no OpenAPI v2 document, a $ref to nothing, and a key whose order JavaScript cannot keep", () => {
    expect(() => kubernetesJsonSchemas({ openapi: "3.0.0", components: {} })).toThrow(/not a Kubernetes OpenAPI v2 document/);
    const dangling = openapi();
    (dangling.definitions as any)["io.k8s.api.example.v1.Widget"].properties.spec = ref("io.k8s.api.example.v1.Gone");
    expect(() => kubernetesJsonSchemas(dangling)).toThrow("$ref #/definitions/io.k8s.api.example.v1.Gone: no such definition");
    const numeric = openapi();
    (numeric.definitions as any)[META].properties["200"] = { type: "string" };
    expect(() => kubernetesJsonSchemas(numeric)).toThrow(/key 200 is integer-like/);
  });
});

describe("ensureKubernetesSchemas: the folder kubeconform reads", () => {
  /** A module download that serves `openapi` as the module's swagger.json, and counts its calls. */
  function fakeModule(text: string | undefined) {
    const dir = tempDir();
    if (text !== undefined) {
      fs.mkdirSync(path.join(dir, path.dirname(KUBERNETES_OPENAPI_FILE)), { recursive: true });
      fs.writeFileSync(path.join(dir, KUBERNETES_OPENAPI_FILE), text);
    }
    const calls: string[] = [];
    return { calls, download: (m: string, v: string) => (calls.push(`${m}@${v}`), { dir, sum: "h1:fake=" }) };
  }

  it("converts the module's OpenAPI at the pin into kubernetes/v<version>-standalone-strict/, with its sources, once", () => {
    const tools = tempDir();
    const mod = fakeModule(JSON.stringify(openapi()));
    expect(ensureKubernetesSchemas(tools, mod.download)).toEqual({ dir: kubernetesSchemasDir(tools), built: true });
    expect(mod.calls).toEqual([`${KUBERNETES_MODULE}@v${KUBERNETES_VERSION}`]);
    const folder = path.join(kubernetesSchemasDir(tools), "kubernetes", strictFolder(KUBERNETES_VERSION));
    expect(fs.readdirSync(folder).sort()).toEqual(["thing-v1.json", "widget-example-v1.json"]);
    const sources = JSON.parse(fs.readFileSync(path.join(kubernetesSchemasRoot(tools), "SOURCES.json"), "utf8"));
    expect(sources).toMatchObject({ module: `${KUBERNETES_MODULE}@v${KUBERNETES_VERSION}`, sum: "h1:fake=", file: KUBERNETES_OPENAPI_FILE, kinds: 2 });
    expect(requireKubernetesSchemas(tools)).toBe(kubernetesSchemasDir(tools));
    expect(ensureKubernetesSchemas(tools, mod.download).built).toBe(false);
    expect(mod.calls).toHaveLength(1);
  });

  it("stops loudly, leaving nothing, when the module cannot be had or holds no OpenAPI", () => {
    const tools = tempDir();
    const unreachable = () => {
      throw new ToolError("Kubernetes' OpenAPI (kubeconform's schemas) (k8s.io/kubernetes@v1.36.3) could not be fetched: … Fix: … `npm run tools`.");
    };
    expect(() => ensureKubernetesSchemas(tools, unreachable)).toThrow(/could not be fetched/);
    expect(() => ensureKubernetesSchemas(tools, fakeModule(undefined).download)).toThrow(
      `${KUBERNETES_MODULE}@v${KUBERNETES_VERSION} has no ${KUBERNETES_OPENAPI_FILE}. Fix: check KUBERNETES_VERSION in platform/versions.ts`,
    );
    expect(() => ensureKubernetesSchemas(tools, fakeModule("{").download)).toThrow(SyntaxError);
    expect(fs.readdirSync(tools)).toEqual([]);
    expect(() => requireKubernetesSchemas(tools)).toThrow(/are not there\. Fix: run `npm run tools`\./);
  });
});
