// npm run render [-- --stack <name>]… [--out <dir>] [--stacks-dir <dir>] [--allow-removal <unit>]…:
// every stack (or the named ones) → rendered/<stack>/. The command itself is
// scripts/lib/render-command.ts, which tests and the benchmark call in-process.
import { processIo, run } from "./lib/cli";
import { renderCommand } from "./lib/render-command";

run(() => renderCommand(process.argv.slice(2), processIo));
