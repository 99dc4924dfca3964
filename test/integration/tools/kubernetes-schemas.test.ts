// The converter of Kubernetes' OpenAPI (tools/kubernetes-schemas.ts) held to a folder made by
// another: from k8s.io/kubernetes@v1.32.2's swagger.json (the Go module proxy) it writes the files
// of ../shared/schemas/kubernetes/v1.32.2-standalone-strict/, the same names, byte for byte but for
// one difference the mirror adds and Kubernetes' OpenAPI does not have (listed below, and why). And
// the folder `npm run tools` built at the pin, which kubeconform reads.
import * as fs from "node:fs";
import * as path from "node:path";
import * as os from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { KUBERNETES_VERSION } from "../../../platform/versions";
import {
  KUBERNETES_MODULE,
  KUBERNETES_OPENAPI_FILE,
  ensureKubernetesSchemas,
  kubernetesJsonSchemas,
  kubernetesSchemasRoot,
  pythonJson,
  requireKubernetesSchemas,
  strictFolder,
} from "../../../tools/kubernetes-schemas";
import { goModDownload } from "../../../tools/tools";
import { isPlainObject } from "../../../config/plain";

const MIRROR = path.resolve(process.env.OPENKEEL_SCHEMAS ?? path.join(__dirname, "../../../../shared/schemas"), "kubernetes", strictFolder("1.32.2"));

/**
 * What the mirror has that the OpenAPI of v1.32.2 does not: `maxLength: 63` on the `name` of every
 * ObjectMeta a kind holds at its top (a ConfigMap's name may really be 253 characters: the API
 * server checks most names as DNS subdomains) and, in the kinds with a pod template, on the
 * template's metadata name and its containers' names (a container name is a DNS label of 63
 * characters, checked by the API server, not by its schema); in Pod, on its containers' and init
 * containers' names. swagger.json sets maxLength on no field (the one `maxLength` in it is a field
 * of JSONSchemaProps), and the mirror's README says only "generated from the Kubernetes OpenAPI":
 * whatever made it added them.
 */
function mirrorOnly(file: string, mirror: Record<string, any>): string[] {
  const at = (...p: string[]) => `properties/${p.join("/properties/")}/maxLength`;
  const extra: string[] = [];
  if (mirror.properties?.metadata?.properties?.name) extra.push(at("metadata", "name"));
  if (
    [
      "daemonset-apps-v1.json",
      "deployment-apps-v1.json",
      "job-batch-v1.json",
      "replicaset-apps-v1.json",
      "replicationcontroller-v1.json",
      "statefulset-apps-v1.json",
    ].includes(file)
  )
    extra.push(at("spec", "template", "metadata", "name"), at("spec", "template", "spec", "containers/items", "name"));
  if (file === "pod-v1.json") extra.push(at("spec", "containers/items", "name"), at("spec", "initContainers/items", "name"));
  return extra.sort();
}

/** Paths (a/b/c) where the two documents differ: a key one lacks, or another value. */
function differences(a: unknown, b: unknown, at = ""): string[] {
  if (isPlainObject(a) && isPlainObject(b))
    return [...new Set([...Object.keys(a), ...Object.keys(b)])].flatMap((k) => differences(a[k], b[k], at ? `${at}/${k}` : k));
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) return a.flatMap((x, i) => differences(x, b[i], at));
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [at];
}

function withoutPath(doc: Record<string, unknown>, p: string): void {
  const keys = p.split("/");
  let o: any = doc;
  for (const k of keys.slice(0, -1)) o = o[k];
  delete o[keys[keys.length - 1]];
}

describe("the converter against the strict folder of ../shared/schemas (Kubernetes v1.32.2)", () => {
  // the mirror is beside the checkout here; a GitHub runner without SCHEMAS_REPOSITORY has none
  it.skipIf(!fs.existsSync(MIRROR))(
    "writes its files from k8s.io/kubernetes@v1.32.2's OpenAPI: the same names, the same bytes once the mirror's maxLength is taken out",
    () => {
      const mod = goModDownload(KUBERNETES_MODULE, "v1.32.2", "The OpenAPI of Kubernetes 1.32.2 (the converter's test)");
      const ours = kubernetesJsonSchemas(JSON.parse(fs.readFileSync(path.join(mod.dir, KUBERNETES_OPENAPI_FILE), "utf8")));
      const names = fs.readdirSync(MIRROR).sort();
      expect([...ours.keys()]).toEqual(names);
      let identical = 0;
      for (const file of names) {
        const text = fs.readFileSync(path.join(MIRROR, file), "utf8");
        const mirror = JSON.parse(text) as Record<string, unknown>;
        const extra = mirrorOnly(file, mirror);
        expect(
          differences(mirror, JSON.parse(ours.get(file)!))
            .map((p) => `${p}`)
            .sort(),
          file,
        ).toEqual(extra);
        for (const p of extra) {
          expect(
            p.split("/").reduce((o: any, k) => o[k], mirror),
            `${file} ${p}`,
          ).toBe(63);
          withoutPath(mirror, p);
        }
        // the mirror's own bytes, its maxLength taken out, written as the converter writes
        expect(pythonJson(mirror), file).toBe(ours.get(file));
        if (extra.length === 0) expect(text, file).toBe(ours.get(file));
        if (text === ours.get(file)) identical++;
      }
      // status-meta-v1.json: a Status has no ObjectMeta, and is the one file identical as it is
      expect(identical).toBe(1);
      expect(names).toHaveLength(84);
    },
  );
});

describe("the schemas kubeconform reads: KUBERNETES_VERSION's, built by npm run tools", () => {
  it("are made from k8s.io/kubernetes at the pin, and hold the kinds the stacks render", () => {
    const dir = requireKubernetesSchemas();
    const sources = JSON.parse(fs.readFileSync(path.join(kubernetesSchemasRoot(), "SOURCES.json"), "utf8"));
    expect(sources).toMatchObject({ module: `${KUBERNETES_MODULE}@v${KUBERNETES_VERSION}`, file: KUBERNETES_OPENAPI_FILE });
    expect(sources.sum).toMatch(/^h1:/);
    const files = fs.readdirSync(path.join(dir, "kubernetes", strictFolder(KUBERNETES_VERSION)));
    expect(files).toHaveLength(sources.kinds);
    for (const kind of [
      "deployment-apps-v1.json",
      "daemonset-apps-v1.json",
      "statefulset-apps-v1.json",
      "configmap-v1.json",
      "customresourcedefinition-apiextensions-v1.json",
    ])
      expect(files).toContain(kind);
    const deployment = JSON.parse(fs.readFileSync(path.join(dir, "kubernetes", strictFolder(KUBERNETES_VERSION), "deployment-apps-v1.json"), "utf8"));
    expect(deployment.properties.apiVersion.enum).toEqual(["apps/v1"]);
    expect(deployment.additionalProperties).toBe(false);
  });
});

describe("npm run tools without the module proxy", () => {
  const proxy = process.env.GOPROXY;
  afterEach(() => (proxy === undefined ? delete process.env.GOPROXY : (process.env.GOPROXY = proxy)));

  it("stops loudly, naming the module, why and the fix, and leaves nothing", () => {
    const tools = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-k8s-schemas-"));
    // a version no module cache holds, through a proxy that refuses every connection
    process.env.GOPROXY = "https://127.0.0.1:1";
    try {
      expect(() => ensureKubernetesSchemas(tools, undefined, "1.36.99")).toThrow(
        /^Kubernetes' OpenAPI \(kubeconform's schemas\) \(k8s\.io\/kubernetes@v1\.36\.99\) could not be fetched:\n {2}- \S*go mod download k8s\.io\/kubernetes@v1\.36\.99: .*connection refused\n(.|\n)*Fix: install Go .* with the module proxy reachable \(GOPROXY\), then run `npm run tools`\.$/,
      );
      expect(fs.readdirSync(tools)).toEqual([]);
    } finally {
      fs.rmSync(tools, { recursive: true, force: true });
    }
  });
});
