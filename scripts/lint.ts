// npm run lint: oxlint over all code (.oxlintrc.json; a disable comment that disables nothing is an
// error), then oxfmt --check (.oxfmtrc.json): changes nothing. npm test runs it before the suites.
// Exit 0: clean; otherwise oxlint's or oxfmt's exit code, with what they found.
import { run } from "../cli/cli";
import { lintCommand } from "../tools/dev-scripts";

run(() => lintCommand(process.argv.slice(2)));
