// npm run drift: a fresh render compared with the committed one — exit 0 when equal, 1 with each
// stale file (YAML field by field) when not, the render's own exit code when it cannot render.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO, tempStacks } from "./helpers/stacks";

const TSX = path.join(REPO, "node_modules", ".bin", "tsx");
const temps: string[] = [];
afterAll(() => temps.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function cli(script: string, argv: string[]) {
  const r = spawnSync(TSX, [path.join(REPO, "scripts", script), ...argv], { cwd: REPO, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A stacks folder with prod-small and its committed-looking render beside it. */
function fixture() {
  const dir = tempStacks({ "prod-small": fs.readFileSync(path.join(REPO, "stacks/Pulumi.prod-small.yaml"), "utf8") });
  temps.push(dir);
  const rendered = path.join(dir, "rendered");
  expect(cli("render.ts", ["--stacks-dir", dir, "--out", rendered]).code).toBe(0);
  return { dir, rendered, drift: () => cli("drift.ts", ["--stacks-dir", dir, "--rendered", rendered]) };
}

describe("npm run drift", () => {
  it("up to date: exit 0", () => {
    const f = fixture();
    const r = f.drift();
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/is up to date: \d+ files match a fresh render/);
  });

  it("an edited, a missing and an extra file: exit 1, each listed, YAML by field, with the fix", () => {
    const f = fixture();
    const objects = path.join(f.rendered, "prod-small", "objects", "01-node-roles", "node-roles");
    const [first, second] = fs.readdirSync(objects).sort();
    const edited = path.join(objects, first);
    fs.writeFileSync(edited, fs.readFileSync(edited, "utf8").replace(/^(\s+name: )(.*)$/m, "$1renamed"));
    fs.rmSync(path.join(objects, second));
    fs.writeFileSync(path.join(f.rendered, "prod-small", "leftover.yaml"), "a: 1\n");
    const r = f.drift();
    expect(r.code).toBe(1);
    const rel = (p: string) => `${f.rendered}/prod-small/${p}`;
    expect(r.stderr).toContain(`${rel(`objects/01-node-roles/node-roles/${first}`)}: differs from a fresh render`);
    expect(r.stderr).toMatch(/^ {6}metadata\.name: "renamed" → "[^"]+"$/m);
    expect(r.stderr).toContain(`${rel(`objects/01-node-roles/node-roles/${second}`)}: missing (the render writes it)`);
    expect(r.stderr).toContain(`${rel("leftover.yaml")}: stale (the render no longer writes it)`);
    expect(r.stderr).toMatch(/Fix: run `npm run render` and commit rendered\/\./);
  });

  it("a stack that does not load: the render's exit code and message", () => {
    const f = fixture();
    fs.writeFileSync(path.join(f.dir, "Pulumi.prod-small.yaml"), "config:\n  openkeel:environment: nowhere\n");
    const r = f.drift();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the render failed \(exit 2\):\n.*Pulumi\.prod-small\.yaml: openkeel:environment/);
  });
});
