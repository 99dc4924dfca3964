// npm run drift: a fresh render compared with the committed one — exit 0 when equal, 1 with each
// stale file (YAML field by field) when not, the render's own exit code when it cannot render.
// The command runs in-process (review/drift-command.ts; its fresh render is still a child
// process); the real CLI runs in cli.test.ts (its progress lines).
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { capture } from "../../../cli/cli";
import { driftCommand } from "../../../review/drift-command";
import { renderCommand } from "../../../pipeline/render-command";
import { REPO, tempStacks } from "../../helpers/stacks";

const temps: string[] = [];
afterAll(() => temps.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** prod-small's stack file and its render, made once; each test edits a copy. */
let original: string;
beforeAll(async () => {
  original = tempStacks({ "prod-small": fs.readFileSync(path.join(REPO, "stacks/Pulumi.prod-small.yaml"), "utf8") });
  temps.push(original);
  expect((await capture(renderCommand, ["--stacks-dir", original, "--out", path.join(original, "rendered")])).code).toBe(0);
});

/** A stacks folder with prod-small and its committed-looking render beside it. */
function fixture() {
  const dir = fs.mkdtempSync(`${original}-copy-`);
  temps.push(dir);
  fs.cpSync(original, dir, { recursive: true });
  const rendered = path.join(dir, "rendered");
  return { dir, rendered, drift: () => capture(driftCommand, ["--stacks-dir", dir, "--rendered", rendered]) };
}

describe("npm run drift", () => {
  it("up to date: exit 0", async () => {
    const f = fixture();
    const r = await f.drift();
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/is up to date: \d+ files match a fresh render/);
  });

  it("an edited, a missing and an extra file: exit 1, each listed, YAML by field, with the fix", async () => {
    const f = fixture();
    const objects = path.join(f.rendered, "prod-small", "objects", "01-node-roles", "node-roles");
    const [first, second] = fs.readdirSync(objects).sort();
    const edited = path.join(objects, first);
    fs.writeFileSync(edited, fs.readFileSync(edited, "utf8").replace(/^(\s+name: )(.*)$/m, "$1renamed"));
    fs.rmSync(path.join(objects, second));
    fs.writeFileSync(path.join(f.rendered, "prod-small", "leftover.yaml"), "a: 1\n");
    const r = await f.drift();
    expect(r.code).toBe(1);
    const rel = (p: string) => `${f.rendered}/prod-small/${p}`;
    expect(r.stderr).toContain(`${rel(`objects/01-node-roles/node-roles/${first}`)}: differs from a fresh render`);
    expect(r.stderr).toMatch(/^ {6}metadata\.name: "renamed" → "[^"]+"$/m);
    expect(r.stderr).toContain(`${rel(`objects/01-node-roles/node-roles/${second}`)}: missing (the render writes it)`);
    expect(r.stderr).toContain(`${rel("leftover.yaml")}: stale (the render no longer writes it)`);
    expect(r.stderr).toMatch(/Fix: run `npm run render` and commit rendered\/\./);
  });

  it("a stack that does not load: the render's exit code and message", async () => {
    const f = fixture();
    fs.writeFileSync(path.join(f.dir, "Pulumi.prod-small.yaml"), "config:\n  openkeel:environment: nowhere\n");
    const r = await f.drift();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the render failed \(exit 2\):\n.*Pulumi\.prod-small\.yaml: openkeel:environment/);
  });
});
