// npm run policy [-- --stack <name>]… [--policy-pack-config <file.json>]: the CrossGuard pack of
// policy/ judges every stack (or the named ones) offline — the program runs under the runtime
// mocks, the pack is spawned and driven through the Analyzer protocol as `pulumi preview
// --policy-pack policy` would. Exit 0: no mandatory violation; 1: some; 2: bad config or usage.
import * as fs from "node:fs";
import program from "../index";
import { rawFromStackYaml, stackFilePath } from "../config/stack-file";
import { PolicyConfigError, type PolicyPackConfigFile } from "./lib/analyzer";
import { args, EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, planStacks, run, UserError } from "./lib/cli";
import { runProgram } from "./lib/mock-run";
import { formatDiagnostic, judge, openPack, pulumiConfigMap } from "./lib/policy-run";

function readPackConfig(file: string | undefined): PolicyPackConfigFile | undefined {
  if (!file) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    throw new UserError(`${file}: cannot read the policy pack config: ${(e as Error).message}. Fix: give a JSON file such as {"all": "mandatory"}`, EXIT_BAD_CONFIG);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new UserError(`${file}: the policy pack config must be a JSON object. Fix: write {"<policy>": "advisory"}`, EXIT_BAD_CONFIG);
  }
  return parsed as PolicyPackConfigFile;
}

run(async () => {
  const opts = args({
    stack: { type: "string", multiple: true },
    "stacks-dir": { type: "string", default: "stacks" },
    "policy-pack-config": { type: "string" },
  });
  const packConfig = readPackConfig(opts["policy-pack-config"]);
  const stacks = planStacks(opts.stack, opts["stacks-dir"]).map((s) => {
    const file = stackFilePath(s.config.stack, opts["stacks-dir"]);
    return { ...s, pulumiConfig: pulumiConfigMap(rawFromStackYaml(fs.readFileSync(file, "utf8"), file)) };
  });
  // One pack per stack, as the engine starts one per operation. Starting a pack (ts-node compiles it)
  // costs seconds, so every stack's pack starts now, side by side; the programs run one after
  // another (the runtime mocks are process-global).
  const sessions = stacks.map((s) => openPack(s.config.stack, s.pulumiConfig, packConfig));
  sessions.forEach((p) => p.catch(() => undefined));
  let failed = 0;
  try {
    for (const [i, s] of stacks.entries()) {
      let result;
      try {
        const programRun = await runProgram(s.config.stack, s.pulumiConfig, program);
        result = await judge(s.config.stack, programRun, await sessions[i]);
      } catch (e) {
        if (e instanceof PolicyConfigError) throw new UserError(`${opts["policy-pack-config"]}: ${e.message}`, EXIT_BAD_CONFIG);
        throw e;
      }
      const advisory = result.diagnostics.length - result.mandatory.length;
      console.log(
        `${s.config.stack} (${s.config.environment}): ${result.run.resources.length} resources analyzed, ` +
          `${result.mandatory.length} mandatory and ${advisory} advisory violation(s)`,
      );
      for (const d of result.diagnostics) console.log(formatDiagnostic(d));
      if (result.mandatory.length > 0) failed++;
    }
  } finally {
    for (const p of sessions) p.then((session) => session.close(), () => undefined);
  }
  console.log(failed > 0 ? `policy: ${failed} stack(s) violate mandatory policies` : `policy: ${stacks.length} stack(s) pass`);
  return failed > 0 ? EXIT_CHECKS_FAILED : 0;
});
