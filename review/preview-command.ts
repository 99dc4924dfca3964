// `npm run preview` as a function of its arguments: the CLI (scripts/preview.ts) and the tests run
// the same code, the tests in-process with the output captured. Both sides still render in child
// processes (review/renders.ts), each with its own checkout's code.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { args, EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, UserError, type Io } from "../cli/cli";
import { EXIT_INTERNAL_ERROR, renderFailureExit } from "../cli/errors";
import { hasErrors, previewAll } from "./preview";
import type { Judged, PolicyReport, StackPreview, StackReference } from "./preview-model";
import { commentMarkdown, failedMarkdown, REPORT_MARKER, reportMarkdown, stackMarkdown, totals } from "./preview-markdown";
import { exportCommit, renderCheckout, resolveCommit, type RenderRun } from "./renders";
import { listStacks, STACKS_DIR } from "../config/stack-file";
import { REPO_ROOT } from "../tools/tools";
import { readTree } from "../cli/write";
import { committedState, pinsOfSource, versionsAt } from "./committed-pins";
import { renderedFolderIn, stackReference } from "./reference";
import { deployOrderFindings, retiredAtFinder } from "./verdict";
import { repositoryUpgrades, type UpgradePins } from "./preview-upgrades";
import { upgradeLine } from "./upgrade-check";
import { isUpgradeRule, UPGRADE_RULES_FILE, VERSIONS_FILE } from "../platform/upgrades";
import { UPGRADE_RULES } from "../platform/upgrade-rules";
import { isPlainObject } from "../config/plain";

const PREVIEW_OPTIONS = {
  base: { type: "string" },
  out: { type: "string", default: ".preview" },
  stack: { type: "string", multiple: true },
  policy: { type: "string" },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const PREVIEW_SCRIPT = path.resolve(__dirname, "../scripts/preview.ts");

const POLICY_SHAPE = `{"stacks": {"<stack>": {"violations": [{"policy", "resource", "message"}], "passed": true|false}}} or {"error": "<why the policy run failed>"}`;

function isPolicyReport(data: unknown): data is PolicyReport {
  if (!isPlainObject(data)) return false;
  if (typeof data.error === "string") return true;
  const str = (v: unknown) => typeof v === "string";
  const opt = (v: unknown, ok: (x: unknown) => boolean) => v === undefined || ok(v);
  const violation = (v: unknown) => isPlainObject(v) && str(v.policy) && str(v.message) && opt(v.resource, str) && opt(v.level, str);
  const stack = (s: unknown) =>
    isPlainObject(s) && Array.isArray(s.violations) && opt(s.passed, (p) => typeof p === "boolean") && s.violations.every(violation);
  return isPlainObject(data.stacks) && Object.values(data.stacks).every(stack);
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
 * Both checkouts' pins, and the change's upgrade rules (its own, as the change may correct one: its
 * platform/upgrade-rules.ts, or where a commit had them, its platform/versions.ts; this program's
 * when it has none); undefined when the base has no platform/versions.ts to compare.
 */
function checkoutPins(baseCheckout: string, headCheckout: string): UpgradePins | undefined {
  const read = (dir: string, file: string, where: string) => {
    const full = path.join(dir, file);
    return fs.existsSync(full) ? pinsOfSource(fs.readFileSync(full, "utf8"), `${where} ${file}`) : undefined;
  };
  const base = read(baseCheckout, VERSIONS_FILE, "the base's");
  const head = read(headCheckout, VERSIONS_FILE, "this change's");
  if (!base || !head) return undefined;
  const own = (read(headCheckout, UPGRADE_RULES_FILE, "this change's") ?? head).UPGRADE_RULES;
  const rules = Array.isArray(own) && own.every(isUpgradeRule) ? own : UPGRADE_RULES;
  return { base, head, rules };
}

/** The files of one stack of a `rendered/`-shaped tree, relative to its folder. */
function stackFiles(tree: ReadonlyMap<string, string>, stack: string): Map<string, string> {
  const prefix = `${stack}/`;
  return new Map([...tree].filter(([f]) => f.startsWith(prefix)).map(([f, text]) => [f.slice(prefix.length), text]));
}

/**
 * What each stack of the change is judged against (review/reference.ts), as npm run plan, npm run
 * render and the deploy gate judge it: what is deployed (`deployed/<stack>` in `repo`: its committed
 * render and pins), else the base the change builds on.
 */
function stackReferences(
  repo: string,
  base: { ref: string; commit: string },
  head: ReadonlyMap<string, string>,
  pins: UpgradePins | undefined,
): Map<string, StackReference> {
  const renderedDir = renderedFolderIn(repo, path.join(repo, STACKS_DIR));
  const stacks = new Set([...head.keys()].map((f) => f.slice(0, f.indexOf("/"))).filter((s) => s && !s.startsWith(".")));
  const out = new Map<string, StackReference>();
  for (const stack of stacks) {
    const state = committedState(repo, stack, undefined, base)!;
    const judged: Judged = { where: state.name };
    const retiredAt = renderedDir === undefined ? undefined : retiredAtFinder(repo, state, renderedDir, stack);
    if (retiredAt) judged.retiredAt = retiredAt;
    const findings = deployOrderFindings(repo, state, stack);
    if (!state.deployed) {
      out.set(stack, { where: state.where, judged, findings });
      continue;
    }
    const reference = stackReference({ repo, stack, state, renderedDir, head: stackFiles(head, stack) });
    const text = pins ? versionsAt(repo, state.commit) : undefined;
    const deployedPins = pins && text !== undefined ? { ...pins, base: pinsOfSource(text, `platform/versions.ts at ${state.commit.slice(0, 12)}`) } : undefined;
    out.set(stack, {
      where: state.where,
      judged,
      findings,
      deployed: { ...(reference.render ? { render: reference.render } : {}), ...(deployedPins ? { pins: deployedPins } : {}) },
    });
  }
  return out;
}

/** A side with none of the named stacks: nothing to render. */
const NOTHING: RenderRun = { code: 0, stdout: "", stderr: "" };

/**
 * What each side renders: every stack, or, with --stack, the named ones that side has a file for
 * (a stack the change adds or removes is on one side only); undefined: nothing. A name on neither
 * side is a usage error before anything renders.
 *
 * Restricting the renders loses no check. Everything the preview shows is per stack: each side's
 * render runs one stack's plan checks and placement checks on that stack file, the preview compares
 * a stack's two renders (review/preview.ts) and judges its transition against the stack's reference
 * (review/reference.ts, review/verdict.ts). The pin upgrade check reads platform/versions.ts of the
 * checkouts and of the reference, no stack (review/preview-upgrades.ts). The one step of a render
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
  // the preview judges the change itself, against each stack's reference (what is deployed, else the
  // base), so the change's render does not judge it against its own committed state
  return Promise.all([
    only.base ? renderCheckout(baseCheckout, path.join(tmp, "base-out"), stackArgs(only.base), relay("base")) : NOTHING,
    only.head ? renderCheckout(repo, path.join(tmp, "head-out"), ["--skip-transition-checks", ...stackArgs(only.head)], relay("this change")) : NOTHING,
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
    const headTree = readTree(path.join(tmp, "head-out"));
    const stacks = previewAll(readTree(path.join(tmp, "base-out")), headTree, {
      stacks: opts.stack,
      policy: policy.report,
      ...(pins ? { pins } : {}),
      references: stackReferences(repo, { ref: opts.base, commit }, headTree, pins),
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
    for (const s of stacks) io.out(`${summaryLine(s)}\n${s.findings.length ? `  judged against ${s.judged}\n` : ""}`);
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
