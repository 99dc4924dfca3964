// What the e2e reads from `npm run render` output (rendered/<stack>/): the index (nodes, units,
// chart refs, remote URLs), the placement report's grid, the values and the node configuration.
// Nothing here imports the program's source: the rendered files are the interface.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, parseAllDocuments } from "yaml";

interface RenderedUnit {
  kind: "HelmRelease" | "Manifests" | "RemoteManifest";
  name: string;
  type: string;
  protect?: boolean;
  dependsOn?: string[];
  chart?: { chart: string; repository: string; version: string };
  release?: string;
  namespace?: string;
  values?: string;
  objects?: string[];
  urls?: string[];
  version?: string;
}

interface RenderedIndex {
  stack: string;
  environment: string;
  topology: string;
  labelProfile: "default" | "hardened";
  taintedRoles: string[];
  nodes: { name: string; roles: string[] }[];
  nodeConfig: string[];
  phases: { name: string; units: RenderedUnit[] }[];
  warnings: unknown[];
}

export interface RenderedStack {
  dir: string;
  index: RenderedIndex;
  units: RenderedUnit[];
}

export function readRendered(outDir: string, stack: string): RenderedStack {
  const dir = path.join(outDir, stack);
  const index = parse(fs.readFileSync(path.join(dir, "index.yaml"), "utf8")) as RenderedIndex;
  return { dir, index, units: index.phases.flatMap((p) => p.units) };
}

/** Every document of a rendered YAML file (objects/**, talos/**, kind/cluster.yaml). */
export function readDocs(file: string): Record<string, unknown>[] {
  return parseAllDocuments(fs.readFileSync(file, "utf8"))
    .map((d) => d.toJS() as Record<string, unknown>)
    .filter((d) => d !== null && d !== undefined);
}

/** One row of placement.md's component × node grid. */
export interface PlacementRow {
  component: string;
  kind: string;
  replicas: string;
  design: string;
  reaches: string;
  /** node → may run there (●) */
  eligible: Record<string, boolean>;
}

export interface PlacementReport {
  nodes: { group: string; name: string; zone: string; taints: string }[];
  rows: PlacementRow[];
}

const cells = (line: string) =>
  line
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split("|")
    .map((c) => c.trim());

/** Parse placement.md: the nodes table and every component grid (platform and OpenKeel). */
export function readPlacement(r: RenderedStack): PlacementReport {
  const lines = fs.readFileSync(path.join(r.dir, "placement.md"), "utf8").split("\n");
  const report: PlacementReport = { nodes: [], rows: [] };
  let header: string[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!line.startsWith("|")) {
      header = undefined;
      continue;
    }
    const c = cells(line);
    if (c.every((x) => /^:?-+:?$/.test(x))) continue;
    if (!header) {
      header = c;
      continue;
    }
    if (header[0] === "role group") {
      report.nodes.push({ group: c[0], name: c[1], zone: c[2], taints: c[3] });
    } else if (header[0] === "component") {
      const eligible: Record<string, boolean> = {};
      header.slice(5).forEach((h, j) => (eligible[h.split("<br>")[0]] = c[5 + j] === "●"));
      report.rows.push({ component: c[0], kind: c[1], replicas: c[2], design: c[3], reaches: c[4], eligible });
    }
  }
  return report;
}
