// Every Talos document this repository renders validates against the Talos v1.13 JSON schema
// (offline: $OPENKEEL_SCHEMAS, else ../shared/schemas; without either, the file at the Talos tag,
// fetched by the test setup into the folder of tools/upstream-schemas.ts), for the shipped stacks and for the
// shapes only mutated configs produce. The validator itself rejects what Talos rejects.
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { LoadedConfig } from "../../config/schema";
import type { NodeConfigFile } from "../../plan/plan";
import { planStack, resolveStack } from "../../environments";
import { talosNodeConfig } from "../../nodes/talos";
import { DEFAULT_SCHEMAS_DIR, SCHEMAS_ENV, schemasDir, talosSchemaPath, talosValidator } from "../../tools/talos-schema";
import { offlineSchemasDir } from "../../tools/kubeconform";
import { upstreamSchemasDir } from "../../tools/upstream-schemas";
import { mutatedConfig, PRODUCTION_STACKS, REPO, shippedConfig } from "../helpers/stacks";

const validator = talosValidator();

/** The Talos documents of a stack: patches and node patches (schematics and the index are not Talos config). */
function talosDocuments(cfg: LoadedConfig): { path: string; doc: Record<string, unknown> }[] {
  // Node-level config does not depend on where pods land (placement checks may refuse a test stack).
  const files: NodeConfigFile[] = (planStack(cfg).plan?.nodeConfig ?? talosNodeConfig(cfg, resolveStack(cfg).topology)).files;
  return files
    .filter((f) => f.path.startsWith("talos/patches/") || f.path.startsWith("talos/nodes/"))
    .flatMap((f) => f.documents.map((doc) => ({ path: f.path, doc })));
}

function expectValid(cfg: LoadedConfig): number {
  const docs = talosDocuments(cfg);
  for (const { path: p, doc } of docs) expect(validator.validate(doc), `${p}: ${JSON.stringify(doc)}`).toEqual([]);
  return docs.length;
}

describe("Talos schema validation", () => {
  it("reads the schema of the pinned Talos minor from the offline folder, else from the folder built from upstream at the Talos tag", () => {
    expect(schemasDir({})).toBe(path.resolve(REPO, DEFAULT_SCHEMAS_DIR));
    expect(talosSchemaPath(schemasDir({}))).toBe(path.resolve(REPO, "../shared/schemas/talos/v1.13/config.schema.json"));
    expect(schemasDir({ [SCHEMAS_ENV]: "/opt/schemas" })).toBe("/opt/schemas");
    expect(talosSchemaPath()).toBe(path.join(offlineSchemasDir() ?? upstreamSchemasDir(), "talos/v1.13/config.schema.json"));
    expect(validator.schemaPath).toBe(talosSchemaPath());
  });

  it("says where it looked and which variable to set when the schema is missing", () => {
    expect(() => talosValidator(talosSchemaPath("/nonexistent"))).toThrow(
      new RegExp(`no Talos schema at /nonexistent/talos/v1\\.13/config\\.schema\\.json\\. Fix: set ${SCHEMAS_ENV}`),
    );
  });

  it.each(PRODUCTION_STACKS)("%s: every patch and node patch document is valid", (stack) => {
    expect(expectValid(shippedConfig(stack))).toBeGreaterThan(0);
  });

  it("is valid with control-plane taints, untainted roles, containers, IPv6 and FQDN nodes, 2Mi pages and a capped disk", () => {
    const cfg = mutatedConfig("prod-medium", (r) => {
      r.taints = true;
      r.nodes.push({ name: "ctr-1.dc1.example", internalIP: "fd00::21", roles: ["containers"] });
      r.talos.compute.hugepages = { pageSize: "2Mi", count: 4096 };
      r.talos.longhornDisk.maxSize = "80%";
    });
    expectValid(cfg);
    expectValid(mutatedConfig("prod-large", (r) => (r.taints = false)));
  });

  it("rejects what the Talos schema rejects: deprecated install fields, unknown keys, wrong enums", () => {
    expect(validator.validate({ machine: { install: { extraKernelArgs: ["hugepages=16"] } } }).join()).toMatch(/extraKernelArgs/);
    expect(validator.validate({ machine: { install: { extensions: [{ image: "x" }] } } }).join()).toMatch(/extensions/);
    expect(validator.validate({ machine: { network: { hostname: "cp-1" } } }).join()).toMatch(/network/);
    expect(validator.validate({ machine: { nodeLabel: {} } }).join()).toMatch(/nodeLabel/);
    expect(validator.validate({ cluster: { network: { cni: { name: "kube-ovn" } } } }).join()).toMatch(/allowed values|enum/);
    expect(validator.validate({ apiVersion: "v1alpha1", kind: "UserVolumeConfig", name: "longhorn", volumeType: "lvm" }).join()).toMatch(
      /volumeType|allowed values/,
    );
    expect(validator.validate({ apiVersion: "v1alpha1", kind: "NoSuchConfig" }).join()).toMatch(/not a Talos document kind/);
  });
});
