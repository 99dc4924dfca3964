// README.md is what a newcomer reads in one minute (issue 47 item 5): what the repository is, the two
// commands, where a change goes; at most 150 lines, the rest in docs/. Moving a section there keeps
// every link to it working: each relative link of the README and the docs names a file that exists,
// and its #anchor a heading of that file (as GitHub makes anchors from headings).
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../helpers/stacks";

const README_MAX_LINES = 150;

/** The Markdown files a reader follows links through: the README, docs/, and the folders' READMEs. */
const PAGES = [
  "README.md",
  ...fs
    .readdirSync(path.join(REPO, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
  "stacks/README.md",
  "e2e/README.md",
];

/** A text's lines outside fenced code blocks, inline code removed (a link there is no link). */
function prose(text: string): string[] {
  let fenced = false;
  return text.split("\n").flatMap((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return [];
    }
    return fenced ? [] : [line.replace(/`[^`]*`/g, "``")];
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes; a repeat gets -1, -2, …. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\- _]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every relative link of a page that leads nowhere: `page: target (why)`. */
function brokenLinks(page: string, read: (file: string) => string | undefined): string[] {
  const text = read(page)!;
  const targets = prose(text).flatMap((line) => [...line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]));
  return targets.flatMap((target) => {
    if (/^[a-z]+:/i.test(target)) return [];
    const [file, anchor] = target.split("#") as [string, string | undefined];
    const resolved = file === "" ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
    const linked = read(resolved.replace(/\/$/, ""));
    if (linked === undefined) return [`${page}: ${target} (no file ${resolved})`];
    if (anchor !== undefined && resolved.endsWith(".md") && !anchors(linked).has(anchor)) return [`${page}: ${target} (no heading #${anchor} in ${resolved})`];
    return [];
  });
}

/** A repository file's text, "" for a folder, undefined when there is none. */
function readRepo(file: string): string | undefined {
  const full = path.join(REPO, file);
  if (!fs.existsSync(full)) return undefined;
  return fs.statSync(full).isDirectory() ? "" : fs.readFileSync(full, "utf8");
}

describe("README.md: a newcomer's one minute", () => {
  it(`is at most ${README_MAX_LINES} lines`, () => {
    const lines = fs.readFileSync(path.join(REPO, "README.md"), "utf8").trimEnd().split("\n").length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it("keeps the two commands and points to where a change goes", () => {
    const readme = fs.readFileSync(path.join(REPO, "README.md"), "utf8");
    expect(readme).toMatch(/^npm ci && npm run render\s/m);
    expect(readme).toMatch(/^npm test\s/m);
    expect(readme).toContain("](docs/where-a-change-goes.md)");
  });
});

describe("the docs' links", () => {
  it("every relative link of the README and the docs leads to a file, and its anchor to a heading there", () => {
    expect(PAGES.flatMap((page) => brokenLinks(page, readRepo))).toEqual([]);
  });

  it("a link to a moved file or a renamed heading is found", () => {
    const pages: Record<string, string> = {
      "README.md": "See [layout](docs/layout.md), [flow](docs/where.md#data-flow) and [here](#two-commands).\n\n## Two commands\n",
      "docs/where.md": "# Where a change goes\n\n## Data flows\n\n```\n[not a link](nowhere.md)\n```\n",
    };
    expect(brokenLinks("README.md", (f) => pages[f])).toEqual([
      "README.md: docs/layout.md (no file docs/layout.md)",
      "README.md: docs/where.md#data-flow (no heading #data-flow in docs/where.md)",
    ]);
    expect(brokenLinks("docs/where.md", (f) => pages[f])).toEqual([]);
  });

  it("makes anchors as GitHub does: code and punctuation kept as text, repeats numbered", () => {
    expect([...anchors("## The real engine: `npm run e2e`\n## `.ci/run`\n## Node.js\n## Node.js\n")]).toEqual([
      "the-real-engine-npm-run-e2e",
      "cirun",
      "nodejs",
      "nodejs-1",
    ]);
  });
});
