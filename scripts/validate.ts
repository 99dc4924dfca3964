// npm run validate [-- --stack <name>]… [--schemas <dir>] [--rendered <dir>]: kubeconform -strict
// over every Kubernetes object of every rendered stack (rendered/<stack>/objects/ only: values files,
// index.yaml and node-level configuration are not Kubernetes objects). Schemas come from --schemas
// or $OPENKEEL_SCHEMAS (an offline folder laid out as ../shared/schemas), else from ../shared/schemas
// when it is beside the checkout, else from upstream at the commits and tags platform/versions.ts
// pins. Upstream, it first checks that it answers, and stops with one line and the fix if not.
// Exit 0: every object valid; 1: an object is invalid or has no schema; 2: bad usage or setup
// (schemas that cannot be had included).
//
// The command itself is tools/validate-command.ts, which the tests call in-process.
import { processIo, run } from "../cli/cli";
import { validateCommand } from "../tools/validate-command";

run(() => validateCommand(process.argv.slice(2), processIo));
