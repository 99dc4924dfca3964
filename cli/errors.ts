// How the offline scripts end on a user's mistake: a prepared message and an exit code, no stack
// trace (cli/cli.ts prints them); on a signal that stopped them, the same. Anything else is a bug
// and keeps its stack trace.
import { constants } from "node:os";

export const EXIT_CHECKS_FAILED = 1;
/** Bad input: the command line, a stack file, or a pin of platform/versions.ts written wrong. */
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

/** Exit code of a crash: a bug in this repository, printed with its stack trace. */
export const EXIT_INTERNAL_ERROR = 3;

/**
 * The exit code to end with when a child render failed: a bad stack (2) or failed checks (1) are
 * the input's; anything else (a crash, exit 3 with its trace, or no code) stays an internal error,
 * never reported as the stack's mistake.
 */
export function renderFailureExit(code: number | null): number {
  return code === EXIT_BAD_CONFIG || code === EXIT_CHECKS_FAILED ? code : EXIT_INTERNAL_ERROR;
}

/** The signals that stop a command which cleans up first (a render: its temporary folder). */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** A command stopped by SIGINT (Ctrl-C) or SIGTERM: it exits 128 + the signal's number (130, 143), as a shell reports it. */
export class Interrupted extends Error {
  constructor(
    readonly signal: StopSignal,
    message = `stopped by ${signal}`,
  ) {
    super(message);
    this.name = "Interrupted";
  }

  get exitCode(): number {
    return 128 + constants.signals[this.signal];
  }
}
