// What `npm run render` writes of a Plan into rendered/<stack>/ (import it from ./rendered.ts, the
// one writer and reader of a render): objects/ and values/, the post-render patches, the node
// configuration, index.yaml, and placement.json with placement.md and placement.svg drawn from it.
import { problemPath } from "../config/problems";
import { placementData } from "../placement/data";
import type { FailureDomainTable } from "../placement/failure-table";
import { placementMarkdown, placementSvg } from "../placement/picture";
import type { PlacementReport } from "../placement/report";
import { PHASES, type Plan, type Unit } from "../plan/plan";
import {
  INDEX_FILE,
  PLACEMENT_DATA_FILE,
  PLACEMENT_MD_FILE,
  PLACEMENT_SVG_FILE,
  RENDERED_SCHEMA_VERSION,
  type ReasonGroup,
  type RenderedFile,
  type RenderedIndex,
  type RenderedPlacement,
  type RenderedUnit,
} from "./rendered-model";
import { GENERATED_HEADER, nodeConfigContent, objectFileName, toYaml } from "./render";

/** The file of a release's post-render patches: reviewable beside its values. */
export function postRenderFile(unit: string): string {
  return `postrender/${unit}.yaml`;
}

function phaseDir(name: (typeof PHASES)[number]): string {
  return `${String(PHASES.indexOf(name) + 1).padStart(2, "0")}-${name}`;
}

function unitIndex(unit: Unit, dir: string): RenderedUnit {
  const base = {
    name: unit.name,
    type: unit.type,
    ...(unit.protect ? { protect: true } : {}),
    ...(unit.dependsOn?.length ? { dependsOn: [...unit.dependsOn].sort() } : {}),
    ...(unit.waitsFor?.length ? { waitsFor: unit.waitsFor.map((w) => ({ unit: w.unit, why: w.why })) } : {}),
  };
  switch (unit.kind) {
    case "HelmRelease":
      return {
        kind: unit.kind,
        ...base,
        release: unit.release,
        namespace: unit.namespace,
        chart: unit.chart,
        values: `values/${unit.name}.yaml`,
        ...(unit.postRender ? { postRender: postRenderFile(unit.name) } : {}),
      };
    case "Manifests":
      return { kind: unit.kind, ...base, objects: unit.objects.map((o) => `${dir}/${unit.name}/${objectFileName(o)}`).sort() };
    case "RemoteManifest":
      return {
        kind: unit.kind,
        ...base,
        urls: unit.urls,
        version: unit.version,
        ...(unit.forceConflicts ? { forceConflicts: unit.forceConflicts } : {}),
        ...(unit.patchedFields ? { patchedFields: unit.patchedFields } : {}),
      };
  }
}

/** What index.yaml records of a Plan. */
export function renderedIndex(plan: Plan): RenderedIndex {
  return {
    schemaVersion: RENDERED_SCHEMA_VERSION,
    deployGraph: "dependencies",
    stack: plan.stack,
    environment: plan.environment,
    topology: plan.topology,
    labelProfile: plan.labelProfile,
    taintedRoles: plan.taintedRoles,
    cluster: plan.cluster,
    nodes: plan.nodes,
    warnings: plan.warnings.map((w) => ({
      code: w.code,
      ...(problemPath(w) ? { path: problemPath(w) } : {}),
      message: w.message,
      ...(w.reason ? { reason: w.reason } : {}),
      remediation: w.fix,
    })),
    ...(plan.nodeConfig ? { nodeConfig: plan.nodeConfig.files.map((f) => f.path).sort() } : {}),
    ...(plan.feasibility ? { feasibility: plan.feasibility } : {}),
    ...(plan.allowRemoval?.length ? { allowRemoval: plan.allowRemoval } : {}),
    phases: plan.phases.map((ph) => ({ name: ph.name, units: ph.units.map((u) => unitIndex(u, `objects/${phaseDir(ph.name)}`)) })),
  };
}

/**
 * A component's reasons grouped by what they say: most nodes a component cannot run on share one
 * reason (a missing role label), and writing it per node made placement.json grow with components
 * × nodes (23 MB for 2000 nodes, most of a large preview's reading: npm run bench).
 */
function reasonGroups(reasons: Record<string, string[]>): ReasonGroup[] {
  const groups = new Map<string, ReasonGroup>();
  for (const [node, why] of Object.entries(reasons)) {
    const key = JSON.stringify(why);
    const g = groups.get(key);
    if (g) g.nodes.push(node);
    else groups.set(key, { why, nodes: [node] });
  }
  return [...groups.values()];
}

/** The failure-domain table in placement.json: one line per row. */
function failureJson(t: FailureDomainTable): string {
  const { rows, ...head } = t;
  const fields = [
    ...Object.entries(head).map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`),
    `    "rows": ${rows.length === 0 ? "[]" : `[\n${rows.map((r) => `      ${JSON.stringify(r)}`).join(",\n")}\n    ]`}`,
  ];
  return `{\n${fields.join(",\n")}\n  }`;
}

/**
 * placement.json: one line per node and per component, so that a change shows as the lines of
 * what changed in a diff of rendered/.
 */
export function placementJson(d: RenderedPlacement): string {
  const { nodes, components, hosts, failureDomains, ...head } = d;
  const list = (items: unknown[]) => (items.length === 0 ? "[]" : `[\n${items.map((x) => `    ${JSON.stringify(x)}`).join(",\n")}\n  ]`);
  const fields = [
    ...Object.entries(head).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`),
    `  "nodes": ${list(nodes)}`,
    `  "components": ${list(components.map((c) => ({ ...c, reasons: reasonGroups(c.reasons) })))}`,
    ...(hosts ? [`  "hosts": ${list(hosts)}`] : []),
    ...(failureDomains ? [`  "failureDomains": ${failureJson(failureDomains)}`] : []),
  ];
  return `{\n${fields.join(",\n")}\n}\n`;
}

/** Node-level config lives beside the Kubernetes objects, never among them (kubeconform reads objects/). */
const NODE_CONFIG_PATH = /^(?!objects\/|values\/|postrender\/)[a-z0-9][a-z0-9-]*(\/[A-Za-z0-9][A-Za-z0-9.+_-]*)+\.yaml$/;

/**
 * The files of rendered/<stack>/ for a Plan, sorted by path: objects/ and values/, the node
 * configuration, index.yaml, and, when the placement report is given, placement.json with the
 * placement.md and placement.svg drawn from it.
 */
export function renderPlan(plan: Plan, placement?: PlacementReport): RenderedFile[] {
  const files: RenderedFile[] = [];
  const seen = new Set<string>();
  const push = (path: string, content: string) => {
    if (seen.has(path)) throw new Error(`render of ${plan.stack}: two files at ${path}`);
    seen.add(path);
    files.push({ path, content });
  };
  const add = (path: string, body: unknown) => push(path, GENERATED_HEADER + toYaml(body));
  for (const ph of plan.phases) {
    const dir = `objects/${phaseDir(ph.name)}`;
    for (const unit of ph.units) {
      if (unit.kind === "Manifests") for (const o of unit.objects) add(`${dir}/${unit.name}/${objectFileName(o)}`, o);
      else if (unit.kind === "HelmRelease") {
        add(`values/${unit.name}.yaml`, unit.values);
        if (unit.postRender) add(postRenderFile(unit.name), unit.postRender);
      }
    }
  }
  for (const f of plan.nodeConfig?.files ?? []) {
    if (!NODE_CONFIG_PATH.test(f.path) || f.path.split("/").includes("..")) {
      throw new Error(`render of ${plan.stack}: node config path ${f.path} is not <dir>/…/<name>.yaml outside objects/ and values/`);
    }
    push(f.path, nodeConfigContent(f));
  }
  add(INDEX_FILE, renderedIndex(plan));
  if (placement) {
    const data = placementData(placement);
    push(PLACEMENT_DATA_FILE, placementJson(data));
    push(PLACEMENT_MD_FILE, placementMarkdown(data));
    push(PLACEMENT_SVG_FILE, placementSvg(data));
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
