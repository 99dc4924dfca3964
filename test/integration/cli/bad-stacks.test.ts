// The bad-input catalog (test/fixtures/bad-stacks/): one broken stack file per mistake an operator
// can make. Each goes through `npm run render`'s own code beside a good stack: the exit code (2 bad
// config, 1 failed plan checks), one line per problem naming the stack file, the key path and the
// fix, no stack trace, and nothing written under the output folder. In-process through
// renderCommand (a process costs most of a second); a few real CLI runs prove the wiring is the same.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { capture } from "../../../cli/cli";
import { renderCommand } from "../../../pipeline/render-command";
import { readTree } from "../../../cli/write";
import { tsCommand } from "../../../cli/ts-command";
import { REPO, tempStacks } from "../../helpers/stacks";

const CATALOG = path.join(REPO, "test/fixtures/bad-stacks");
const GOOD = fs.readFileSync(path.join(REPO, "stacks/Pulumi.lab.yaml"), "utf8");

interface BadStack {
  name: string;
  text: string;
  exit: number;
  path?: string | undefined;
  message?: string | undefined;
  /** Must not appear in the output (a secret the stack file holds). */
  absent?: string | undefined;
}

function header(text: string, key: string): string | undefined {
  return new RegExp(`^# ${key}: (.*)$`, "m").exec(text)?.[1].trim();
}

const CASES: BadStack[] = fs
  .readdirSync(CATALOG)
  .filter((f) => f.endsWith(".yaml"))
  .sort()
  .map((f) => {
    const text = fs.readFileSync(path.join(CATALOG, f), "utf8");
    return {
      name: f.replace(/\.yaml$/, ""),
      text,
      exit: Number(header(text, "expect-exit")),
      path: header(text, "expect-path"),
      message: header(text, "expect-message"),
      absent: header(text, "expect-absent"),
    };
  });

/** A stacks folder with the good stack and the broken one, and an output folder already holding a render. */
function setup(c: BadStack) {
  const dir = tempStacks({ good: GOOD, [c.name]: c.text });
  const out = path.join(dir, "out");
  fs.mkdirSync(path.join(out, "good", "values"), { recursive: true });
  fs.writeFileSync(path.join(out, "good", "index.yaml"), "# the previous render\nstack: good\n");
  fs.writeFileSync(path.join(out, "good", "values", "x.yaml"), "a: 1\n");
  return { dir, out, file: path.join(dir, `Pulumi.${c.name}.yaml`) };
}

/** Every entry under a folder, directories included (a left-over temporary folder counts). */
function entries(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).map((e) => e.split(path.sep).join("/")).sort();
}

function expectReported(c: BadStack, file: string, r: { code: number; stdout: string; stderr: string }) {
  expect(r.code, r.stderr).toBe(c.exit);
  expect(r.stdout).toBe("");
  const lines = r.stderr.trimEnd().split("\n");
  for (const line of lines) {
    // one line per problem: the broken stack's file first (never the good one), then a fix
    expect(line.startsWith(`${file}: `), line).toBe(true);
    expect(line, line).toMatch(/\. Fix: \S/);
  }
  const at = (line: string) => line.slice(file.length + 2);
  const matching = lines.filter((l) => (c.path === undefined || at(l).startsWith(c.path)) && (c.message === undefined || at(l).includes(c.message)));
  expect(matching, `no line at ${c.path} saying '${c.message}' in:\n${r.stderr}`).not.toHaveLength(0);
  if (c.path?.startsWith("openkeel:")) expect(matching.some((l) => at(l).startsWith(`${c.path}: `))).toBe(true);
  expect(r.stderr).not.toMatch(/internal error|^\s+at |\.[jt]s:\d+:\d+/m);
  if (c.absent) expect(r.stderr).not.toContain(c.absent);
}

describe("the bad-input catalog", () => {
  it("holds at least 40 broken stacks, each saying what is broken and what to expect", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    for (const c of CASES) {
      expect(header(c.text, "BROKEN"), c.name).toMatch(/\w/);
      expect([1, 2], c.name).toContain(c.exit);
      expect(c.path !== undefined || c.message !== undefined, c.name).toBe(true);
    }
    // both kinds of failure are covered
    expect(CASES.filter((c) => c.exit === 1).length).toBeGreaterThanOrEqual(10);
    expect(CASES.filter((c) => c.exit === 2).length).toBeGreaterThanOrEqual(30);
  });

  it.each(CASES.map((c) => [c.name, c] as const))("%s: exit code, file, key path and fix, nothing written", async (_name, c) => {
    const { out, file, dir } = setup(c);
    const before = readTree(out);
    const listing = entries(out);
    const r = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    expectReported(c, file, r);
    expect(readTree(out)).toEqual(before);
    expect(entries(out)).toEqual(listing);
  });
});

describe("the catalog through the real CLI", () => {
  // one of each way to fail: YAML, the schema, the values contract, a plan check
  const sample = ["yaml-undefined-alias", "unknown-role", "values-literal-shared-secret", "ironic-conductors-exceed-nodes"];

  it.each(sample)("%s: the CLI exits and prints exactly what renderCommand returns", async (name) => {
    const c = CASES.find((x) => x.name === name)!;
    const { out, file, dir } = setup(c);
    const before = readTree(out);
    const argv = ["--stacks-dir", dir, "--out", out];
    const cli = spawnSync(...tsCommand(path.join(REPO, "scripts/render.ts"), argv), { cwd: REPO, encoding: "utf8" });
    const cliResult = { code: cli.status ?? -1, stdout: cli.stdout, stderr: cli.stderr };
    expectReported(c, file, cliResult);
    expect(cliResult).toEqual(await capture(renderCommand, argv));
    expect(readTree(out)).toEqual(before);
  });
});
