// Writing rendered/ and reports without ever leaving them half-written: each stack is written to a
// sibling temporary folder, then swapped in with renames; a single file through a temporary one.
// A render stopped by a signal removes its temporary folder (writeStackDir yields to the event loop
// while it writes, so that a signal's listener runs); one killed outright (SIGKILL, a crash, the
// machine) leaves it, and the next render and `npm run drift` remove it (leftovers()).
import * as fs from "node:fs";
import * as path from "node:path";
import type { RenderedFile } from "../render/rendered";
import { byCodePoint } from "../config/plain";

/** How many files are written between two turns of the event loop (a signal is heard at a turn). */
const FILES_PER_TURN = 32;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Beside rendered/<stack>/ while a render writes it: `.<stack>.tmp-<pid>` (the new render) and `.<stack>.old-<pid>` (the previous one, moved aside). */
const WRITING = /^\.(.+)\.(tmp|old)-(\d+)$/;
const tmpDir = (outDir: string, stack: string, pid = process.pid) => path.join(outDir, `.${stack}.tmp-${pid}`);
const oldDir = (outDir: string, stack: string, pid = process.pid) => path.join(outDir, `.${stack}.old-${pid}`);

/**
 * Write a stack's files whole or not at all. `signal` aborts it between two files (the temporary
 * folder removed, the previous render left as it was); `afterTurn` runs at each turn (tests: a
 * pause while the temporary folder exists).
 */
export async function writeStackDir(
  outDir: string,
  stack: string,
  files: RenderedFile[],
  o: { signal?: AbortSignal | undefined; afterTurn?: ((signal?: AbortSignal) => Promise<void>) | undefined } = {},
): Promise<void> {
  fs.mkdirSync(outDir, { recursive: true });
  const final = path.join(outDir, stack);
  const tmp = tmpDir(outDir, stack);
  const old = oldDir(outDir, stack);
  fs.rmSync(tmp, { recursive: true, force: true });
  try {
    // each folder made once (a recursive mkdirSync per file was a tenth of a render: npm run bench)
    const made = new Set<string>();
    for (const [i, f] of files.entries()) {
      if (i % FILES_PER_TURN === 0) {
        await turn();
        o.signal?.throwIfAborted();
        if (i > 0) await o.afterTurn?.(o.signal);
        o.signal?.throwIfAborted();
      }
      const target = path.join(tmp, ...f.path.split("/"));
      const dir = path.dirname(target);
      if (!made.has(dir)) {
        fs.mkdirSync(dir, { recursive: true });
        made.add(dir);
      }
      fs.writeFileSync(target, f.content);
    }
    // the two renames run back to back, with no turn between them
    if (fs.existsSync(final)) fs.renameSync(final, old);
    fs.renameSync(tmp, final);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.rmSync(old, { recursive: true, force: true });
  }
}

/** Whether a name in the output folder is a render's folder beside a stack's (`.<stack>.tmp-<pid>`), never a stack's render. */
export const isWritingFolder = (name: string): boolean => WRITING.test(name);

/** A folder an interrupted render left in the output folder. */
export interface Leftover {
  /** Its name in the output folder: `.<stack>.tmp-<pid>`. */
  name: string;
  stack: string;
  kind: "tmp" | "old";
  pid: number;
  /** Whether the process that writes it still runs (then it is no leftover yet: left alone). */
  running: boolean;
}

function running(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The folders of renders in the output folder that are not a stack's render: interrupted ones, or under way. */
export function leftovers(outDir: string): Leftover[] {
  if (!fs.existsSync(outDir)) return [];
  return fs
    .readdirSync(outDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && WRITING.test(e.name))
    .map((e) => {
      const [, stack, kind, pid] = WRITING.exec(e.name)!;
      return { name: e.name, stack, kind: kind as Leftover["kind"], pid: Number(pid), running: running(Number(pid)) };
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Clear what renders that no longer run left in the output folder, and say so in one line (none:
 * nothing to say). A stack folder moved aside (`.old-`) whose stack folder is gone was the render
 * before a kill between the two renames: it goes back in place, whole; the rest is removed. Folders
 * of a render still running are left alone. `shown`: the folder as the message names it.
 */
export function clearLeftovers(outDir: string, shown = outDir): string | undefined {
  const dead = leftovers(outDir).filter((l) => !l.running);
  if (dead.length === 0) return undefined;
  const said: string[] = [];
  for (const l of dead.filter((x) => x.kind === "old")) {
    const final = path.join(outDir, l.stack);
    if (!fs.existsSync(final)) {
      fs.renameSync(path.join(outDir, l.name), final);
      said.push(`${l.name}/ moved back to ${l.stack}/`);
    }
  }
  for (const l of dead) {
    const dir = path.join(outDir, l.name);
    if (!fs.existsSync(dir)) continue;
    fs.rmSync(dir, { recursive: true, force: true });
    said.push(`${l.name}/ removed`);
  }
  return `${shown}/: cleared what an interrupted render left (process ${[...new Set(dead.map((l) => l.pid))].join(", ")}, no longer running): ${said.join(", ")}`;
}

/** Remove stack folders of stacks that no longer exist (only on a render of every stack). */
export function removeStaleStacks(outDir: string, keep: string[]): string[] {
  if (!fs.existsSync(outDir)) return [];
  const removed: string[] = [];
  for (const entry of fs.readdirSync(outDir, { withFileTypes: true })) {
    if (entry.isDirectory() && !entry.name.startsWith(".") && !keep.includes(entry.name)) {
      fs.rmSync(path.join(outDir, entry.name), { recursive: true, force: true });
      removed.push(entry.name);
    }
  }
  return removed;
}

/** Every file under dir, relative, sorted, forward slashes (for drift checks). */
export function readTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else out.set(r, fs.readFileSync(path.join(dir, r), "utf8"));
    }
  };
  if (fs.existsSync(dir)) walk("");
  return new Map([...out.entries()].sort(([a], [b]) => byCodePoint(a, b)));
}

/** Write a file whole or not at all; `mode`: its permissions from its first byte on (0o600: a key). */
export function writeWhole(file: string, content: string, mode?: number): void {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    fs.writeFileSync(tmp, content, mode === undefined ? undefined : { mode });
    fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}
