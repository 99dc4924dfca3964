// What every offline script shares: argument parsing, loading stacks into Plans, and turning
// user mistakes into clear messages and exit codes (2: bad config, 1: failed checks) without a
// stack trace. Anything else is a bug in this repository and keeps its stack trace.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { ConfigError, formatProblem } from "../../components/problems";
import { listStacks, readStack, STACKS_DIR, stackFilePath } from "../../components/stack-file";
import { planStack, type PlanResult } from "../../environments";
import type { LoadedConfig } from "../../components/config";
import type { Plan } from "../../components/plan";
import type { PlanCheck } from "../../components/topology";

export const EXIT_CHECKS_FAILED = 1;
export const EXIT_BAD_CONFIG = 2;

/** A user-facing failure with a prepared message and exit code. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = "UserError";
  }
}

export function args<T extends NonNullable<ParseArgsConfig["options"]>>(options: T, argv = process.argv.slice(2)) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: false, strict: true }).values;
  } catch (e) {
    throw new UserError(`${(e as Error).message}\nOptions: ${Object.keys(options).map((o) => `--${o}`).join(", ")}`, EXIT_BAD_CONFIG);
  }
}

export function formatCheck(file: string, c: PlanCheck): string {
  const where = c.path ? `${file}: ${c.path}` : file;
  return `${where}: ${c.level} [${c.code}]: ${c.message}. Fix: ${c.remediation}`;
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
    const errors = result.checks.filter((c) => c.level === "error");
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

/** Run a script's main; user errors print their message and exit with their code. */
export function run(main: () => Promise<number | void> | number | void): void {
  Promise.resolve()
    .then(main)
    .then(
      (code) => {
        process.exitCode = code ?? 0;
      },
      (e: unknown) => {
        if (e instanceof UserError) {
          process.stderr.write(`${e.message}\n`);
          process.exitCode = e.exitCode;
        } else if (e instanceof ConfigError) {
          process.stderr.write(`${e.message}\n`);
          process.exitCode = EXIT_BAD_CONFIG;
        } else {
          process.stderr.write(`internal error (a bug in this repository, please report it):\n${(e as Error)?.stack ?? String(e)}\n`);
          process.exitCode = 3;
        }
      },
    );
}
