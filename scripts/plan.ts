// npm run plan [-- --stack <name>]… [--base <git-ref>]: the plan checks (okadm plan rules and the
// placement checks), the upgrade check (every pin that moved since the committed state — --base, else
// the stack's deployed/<stack> branch, else HEAD — against its upgrade rule in platform/versions.ts),
// a warning per PriorityClass whose value or preemptionPolicy changed against that commit's render
// (pulumi up deletes and re-creates it) and a short placement summary per stack. Exit 1 when a check
// fails, 2 on bad config; writes nothing.
//
// The command itself is pipeline/plan-command.ts, which the tests call in-process.
import { processIo, run } from "../cli/cli";
import { planCommand } from "../pipeline/plan-command";

run(() => planCommand(process.argv.slice(2), processIo));
