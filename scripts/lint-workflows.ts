// npm run lint:workflows [-- --dir <folder>]: actionlint (pinned, from .tools/) over every workflow in
// .github/workflows/. Its shellcheck and pyflakes integrations are off: they would use whatever
// version a machine happens to have, so the same workflow could pass here and fail in CI.
// Exit 0: clean; 1: actionlint found problems (printed as file:line:col: message [rule]); 2: setup.
import { run } from "../cli/cli";
import { lintWorkflows } from "../tools/lint-workflows";

run(lintWorkflows);
