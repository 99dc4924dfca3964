// npm run docs: writes the generated tables of docs/: docs/platform.md's from each platform
// component's `docs` rows (platform/<component>.ts), docs/openkeel-values.md's releases' table from
// each service's descriptor (openkeel/services/<service>.ts); what else docs/ holds is written by hand.
// Exit 0: written or up to date; 2: a table's markers are missing from its file (nothing is written).
//
// The command itself is tools/docs-command.ts, which the tests call in-process.
import { processIo, run } from "../cli/cli";
import { docsCommand } from "../tools/docs-command";

run(() => docsCommand(process.argv.slice(2), processIo));
