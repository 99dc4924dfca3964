// The npm scripts that run other programs — lint, format, typecheck, test, test:fast — each an entry
// point of scripts/ whose header is its --help, so that `npm run <script> -- --help` prints what it
// does and runs nothing, like every other script (npm itself would hand `--help` to the program:
// oxfmt formatted the tree, vitest printed its own help after the whole pretest). What they run
// is what package.json ran before, with the same Node.
import { spawnSync } from "node:child_process";
import { constants } from "node:os";
import * as path from "node:path";
import { args, helpOnly } from "../cli/cli";
import { tsCommand } from "../cli/ts-command";
import { REPO_ROOT } from "./tools";

type Step = [command: string, argv: string[]];

const script = (name: string) => path.join(REPO_ROOT, "scripts", `${name}.ts`);
/** A package's JavaScript entry, run by this Node (the one npm found on PATH). */
const node = (entry: string, argv: string[]): Step => [process.execPath, [path.join(REPO_ROOT, "node_modules", entry), ...argv]];

const LINT: Step[] = [node("oxlint/bin/oxlint", ["--report-unused-disable-directives-severity=error", "."]), node("oxfmt/bin/oxfmt", ["--check", "."])];
const FORMAT: Step[] = [node("oxfmt/bin/oxfmt", ["."]), node("oxlint/bin/oxlint", ["--fix", "."])];
// TypeScript 7 checks (typescript-native); TypeScript 5 stays what Pulumi's runtime and ts-node
// load. Incremental: a rerun checks what changed, its state in node_modules/.cache/tsc.
const TYPECHECK: Step[] = [
  node("typescript-native/bin/tsc", [
    "--noEmit",
    "-p",
    ".",
    "--moduleResolution",
    "bundler",
    "--incremental",
    "--tsBuildInfoFile",
    "node_modules/.cache/tsc/tsbuildinfo",
  ]),
];
/** Before the suites: the pinned tools, the type check (it covers the policy pack, which the offline policy run only transpiles), the linter. */
const BEFORE_TESTS: Step[] = [tsCommand(script("tools")), ...TYPECHECK, ...LINT];

/** Run the steps in order in the repository, the output theirs; the exit code of the first that fails (128 + a signal's number). */
function steps(list: Step[], env: NodeJS.ProcessEnv = {}): number {
  for (const [command, argv] of list) {
    const r = spawnSync(command, argv, { cwd: REPO_ROOT, stdio: "inherit", env: { ...process.env, ...env } });
    if (r.error) throw r.error;
    const code = r.status ?? 128 + (r.signal ? constants.signals[r.signal] : 0);
    if (code !== 0) return code;
  }
  return 0;
}

export function lintCommand(argv: string[]): number {
  args({}, argv, script("lint"));
  return steps(LINT);
}

export function formatCommand(argv: string[]): number {
  args({}, argv, script("format"));
  return steps(FORMAT);
}

export function typecheckCommand(argv: string[]): number {
  args({}, argv, script("typecheck"));
  return steps(TYPECHECK);
}

/** What `npm test <argv>` runs, in order: the tools, the type check and the linter, then the suites (other arguments go to `vitest run`). */
export function testSteps(argv: string[]): Step[] {
  return [...BEFORE_TESTS, node("vitest/vitest.mjs", ["run", ...argv])];
}

export function testCommand(argv: string[]): number {
  helpOnly(argv, script("test"));
  return steps(testSteps(argv));
}

/** `npm run test:fast`: the unit suites (test/<layer>/, vitest.config.mts), alone; other arguments go to `vitest run`. */
export function testFastCommand(argv: string[]): number {
  helpOnly(argv, script("test-fast"));
  return steps([node("vitest/vitest.mjs", ["run", ...argv])], { OPENKEEL_TESTS: "fast" });
}
