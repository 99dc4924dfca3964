// npm test [-- <vitest run arguments>]: the pinned tools (npm run tools), the type check (npm run
// typecheck) and the linter (npm run lint), then every suite (vitest run; vitest.config.mts), each
// step only when the one before passed. Arguments other than --help go to vitest run (a file, -t
// <name>; `npx vitest run --help` lists them).
// Exit 0: every step passed; otherwise the exit code of the step that failed.
import { run } from "../cli/cli";
import { testCommand } from "../tools/dev-scripts";

run(() => testCommand(process.argv.slice(2)));
