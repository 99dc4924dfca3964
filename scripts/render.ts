// npm run render [-- --stack <name>]… [--out <dir>] [--stacks-dir <dir>] [--allow-removal <unit>]…:
// every stack (or the named ones) → rendered/<stack>/, nothing written unless every stack renders.
// --allow-removal <unit> lets a protected unit (one that owns data) go (docs/operating.md).
// Exit 0: rendered; 1: a plan check failed or a protected unit would go; 2: bad stack config or usage;
// 3: an internal error (a bug in this repository, with its stack trace).
//
// The command itself is pipeline/render-command.ts, which tests and the benchmark call in-process.
import { processIo, run } from "../cli/cli";
import { renderCommand } from "../pipeline/render-command";

run(() => renderCommand(process.argv.slice(2), processIo));
