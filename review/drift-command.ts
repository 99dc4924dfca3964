// `npm run drift` as a function of its arguments: the CLI (scripts/drift.ts) and the tests run the
// same code, the tests in-process with the output captured. The fresh render stays a child process
// (review/renders.ts): every file the render writes counts, as the CLI writes it.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { args, EXIT_CHECKS_FAILED, UserError, type Io } from "../cli/cli";
import { renderFailureExit } from "../cli/errors";
import { renderCheckout } from "./renders";
import { REPO_ROOT } from "../tools/tools";
import { clearLeftovers, isWritingFolder, leftovers, readTree } from "../cli/write";
import { formatPath } from "../config/problems";
import { diff, WHOLE_DOCUMENT } from "../render/diff";
import { yamlDocuments } from "../render/rendered";

const DRIFT_OPTIONS = {
  rendered: { type: "string", default: "rendered" },
  "stacks-dir": { type: "string", default: "stacks" },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const DRIFT_SCRIPT = path.resolve(__dirname, "../scripts/drift.ts");

function fieldDiff(before: string, after: string): string[] {
  try {
    const docs = (t: string) => {
      const all = yamlDocuments(t);
      return all.length === 1 ? all[0] : all;
    };
    const show = (v: unknown) => (v === undefined ? "(absent)" : JSON.stringify(v));
    return diff(docs(before), docs(after)).map((c) => `      ${formatPath(c.path, WHOLE_DOCUMENT)}: ${show(c.before)} → ${show(c.after)}`);
  } catch {
    return [];
  }
}

/** `io.progress`, when given, hears the fresh render's per-stack lines. */
export async function driftCommand(argv: string[], io: Io): Promise<number> {
  const opts = args(DRIFT_OPTIONS, argv, DRIFT_SCRIPT);
  const committedDir = path.resolve(opts.rendered!);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-drift-"));
  try {
    const relay = io.progress;
    // files only: whether the change may be deployed is the verdict's (npm run plan, render, preview)
    const argv = ["--stacks-dir", path.resolve(opts["stacks-dir"]!), "--skip-transition-checks"];
    const r = await renderCheckout(REPO_ROOT, tmp, argv, relay ? (l) => relay(`fresh render: ${l}`) : undefined);
    if (r.code !== 0) throw new UserError(`the render failed (exit ${r.code}):\n${r.stderr.trim()}`, renderFailureExit(r.code));
    const fresh = readTree(tmp);
    // what an interrupted render left beside the stacks' folders is no stale render: cleared (one
    // line), or, while its render still runs, left out of the comparison
    const cleared = clearLeftovers(committedDir, opts.rendered);
    if (cleared) io.out(`${cleared}\n`);
    for (const l of leftovers(committedDir)) io.out(`${opts.rendered}/${l.name}/: a render under way (process ${l.pid}) writes it; not compared\n`);
    const committed = new Map([...readTree(committedDir)].filter(([f]) => !isWritingFolder(f.split("/")[0])));
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
      io.out(`${opts.rendered}/ is up to date: ${fresh.size} files match a fresh render\n`);
      return 0;
    }
    io.err(`${opts.rendered}/ differs from a fresh render of stacks/ and the code:\n`);
    for (const l of lines) io.err(`${l}\n`);
    io.err("Fix: run `npm run render` and commit rendered/.\n");
    return EXIT_CHECKS_FAILED;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
