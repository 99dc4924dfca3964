// npm run test:fast [-- <vitest run arguments>]: the unit suites (test/<layer>/), alone
// (OPENKEEL_TESTS=fast: vitest.config.mts leaves out test/integration/), without npm test's tools, type
// check and lint. Arguments other than --help go to vitest run.
// Exit 0: every suite passed; otherwise vitest's exit code.
import { run } from "../cli/cli";
import { testFastCommand } from "../tools/dev-scripts";

run(() => testFastCommand(process.argv.slice(2)));
