// npm run drift [-- --rendered <dir>] [--stacks-dir <dir>]: renders every stack afresh into a
// temporary folder (with scripts/render.ts, so every file the render writes counts) and compares it
// with the committed rendered/. Exit 0: identical; 1: rendered/ is stale (each differing file is
// listed, YAML files field by field); 2/3: the render itself failed (its own message).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import { args, EXIT_CHECKS_FAILED, progress, progressWanted, run, UserError } from "./lib/cli";
import { renderFailureExit } from "./lib/errors";
import { renderCheckout } from "./lib/renders";
import { REPO_ROOT } from "./lib/tools";
import { readTree } from "./lib/write";
import { diff, formatPath } from "./lib/ydiff";

function fieldDiff(before: string, after: string): string[] {
  try {
    const docs = (t: string) => {
      const all = parseAllDocuments(t).map((d) => d.toJS());
      return all.length === 1 ? all[0] : all;
    };
    const show = (v: unknown) => (v === undefined ? "(absent)" : JSON.stringify(v));
    return diff(docs(before), docs(after)).map((c) => `      ${formatPath(c.path)}: ${show(c.before)} → ${show(c.after)}`);
  } catch {
    return [];
  }
}

run(async () => {
  const opts = args({
    rendered: { type: "string", default: "rendered" },
    "stacks-dir": { type: "string", default: "stacks" },
  });
  const committedDir = path.resolve(opts.rendered!);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-drift-"));
  try {
    const r = await renderCheckout(REPO_ROOT, tmp, ["--stacks-dir", path.resolve(opts["stacks-dir"]!)], progressWanted() ? (l) => progress(`fresh render: ${l}`) : undefined);
    if (r.code !== 0) throw new UserError(`the render failed (exit ${r.code}):\n${r.stderr.trim()}`, renderFailureExit(r.code));
    const fresh = readTree(tmp);
    const committed = readTree(committedDir);
    const files = [...new Set([...fresh.keys(), ...committed.keys()])].sort();
    const lines: string[] = [];
    for (const f of files) {
      const want = fresh.get(f);
      const have = committed.get(f);
      if (want === have) continue;
      const shown = `${opts.rendered}/${f}`;
      if (have === undefined) lines.push(`  ${shown}: missing (the render writes it)`);
      else if (want === undefined) lines.push(`  ${shown}: stale (the render no longer writes it)`);
      else lines.push(`  ${shown}: differs from a fresh render`, ...(/\.ya?ml$/.test(f) ? fieldDiff(have, want) : []));
    }
    if (lines.length === 0) {
      console.log(`${opts.rendered}/ is up to date: ${fresh.size} files match a fresh render`);
      return 0;
    }
    console.error(`${opts.rendered}/ differs from a fresh render of stacks/ and the code:`);
    for (const l of lines) console.error(l);
    console.error("Fix: run `npm run render` and commit rendered/.");
    return EXIT_CHECKS_FAILED;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
