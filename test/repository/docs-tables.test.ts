// The docs' tables of node states held to STATE_TRAITS (config/lifecycle.ts), the one definition:
// docs/node-lifecycle.md's tables (what `pulumi up` does per state, and the traits matrix) and
// stacks/README.md's `state` cell list every state, and the matrix ticks exactly the traits each
// state has. A state added to STATE_TRAITS, or a trait changed, fails here until the docs say it.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { NODE_STATES, STATE_TRAITS, type StateTraits } from "../../config/lifecycle";
import { platformTable, withPlatformTable, type DocsRow } from "../../platform/docs-row";
import { PLATFORM_DOC, platformDoc } from "../../tools/docs-command";
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

describe("docs/platform.md's table is written from the components' own rows (npm run docs)", () => {
  it("the file holds the table npm run docs writes", () => {
    const text = fs.readFileSync(path.join(REPO, PLATFORM_DOC), "utf8");
    expect(platformDoc(text), "run npm run docs").toBe(text);
  });

  it("a row each component carries, in order; a component without rows is refused by name", () => {
    const row = (component: string): DocsRow => ({ component, version: "v1", installedAs: "Helm", phase: "platform", where: "a \\| b", stacks: "all" });
    const table = platformTable([
      { name: "A", docs: [row("A"), row("A's classes")] },
      { name: "B", docs: [row("B")] },
    ]).split("\n");
    expect(table.slice(2).map((l) => l.split(" | ")[0])).toEqual(["| A", "| A's classes", "| B"]);
    expect(table[2]).toBe("| A | v1 | Helm | platform | a \\| b | all |");
    expect(() => platformTable([{ name: "C" }])).toThrow(/platform component C has no docs rows/);
  });

  it("only the table between the markers is rewritten; without them, nothing is and the command says how to fix it", () => {
    const text = fs.readFileSync(path.join(REPO, PLATFORM_DOC), "utf8");
    const changed = withPlatformTable(text, "| x |")!;
    expect(changed).toContain("| x |");
    expect(changed).not.toContain("| component | version |");
    expect(changed.split("| x |")[0]).toBe(text.split("| component | version |")[0]);
    expect(withPlatformTable("# no markers", "| x |")).toBeUndefined();
    expect(() => platformDoc("# no markers")).toThrow(/markers of its generated table are missing\. Fix: restore them/);
  });
});
