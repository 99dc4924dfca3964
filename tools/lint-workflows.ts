// The body of `scripts/lint-workflows.ts` (its header comment is the command's --help).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { args, EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, progress, UserError } from "../cli/cli";
import { requireTool } from "./tools";

export function lintWorkflows() {
  const opts = args({ dir: { type: "string", default: ".github/workflows" } });
  const dir = opts.dir!;
  const files = fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((f) => /\.ya?ml$/.test(f))
        .sort()
        .map((f) => path.join(dir, f))
    : [];
  if (files.length === 0) throw new UserError(`${dir}: no workflow files (*.yml, *.yaml).`, EXIT_BAD_CONFIG);
  const actionlint = requireTool("actionlint");
  progress(`actionlint over ${files.length} workflow(s)`);
  const r = spawnSync(actionlint, ["-no-color", "-shellcheck=", "-pyflakes=", ...files], { encoding: "utf8" });
  if (r.error) throw r.error;
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  if (r.status === 0) {
    console.log(`actionlint: ${files.length} workflow(s) clean`);
    return 0;
  }
  if (r.status === 1) return EXIT_CHECKS_FAILED;
  throw new Error(`actionlint exited ${r.status}`);
}
