// A platform component's rows of the table of docs/platform.md, carried by its descriptor (`docs`),
// so that adding a component adds its module and no row by hand (issue 47). `npm run docs` writes
// the table between its markers (tools/docs-command.ts); test/repository/docs-tables.test.ts holds
// the file to it. The cells are Markdown; a `|` inside one is written `\|`.

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

export const PLATFORM_HEADER = ["component", "version", "installed as", "phase", "where it runs", "stacks"];

/** The components' rows, in their order, as cells; a component without rows is a bug of this repository. */
export function platformRows(components: readonly { name: string; docs?: readonly DocsRow[] }[]): string[][] {
  return components.flatMap((c) => {
    if (c.docs === undefined || c.docs.length === 0)
      throw new Error(`the platform component ${c.name} has no docs rows: give its descriptor its row of docs/platform.md (docs)`);
    return c.docs.map((r) => [r.component, r.version, r.installedAs, r.phase, r.where, r.stacks]);
  });
}
