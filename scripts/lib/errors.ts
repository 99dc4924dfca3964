// How the offline scripts end on a user's mistake: a prepared message and an exit code, no stack
// trace (scripts/lib/cli.ts prints them). Anything else is a bug and keeps its stack trace.

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
