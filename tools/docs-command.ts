// npm run docs: writes the generated tables of docs/ from the code they describe, each between its
// markers: docs/platform.md's from each platform component's `docs` rows (platform/docs-row.ts), in
// the order production lists them (then what only the lab installs); docs/openkeel-values.md's
// releases' table from the infrastructure's cells and each service's descriptor (openkeel/docs-row.ts).
// test/repository/docs-tables.test.ts fails while a file differs.
import * as fs from "node:fs";
import * as path from "node:path";
import { helpOnly, type Io } from "../cli/cli";
import { EXIT_BAD_CONFIG, UserError } from "../cli/errors";
import { environmentComponents } from "../environments/registry";
import { OPENKEEL } from "../openkeel/descriptor";
import { RELEASES_HEADER, releaseRows } from "../openkeel/docs-row";
import { INFRASTRUCTURE_DOCS } from "../openkeel/infrastructure";
import { OPENKEEL_SERVICES } from "../openkeel/services";
import { PLATFORM_HEADER, platformRows } from "../platform/docs-row";
import { REPO_ROOT } from "./tools";

/** A table of a document that npm run docs writes: its file, where it comes from (its begin marker says so), its header and rows. */
export interface GeneratedTable {
  file: string;
  source: string;
  header: readonly string[];
  rows(): string[][];
}

export const PLATFORM_TABLE: GeneratedTable = {
  file: "docs/platform.md",
  source: "each component's `docs` (platform/<component>.ts)",
  header: PLATFORM_HEADER,
  rows: () => platformRows(environmentComponents("talos-production", "kind-lab").filter((c) => c !== OPENKEEL)),
};

export const RELEASES_TABLE: GeneratedTable = {
  file: "docs/openkeel-values.md",
  source: "each service's descriptor (openkeel/services/<service>.ts, its `docs`) and INFRASTRUCTURE_DOCS (openkeel/infrastructure.ts)",
  header: RELEASES_HEADER,
  rows: () => releaseRows(INFRASTRUCTURE_DOCS, OPENKEEL_SERVICES),
};

export const GENERATED_TABLES = [PLATFORM_TABLE, RELEASES_TABLE];

const END = "<!-- end of the table written by npm run docs -->";
const begin = (t: GeneratedTable) => `<!-- The table is written by npm run docs from ${t.source}: edit it there. -->`;

/** A Markdown table; an empty cell is one space wide. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `|${cells.map((c) => (c === "" ? " " : ` ${c} `)).join("|")}|`;
  return [line(header), `|${header.map(() => "---").join("|")}|`, ...rows.map(line)].join("\n");
}

/** The document with the text between the table's markers replaced; undefined when the markers are missing. */
export function withTable(doc: string, t: GeneratedTable, table: string): string | undefined {
  const from = doc.indexOf(begin(t));
  const to = doc.indexOf(END, from);
  if (from < 0 || to < 0) return undefined;
  return `${doc.slice(0, from)}${begin(t)}\n${table}\n${doc.slice(to)}`;
}

/** The document as npm run docs writes it, from the text it has. */
export function generatedDoc(t: GeneratedTable, text: string): string {
  const doc = withTable(text, t, markdownTable(t.header, t.rows()));
  if (doc === undefined)
    throw new UserError(`${t.file}: the markers of its generated table are missing. Fix: restore them from git (git checkout -- ${t.file})`, EXIT_BAD_CONFIG);
  return doc;
}

export function docsCommand(argv: string[], io: Io, root = REPO_ROOT): number {
  helpOnly(argv);
  // every document is made before any is written: a missing marker leaves all of them as they were
  const docs = GENERATED_TABLES.map((t) => {
    const file = path.join(root, t.file);
    const text = fs.readFileSync(file, "utf8");
    return { t, file, text, doc: generatedDoc(t, text) };
  });
  for (const { t, file, text, doc } of docs) {
    if (doc !== text) fs.writeFileSync(file, doc);
    io.out(`${t.file}: ${doc === text ? "up to date" : "written"}\n`);
  }
  return 0;
}
