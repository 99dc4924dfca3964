// npm run render [-- --stack <name>]… [--out <dir>] [--stacks-dir <dir>] [--allow-removal <unit>]… [--base <git-ref>]:
// every stack (or the named ones) → rendered/<stack>/, nothing written unless every stack renders.
// --allow-removal <unit> lets a protected unit (one that owns data) go (docs/operating.md). A pin
// that moved since the stack's committed state (--base, else its deployed/<stack> branch, else HEAD)
// further than its upgrade rule allows (platform/versions.ts) stops the render with the fix; a
// PriorityClass whose value or preemptionPolicy changed against that commit's render is a warning
// (pulumi up deletes and re-creates it). --skip-upgrade-check: the caller compares both itself, as
// npm run preview does. Each stack is written whole or not at all; Ctrl-C or SIGTERM stops the
// writing at the next file, and what a render killed outright left (rendered/.<stack>.tmp-<pid>/)
// the next one clears.
// Exit 0: rendered; 1: a plan check failed, a protected unit would go, or an upgrade step is
// unsupported; 2: bad stack config, a malformed pin (platform/versions.ts) or usage; 3: an internal error (a bug in this repository,
// with its stack trace); 130/143: stopped by SIGINT/SIGTERM.
//
// The command itself is pipeline/render-command.ts, which tests and the benchmark call in-process.
import { processIo, run } from "../cli/cli";
import { renderCommand } from "../pipeline/render-command";

run(() => renderCommand(process.argv.slice(2), processIo));
