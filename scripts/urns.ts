// npm run urns [-- --base <git-ref>] [--stack <name>]…: the Pulumi resource graph (URNs) of every
// stack under the base's program (default: the last release, a tag v<version> or .ci/last-release)
// and under the working tree's, each run under the runtime mocks with its own code, compared as the
// engine resolves aliases: a protected resource deleted or replaced, or an object moved to another
// URN, without an alias is an error (components/renames.ts holds the aliases of renamed units).
// Exit 0: no such loss; 1: a loss (each named, with the fix); 2: bad usage or unknown ref.
//
// The command itself is review/urns-command.ts, which the tests call in-process.
import { processIo, run } from "../cli/cli";
import { urnsCommand } from "../review/urns-command";

run(() => urnsCommand(process.argv.slice(2), processIo));
