// npm run typecheck: the type check of the whole repository, the policy pack included (tsconfig.json),
// with TypeScript 7 (typescript-native), incremental: its state in node_modules/.cache/tsc, so a
// rerun checks what changed. Emits nothing. npm test runs it before the suites.
// Exit 0: no type error; otherwise tsc's exit code, with the errors.
import { run } from "../cli/cli";
import { typecheckCommand } from "../tools/dev-scripts";

run(() => typecheckCommand(process.argv.slice(2)));
