// npm run docs: writes the generated table of docs/platform.md from each platform component's
// `docs` rows (platform/<component>.ts); what else docs/ holds is written by hand.
// Exit 0: written or up to date; 2: the table's markers are missing from the file.
//
// The command itself is tools/docs-command.ts, which the tests call in-process.
import { processIo, run } from "../cli/cli";
import { docsCommand } from "../tools/docs-command";

run(() => docsCommand(process.argv.slice(2), processIo));
