// What a change is judged against (issue 38): per stack, its committed state (./committed-pins.ts:
// what is deployed, `deployed/<stack>`, else the commit the change builds on) and the stack's render
// committed there, `rendered/<stack>/` beside the stacks folder, read through git. Plan, render, the
// preview and the deploy gate all judge a stack's transition against it (./verdict.ts), and every
// message names it. Outside git, the render on disk in the output folder is all there is.
//
// Only what differs is read: git names each committed file's blob, and a file of the new render
// whose blob is the same is that text (shared, so parsed once); the others come in one `git cat-file`.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { INDEX_FILE, readRenderedDir, RenderedStack } from "../render/rendered";
import type { CommittedState } from "./committed-pins";

/** What a stack's transition is judged against. */
export interface Reference {
  /** What a command says it judged against: `deployed/prod-medium, the last deployed commit (1a2b3c4d5e6f)`. */
  where: string;
  /** What a finding names: `deployed/prod-medium (1a2b3c4d5e6f)`, `HEAD (…)`. */
  name: string;
  /** The commit, when the reference is one (outside git, a render on disk). */
  commit?: string;
  /** It is what is deployed, not a fallback. */
  deployed: boolean;
  /** The stack's render there; undefined: it had none (`note` says why nothing is judged). */
  render?: RenderedStack;
  note?: string;
}

const git = (repo: string, argv: string[], input?: string) =>
  spawnSync("git", ["-C", repo, ...argv], { encoding: "buffer", maxBuffer: 1024 * 1024 * 1024, ...(input !== undefined ? { input: Buffer.from(input) } : {}) });

/** git's object id of a blob with this text (sha1, or sha256 in a repository of that format: `length` of its ids). */
function blobId(text: string, length: number): string {
  const body = Buffer.from(text, "utf8");
  return createHash(length === 64 ? "sha256" : "sha1")
    .update(`blob ${body.length}\0`)
    .update(body)
    .digest("hex");
}

/** The blobs of the files under `dir` (repository-relative, with a trailing slash) at `commit`: file relative to `dir` → id. */
function blobsAt(repo: string, commit: string, dir: string): Map<string, string> {
  const r = git(repo, ["ls-tree", "-r", "-z", "--full-tree", commit, "--", dir]);
  if (r.status !== 0) throw new Error(`git ls-tree ${commit} ${dir}: ${r.stderr.toString()}`);
  const out = new Map<string, string>();
  for (const entry of r.stdout.toString("utf8").split("\0")) {
    const tab = entry.indexOf("\t");
    if (tab < 0) continue;
    const [, type, id] = entry.slice(0, tab).split(" ");
    if (type === "blob") out.set(entry.slice(tab + 1).slice(dir.length), id);
  }
  return out;
}

/** The texts of blobs, in one `git cat-file --batch`. */
function readBlobs(repo: string, ids: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (ids.length === 0) return out;
  const r = git(repo, ["cat-file", "--batch"], `${ids.join("\n")}\n`);
  if (r.status !== 0) throw new Error(`git cat-file --batch: ${r.stderr.toString()}`);
  let at = 0;
  const buf = r.stdout;
  while (at < buf.length) {
    const eol = buf.indexOf(0x0a, at);
    const [id, , size] = buf.subarray(at, eol).toString("utf8").split(" ");
    const start = eol + 1;
    out.set(id, buf.subarray(start, start + Number(size)).toString("utf8"));
    at = start + Number(size) + 1;
  }
  return out;
}

/**
 * The render of `stack` committed at `commit` in `repo`, under `renderedDir` (repository-relative:
 * `rendered`), its unchanged files the new render's own texts (`head`); undefined when the commit
 * has none.
 */
function committedRender(
  repo: string,
  commit: string,
  renderedDir: string,
  stack: string,
  head: ReadonlyMap<string, string>,
  where: string,
  parsed?: Map<string, unknown[]>,
): RenderedStack | undefined {
  const dir = `${renderedDir ? `${renderedDir}/` : ""}${stack}/`;
  const blobs = blobsAt(repo, commit, dir);
  if (!blobs.has(INDEX_FILE)) return undefined;
  const files = new Map<string, string>();
  const missing: string[] = [];
  for (const [file, id] of blobs) {
    const text = head.get(file);
    if (text !== undefined && blobId(text, id.length) === id) files.set(file, text);
    else missing.push(file);
  }
  const read = readBlobs(
    repo,
    missing.map((f) => blobs.get(f)!),
  );
  for (const f of missing) files.set(f, read.get(blobs.get(f)!)!);
  return new RenderedStack(files, where, parsed);
}

/** The repository-relative folder of the committed renders: `rendered/` beside the stacks folder; undefined outside `repo`. */
export function renderedFolderIn(repo: string, stacksDir: string): string | undefined {
  const rel = path
    .relative(fs.realpathSync(repo), path.join(fs.realpathSync(path.resolve(stacksDir)), "..", "rendered"))
    .split(path.sep)
    .join("/");
  return rel.startsWith("..") ? undefined : rel;
}

/**
 * What one stack is judged against: its committed state's render (`state`, in `repo`, under
 * `renderedDir`), or, outside git (`state` undefined), the render on disk in `onDisk` when given.
 */
export function stackReference(o: {
  repo?: string | undefined;
  stack: string;
  state?: CommittedState | undefined;
  /** Why there is no committed state. */
  note?: string | undefined;
  renderedDir?: string | undefined;
  /** `<out>/<stack>`: the previous render, the reference outside git. */
  onDisk?: string | undefined;
  head: ReadonlyMap<string, string>;
  parsed?: Map<string, unknown[]> | undefined;
}): Reference {
  const { repo, state, stack } = o;
  if (repo !== undefined && state) {
    const { where, name } = state;
    const at = { where, name, commit: state.commit, deployed: state.deployed };
    if (o.renderedDir === undefined) return { ...at, note: `no rendered/ folder beside the stacks folder in ${repo}` };
    const render = committedRender(repo, state.commit, o.renderedDir, stack, o.head, name, o.parsed);
    return render
      ? { ...at, render }
      : { ...at, note: `${name} has no ${o.renderedDir}/${stack}/${INDEX_FILE}: a stack it did not have, nothing to judge against` };
  }
  if (o.onDisk && fs.existsSync(path.join(o.onDisk, INDEX_FILE))) {
    const name = `the render in ${o.onDisk}`;
    return { where: `${name} (${o.note ?? "no git"})`, name, deployed: false, render: readRenderedDir(o.onDisk) };
  }
  const none = o.onDisk ? `no previous render in ${o.onDisk} either` : "no previous render to read";
  return { where: "nothing", name: "nothing", deployed: false, note: `${o.note ?? "no git"}, and ${none}: nothing to judge the change against` };
}
