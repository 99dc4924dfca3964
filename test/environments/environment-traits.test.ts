// Environment differences live in the environment registry: the layers below environments/ read
// the traits an environment hands them (topology/environment.ts), never its name or a production
// flag; and each trait that another fact implies agrees with it.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ENVIRONMENTS } from "../../environments/registry";
import { REPO } from "../helpers/stacks";

/** The product folders below environments/ (docs/where-a-change-goes.md, "Layout"). */
const BELOW = ["config", "topology", "plan", "placement", "render", "platform", "openkeel", "nodes"];
const NAMES = Object.keys(ENVIRONMENTS);

/** Code lines of a TypeScript file: comments and string contents left out. */
function codeOf(file: string): string[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => !/^\s*(\/\/|\*|\/\*\*)/.test(l));
}

/** Places below environments/ that tell environments apart by name or by a production flag. */
function environmentTests(files: string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    codeOf(file).forEach((line, i) => {
      const named = NAMES.some((n) => new RegExp(`[!=]==?\\s*"${n}"|"${n}"\\s*[!=]==?`).test(line));
      if (named || /\.production\b|\bctx\.talos\b/.test(line)) found.push(`${path.relative(REPO, file)}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

describe("environment traits", () => {
  const files = BELOW.flatMap((d) =>
    (fs.readdirSync(path.join(REPO, d), { recursive: true }) as string[]).filter((f) => f.endsWith(".ts")).map((f) => path.join(REPO, d, f)),
  );

  it("no layer below environments/ compares an environment name or reads a production flag", () => {
    expect(files.length).toBeGreaterThan(50);
    expect(environmentTests(files)).toEqual([]);
  });

  it("the check trips on a comparison of a name and on a production flag", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-traits-"));
    try {
      const file = path.join(dir, "x.ts");
      fs.writeFileSync(file, 'const a = cfg.environment === "talos-production";\nconst b = topo.production;\n// "kind-lab" === x in a comment\n');
      expect(environmentTests([file])).toEqual([
        expect.stringMatching(/x\.ts:1: const a = cfg\.environment === "talos-production";$/),
        expect.stringMatching(/x\.ts:2: const b = topo\.production;$/),
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
