// npm run format: oxfmt rewrites every file to the format (.oxfmtrc.json), then oxlint --fix applies
// the linter's safe fixes. What npm run lint checks, fixed in place.
// Exit 0: done; otherwise oxfmt's or oxlint's exit code (what oxlint cannot fix is printed).
import { run } from "../cli/cli";
import { formatCommand } from "../tools/dev-scripts";

run(() => formatCommand(process.argv.slice(2)));
