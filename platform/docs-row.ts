// A platform component's rows of the table of docs/platform.md, carried by its descriptor (`docs`),
// so that adding a component adds its module and no row by hand (issue 47). `npm run docs` writes
// the table between its markers; test/repository/docs-tables.test.ts holds the file to it. The cells
// are Markdown; a `|` inside one is written `\|`.

export interface DocsRow {
  /** What the row is about: the component, or one of its units (its StorageClasses). */
  component: string;
  version: string;
  installedAs: string;
  /** The phases its units are in. */
  phase: string;
  where: string;
  /** The stacks that install it. */
  stacks: string;
}

const HEADER = ["component", "version", "installed as", "phase", "where it runs", "stacks"];
const BEGIN = "<!-- The table is written by npm run docs from each component's `docs` (platform/<component>.ts): edit it there. -->";
const END = "<!-- end of the table written by npm run docs -->";

/** The table of the components' rows, in their order; a component without rows is a bug of this repository. */
export function platformTable(components: readonly { name: string; docs?: readonly DocsRow[] }[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  const rows = components.flatMap((c) => {
    if (c.docs === undefined || c.docs.length === 0)
      throw new Error(`the platform component ${c.name} has no docs rows: give its descriptor its row of docs/platform.md (docs)`);
    return c.docs.map((r) => line([r.component, r.version, r.installedAs, r.phase, r.where, r.stacks]));
  });
  return [line(HEADER), `|${HEADER.map(() => "---").join("|")}|`, ...rows].join("\n");
}

/** The document with the table between its markers replaced; undefined when the markers are missing. */
export function withPlatformTable(doc: string, table: string): string | undefined {
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < begin) return undefined;
  return `${doc.slice(0, begin)}${BEGIN}\n${table}\n${doc.slice(end)}`;
}
