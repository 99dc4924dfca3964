// What every offline script shares: argument parsing, loading stacks into Plans, and turning
// user mistakes into clear messages and exit codes (2: bad config, 1: failed checks) without a
// stack trace. Anything else is a bug in this repository and keeps its stack trace.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { ConfigError, formatProblem, isError, type Check } from "../../config/problems";
import { EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, EXIT_INTERNAL_ERROR, UserError } from "./errors";
import { listStacks, readStack, STACKS_DIR, stackFilePath } from "../../config/stack-file";
import { planStack, type PlanResult } from "../../environments";
import type { LoadedConfig } from "../../config/schema";
import type { Plan } from "../../plan/plan";

export { EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, UserError } from "./errors";

export function args<T extends NonNullable<ParseArgsConfig["options"]>>(options: T, argv = process.argv.slice(2)) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: false, strict: true }).values;
  } catch (e) {
    throw new UserError(`${(e as Error).message}\nOptions: ${Object.keys(options).map((o) => `--${o}`).join(", ")}`, EXIT_BAD_CONFIG);
  }
}

/** A plan check of a stack file, printed like every other problem. */
export function formatCheck(file: string, c: Check): string {
  return formatProblem({ ...c, file });
}

export interface StackPlan {
  config: LoadedConfig;
  result: PlanResult;
  plan: Plan;
}

/** The stacks named (or every stack), each validated and planned. Fails on the first bad input of any. */
export function planStacks(stacks: string[] | undefined, stacksDir = STACKS_DIR): StackPlan[] {
  const names = stacks && stacks.length > 0 ? stacks : listStacks(stacksDir);
  const configProblems: string[] = [];
  const checkErrors: string[] = [];
  const out: StackPlan[] = [];
  for (const stack of names) {
    let config: LoadedConfig;
    try {
      config = readStack(stack, stacksDir);
    } catch (e) {
      if (e instanceof ConfigError) {
        configProblems.push(...e.problems.map(formatProblem));
        continue;
      }
      throw e;
    }
    let result: PlanResult;
    try {
      result = planStack(config);
    } catch (e) {
      // values that break the OpenKeel values contract: a stack mistake, reported like one
      if (e instanceof ConfigError) {
        configProblems.push(...e.problems.map(formatProblem));
        continue;
      }
      throw e;
    }
    const file = stackFilePath(stack, stacksDir);
    const errors = result.checks.filter(isError);
    if (errors.length > 0 || !result.plan) {
      checkErrors.push(...errors.map((c) => formatCheck(file, c)));
      continue;
    }
    out.push({ config, result, plan: result.plan });
  }
  if (configProblems.length > 0) throw new UserError(configProblems.join("\n"), EXIT_BAD_CONFIG);
  if (checkErrors.length > 0) throw new UserError(checkErrors.join("\n"), EXIT_CHECKS_FAILED);
  return out;
}

/** Where a command writes: the process' streams for the CLI, buffers in tests and the benchmark. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/**
 * Run a command's main and turn what it throws into an exit code: user errors print their message
 * (no stack trace), anything else is a bug and prints its stack trace (exit 3).
 */
async function execute(main: () => Promise<number | void> | number | void, io: Io = processIo): Promise<number> {
  try {
    return (await main()) ?? 0;
  } catch (e: unknown) {
    if (e instanceof UserError) {
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

/** Run a script's main; user errors print their message and exit with their code. */
export function run(main: () => Promise<number | void> | number | void): void {
  void execute(main).then((code) => {
    process.exitCode = code;
  });
}
