// What an operator waits for (issue 25), each measured as the command runs for them, a fresh
// process started as package.json starts it (npm's own start not counted, as for every CLI figure
// of the bench): an anchored inventory against the same one written out, the preview of a
// 2000-node stack against its base, the edit loop (`npm run plan` after an edit, `npm run
// render`), and the pull-request workflow's offline steps one after the other.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { stringify } from "yaml";
import { PROJECT } from "../config/schema";
import { tsCommand } from "../cli/ts-command";
import { REPO_ROOT } from "../tools/tools";
import { generatedProductionStack } from "./generate";
import { fastestOf, load1, measureOk, type Measured } from "./measure";

/** A stack file of a generated inventory; `aliased`: every compute node's labels one YAML alias of the first's. */
export function generatedStackFile(size: number, aliased: boolean, extraCompute = 0): { stack: string; text: string } {
  const g = generatedProductionStack(size + extraCompute);
  // a deep copy shares nothing, so the written-out file has no alias at all
  const raw = structuredClone(g.raw) as { nodes: { roles: string[]; labels?: Record<string, string> | undefined }[] };
  if (aliased) {
    const compute = raw.nodes.filter((n) => n.roles.includes("compute"));
    for (const n of compute) n.labels = compute[0].labels;
  }
  const config = Object.fromEntries(Object.entries(raw).map(([k, v]) => [`${PROJECT}:${k}`, v]));
  const text = stringify({ config }, { aliasDuplicateObjects: aliased });
  if (aliased && !/\*a\d+/.test(text)) throw new Error("the aliased stack file has no alias");
  // the stack is named after its size without the extra nodes: the day-2 change of the same stack
  return { stack: `generated-${size}`, text: text.replaceAll(`generated-${size + extraCompute}`, `generated-${size}`) };
}

/**
 * A copy of this checkout's code (what `git ls-files` lists, committed or not, without rendered/
 * and stacks/), its node_modules linked: a place to edit a file or to make commits for a preview.
 */
export function scratchCheckout(dir: string): string {
  const files = spawnSync("git", ["-C", REPO_ROOT, "ls-files", "-co", "--exclude-standard"], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (files.status !== 0) throw new Error(`git ls-files failed: ${files.stderr}`);
  for (const f of files.stdout.split("\n").filter(Boolean)) {
    if (/^(rendered|stacks)\//.test(f) || !fs.existsSync(path.join(REPO_ROOT, f))) continue;
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.copyFileSync(path.join(REPO_ROOT, f), path.join(dir, f));
  }
  fs.mkdirSync(path.join(dir, "stacks"), { recursive: true });
  fs.symlinkSync(fs.realpathSync(path.join(REPO_ROOT, "node_modules")), path.join(dir, "node_modules"), "dir");
  return dir;
}

function git(repo: string, ...argv: string[]): void {
  const r = spawnSync("git", ["-C", repo, ...argv], {
    encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_NAME: "bench", GIT_AUTHOR_EMAIL: "bench@localhost", GIT_COMMITTER_NAME: "bench", GIT_COMMITTER_EMAIL: "bench@localhost" },
  });
  if (r.status !== 0) throw new Error(`git ${argv.join(" ")} failed: ${r.stderr}`);
}

export interface PreviewFigure {
  nodes: number;
  wallMs: number;
  cpuMs?: number | undefined;
  /** The largest process of the preview's tree: the preview itself or one of its two renders. */
  peakMiB: number | null;
  load: number;
}

const mib = (kib: number | undefined) => (kib === undefined ? null : Math.round((kib / 1024) * 10) / 10);

/**
 * `npm run preview -- --base HEAD` of a repository holding one generated stack of `size` nodes, whose
 * working tree adds a compute node to it (the day-2 change an operator previews most).
 */
export async function previewOfGenerated(work: string, size: number, repeat: number): Promise<PreviewFigure> {
  const repo = scratchCheckout(path.join(work, `preview-${size}`));
  const stackFile = (extra: number) => {
    const f = generatedStackFile(size, false, extra);
    fs.writeFileSync(path.join(repo, "stacks", `Pulumi.${f.stack}.yaml`), f.text);
  };
  stackFile(0);
  git(repo, "init", "-q");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "base");
  stackFile(1);
  const out = path.join(work, `preview-${size}-out`);
  const m = await fastestOf(
    repeat,
    () => measureOk("npm run preview", ...tsCommand(path.join(repo, "scripts", "preview.ts"), ["--base", "HEAD", "--out", out]), { cwd: repo, peak: true }),
    (x) => x.wallMs,
  );
  return { nodes: size, wallMs: Math.round(m.wallMs), cpuMs: m.cpuMs, peakMiB: mib(m.peakKiB), load: m.load };
}

export interface EditLoopFigure {
  /** `npm run plan -- --stack prod-medium` after an edit: to its first line of output. */
  planFirstLineMs: number;
  planWallMs: number;
  /** `npm run render` of the shipped stacks, a fresh process. */
  renderMs: number;
  load: number;
}

/**
 * The edit loop in a scratch copy of the code with the shipped stacks: the plan once (what a
 * developer ran before), a line added to a module the plan loads, the plan again, timed to its
 * first line; then `npm run render` of every shipped stack into a folder of its own.
 */
export async function editLoop(work: string, repeat: number): Promise<EditLoopFigure> {
  const dir = scratchCheckout(path.join(work, "edit-loop"));
  for (const f of fs.readdirSync(path.join(REPO_ROOT, "stacks")).filter((f) => f.endsWith(".yaml")))
    fs.copyFileSync(path.join(REPO_ROOT, "stacks", f), path.join(dir, "stacks", f));
  const plan = () => measureOk("npm run plan", ...tsCommand(path.join(dir, "scripts", "plan.ts"), ["--stack", "prod-medium"]), { cwd: dir });
  const edited = path.join(dir, "topology", "checks.ts");
  let best: Measured | undefined;
  for (let i = 0; i < repeat; i++) {
    await plan();
    fs.appendFileSync(edited, `// an edit (${i})\n`);
    const m = await plan();
    if (m.firstLineMs === undefined) throw new Error("npm run plan printed no line");
    if (!best || m.firstLineMs < best.firstLineMs!) best = m;
  }
  const out = path.join(work, "edit-loop-out");
  const render = await fastestOf(
    repeat,
    () => {
      fs.rmSync(out, { recursive: true, force: true });
      return measureOk("npm run render", ...tsCommand(path.join(dir, "scripts", "render.ts"), ["--out", out]), { cwd: dir });
    },
    (x) => x.wallMs,
  );
  return { planFirstLineMs: Math.round(best!.firstLineMs!), planWallMs: Math.round(best!.wallMs), renderMs: Math.round(render.wallMs), load: best!.load };
}

export interface PrCheckFigure {
  /** The steps, in the workflow's order, each a fresh process: wall ms. */
  stepsMs: Record<string, number>;
  totalMs: number;
  load: number;
}

/**
 * The pull-request workflow's offline steps over the shipped stacks, one after the other as it runs
 * them (.github/workflows/pull-request.yml; `npm test` is its own figure): render, drift, validate,
 * policy (--json, for the preview), preview against this checkout's HEAD with that report.
 */
export async function prCheck(work: string, schemas: string): Promise<PrCheckFigure> {
  const dir = path.join(work, "pr-check");
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const script = (name: string) => path.join(REPO_ROOT, "scripts", `${name}.ts`);
  const rendered = path.join(dir, "rendered");
  const policyJson = path.join(dir, "policy.json");
  const load = load1();
  const steps: [string, () => Promise<Measured>][] = [
    ["render", () => measureOk("npm run render", ...tsCommand(script("render"), ["--out", rendered]))],
    ["drift", () => measureOk("npm run drift", ...tsCommand(script("drift")))],
    ["validate", () => measureOk("npm run validate", ...tsCommand(script("validate"), ["--rendered", rendered, "--schemas", schemas]))],
    ["policy", () => measureOk("npm run policy -- --json", ...tsCommand(script("policy"), ["--json", "--out", policyJson]))],
    [
      "preview",
      () => measureOk("npm run preview", ...tsCommand(script("preview"), ["--base", "HEAD", "--policy", policyJson, "--out", path.join(dir, "preview")])),
    ],
  ];
  const stepsMs: Record<string, number> = {};
  for (const [name, step] of steps) stepsMs[name] = Math.round((await step()).wallMs);
  return { stepsMs, totalMs: Object.values(stepsMs).reduce((a, b) => a + b, 0), load };
}

/** A temporary folder for the operator's measurements. */
export const operatorWork = () => fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-bench-operator-"));
