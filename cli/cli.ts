// What every offline script shares: argument parsing and `--help`, loading stacks into Plans,
// progress lines, and turning user mistakes into clear messages and exit codes (2: bad config,
// 1: failed checks) without a stack trace. Anything else is a bug in this repository and keeps its
// stack trace.
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { ConfigError, formatProblem, isCheck, isError, type Check, type Problem } from "../config/problems";
import { EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, EXIT_INTERNAL_ERROR, Interrupted, STOP_SIGNALS, UserError } from "./errors";
import { loadConfig } from "../config/load";
import { listStacks, readStackRaw, STACKS_DIR } from "../config/stack-file";
import { planStack, type PlanResult } from "../environments";
import type { LoadedConfig } from "../config/schema";
import type { Plan } from "../plan/plan";
import { STACK_DECLARATIONS } from "../environments/registry";

export { EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, UserError } from "./errors";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** `--help`: not a failure; execute() prints the text on stdout and exits 0. */
class HelpRequested extends Error {
  constructor(readonly text: string) {
    super("help requested");
  }
}

const EXIT_CODES =
  "Exit codes: 0 success; 1 a check failed; 2 bad usage, bad stack config or a malformed pin of platform/versions.ts (one line per problem: file: key path: what. Fix: how); 3 internal error (a bug in this repository, with its stack trace).";

/**
 * A script's usage is its header comment (the first paragraph of `// ` lines: the command line,
 * what it does, its exit codes), so the text a reader sees in the file and in `--help` is one text.
 * Only scripts/*.ts count: run in-process (tests, the benchmark), argv[1] is another program.
 */
function headerOf(script: string | undefined): string | undefined {
  if (!script || path.basename(path.dirname(script)) !== "scripts" || !script.endsWith(".ts") || !fs.existsSync(script)) return undefined;
  const lines: string[] = [];
  for (const line of fs.readFileSync(script, "utf8").split("\n")) {
    if (!line.startsWith("//")) break;
    const text = line.replace(/^\/\/ ?/, "");
    if (text.trim() === "") break;
    lines.push(text);
  }
  return lines.length ? lines.join("\n") : undefined;
}

/** The usage text: the header, every option as the parser accepts it, and the exit codes. */
export function usageText(options: Options, script: string | undefined): string {
  const header = headerOf(script);
  const rows: [string, string][] = Object.entries(options).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : ""}--${name}${o.type === "string" ? " <value>" : ""}`;
    const notes = [o.multiple ? "repeatable" : "", o.default !== undefined && o.default !== false ? `default: ${String(o.default)}` : ""].filter(Boolean);
    return [flag, notes.join(", ")];
  });
  rows.push(["-h, --help", "print this text and exit"]);
  const width = Math.max(...rows.map(([f]) => f.length));
  const out = [header ?? `${path.basename(script ?? "script", ".ts")}: an offline script of this repository.`, "", "Options:"];
  for (const [flag, note] of rows) out.push(`  ${flag.padEnd(width)}${note ? `  ${note}` : ""}`.trimEnd());
  if (!header || !/\bExit\b/.test(header)) out.push("", EXIT_CODES);
  return `${out.join("\n")}\n`;
}

/**
 * Parse a script's options (strict: an unknown option is a usage error, exit 2). `--help`/`-h`
 * anywhere prints the usage (the header comment of `script`, by default the running script) and
 * exits 0 before anything runs.
 */
export function args<T extends Options>(options: T, argv = process.argv.slice(2), script = process.argv[1]) {
  if (argv.includes("--help") || argv.includes("-h")) throw new HelpRequested(usageText(options, script));
  try {
    return parseArgs({ args: argv, options, allowPositionals: false, strict: true }).values;
  } catch (e) {
    throw new UserError(
      `${(e as Error).message}\nOptions: ${Object.keys(options)
        .map((o) => `--${o}`)
        .join(", ")} (--help explains them)`,
      EXIT_BAD_CONFIG,
    );
  }
}

/**
 * `--help`/`-h` of a script that hands its other arguments to another program (npm test → vitest
 * run): its usage, and nothing else parsed.
 */
export function helpOnly(argv = process.argv.slice(2), script = process.argv[1]): void {
  if (argv.includes("--help") || argv.includes("-h")) throw new HelpRequested(usageText({}, script));
}

/** A plan check of a stack file, printed like every other problem; one that names this repository's file (priority-order) keeps it. */
export function formatCheck(file: string, c: Check): string {
  return formatProblem({ ...c, file: c.file ?? file });
}

export interface StackPlan {
  config: LoadedConfig;
  /** The stack file's `openkeel:` keys as read (what the Pulumi CLI would hand the program). */
  raw: Record<string, unknown>;
  result: PlanResult;
  plan: Plan;
}

/** A stack file read and loaded, or the problems the loader refuses it with (the only mistake that throws). */
function loadStack(stack: string, stacksDir: string): { config: LoadedConfig; raw: Record<string, unknown> } | { problems: Problem[] } {
  try {
    const { raw, file } = readStackRaw(stack, stacksDir);
    return { config: loadConfig(raw, { stack, file }, STACK_DECLARATIONS), raw };
  } catch (e) {
    if (e instanceof ConfigError) return { problems: e.problems };
    throw e;
  }
}

/**
 * The stacks named (or every stack), each validated and planned; `progress` hears of each stack as
 * it is done. Fails after all of them with every bad input found: a problem of the stack's values
 * (the schema's, the values contract's) exits 2, a failed plan check 1.
 */
export function planStacks(stacks: string[] | undefined, stacksDir = STACKS_DIR, progress?: (line: string) => void): StackPlan[] {
  const names = stacks && stacks.length > 0 ? stacks : listStacks(stacksDir);
  const configProblems: string[] = [];
  const checkErrors: string[] = [];
  const out: StackPlan[] = [];
  for (const [i, stack] of names.entries()) {
    progress?.(`${stack}: planning (${i + 1}/${names.length})`);
    const loaded = loadStack(stack, stacksDir);
    if ("problems" in loaded) {
      configProblems.push(...loaded.problems.map(formatProblem));
      continue;
    }
    const { config, raw } = loaded;
    const result = planStack(config);
    const errors = result.problems.filter(isError);
    configProblems.push(...errors.filter((p) => !isCheck(p)).map((p) => formatProblem({ file: config.file, ...p })));
    checkErrors.push(...errors.filter(isCheck).map((c) => formatCheck(config.file, c)));
    if (errors.length === 0 && result.plan) out.push({ config, raw, result, plan: result.plan });
  }
  // a problem of platform/versions.ts comes with every stack: said once
  if (configProblems.length > 0) throw new UserError([...new Set(configProblems)].join("\n"), EXIT_BAD_CONFIG);
  if (checkErrors.length > 0) throw new UserError(checkErrors.join("\n"), EXIT_CHECKS_FAILED);
  return out;
}

/** Marks a progress line, so a parent process can tell it from an error message (review/renders.ts). */
export const PROGRESS_MARK = "… ";
const PROGRESS_ENV = "OPENKEEL_PROGRESS";

/**
 * Progress lines go to stderr on a terminal only: piped or in a log they would be noise, and
 * stdout stays the command's result. OPENKEEL_PROGRESS=1 forces them (a CI log, a parent process
 * that relays them), OPENKEEL_PROGRESS=0 silences them.
 */
export function progressWanted(env: NodeJS.ProcessEnv = process.env, isTTY = process.stderr.isTTY === true): boolean {
  if (env[PROGRESS_ENV] === "1") return true;
  if (env[PROGRESS_ENV] === "0") return false;
  return isTTY;
}

/** A progress line on stderr, when wanted. */
export function progress(line: string): void {
  if (progressWanted()) process.stderr.write(`${PROGRESS_MARK}${line}\n`);
}

/** Where a command writes: the process' streams for the CLI, buffers in tests and the benchmark. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Progress of a long run (absent: none wanted). */
  progress?: ((line: string) => void) | undefined;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  progress,
};

/**
 * Run a command's main and turn what it throws into an exit code: user errors print their message
 * (no stack trace), anything else is a bug and prints its stack trace (exit 3).
 */
async function execute(main: () => Promise<number | void> | number | void, io: Io = processIo): Promise<number> {
  try {
    return (await main()) ?? 0;
  } catch (e: unknown) {
    if (e instanceof HelpRequested) {
      io.out(e.text);
      return 0;
    }
    if (e instanceof UserError || e instanceof Interrupted) {
      io.err(`${e.message}\n`);
      return e.exitCode;
    }
    if (e instanceof ConfigError) {
      io.err(`${e.message}\n`);
      return EXIT_BAD_CONFIG;
    }
    io.err(`internal error (a bug in this repository, please report it):\n${(e as Error)?.stack ?? String(e)}\n`);
    return EXIT_INTERNAL_ERROR;
  }
}

/**
 * Run `work` with SIGINT and SIGTERM turned into an abort of its signal (reason: Interrupted), so
 * that it stops at its next await and cleans up; outside `work`, a signal ends the process at once.
 */
export async function interruptible<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController();
  const listeners = STOP_SIGNALS.map((s) => [s, () => stop.abort(new Interrupted(s))] as const);
  for (const [s, l] of listeners) process.on(s, l);
  try {
    return await work(stop.signal);
  } finally {
    for (const [s, l] of listeners) process.off(s, l);
  }
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A command run in-process with its output captured: exactly what the CLI would print and exit with. */
export async function capture(command: (argv: string[], io: Io) => Promise<number | void> | number | void, argv: string[]): Promise<CommandResult> {
  let stdout = "";
  let stderr = "";
  const io: Io = { out: (t) => void (stdout += t), err: (t) => void (stderr += t) };
  const code = await execute(() => command(argv, io), io);
  return { code, stdout, stderr };
}

/**
 * A reader that stops reading (`npm run plan | head -1`) closes the pipe: the next write fails
 * with EPIPE, emitted on the stream, and with nobody listening Node prints a stack trace. The
 * reader has what it wanted, so the command ends quietly; other write errors stay errors.
 */
function endQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
    throw e;
  });
}

/** Run a script's main; user errors print their message and exit with their code. */
export function run(main: () => Promise<number | void> | number | void): void {
  endQuietlyOnClosedPipe(process.stdout);
  endQuietlyOnClosedPipe(process.stderr);
  void execute(main).then((code) => {
    process.exitCode = code;
  });
}
