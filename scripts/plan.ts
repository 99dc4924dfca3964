// npm run plan [-- --stack <name>]…: the plan checks (okadm plan rules and the placement checks) and
// a short placement summary per stack. Exit 1 when a check fails, 2 on bad config; writes nothing.
//
// The command itself is pipeline/plan-command.ts, which the tests call in-process.
import { processIo, run } from "../cli/cli";
import { planCommand } from "../pipeline/plan-command";

run(() => planCommand(process.argv.slice(2), processIo));
