// npm run drift [-- --rendered <dir>] [--stacks-dir <dir>]: renders every stack afresh into a
// temporary folder (with scripts/render.ts, so every file the render writes counts) and compares it
// with the committed rendered/. Exit 0: identical; 1: rendered/ is stale (each differing file is
// listed, YAML files field by field); 2/3: the render itself failed (its own message). What an
// interrupted render left beside the stacks' folders (.<stack>.tmp-<pid>/) is cleared, in one line.
//
// The command itself is review/drift-command.ts, which the tests call in-process.
import { processIo, progressWanted, run } from "../cli/cli";
import { driftCommand } from "../review/drift-command";

// the fresh render's progress lines are relayed only when wanted (a terminal, or OPENKEEL_PROGRESS=1)
run(() => driftCommand(process.argv.slice(2), progressWanted() ? processIo : { ...processIo, progress: undefined }));
