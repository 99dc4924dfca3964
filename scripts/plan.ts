// npm run plan [-- --stack <name>]… [--stacks-dir <dir>] [--base <git-ref>]: the verdict of npm run
// render without writing anything — the plan checks (okadm plan rules, placement checks), then each
// stack's transition against what is deployed (deployed/<stack>, else HEAD; --base names another
// commit): data-owning units lost, node removals and drains out of order, Swift's rings, the upgrade
// rules of platform/versions.ts (review/verdict.ts) — and a short placement summary per stack. The
// deploy workflow runs it as its last gate before pulumi up. Exit 1 when a check fails, 2 on bad
// config or usage; writes nothing.
//
// The command itself is pipeline/plan-command.ts, which the tests call in-process.
import { processIo, run } from "../cli/cli";
import { planCommand } from "../pipeline/plan-command";

run(() => planCommand(process.argv.slice(2), processIo));
