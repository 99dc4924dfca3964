// The releases' table of docs/openkeel-values.md, a row per release: the infrastructure's, then each
// service's in install order, written by `npm run docs` (tools/docs-command.ts) from what the
// descriptors say, so that adding a service writes no row by hand (issue 47). The release, its own
// namespace and the lab's NodePorts come from the descriptor; the two prose cells from its `docs`,
// or, where it says none, from its components' design rows. The cells are Markdown; a `|` inside one
// is written `\|`.
import type { Role } from "../config/roles";
import { designOf, isSelfPlaced, type ComponentSpec } from "./components";
import { INFRASTRUCTURE_CHART, releaseName } from "./names";

/** A release's prose cells. */
export interface ReleaseDocs {
  /**
   * What its components are and where they run, with what places each (`placement.<component>`, a post-render patch).
   * @default each component with the roles of its design row, those § 5.2 does not list marked as placed by a post-render patch
   */
  components?: string;
  /**
   * The values it writes besides placement and replicas, with where they come from.
   * @default none
   */
  values?: string;
}

/** What a service's row is written from: its descriptor (openkeel/service.ts). */
interface RowSource {
  name: string;
  components: Readonly<Record<string, ComponentSpec>>;
  namespace?: { name: string };
  docs?: ReleaseDocs;
}

export const RELEASES_HEADER = ["release", "components (`placement.<component>`, default role)", "other values", "lab NodePort"];

const code = (text: string) => `\`${text}\``;

/** The roles of a design row as the table writes them. */
const rolesText = (roles: readonly Role[] | string) => (typeof roles === "string" ? roles : roles.join(", "));

/** The default components cell: runs of components with the same roles and placement, in the chart's order. */
export function componentsCell(components: Readonly<Record<string, ComponentSpec>>): string {
  const runs: { keys: string[]; where: string }[] = [];
  for (const [key, c] of Object.entries(components)) {
    const where = `${rolesText(designOf(c).roles)}${!isSelfPlaced(c) && c.unlisted ? "; a post-render patch, below" : ""}`;
    const last = runs.at(-1);
    if (last?.where === where) last.keys.push(key);
    else runs.push({ keys: [key], where });
  }
  return runs.map((r) => `${r.keys.map(code).join(", ")} (${r.where})`).join("; ");
}

/** Each public API's NodePort in the lab (./endpoints.ts). */
const nodePortsCell = (components: Readonly<Record<string, ComponentSpec>>) =>
  Object.entries(components)
    .flatMap(([key, c]) => (c.publicApi ? [`${code(key)}: ${c.publicApi.labNodePort}`] : []))
    .join(", ");

/** The rows of the infrastructure release and of each service's, in install order. */
export function releaseRows(infrastructure: Required<ReleaseDocs>, services: readonly RowSource[]): string[][] {
  return [
    [code(INFRASTRUCTURE_CHART), infrastructure.components, infrastructure.values, ""],
    ...services.map((s) => [
      `${code(releaseName(s.name))}${s.namespace ? ` (namespace ${code(s.namespace.name)})` : ""}`,
      s.docs?.components ?? componentsCell(s.components),
      s.docs?.values ?? "",
      nodePortsCell(s.components),
    ]),
  ];
}
