// The Talos machine-config JSON schema (draft 2020-12, every document kind), read like kubeconform's
// schemas: from the offline folder ($OPENKEEL_SCHEMAS, else ../shared/schemas beside the repository),
// else from the folder built from upstream at the Talos tag (tools/upstream-schemas.ts), at
// talos/<minor of TALOS_VERSION>/config.schema.json. It omits deprecated fields, so a patch using
// machine.install.extraKernelArgs or machine.network fails it.
import * as fs from "node:fs";
import * as path from "node:path";
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020";
import { TALOS_VERSION } from "../platform/versions";

import { DEFAULT_SCHEMAS_DIR, offlineSchemasDir, SCHEMAS_ENV, schemasDir } from "./kubeconform";
import { talosMinor, upstreamSchemasDir } from "./upstream-schemas";

export { DEFAULT_SCHEMAS_DIR, SCHEMAS_ENV, schemasDir };

export function talosSchemaPath(dir = offlineSchemasDir() ?? upstreamSchemasDir(), version = TALOS_VERSION): string {
  return path.join(dir, "talos", talosMinor(version), "config.schema.json");
}

export interface TalosValidator {
  /** Problems of one document (a v1alpha1 patch or a `kind:` document); empty when valid. */
  validate(doc: unknown): string[];
  schemaPath: string;
}

function describeErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const extra = e.keyword === "additionalProperties" ? ` '${(e.params as { additionalProperty: string }).additionalProperty}'` : "";
    return `${e.instancePath || "/"}: ${e.message}${extra}`;
  });
}

export function talosValidator(schemaPath = talosSchemaPath()): TalosValidator {
  if (!fs.existsSync(schemaPath)) {
    throw new Error(
      `no Talos schema at ${schemaPath}. Fix: set ${SCHEMAS_ENV} to the folder that holds talos/${talosMinor(TALOS_VERSION)}/config.schema.json (default ${DEFAULT_SCHEMAS_DIR})`,
    );
  }
  const schema = JSON.parse(fs.readFileSync(schemaPath, "utf8")) as {
    $id: string;
    $defs: Record<string, { properties?: { kind?: { enum?: string[] } } }>;
  };
  // strictTypes off: the upstream schema puts additionalProperties on a string (serviceAccount.key).
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
  ajv.addVocabulary(["markdownDescription", "x-intellij-html-description"]);
  ajv.addFormat("uri", (s: string) => {
    try {
      new URL(s);
      return true;
    } catch {
      return false;
    }
  });
  const root = ajv.compile(schema);
  // The root is a oneOf over every kind; on failure, the document's own kind says what is wrong.
  const byKind = new Map<string, ValidateFunction>();
  const defOf = (kind: string | undefined): string | undefined =>
    kind === undefined ? "v1alpha1.Config" : Object.keys(schema.$defs).find((d) => schema.$defs[d].properties?.kind?.enum?.includes(kind));
  return {
    schemaPath,
    validate(doc: unknown): string[] {
      if (root(doc)) return [];
      const kind = (doc as { kind?: unknown } | null)?.kind;
      const def = defOf(typeof kind === "string" ? kind : undefined);
      if (def === undefined) return [`/kind: '${String(kind)}' is not a Talos document kind`];
      let v = byKind.get(def);
      if (!v) {
        v = ajv.compile({ $ref: `${schema.$id}#/$defs/${def}` });
        byKind.set(def, v);
      }
      v(doc);
      const specific = describeErrors(v.errors);
      return specific.length > 0 ? specific : describeErrors(root.errors);
    },
  };
}
