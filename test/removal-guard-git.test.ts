// The removal guard without a render on disk (issue 14, item 20): when the output folder lacks the
// stack's render (rendered/ deleted, a fresh clone that never rendered), the guard compares with
// the committed render (git HEAD) of that folder; when neither exists, the render says so.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { capture } from "../cli/cli";
import { renderCommand } from "../pipeline/render-command";
import { REPO } from "./helpers/stacks";

const medium = fs.readFileSync(path.join(REPO, "stacks/Pulumi.prod-medium.yaml"), "utf8");
const withGlanceOff = medium.replace("  openkeel:services:\n", "  openkeel:services:\n    glance:\n      enabled: false\n");

function git(cwd: string, ...argv: string[]) {
  const r = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...argv], { cwd, encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
}

/** A git repository holding stacks/Pulumi.s.yaml and its committed render in rendered/s/. */
async function committedRepo() {
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-guard-"));
  fs.mkdirSync(path.join(repo, "stacks"));
  fs.writeFileSync(path.join(repo, "stacks", "Pulumi.s.yaml"), medium);
  const first = await capture(renderCommand, ["--stacks-dir", path.join(repo, "stacks"), "--out", path.join(repo, "rendered")]);
  expect(first.code, first.stderr).toBe(0);
  git(repo, "init", "-q");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "render");
  return repo;
}

describe("the removal guard without rendered/ on disk", () => {
  it("compares with the committed render: turning Glance off is refused, naming git HEAD", async () => {
    const repo = await committedRepo();
    fs.rmSync(path.join(repo, "rendered"), { recursive: true });
    fs.writeFileSync(path.join(repo, "stacks", "Pulumi.s.yaml"), withGlanceOff);
    const r = await capture(renderCommand, ["--stacks-dir", path.join(repo, "stacks"), "--out", path.join(repo, "rendered")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "error [protected-removal]: unit openkeel-glance owns data (protected) and would be removed (git HEAD:rendered/s/index.yaml has it)",
    );
    expect(fs.existsSync(path.join(repo, "rendered"))).toBe(false);
    // the flag lets it through as it does against a render on disk
    const allowed = await capture(renderCommand, [
      "--stacks-dir",
      path.join(repo, "stacks"),
      "--out",
      path.join(repo, "rendered"),
      "--allow-removal",
      "openkeel-glance",
    ]);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toMatch(/allowed by --allow-removal openkeel-glance/);
  });

  it("the committed render is only the fallback: a render on disk wins", async () => {
    const repo = await committedRepo();
    fs.writeFileSync(path.join(repo, "stacks", "Pulumi.s.yaml"), withGlanceOff);
    const argv = ["--stacks-dir", path.join(repo, "stacks"), "--out", path.join(repo, "rendered")];
    expect((await capture(renderCommand, [...argv, "--allow-removal", "openkeel-glance"])).code).toBe(0);
    // rendered/ now lacks Glance (HEAD still has it): the guard reads the folder and passes
    const again = await capture(renderCommand, argv);
    expect(again.code, again.stderr).toBe(0);
  });

  it("says so when neither a render on disk nor a committed one exists", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-guard-"));
    fs.writeFileSync(path.join(dir, "Pulumi.s.yaml"), medium);
    const out = path.join(dir, "out");
    const r = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `s: no previous render to guard the units that own data against (${path.join(out, "s", "index.yaml")} is absent, and git HEAD holds none)`,
    );
  });
});
