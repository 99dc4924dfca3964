// What the e2e reads from `npm run render` output (rendered/<stack>/), through the rendered model
// (render/rendered.ts): the index (nodes, units, chart refs, remote URLs), the placement data
// (placement.json), the values and the node configuration. The e2e imports that model and nothing
// else of the program: the rendered files are the interface, and the model is their one reader.
import * as fs from "node:fs";
import * as path from "node:path";
import {
  readRenderedDir,
  yamlDocuments,
  type RenderedIndex,
  type RenderedPlacement,
  type RenderedStack as RenderedModel,
  type RenderedUnit,
} from "../../render/rendered";

export interface RenderedStack {
  dir: string;
  index: RenderedIndex;
  units: RenderedUnit[];
  /** The model of the folder, for what the index does not hold (node configuration, placement). */
  model: RenderedModel;
}

export function readRendered(outDir: string, stack: string): RenderedStack {
  const dir = path.join(outDir, stack);
  const model = readRenderedDir(dir);
  return { dir, index: model.index, units: model.units(), model };
}

/** Every document of a YAML file (rendered objects/**, talos/**, kind/cluster.yaml; files the e2e writes). */
export function readDocs(file: string): Record<string, unknown>[] {
  return yamlDocuments(fs.readFileSync(file, "utf8")).filter((d): d is Record<string, unknown> => d !== null && typeof d === "object" && !Array.isArray(d));
}

/** placement.json: the nodes and every component with the nodes it may run on. */
export function readPlacement(r: RenderedStack): RenderedPlacement {
  const p = r.model.placement;
  if (!p) throw new Error(`${r.dir}: no placement.json (render it with this checkout: npm run render)`);
  return p;
}

/** An object the program waits on (`pulumi.com/waitFor`): what it waits for and how long. */
export interface ProgramWait {
  /** `<Kind> <namespace>/<name>` (cluster-scoped: `<Kind> <name>`), as the stand-in controller names objects. */
  object: string;
  condition: string;
  timeoutSeconds: string;
}

/** Every object of the render the program waits on, in Plan order. */
export function programWaits(r: RenderedStack): ProgramWait[] {
  const out: ProgramWait[] = [];
  for (const u of r.units) {
    for (const f of u.objects ?? []) {
      for (const o of readDocs(path.join(r.dir, f))) {
        const meta = (o.metadata ?? {}) as { name?: string; namespace?: string; annotations?: Record<string, string> };
        const condition = meta.annotations?.["pulumi.com/waitFor"];
        if (!condition) continue;
        out.push({
          object: `${String(o.kind)} ${meta.namespace ? `${meta.namespace}/` : ""}${meta.name}`,
          condition,
          timeoutSeconds: meta.annotations?.["pulumi.com/timeoutSeconds"] ?? "default",
        });
      }
    }
  }
  return out;
}
