// `npm run preview` as a function of its arguments: the CLI (scripts/preview.ts) and the tests run
// the same code, the tests in-process with the output captured. Both sides still render in child
// processes (review/renders.ts), each with its own checkout's code.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { args, EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, UserError, type Io } from "../cli/cli";
import { EXIT_INTERNAL_ERROR, renderFailureExit } from "../cli/errors";
import { hasErrors, previewAll, type PolicyReport, type StackPreview } from "./preview";
import { commentMarkdown, failedMarkdown, REPORT_MARKER, reportMarkdown, stackMarkdown, totals } from "./preview-markdown";
import { exportCommit, renderCheckout, resolveCommit, type RenderRun } from "./renders";
import { listStacks, STACKS_DIR } from "../config/stack-file";
import { REPO_ROOT } from "../tools/tools";
import { readTree } from "../cli/write";
import { pinsOfSource } from "./committed-pins";
import { repositoryUpgrades, type UpgradePins } from "./preview-upgrades";
import { upgradeLine } from "./upgrade-check";
import { isUpgradeRule, VERSIONS_FILE } from "../platform/upgrades";
import { UPGRADE_RULES } from "../platform/versions";

const PREVIEW_OPTIONS = {
  base: { type: "string" },
  out: { type: "string", default: ".preview" },
  stack: { type: "string", multiple: true },
  policy: { type: "string" },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const PREVIEW_SCRIPT = path.resolve(__dirname, "../scripts/preview.ts");

const POLICY_SHAPE = `{"stacks": {"<stack>": {"violations": [{"policy", "resource", "message"}], "passed": true|false}}} or {"error": "<why the policy run failed>"}`;

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function isPolicyReport(data: unknown): data is PolicyReport {
  if (!isRecord(data)) return false;
  if (typeof data.error === "string") return true;
  const str = (v: unknown) => typeof v === "string";
  const opt = (v: unknown, ok: (x: unknown) => boolean) => v === undefined || ok(v);
  const violation = (v: unknown) => isRecord(v) && str(v.policy) && str(v.message) && opt(v.resource, str) && opt(v.level, str);
  const stack = (s: unknown) => isRecord(s) && Array.isArray(s.violations) && opt(s.passed, (p) => typeof p === "boolean") && s.violations.every(violation);
  return isRecord(data.stacks) && Object.values(data.stacks).every(stack);
}

function readPolicy(file: string): { report?: PolicyReport; text?: string } {
  if (!fs.existsSync(file)) throw new UserError(`${file}: no such file (--policy). Fix: pass the file \`npm run policy -- --json\` wrote.`, EXIT_BAD_CONFIG);
  const text = fs.readFileSync(file, "utf8");
  if (!file.endsWith(".json")) return { text };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${file}: not JSON (${(e as Error).message}). Fix: pass a JSON policy report, or a file not named .json for text.`, EXIT_BAD_CONFIG);
  }
  if (!isPolicyReport(data)) throw new UserError(`${file}: expected ${POLICY_SHAPE}. Fix: write the policy results in that shape.`, EXIT_BAD_CONFIG);
  return { report: data };
}

/** Remove what an earlier preview wrote (Markdown starting with the report marker, report.json), nothing else. */
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
  if (s.status === "unchanged") return `${s.stack}: no changes`;
  const t = totals(s);
  return (
    `${s.stack}: ${s.status === "changed" ? "" : `${s.status}, `}create ${t.create}, update ${t.update}, replace ${t.replace}, delete ${t.delete}, ` +
    `steps on ${s.nodes.length} node(s), ${t.errors} error(s), ${t.warnings} warning(s)`
  );
}

/**
 * Both checkouts' pins, and the change's upgrade rules (its own, as the change may correct one; this
 * program's when it has none); undefined when the base has no platform/versions.ts to compare.
 */
function checkoutPins(baseCheckout: string, headCheckout: string): UpgradePins | undefined {
  const read = (dir: string, where: string) => {
    const file = path.join(dir, VERSIONS_FILE);
    return fs.existsSync(file) ? pinsOfSource(fs.readFileSync(file, "utf8"), where) : undefined;
  };
  const base = read(baseCheckout, `the base's ${VERSIONS_FILE}`);
  const head = read(headCheckout, `this change's ${VERSIONS_FILE}`);
  if (!base || !head) return undefined;
  const own = head.UPGRADE_RULES;
  const rules = Array.isArray(own) && own.every(isUpgradeRule) ? own : UPGRADE_RULES;
  return { base, head, rules };
}

/** A side with none of the named stacks: nothing to render. */
const NOTHING: RenderRun = { code: 0, stdout: "", stderr: "" };

/**
 * What each side renders: every stack, or, with --stack, the named ones that side has a file for
 * (a stack the change adds or removes is on one side only); undefined: nothing. A name on neither
 * side is a usage error before anything renders.
 *
 * Restricting the renders loses no check. Everything the preview shows is per stack: each side's
 * render runs one stack's plan checks, placement checks, protected-unit and node-removal guards on
 * that stack file and its own previous render (review/protected.ts, lifecycle/guards.ts), and the
 * preview compares a stack's two renders (review/preview.ts). The pin upgrade check reads the two
 * checkouts' platform/versions.ts, no stack (review/preview-upgrades.ts). The one step of a render
 * that reads every stack — removing the folders of stacks without a file (cli/write.ts
 * removeStaleStacks) — runs only without --stack, and only in the preview's own output folders.
 */
function renderedStacks(named: string[] | undefined, base: string, head: string): { base?: string[]; head?: string[] } {
  if (!named?.length) return { base: [], head: [] };
  const has = (checkout: string) => {
    const dir = path.join(checkout, STACKS_DIR);
    const known = fs.existsSync(dir) ? listStacks(dir) : [];
    return named.filter((s) => known.includes(s));
  };
  const [b, h] = [has(base), has(head)];
  const unknown = named.filter((s) => !b.includes(s) && !h.includes(s));
  if (unknown.length) throw new UserError(`--stack ${unknown.join(", ")}: no stack file on either side (stacks/Pulumi.<name>.yaml).`, EXIT_BAD_CONFIG);
  return { ...(b.length ? { base: b } : {}), ...(h.length ? { head: h } : {}) };
}

const stackArgs = (stacks: string[]) => stacks.flatMap((s) => ["--stack", s]);

/** Both sides rendered at once into `<tmp>/base-out` and `<tmp>/head-out`, each with its own code (review/renders.ts). */
function renderBoth(baseCheckout: string, repo: string, tmp: string, named: string[] | undefined, progress: Io["progress"]): Promise<RenderRun[]> {
  const relay = (side: string) => (progress ? (line: string) => progress(`${side}: ${line}`) : undefined);
  const only = renderedStacks(named, baseCheckout, repo);
  // the preview judges the pins of the two checkouts itself (the upgrade section), so the change's
  // render does not compare them with its own committed state
  return Promise.all([
    only.base ? renderCheckout(baseCheckout, path.join(tmp, "base-out"), stackArgs(only.base), relay("base")) : NOTHING,
    only.head ? renderCheckout(repo, path.join(tmp, "head-out"), ["--skip-upgrade-check", ...stackArgs(only.head)], relay("this change")) : NOTHING,
  ]);
}

/**
 * `repo`: the repository whose working tree is the change and whose history holds the base (the
 * tests' own clones; the CLI's is this one). `io.progress`, when given, hears both renders' lines.
 */
export async function previewCommand(argv: string[], io: Io, repo = REPO_ROOT): Promise<number> {
  const opts = args(PREVIEW_OPTIONS, argv, PREVIEW_SCRIPT);
  if (!opts.base) throw new UserError("--base <git-ref> is required (e.g. --base origin/main).", EXIT_BAD_CONFIG);
  const commit = resolveCommit(repo, opts.base);
  if (!commit) {
    throw new UserError(`--base ${opts.base}: no such commit in ${repo}. Fix: fetch it first (git fetch origin main) or name another ref.`, EXIT_BAD_CONFIG);
  }
  const policy = opts.policy ? readPolicy(opts.policy) : {};
  const outDir = opts.out!;
  const base = `\`${opts.base}\` (${commit.slice(0, 12)})`;

  /** Replaces whatever an earlier run left, so a stale preview never stands for this one. */
  const write = (files: Record<string, string>) => {
    fs.mkdirSync(outDir, { recursive: true });
    clearPrevious(outDir);
    for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(outDir, f), text);
  };

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-preview-"));
  try {
    const baseCheckout = path.join(tmp, "base");
    exportCommit(repo, commit, baseCheckout);
    const progress = io.progress;
    const [baseRun, headRun] = await renderBoth(baseCheckout, repo, tmp, opts.stack, progress);
    // a bad stack (2) or failed checks (1) are the change's; anything else is a bug (3), its trace in
    // stderr. The base's bad stacks are not this change's input (1); its crash is still a crash (3).
    const failure =
      headRun.code !== 0
        ? { what: `The working tree does not render (exit ${headRun.code})`, stderr: headRun.stderr, code: renderFailureExit(headRun.code) }
        : baseRun.code !== 0
          ? {
              what: `The base ${opts.base} (${commit.slice(0, 12)}) does not render (exit ${baseRun.code})`,
              stderr: baseRun.stderr,
              code: renderFailureExit(baseRun.code) === EXIT_INTERNAL_ERROR ? EXIT_INTERNAL_ERROR : EXIT_CHECKS_FAILED,
            }
          : undefined;
    if (failure) {
      const md = failedMarkdown(base, failure.what, failure.stderr);
      write({
        "report.md": md,
        "comment.md": md,
        "report.json": `${JSON.stringify({ base: opts.base, commit, failed: { what: failure.what, output: failure.stderr.trim() }, stacks: [] }, null, 2)}\n`,
      });
      throw new UserError(
        `${failure.what.replace(/^The/, "the")}:\n${failure.stderr.trim()}\n(report written to ${outDir}/report.md, marked failed)`,
        failure.code,
      );
    }

    progress?.("comparing the two renders");
    const pins = checkoutPins(baseCheckout, repo);
    const stacks = previewAll(readTree(path.join(tmp, "base-out")), readTree(path.join(tmp, "head-out")), {
      stacks: opts.stack,
      policy: policy.report,
      ...(pins ? { pins } : {}),
    });

    const tools = pins ? repositoryUpgrades(pins).map(upgradeLine) : [];
    const input = {
      base,
      stacks,
      tools,
      policyText: policy.text,
      ...(policy.report ? { policyJson: JSON.stringify(policy.report, null, 2) } : {}),
      ...(opts.stack?.length ? { only: opts.stack } : {}),
    };
    const report = reportMarkdown(input);
    write({
      ...Object.fromEntries(stacks.map((s) => [`${s.stack}.md`, `${REPORT_MARKER}\n${stackMarkdown(s, "##")}`])),
      "report.md": report,
      "comment.md": commentMarkdown(input, report),
      "report.json": `${JSON.stringify({ base: opts.base, commit, stacks }, null, 2)}\n`,
    });
    for (const s of stacks) io.out(`${summaryLine(s)}\n`);
    io.out(`preview of ${stacks.length} stack(s) against ${opts.base} (${commit.slice(0, 12)}) → ${outDir}/report.md\n`);
    if (hasErrors(stacks)) {
      io.err("the change has errors: `pulumi up` would refuse or fail on it (see Errors in the report)\n");
      return EXIT_CHECKS_FAILED;
    }
    return 0;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
