// npm run preview -- --base <git-ref> [--out .preview] [--stack <name>]… [--policy <file>]
// Renders the base commit (its own code and stacks, from `git archive`) and the working tree, and
// writes what changed per stack: .preview/<stack>.md, .preview/report.md (every stack),
// .preview/comment.md (report.md, or its summary when too long for a PR comment) and
// .preview/report.json (the same as data). Deterministic: the PR comment changes only when the
// render does. --policy adds policy results: a JSON file `{"stacks": {"<stack>": {"violations":
// [{"policy", "level", "resource", "message"}]}}}` per stack, or any other file as text.
// Exit 0: report written (whatever changed); 1: a side does not render; 2: bad usage or unknown ref.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { args, EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, run, UserError } from "./lib/cli";
import { EXIT_INTERNAL_ERROR, renderFailureExit } from "./lib/errors";
import {
  commentMarkdown,
  previewAll,
  REPORT_MARKER,
  reportMarkdown,
  stackMarkdown,
  type PolicyReport,
  type StackPreview,
} from "./lib/preview";
import { exportCommit, renderCheckout, resolveCommit } from "./lib/renders";
import { REPO_ROOT } from "./lib/tools";
import { readTree } from "./lib/write";

function readPolicy(file: string): { report?: PolicyReport; text?: string } {
  if (!fs.existsSync(file)) throw new UserError(`${file}: no such file (--policy). Fix: pass the file \`npm run policy\` wrote.`, EXIT_BAD_CONFIG);
  const text = fs.readFileSync(file, "utf8");
  if (!file.endsWith(".json")) return { text };
  let data: any;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${file}: not JSON (${(e as Error).message}). Fix: pass a JSON policy report, or a file not named .json for text.`, EXIT_BAD_CONFIG);
  }
  const stacks = data?.stacks;
  const ok =
    stacks &&
    typeof stacks === "object" &&
    Object.values(stacks).every(
      (s: any) =>
        Array.isArray(s?.violations) &&
        s.violations.every(
          (v: any) =>
            typeof v?.policy === "string" &&
            typeof v?.level === "string" &&
            typeof v?.message === "string" &&
            (v.resource === undefined || typeof v.resource === "string"),
        ),
    );
  if (!ok) {
    throw new UserError(
      `${file}: stacks: expected {"stacks": {"<stack>": {"violations": [{"policy", "level", "resource", "message"}]}}}. Fix: write the policy results in that shape.`,
      EXIT_BAD_CONFIG,
    );
  }
  return { report: data as PolicyReport };
}

/** Remove what an earlier preview wrote (files starting with the report marker), nothing else. */
function clearPrevious(outDir: string): void {
  if (!fs.existsSync(outDir)) return;
  for (const f of fs.readdirSync(outDir)) {
    const p = path.join(outDir, f);
    if (!fs.statSync(p).isFile()) continue;
    if (f.endsWith(".md") && fs.readFileSync(p, "utf8").startsWith(REPORT_MARKER)) fs.rmSync(p);
    if (f === "report.json") fs.rmSync(p);
  }
}

function summaryLine(s: StackPreview): string {
  const o = s.objects;
  if (s.status === "unchanged") return `${s.stack}: no changes`;
  return (
    `${s.stack}: ${s.status === "changed" ? "" : `${s.status}, `}objects +${o.added.length} -${o.removed.length} ~${o.changed.length}, ` +
    `values of ${s.values.length} release(s), ${s.warnings.added.length} new warning(s)`
  );
}

run(async () => {
  const opts = args({
    base: { type: "string" },
    out: { type: "string", default: ".preview" },
    stack: { type: "string", multiple: true },
    policy: { type: "string" },
  });
  if (!opts.base) throw new UserError("--base <git-ref> is required (e.g. --base origin/main).", EXIT_BAD_CONFIG);
  const commit = resolveCommit(REPO_ROOT, opts.base);
  if (!commit) {
    throw new UserError(`--base ${opts.base}: no such commit in ${REPO_ROOT}. Fix: fetch it first (git fetch origin main) or name another ref.`, EXIT_BAD_CONFIG);
  }
  const policy = opts.policy ? readPolicy(opts.policy) : {};

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-preview-"));
  try {
    const baseCheckout = path.join(tmp, "base");
    exportCommit(REPO_ROOT, commit, baseCheckout);
    const [baseRun, headRun] = await Promise.all([
      renderCheckout(baseCheckout, path.join(tmp, "base-out")),
      renderCheckout(REPO_ROOT, path.join(tmp, "head-out")),
    ]);
    if (headRun.code !== 0) {
      // a bad stack (2) or failed checks (1) are the change's; anything else is a bug (3), its trace in stderr
      throw new UserError(`the working tree does not render (exit ${headRun.code}):\n${headRun.stderr.trim()}`, renderFailureExit(headRun.code));
    }
    if (baseRun.code !== 0) {
      // the base's bad stacks are not this change's input (1); its crash is still a crash (3)
      const exit = renderFailureExit(baseRun.code) === EXIT_INTERNAL_ERROR ? EXIT_INTERNAL_ERROR : EXIT_CHECKS_FAILED;
      throw new UserError(`the base ${opts.base} (${commit.slice(0, 12)}) does not render (exit ${baseRun.code}):\n${baseRun.stderr.trim()}`, exit);
    }
    const stacks = previewAll(readTree(path.join(tmp, "base-out")), readTree(path.join(tmp, "head-out")), {
      stacks: opts.stack,
      policy: policy.report,
    });
    const unknown = (opts.stack ?? []).filter((s) => !stacks.some((p) => p.stack === s));
    if (unknown.length) throw new UserError(`--stack ${unknown.join(", ")}: rendered by neither side.`, EXIT_BAD_CONFIG);

    const input = { base: `\`${opts.base}\` (${commit.slice(0, 12)})`, stacks, policyText: policy.text };
    const report = reportMarkdown(input);
    const outDir = opts.out!;
    fs.mkdirSync(outDir, { recursive: true });
    clearPrevious(outDir);
    for (const s of stacks) fs.writeFileSync(path.join(outDir, `${s.stack}.md`), `${REPORT_MARKER}\n${stackMarkdown(s, "##")}`);
    fs.writeFileSync(path.join(outDir, "report.md"), report);
    fs.writeFileSync(path.join(outDir, "comment.md"), commentMarkdown(input, report));
    fs.writeFileSync(path.join(outDir, "report.json"), `${JSON.stringify({ base: opts.base, commit, stacks }, null, 2)}\n`);
    for (const s of stacks) console.log(summaryLine(s));
    console.log(`preview of ${stacks.length} stack(s) against ${opts.base} (${commit.slice(0, 12)}) → ${outDir}/report.md`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
