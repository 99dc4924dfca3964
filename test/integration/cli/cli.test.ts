// Commands that behave like tools: every script answers --help with its usage (what it does, its
// options as the parser takes them, its exit codes) and exit 0; an unknown option is exit 2 and
// points to --help; a reader that closes the pipe early ends the command quietly; progress lines
// go to stderr only when wanted (a terminal, or OPENKEEL_PROGRESS=1), never into a pipe.
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { capture, progressWanted, usageText, type Io } from "../../../cli/cli";
import { TS_RUN, tsCommand } from "../../../cli/ts-command";
import { clusterCommand } from "../../../pipeline/cluster-command";
import { encryptionSaltCommand } from "../../../pipeline/encryption-salt-command";
import { driftCommand } from "../../../review/drift-command";
import { planCommand } from "../../../pipeline/plan-command";
import { urnsCommand } from "../../../review/urns-command";
import { policyCommand } from "../../../offline-engine/policy-command";
import { previewCommand } from "../../../review/preview-command";
import { renderCommand } from "../../../pipeline/render-command";
import { talosConfigCommand } from "../../../tools/talos-config-command";
import { validateCommand } from "../../../tools/validate-command";
import { REPO, tempStacks } from "../../helpers/stacks";

const SCRIPTS = fs
  .readdirSync(path.join(REPO, "scripts"))
  .filter((f) => f.endsWith(".ts"))
  .sort();
const temps: string[] = [];
afterAll(() => temps.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function runScript(script: string, argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(...tsCommand(path.join(REPO, "scripts", script), argv), { cwd: REPO, env: { ...process.env, OPENKEEL_PROGRESS: "", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const npmRun = (name: string, ...argv: string[]) => processRun("npm", ["run", "-s", name, "--", ...argv]);
/** A package.json script's command line with arguments, run as npm runs it. */
const scriptLine = (command: string, ...argv: string[]) => processRun("sh", ["-c", `${command} "$@"`, "sh", ...argv]);

function processRun(command: string, argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { cwd: REPO, env: { ...process.env, OPENKEEL_PROGRESS: "" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** `each` over `items`, at most `width` at a time (each is a process start); the results in order. */
async function bounded<T, R>(items: T[], width: number, each: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await each(items[i]);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return out;
}

/** A script's --help: its header first (`npm run <name>` or `npm test`), its options, the help option, its exit codes; exit 0. */
function expectUsage(what: string, r: { code: number | null; stdout: string; stderr: string }, script = what): void {
  const header = fs
    .readFileSync(path.join(REPO, "scripts", script), "utf8")
    .split("\n")[0]
    .replace(/^\/\/ /, "");
  expect(header, what).toMatch(/^npm (run [\w:]+|test)\b/);
  expect({ code: r.code, stderr: r.stderr }, what).toEqual({ code: 0, stderr: "" });
  expect(r.stdout.startsWith(header), what).toBe(true);
  expect(r.stdout, what).toMatch(/^Options:$/m);
  expect(r.stdout, what).toMatch(/^ {2}-h, --help +print this text and exit$/m);
  expect(r.stdout, what).toMatch(/\bExit\b/);
}

/**
 * What a script could write: the working tree as git sees it, and every file (its size and time)
 * under the outputs git does not list: rendered/, the tools, the type check's state, the preview,
 * the e2e's and the post-renderer's folders, the bench's results.
 */
/** The logs of the engine build .ci/run starts beside npm test (.ci/run, .ci/e2e build). */
const CI_ENGINE_LOGS = new Set([".e2e/ci-engine.log", ".e2e/engine-build.log", ".e2e/engine-build-check.log"]);

function writtenState(): Record<string, string> {
  const state: Record<string, string> = { git: spawnSync("git", ["status", "--porcelain"], { cwd: REPO, encoding: "utf8" }).stdout };
  const walk = (rel: string) => {
    const p = path.join(REPO, rel);
    // what .ci/run's engine build writes meanwhile, beside the tests (a cold build logs for an hour)
    if (!fs.existsSync(p) || CI_ENGINE_LOGS.has(rel)) return;
    const st = fs.statSync(p);
    if (st.isDirectory()) for (const e of fs.readdirSync(p)) walk(path.join(rel, e));
    else state[rel] = `${st.size} ${st.mtimeMs}`;
  };
  for (const d of ["rendered", ".tools", "node_modules/.cache/tsc", ".preview", ".e2e", ".postrender", "bench/results.json"]) walk(d);
  return state;
}

/**
 * The scripts that are a command function and a one-line CLI around it: their --help runs
 * in-process, exactly what the CLI prints and exits with (capture). That each CLI hands its
 * arguments to its command and exits with its code is proven by a real run of each: render in
 * bad-stacks.test.ts and below, plan and drift below, policy in policy-cli.test.ts, preview, validate,
 * cluster, talos-config and encryption-salt in their own suites.
 */
const COMMANDS: Record<string, (argv: string[], io: Io) => Promise<number | void> | number | void> = {
  "cluster.ts": clusterCommand,
  "drift.ts": driftCommand,
  "encryption-salt.ts": (argv, io) => encryptionSaltCommand(argv, io),
  "plan.ts": planCommand,
  "policy.ts": (argv, io) => policyCommand(argv, io),
  "preview.ts": previewCommand,
  "render.ts": renderCommand,
  "talos-config.ts": talosConfigCommand,
  "urns.ts": urnsCommand,
  "validate.ts": validateCommand,
};

describe("--help", () => {
  it("every script prints its usage from its header comment, its options and exit codes, and exits 0 without running (in-process where it is a command)", async () => {
    expect(SCRIPTS.length).toBeGreaterThanOrEqual(10);
    for (const script of Object.keys(COMMANDS)) {
      expect(SCRIPTS, script).toContain(script);
      // the CLI is the command and nothing else
      expect(fs.readFileSync(path.join(REPO, "scripts", script), "utf8"), script).toMatch(/^run\(\(\) => \w+Command\(process\.argv\.slice\(2\), /m);
    }
    const runs = await Promise.all(Object.values(COMMANDS).map((c) => capture(c, ["--help"])));
    Object.keys(COMMANDS).forEach((script, i) => expectUsage(script, runs[i]));
    // issue 21: render's --help lists every exit code, the internal error's included
    const render = runs[Object.keys(COMMANDS).indexOf("render.ts")].stdout;
    for (const code of ["0", "1", "2", "3"]) expect(render).toMatch(new RegExp(`\\b${code}: `));
  });

  it("every script of package.json is an entry point of scripts/, and every one answers --help as npm runs it: its usage, exit 0, nothing run or written", async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as { scripts: Record<string, string> };
    const entries = Object.entries(pkg.scripts).map(([name, command]) => {
      const m = /^node -r \.\/cli\/ts-run\.cjs scripts\/([\w-]+\.ts)$/.exec(command);
      expect(m, `${name}: ${command}`).not.toBeNull();
      return { name, script: m![1] };
    });
    expect(entries.map((e) => e.script).sort()).toEqual(SCRIPTS);
    // a pre- or post-script would run, without the arguments, before or after the one asked for
    expect(entries.filter((e) => /^(pre|post)/.test(e.name) && pkg.scripts[e.name.replace(/^(pre|post)/, "")])).toEqual([]);
    const runs = entries
      .map((e) => ({ ...e, flag: "--help", npm: false }))
      // the wrappers of other programs answer -h too (the commands' -h runs in-process below)
      .concat(["lint", "format", "typecheck", "test", "test:fast"].map((name) => ({ ...entries.find((e) => e.name === name)!, flag: "-h", npm: false })))
      // npm itself (its start is a third of a second of CPU) for npm test, which once ran a pretest first
      .concat(["test", "test:fast"].map((name) => ({ ...entries.find((e) => e.name === name)!, flag: "--help", npm: true })));
    const before = writtenState();
    // the others as npm runs them: `sh -c '<command> <args>'` in the repository, at most 4 at a time
    const results = await bounded(runs, 4, (r) => (r.npm ? npmRun(r.name, r.flag) : scriptLine(pkg.scripts[r.name], r.flag)));
    runs.forEach((r, i) => expectUsage(`${r.npm ? "npm " : ""}${r.name} ${r.flag}`, results[i], r.script));
    expect(writtenState()).toEqual(before);
  });

  it("-h is --help, also among other options; the text lists each option with its default and repeatability", async () => {
    const r = await capture(renderCommand, ["--stack", "lab", "-h"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}--stack <value> +repeatable$/m);
    expect(r.stdout).toMatch(/^ {2}--out <value> +default: rendered$/m);
    expect(r.stdout).toMatch(/^ {2}--skip-transition-checks$/m);
    expect(r.stdout).toContain("Exit 0: rendered; 1: a check failed");
  });

  it("in-process, a command's --help is its CLI's header, and nothing is rendered", async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-help-"));
    temps.push(out);
    const r = await capture(renderCommand, ["--help", "--out", out]);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith("npm run render [-- --stack <name>]…")).toBe(true);
    expect(fs.readdirSync(out)).toEqual([]);
  });

  it("a script without a header says what it is and gives the generic exit codes", () => {
    const text = usageText({ flag: { type: "boolean" } }, "/nowhere/else.ts");
    expect(text).toMatch(/^else: an offline script of this repository\./);
    expect(text).toMatch(/^ {2}--flag$/m);
    expect(text).toMatch(
      /^Exit codes: 0 success; 1 a check failed; 2 bad usage, bad stack config or a malformed pin of platform\/versions\.ts .*; 3 internal error/m,
    );
  });

  it("an unknown option is a usage error (exit 2) that names the options and points to --help", async () => {
    const r = await runScript("plan.ts", ["--stak", "lab"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Unknown option '--stak'/);
    expect(r.stderr).toMatch(/Options: --stack, --stacks-dir, --base \(--help explains them\)/);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });
});

describe("npm run plan", () => {
  // in-process: the real CLI runs above (an unknown option) and below (a closed pipe)
  const plan = (argv: string[]) => capture(planCommand, argv);

  it("prints the checks and a placement summary per stack, exit 0", async () => {
    const r = await plan(["--stack", "prod-large"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^prod-large: talos-production\/large, 32 nodes, hardened labels, tainted: compute, network, storage, provisioning$/m);
    // its warnings follow the stacks, each once for the run (test/integration/review/warnings.test.ts)
    // the standing ones: two OVS stacks on a node, and no machine with hardware facts
    expect(r.stdout).toMatch(/^ {2}plan checks: passed, 2 warning\(s\) \(below\)$/m);
    expect(r.stdout).toMatch(/^ {2}placement: /m);
    expect(r.stdout).toMatch(/^stacks\/Pulumi\.prod-large\.yaml: openkeel:nodes: warning \[ovs-two-stacks\]: 12 node\(s\) /m);
    expect(r.stdout).toMatch(/^stacks\/Pulumi\.prod-large\.yaml: openkeel:nodes: warning \[machine-facts-missing\]: 32 node\(s\) /m);
  });

  it("failing plan checks: exit 1 and the check on stderr", async () => {
    const dir = tempStacks({ s: fs.readFileSync(path.join(REPO, "stacks/Pulumi.prod-medium.yaml"), "utf8").replace("conductor: 1", "conductor: 2") });
    temps.push(dir);
    const r = await plan(["--stacks-dir", dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error \[ironic-conductors\]/);
    expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+/);
  });
});

describe("a closed pipe", () => {
  it("npm run plan into a reader that has gone: no EPIPE stack trace, exit 0", () => {
    // `true` exits without reading: every write of the plan meets a closed pipe
    const r = spawnSync("bash", ["-c", `set -o pipefail; '${process.execPath}' -r '${TS_RUN}' scripts/plan.ts | true`], { cwd: REPO, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});

describe("progress", () => {
  it("is wanted on a terminal, or when OPENKEEL_PROGRESS=1; never with OPENKEEL_PROGRESS=0", () => {
    expect(progressWanted({}, true)).toBe(true);
    expect(progressWanted({}, false)).toBe(false);
    expect(progressWanted({ OPENKEEL_PROGRESS: "1" }, false)).toBe(true);
    expect(progressWanted({ OPENKEEL_PROGRESS: "0" }, true)).toBe(false);
  });

  it("render: one line per stack on stderr when wanted, none into a pipe; stdout is the same either way", async () => {
    const a = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-progress-"));
    const b = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-progress-"));
    temps.push(a, b);
    const [wanted, piped] = await Promise.all([runScript("render.ts", ["--out", a], { OPENKEEL_PROGRESS: "1" }), runScript("render.ts", ["--out", b])]);
    expect(wanted.code).toBe(0);
    expect(wanted.stderr.trimEnd().split("\n")).toEqual([
      "… lab: planning (1/4)",
      "… prod-large: planning (2/4)",
      "… prod-medium: planning (3/4)",
      "… prod-small: planning (4/4)",
    ]);
    expect(piped.code).toBe(0);
    expect(piped.stderr).toBe("");
    expect(piped.stdout.replaceAll(b, "OUT")).toBe(wanted.stdout.replaceAll(a, "OUT"));
  });

  it("drift relays the fresh render's per-stack lines and keeps them out of its error messages", async () => {
    const [r, quiet] = await Promise.all([runScript("drift.ts", [], { OPENKEEL_PROGRESS: "1" }), runScript("drift.ts", [])]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^… fresh render: prod-medium: planning \(3\/4\)$/m);
    expect(quiet.stderr).toBe("");
  });
});
