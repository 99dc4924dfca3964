// The docs' tables of node states held to STATE_TRAITS (config/lifecycle.ts), the one definition:
// docs/node-lifecycle.md's tables (what `pulumi up` does per state, and the traits matrix) and
// stacks/README.md's `state` cell list every state, and the matrix ticks exactly the traits each
// state has. A state added to STATE_TRAITS, or a trait changed, fails here until the docs say it.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { NODE_STATES, STATE_TRAITS, type StateTraits } from "../../config/lifecycle";
import { api, worker, unlisted } from "../../openkeel/components";
import { componentsCell, releaseRows } from "../../openkeel/docs-row";
import { INFRASTRUCTURE_DOCS } from "../../openkeel/infrastructure";
import { OPENKEEL_SERVICES } from "../../openkeel/services";
import { platformRows, type DocsRow } from "../../platform/docs-row";
import { GENERATED_TABLES, generatedDoc, markdownTable, PLATFORM_TABLE, RELEASES_TABLE, withTable } from "../../tools/docs-command";
import { REPO } from "../helpers/stacks";

const LIFECYCLE = fs.readFileSync(path.join(REPO, "docs/node-lifecycle.md"), "utf8");
const STACKS = fs.readFileSync(path.join(REPO, "stacks/README.md"), "utf8");

/** The traits matrix's columns, as the docs name them, in STATE_TRAITS' order. */
const COLUMNS: [keyof StateTraits, string][] = [
  ["cordons", "cordons"],
  ["drains", "drains"],
  ["evictsData", "evicts data"],
  ["leavesQuorums", "leaves quorums"],
  ["leavesHealthChecks", "leaves health checks"],
  ["leavesInventory", "leaves the inventory"],
];

/** A Markdown table row's cells (a `\|` inside a cell is no separator). */
const cells = (line: string) =>
  line
    .split(/(?<!\\)\|/)
    .slice(1, -1)
    .map((c) => c.trim());

/** The rows of the first table whose header starts with `header`: each row's cells. */
function table(text: string, header: string): string[][] {
  const lines = text.split("\n");
  const at = lines.findIndex((l) => l.startsWith(header));
  if (at < 0) throw new Error(`no table whose header starts with '${header}'`);
  const rows: string[][] = [];
  for (const line of lines.slice(at + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(cells(line));
  }
  return rows;
}

/** The state a row is about: its first cell's backticked name. */
const stateOf = (row: string[]) => /^`([a-z-]+)`/.exec(row[0])?.[1];

describe("the docs' tables of node states follow STATE_TRAITS", () => {
  it("docs/node-lifecycle.md: what pulumi up does, a row per state", () => {
    expect(table(LIFECYCLE, "| state | production").map(stateOf)).toEqual(NODE_STATES);
  });

  it("docs/node-lifecycle.md: the traits matrix ticks each state's traits, column by column", () => {
    const header = `| state | ${COLUMNS.map(([, words]) => words).join(" | ")} |`;
    expect(LIFECYCLE).toContain(header);
    const rows = table(LIFECYCLE, header);
    expect(rows.map(stateOf)).toEqual(NODE_STATES);
    for (const row of rows) {
      const traits = STATE_TRAITS[stateOf(row) as keyof typeof STATE_TRAITS] as StateTraits;
      expect(
        COLUMNS.map(([, words], i) => [words, row[i + 1] === "✓"]),
        row[0],
      ).toEqual(COLUMNS.map(([trait, words]) => [words, traits[trait]]));
    }
  });

  it("stacks/README.md: the state key lists every state, the default first", () => {
    const row = STACKS.split("\n").find((l) => l.startsWith("| `state` |"));
    expect(row).toBeDefined();
    const type = cells(row!)[1];
    expect([...type.matchAll(/`([a-z-]+)`/g)].map((m) => m[1])).toEqual(NODE_STATES);
  });
});

describe("the tables npm run docs writes: docs/platform.md's from the components' rows, docs/openkeel-values.md's from the services' descriptors", () => {
  it.each(GENERATED_TABLES.map((t) => [t.file, t] as const))("%s holds the table npm run docs writes", (file, t) => {
    const text = fs.readFileSync(path.join(REPO, file), "utf8");
    expect(generatedDoc(t, text), "run npm run docs").toBe(text);
  });

  it("a row each component carries, in order; a component without rows is refused by name", () => {
    const row = (component: string): DocsRow => ({ component, version: "v1", installedAs: "Helm", phase: "platform", where: "a \\| b", stacks: "all" });
    const table = markdownTable(
      PLATFORM_TABLE.header,
      platformRows([
        { name: "A", docs: [row("A"), row("A's classes")] },
        { name: "B", docs: [row("B")] },
      ]),
    ).split("\n");
    expect(table.slice(2).map((l) => l.split(" | ")[0])).toEqual(["| A", "| A's classes", "| B"]);
    expect(table[2]).toBe("| A | v1 | Helm | platform | a \\| b | all |");
    expect(() => platformRows([{ name: "C" }])).toThrow(/platform component C has no docs rows/);
  });

  it("a row per release: the infrastructure's, then each service's in install order, with its own namespace and its APIs' lab NodePorts", () => {
    const rows = releaseRows(INFRASTRUCTURE_DOCS, OPENKEEL_SERVICES);
    expect(rows.map((r) => /^`([a-z0-9-]+)`/.exec(r[0])![1])).toEqual(["openkeel-chart", ...OPENKEEL_SERVICES.map((s) => `openkeel-${s.name}`)]);
    const ironic = rows.find((r) => r[0].startsWith("`openkeel-ironic`"))!;
    expect(ironic[0]).toBe("`openkeel-ironic` (namespace `openkeel-ironic`)");
    const heat = rows.find((r) => r[0] === "`openkeel-heat`")!;
    expect(heat[3]).toBe("`api`: 30600, `apiCfn`: 30601");
  });

  it("a service that says nothing of its row gets its components with their design rows' roles, runs of the same placement together", () => {
    const components = {
      api: api(30990),
      worker: worker(),
      scheduler: unlisted(worker()),
      agent: { ...worker(), design: { kind: "DaemonSet" as const, roles: ["compute" as const] } },
    };
    expect(componentsCell(components)).toBe("`api`, `worker` (controlPlane); `scheduler` (controlPlane; a post-render patch, below); `agent` (compute)");
    const [, row] = releaseRows(INFRASTRUCTURE_DOCS, [{ name: "x", components }]);
    expect(markdownTable(RELEASES_TABLE.header, [row]).split("\n")[2]).toBe(`| \`openkeel-x\` | ${componentsCell(components)} | | \`api\`: 30990 |`);
    const [, said] = releaseRows(INFRASTRUCTURE_DOCS, [{ name: "x", components, docs: { components: "its own words", values: "`x.y`" } }]);
    expect(said).toEqual(["`openkeel-x`", "its own words", "`x.y`", "`api`: 30990"]);
  });

  it.each(GENERATED_TABLES.map((t) => [t.file, t] as const))(
    "%s: only the table between its markers is rewritten; without them, nothing is and the command says how to fix it",
    (file, t) => {
      const text = fs.readFileSync(path.join(REPO, file), "utf8");
      const header = markdownTable(t.header, []).split("\n")[0];
      const changed = withTable(text, t, "| x |")!;
      expect(changed).toContain("| x |");
      expect(changed).not.toContain(header);
      expect(changed.split("| x |")[0]).toBe(text.split(header)[0]);
      expect(changed.split("| x |")[1]).toBe(text.slice(text.indexOf("<!-- end of the table written by npm run docs -->") - 1));
      expect(withTable("# no markers", t, "| x |")).toBeUndefined();
      expect(() => generatedDoc(t, "# no markers")).toThrow(/markers of its generated table are missing\. Fix: restore them/);
    },
  );
});
