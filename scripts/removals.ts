// npm run removals -- --stack <name> [--state <file>] [--stacks-dir <dir>]: the protected units the
// stack's openkeel:allowRemoval lets go, one per line; with --state (what `pulumi stack export
// --file <file>` wrote), the URNs of their protected resources instead, one per line, which the
// deploy workflow unprotects (`pulumi state unprotect`) before `pulumi up` (docs/operating.md,
// "Removing a unit that owns data"). Exit 0: listed (maybe nothing); 2: bad usage, a bad stack file
// or a file that is no state export.
//
// The command itself is review/removals-command.ts, which the tests call in-process.
import { processIo, run } from "../cli/cli";
import { removalsCommand } from "../review/removals-command";

run(() => removalsCommand(process.argv.slice(2), processIo));
