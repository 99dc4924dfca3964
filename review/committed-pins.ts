// The committed state a change is judged against (review/reference.ts: every check of a transition,
// the upgrade check among them, platform/upgrades.ts), and the exports of platform/versions.ts at
// that commit, read through git. The committed state is, in order:
// - the ref given (`--base` of npm run plan and npm run render: a reference named by hand);
// - the last deployed commit of the stack: the branch `deployed/<stack>` that deploy.yml moves after
//   each successful `pulumi up` (a local `deployed/<stack>`, else `origin/deployed/<stack>`);
// - else, where the stack was never deployed, the commit the change builds on: the preview's base,
//   or HEAD, the committed state of this checkout (a clone without the refs, too).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vm from "node:vm";
import { transformSync } from "esbuild";
import { VERSIONS_FILE, type PinExports } from "../platform/upgrades";

/** A commit the change is compared with, and how it was chosen (for messages). */
export interface CommittedState {
  commit: string;
  /** `--base origin/main (1a2b3c4d5e6f)`, `deployed/prod-medium (…)`, `HEAD (…): no deployed/lab ref`. */
  where: string;
  /** The commit as a finding names it: `deployed/prod-medium (1a2b3c4d5e6f)`, `HEAD (…)`, `the base origin/main (…)`. */
  name: string;
  /** It is what is deployed (`deployed/<stack>`), not a fallback. */
  deployed: boolean;
}

/** Where a stack never deployed is judged instead of HEAD: the preview's base (its ref as given, and its commit). */
export interface Fallback {
  ref: string;
  commit: string;
}

const git = (repo: string, argv: string[]) => spawnSync("git", ["-C", repo, ...argv], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });

/** The work tree a folder lies in (git's top level), undefined when none; the folder may be missing. */
export function workTreeOf(folder: string): string | undefined {
  let dir = path.resolve(folder);
  while (!fs.existsSync(dir)) dir = path.dirname(dir);
  const top = git(dir, ["rev-parse", "--show-toplevel"]);
  return top.status === 0 ? top.stdout.trim() : undefined;
}

const commitOf = (repo: string, ref: string) => {
  const r = git(repo, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
  return r.status === 0 ? r.stdout.trim() : undefined;
};

/** The branch deploy.yml moves to the commit it deployed a stack from. */
export const deployedRef = (stack: string) => `deployed/${stack}`;

/** The last deployed commit of a stack in `repo` (`deployed/<stack>`, else `origin/deployed/<stack>`), if any. */
export function deployedState(repo: string, stack: string): CommittedState | undefined {
  for (const ref of [deployedRef(stack), `origin/${deployedRef(stack)}`]) {
    const c = commitOf(repo, `refs/heads/${ref}`) ?? commitOf(repo, `refs/remotes/${ref}`);
    if (c) return { commit: c, where: `${ref}, the last deployed commit (${c.slice(0, 12)})`, name: `${ref} (${c.slice(0, 12)})`, deployed: true };
  }
  return undefined;
}

/**
 * The committed state of a stack in `repo`: `base` when given (an unknown ref is the caller's
 * mistake: undefined), else its last deployed commit, else `fallback` (the preview's base), else
 * HEAD; undefined without any commit.
 */
export function committedState(repo: string, stack: string, base?: string, fallback?: Fallback): CommittedState | undefined {
  const short = (c: string) => c.slice(0, 12);
  if (base !== undefined) {
    const c = commitOf(repo, base);
    return c ? { commit: c, where: `--base ${base} (${short(c)})`, name: `${base} (${short(c)})`, deployed: false } : undefined;
  }
  const deployed = deployedState(repo, stack);
  if (deployed) return deployed;
  if (fallback) {
    const name = `the base ${fallback.ref} (${short(fallback.commit)})`;
    return { commit: fallback.commit, where: `${name}: no ${deployedRef(stack)} ref, so what the change builds on`, name, deployed: false };
  }
  const head = commitOf(repo, "HEAD");
  return head
    ? { commit: head, where: `HEAD (${short(head)}): no ${deployedRef(stack)} ref, so the committed state`, name: `HEAD (${short(head)})`, deployed: false }
    : undefined;
}

/** platform/versions.ts at a commit, or undefined when the commit has none. */
export function versionsAt(repo: string, commit: string): string | undefined {
  const r = git(repo, ["show", `${commit}:${VERSIONS_FILE}`]);
  return r.status === 0 ? r.stdout : undefined;
}

/**
 * The exports of a platform/versions.ts text, evaluated on its own: the file imports types only
 * (its header says so), so no other module of that commit runs. `where` names it in errors. The
 * text is transpiled by esbuild, as every command's TypeScript is (cli/ts-run.cjs): loading the
 * TypeScript compiler for it cost the preview about half a second of CPU.
 */
export function pinsOfSource(text: string, where: string): PinExports {
  const js = transformSync(text, { loader: "ts", format: "cjs", target: "es2022", sourcefile: VERSIONS_FILE }).code;
  const module = { exports: {} as Record<string, unknown> };
  const refuse = (id: string) => {
    throw new Error(`${where} imports ${id} at run time; the upgrade check reads it alone (platform/versions.ts may import types only)`);
  };
  vm.runInNewContext(js, { module, exports: module.exports, require: refuse }, { filename: where, timeout: 5000 });
  return module.exports;
}
