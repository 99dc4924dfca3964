// Writing rendered/ and reports without ever leaving them half-written: each stack is written to a
// sibling temporary folder, then swapped in with renames; a single file through a temporary one.
import * as fs from "node:fs";
import * as path from "node:path";
import type { RenderedFile } from "../render/rendered";

export function writeStackDir(outDir: string, stack: string, files: RenderedFile[]): void {
  fs.mkdirSync(outDir, { recursive: true });
  const final = path.join(outDir, stack);
  const tmp = path.join(outDir, `.${stack}.tmp-${process.pid}`);
  const old = path.join(outDir, `.${stack}.old-${process.pid}`);
  fs.rmSync(tmp, { recursive: true, force: true });
  try {
    // each folder made once (a recursive mkdirSync per file was a tenth of a render: npm run bench)
    const made = new Set<string>();
    for (const f of files) {
      const target = path.join(tmp, ...f.path.split("/"));
      const dir = path.dirname(target);
      if (!made.has(dir)) {
        fs.mkdirSync(dir, { recursive: true });
        made.add(dir);
      }
      fs.writeFileSync(target, f.content);
    }
    if (fs.existsSync(final)) fs.renameSync(final, old);
    fs.renameSync(tmp, final);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.rmSync(old, { recursive: true, force: true });
  }
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
  return new Map([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Write a file whole or not at all. */
export function writeWhole(file: string, content: string): void {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    fs.writeFileSync(tmp, content);
    fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}
