// `npm run urns` as a function of its arguments: the CLI (scripts/urns.ts) and the tests run the
// same code. The Pulumi resource graphs (URNs) of a base commit's program and of the working tree's,
// each run under the mocks with its own code (review/urn-graph.ts), compared as the engine would
// when the working tree's program updates a stack the base deployed.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { args, EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, UserError, type Io } from "../cli/cli";
import { REPO_ROOT } from "../tools/tools";
import { exportCommit, resolveCommit } from "./renders";
import { compareUrnGraphs, urnGraphsOf, type UrnComparison } from "./urn-graph";

const URNS_OPTIONS = {
  base: { type: "string" },
  stack: { type: "string", multiple: true },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const URNS_SCRIPT = path.resolve(__dirname, "../scripts/urns.ts");

/** The file naming the last release while no tag does (its first line that is no comment). */
export const LAST_RELEASE_FILE = ".ci/last-release";

/**
 * The last release of `repo`: its newest tag `v<version>` (by version), else the commit
 * .ci/last-release names. What `npm run urns` compares with by default, and what an upgrade run of
 * the e2e deploys first.
 */
export function lastRelease(repo: string): { ref: string; commit: string; where: string } {
  const tags = spawnSync("git", ["-C", repo, "tag", "--list", "v*", "--sort=-v:refname"], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
  for (const tag of tags) {
    const commit = resolveCommit(repo, tag);
    if (commit) return { ref: tag, commit, where: `the newest release tag ${tag}` };
  }
  const file = path.join(repo, LAST_RELEASE_FILE);
  const ref = fs.existsSync(file)
    ? fs
        .readFileSync(file, "utf8")
        .split("\n")
        .map((l) => l.trim())
        .find((l) => l && !l.startsWith("#"))
    : undefined;
  const commit = ref && resolveCommit(repo, ref);
  if (!ref || !commit) {
    throw new UserError(
      `no release to compare with: no tag v<version>, and ${LAST_RELEASE_FILE} ${ref ? `names ${ref}, which ${repo} does not hold` : "names no commit"}. Fix: fetch the history (git fetch --tags), or pass --base <git-ref>`,
      EXIT_BAD_CONFIG,
    );
  }
  return { ref, commit, where: `${LAST_RELEASE_FILE} (${ref.slice(0, 12)})` };
}

function report(c: UrnComparison, counts: { before: number; after: number }, io: Io): void {
  const errors = c.findings.filter((f) => f.level === "error").length;
  io.out(
    `${c.stack}: ${counts.before} → ${counts.after} resource(s), ${c.aliased.length} taken over by an alias, ${errors} error(s), ${c.findings.length - errors} warning(s)\n`,
  );
  for (const a of c.aliased) io.out(`  alias: ${a.old} → ${a.new}\n`);
  for (const f of c.findings) (f.level === "error" ? io.err : io.out)(`  ${f.level} [${f.what}]: ${f.message}. Fix: ${f.fix}\n`);
}

/** `repo`: the repository whose working tree is the new program and whose history holds the base. */
export async function urnsCommand(argv: string[], io: Io, repo = REPO_ROOT): Promise<number> {
  const opts = args(URNS_OPTIONS, argv, URNS_SCRIPT);
  const base = opts.base ? { ref: opts.base, commit: resolveCommit(repo, opts.base), where: `--base ${opts.base}` } : lastRelease(repo);
  if (!base.commit)
    throw new UserError(`--base ${opts.base}: no such commit in ${repo}. Fix: fetch it first (git fetch origin main) or name another ref.`, EXIT_BAD_CONFIG);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-urns-"));
  try {
    exportCommit(repo, base.commit, tmp);
    const [before, after] = await Promise.all([urnGraphsOf(tmp, opts.stack ?? []), urnGraphsOf(repo, opts.stack ?? [])]);
    let errors = 0;
    for (const a of after) {
      const b = before.find((g) => g.stack === a.stack);
      if (!b) {
        io.out(`${a.stack}: new since ${base.where}, nothing deployed to compare with\n`);
        continue;
      }
      const c = compareUrnGraphs(b, a);
      report(c, { before: b.nodes.length, after: a.nodes.length }, io);
      errors += c.findings.filter((f) => f.level === "error").length;
    }
    io.out(`URNs of ${after.length} stack(s) against ${base.where} (${base.commit.slice(0, 12)}): ${errors} error(s)\n`);
    return errors > 0 ? EXIT_CHECKS_FAILED : 0;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
