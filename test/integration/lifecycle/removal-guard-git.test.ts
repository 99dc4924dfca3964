// What the render judges a change against, in git (issue 38): what is deployed (deployed/<stack>),
// else the committed render (git HEAD), whatever the output folder holds; outside git, the render on
// disk; with neither, the render says it judged nothing.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { capture } from "../../../cli/cli";
import { renderCommand } from "../../../pipeline/render-command";
import { REPO } from "../../helpers/stacks";

const medium = fs.readFileSync(path.join(REPO, "stacks/Pulumi.prod-medium.yaml"), "utf8");
const withGlanceOff = medium.replace("  openkeel:services:\n", "  openkeel:services:\n    glance:\n      enabled: false\n");

function git(cwd: string, ...argv: string[]) {
  const r = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...argv], { cwd, encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim();
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

describe("what the render judges against, in git", () => {
  it("the committed render, without rendered/ on disk: turning Glance off is refused, naming git HEAD", async () => {
    const repo = await committedRepo();
    const head = git(repo, "rev-parse", "HEAD").slice(0, 12);
    fs.rmSync(path.join(repo, "rendered"), { recursive: true });
    fs.writeFileSync(path.join(repo, "stacks", "Pulumi.s.yaml"), withGlanceOff);
    const r = await capture(renderCommand, ["--stacks-dir", path.join(repo, "stacks"), "--out", path.join(repo, "rendered")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`s, against HEAD (${head}): no deployed/s ref, so the committed state: `);
    expect(r.stderr).toContain("error [protected-delete]: unit openkeel-glance (release openkeel-glance) would be deleted");
    expect(fs.existsSync(path.join(repo, "rendered"))).toBe(false);
  });

  it("a render on disk does not change the verdict: the committed render is the reference, not the output folder", async () => {
    const repo = await committedRepo();
    const file = path.join(repo, "stacks", "Pulumi.s.yaml");
    const argv = ["--stacks-dir", path.join(repo, "stacks"), "--out", path.join(repo, "rendered")];
    fs.writeFileSync(file, withGlanceOff.replace("config:\n", "config:\n  openkeel:allowRemoval: [openkeel-glance]\n"));
    expect((await capture(renderCommand, argv)).code).toBe(0);
    // rendered/ now lacks Glance, HEAD still has it: without the marker, the render is refused again
    fs.writeFileSync(file, withGlanceOff);
    const again = await capture(renderCommand, argv);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("error [protected-delete]: unit openkeel-glance");
  });

  it("what is deployed wins over HEAD: deployed/<stack>, else origin/deployed/<stack>", async () => {
    const repo = await committedRepo();
    const deployed = git(repo, "rev-parse", "HEAD");
    git(repo, "update-ref", "refs/remotes/origin/deployed/s", deployed);
    // HEAD drops Glance (allowed, committed); deployed/s still runs it
    const file = path.join(repo, "stacks", "Pulumi.s.yaml");
    const argv = ["--stacks-dir", path.join(repo, "stacks"), "--out", path.join(repo, "rendered")];
    fs.writeFileSync(file, withGlanceOff.replace("config:\n", "config:\n  openkeel:allowRemoval: [openkeel-glance]\n"));
    expect((await capture(renderCommand, argv)).code).toBe(0);
    git(repo, "add", "-A");
    git(repo, "commit", "-qm", "glance off");
    // the marker removed too early: HEAD has no Glance, but what is deployed does
    fs.writeFileSync(file, withGlanceOff);
    const r = await capture(renderCommand, argv);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`s, against origin/deployed/s, the last deployed commit (${deployed.slice(0, 12)}): `);
    expect(r.stderr).toContain("error [protected-delete]: unit openkeel-glance");
  });

  it("says so when neither a committed render nor a render on disk exists", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-guard-"));
    fs.writeFileSync(path.join(dir, "Pulumi.s.yaml"), medium);
    const out = path.join(dir, "out");
    const r = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `  transition not judged: the stacks folder is in no git work tree: no committed state to compare with, and no previous render in ${path.join(out, "s")} either: nothing to judge the change against\n`,
    );
  });
});
