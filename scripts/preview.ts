// npm run preview -- --base <git-ref> [--out .preview] [--stack <name>]… [--policy <file>]
// Renders the base commit (its own code and stacks, from `git archive`) and the working tree, and
// writes what changed per stack: the action on every object and release (create, update, replace
// with the field that forces it, delete), errors for what `pulumi up` would refuse, warnings with
// their reasons, the steps per node outside Kubernetes, the placement delta, and every diff:
// .preview/<stack>.md, report.md (every stack), comment.md (report.md, or its summary when too long
// for a PR comment) and report.json (the same as data). --policy adds policy results: the JSON of
// `npm run policy -- --json`, or any other file as text. A side that does not render still writes
// the report, marked failed, so a PR comment never shows an earlier preview. --stack renders only the
// named stacks, on both sides; no other stack file is read.
// Exit 0: report written; 1: report written with errors (what `pulumi up` would refuse), or a side
// does not render because its checks fail; 2: bad usage, unknown ref, or the working tree's stack
// config is invalid.
//
// The command itself is review/preview-command.ts, which the tests call in-process.
import { processIo, progressWanted, run } from "../cli/cli";
import { previewCommand } from "../review/preview-command";

// both renders' progress lines are relayed only when wanted (a terminal, or OPENKEEL_PROGRESS=1)
run(() => previewCommand(process.argv.slice(2), progressWanted() ? processIo : { ...processIo, progress: undefined }));
