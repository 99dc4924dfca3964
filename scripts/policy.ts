// npm run policy [-- --stack <name>]… [--stacks-dir <dir>] [--policy-pack-config <file.json>] [--json] [--out <file.json>]:
// the CrossGuard pack of policy/ judges every stack (or the named ones) offline: each program runs
// under the runtime mocks while the real pack, spawned once per environment and driven through the
// Analyzer protocol as `pulumi preview --policy-pack policy` would, judges what it registers.
// --json prints the results as JSON instead of text: {"stacks": {"<stack>": {"violations":
// [{"policy", "level", "resource", "type", "message"}], "passed": true|false, …}}}; --out writes
// that JSON to a file too. Per-stack progress goes to stderr on a terminal.
// Exit 0: no mandatory violation; 1: some; 2: bad config or usage. The command itself is
// offline-engine/policy-command.ts, which tests and the benchmark call in-process.
import { processIo, progress, run } from "../cli/cli";
import { policyCommand } from "../offline-engine/policy-command";

run(() => policyCommand(process.argv.slice(2), processIo, progress));
