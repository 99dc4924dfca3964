// npm run render [-- --stack <name>]… [--out <dir>] [--stacks-dir <dir>] [--base <git-ref>]:
// every stack (or the named ones) → rendered/<stack>/, nothing written unless every stack renders
// and passes the verdict npm run plan, the preview and the deploy gate give (review/verdict.ts): its
// plan and placement checks, then its transition against what is deployed (deployed/<stack>, else
// HEAD; --base names another commit) — data-owning units lost (allowed only by the stack's
// openkeel:allowRemoval), node removals and drains out of order, Swift's rings, pins moved further
// than their upgrade rules allow (platform/versions.ts) — each refusal with the fix.
// --skip-transition-checks: the caller judges the transition itself (npm run preview) or compares
// files only (npm run drift).
// Each stack is written whole or not at all; Ctrl-C or SIGTERM stops the writing at the next file,
// and what a render killed outright left (rendered/.<stack>.tmp-<pid>/) the next one clears.
// Exit 0: rendered; 1: a check failed; 2: bad stack config, a malformed pin (platform/versions.ts)
// or usage; 3: an internal error (a bug in this repository, with its stack trace); 130/143: stopped
// by SIGINT/SIGTERM.
//
// The command itself is pipeline/render-command.ts, which tests and the benchmark call in-process.
import { processIo, run } from "../cli/cli";
import { renderCommand } from "../pipeline/render-command";

run(() => renderCommand(process.argv.slice(2), processIo));
