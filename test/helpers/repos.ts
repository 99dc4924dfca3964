// Temporary git repositories for the suites that compare commits (the preview, the upgrade check,
// the URN graph): git without the caller's GIT_* environment, and this working tree committed afresh.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll } from "vitest";
import { REPO } from "./stacks";

export const GIT_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GIT_")));

/** git in `cwd` as a test user; throws with git's stderr when it fails. */
export function git(cwd: string, ...argv: string[]): string {
  const r = spawnSync("git", ["-c", "user.name=test", "-c", "user.email=test@example.invalid", ...argv], { cwd, encoding: "utf8", env: GIT_ENV });
  if (r.status !== 0) throw new Error(`git ${argv.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/**
 * This repository's files (tracked and new, as in the working tree) committed in a fresh repository
 * under `parent` (a temporary folder the caller removes), with this checkout's node_modules linked in.
 */
export function cloneWorkingTree(parent = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-repo-"))): string {
  const repo = path.join(parent, "repo");
  const files = git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0").filter(Boolean);
  for (const f of files) {
    const from = path.join(REPO, f);
    if (!fs.existsSync(from) || fs.lstatSync(from).isSymbolicLink()) continue;
    fs.mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
    fs.copyFileSync(from, path.join(repo, f));
  }
  fs.symlinkSync(fs.realpathSync(path.join(REPO, "node_modules")), path.join(repo, "node_modules"), "dir");
  git(repo, "init", "-q", "-b", "main");
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "base");
  return repo;
}

/** A file of `repo` with `from` replaced by `to` (exactly once: a pattern that matches elsewhere is the test's mistake). */
export function replaceOnce(repo: string, file: string, from: string, to: string): void {
  const p = path.join(repo, file);
  const text = fs.readFileSync(p, "utf8");
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`${file}: ${JSON.stringify(from)} is not there exactly once`);
  fs.writeFileSync(p, text.slice(0, at) + to + text.slice(at + from.length));
}

/** A maker of temporary folders (`tmp(prefix)`), each removed after the calling test file's tests. */
export function tempFolders(): (prefix: string) => string {
  const made: string[] = [];
  afterAll(() => made.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  return (prefix) => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    made.push(d);
    return d;
  };
}
