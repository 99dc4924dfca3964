// `npm run policy` as a function of its arguments: the CLI (scripts/policy.ts), the tests and the
// benchmark run the same code, the last two in-process with the output captured. Every named stack
// must load and pass its plan checks before any pack starts; then one pack process per environment
// judges the stacks one after another, each while its program runs under the runtime mocks.
import * as fs from "node:fs";
import * as path from "node:path";
import { rawFromStackYaml, stackFilePath } from "../../config/stack-file";
import { PolicyConfigError, type Diagnostic, type PolicyPackConfigFile } from "./analyzer";
import { args, EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, planStacks, UserError, type Io } from "./cli";
import { formatDiagnostic, PackPool, pulumiConfigMap, reportedMessage, type PolicyResult } from "./policy-run";

const POLICY_OPTIONS = {
  stack: { type: "string", multiple: true },
  "stacks-dir": { type: "string", default: "stacks" },
  "policy-pack-config": { type: "string" },
  /** The results as JSON on stdout (instead of the text report). */
  json: { type: "boolean", default: false },
  /** The results as JSON in this file as well. */
  out: { type: "string" },
} as const;

/** One violation in the JSON report (`npm run preview -- --policy <file>` reads it). */
export interface PolicyViolation {
  policy: string;
  level: Diagnostic["level"];
  /** The resource's name; its URN when it is not one the program registered; absent: the stack. */
  resource?: string;
  /** The resource's Pulumi type, when it is one the program registered. */
  type?: string;
  /** What is wrong. Fix: how (the policy's own words, without its description). */
  message: string;
}

/** `--json`, `--out`: `{"stacks": {"<stack>": {"violations": […], "passed": …}}}`. */
export interface PolicyReportJson {
  stacks: Record<string, { environment: string; resources: number; violations: PolicyViolation[]; passed: boolean }>;
}

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

function violation(d: Diagnostic): PolicyViolation {
  const resource = d.resourceName ?? (d.urn || undefined);
  return { policy: d.policy, level: d.level, ...(resource ? { resource } : {}), ...(d.resourceType ? { type: d.resourceType } : {}), message: reportedMessage(d) };
}

/** Write a file whole or not at all. */
function writeWhole(file: string, content: string): void {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    fs.writeFileSync(tmp, content);
    fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

export async function policyCommand(argv: string[], io: Io, progress: (line: string) => void = () => {}): Promise<number> {
  const opts = args(POLICY_OPTIONS, argv);
  const packConfig = readPackConfig(opts["policy-pack-config"]);
  const stacksDir = opts["stacks-dir"]!;
  const stacks = planStacks(opts.stack, stacksDir).map((s) => {
    const file = stackFilePath(s.config.stack, stacksDir);
    return { stack: s.config.stack, environment: s.config.environment, config: pulumiConfigMap(rawFromStackYaml(fs.readFileSync(file, "utf8"), file)) };
  });
  const pool = new PackPool(stacks, packConfig);
  const report: PolicyReportJson = { stacks: {} };
  let failed = 0;
  try {
    // loaded while the packs start: the Pulumi SDK and the program are most of this command's start-up
    const program = (await import("../../index")).default as () => Promise<unknown>;
    for (const [i, s] of stacks.entries()) {
      progress(`${s.stack}: judging (${i + 1}/${stacks.length})`);
      let result: PolicyResult;
      try {
        result = await pool.judge({ ...s, program });
      } catch (e) {
        if (e instanceof PolicyConfigError) throw new UserError(`${opts["policy-pack-config"]}: ${e.message}`, EXIT_BAD_CONFIG);
        throw e;
      }
      const advisory = result.diagnostics.length - result.mandatory.length;
      if (!opts.json) {
        io.out(
          `${s.stack} (${s.environment}): ${result.resources} resources analyzed, ` +
            `${result.mandatory.length} mandatory and ${advisory} advisory violation(s)\n`,
        );
        for (const d of result.diagnostics) io.out(`${formatDiagnostic(d)}\n`);
      }
      report.stacks[s.stack] = { environment: s.environment, resources: result.resources, violations: result.diagnostics.map(violation), passed: result.mandatory.length === 0 };
      if (result.mandatory.length > 0) failed++;
    }
  } finally {
    pool.close();
  }
  const json = `${JSON.stringify(report, null, 2)}\n`;
  if (opts.out) writeWhole(opts.out, json);
  if (opts.json) io.out(json);
  else io.out(failed > 0 ? `policy: ${failed} stack(s) violate mandatory policies\n` : `policy: ${stacks.length} stack(s) pass\n`);
  return failed > 0 ? EXIT_CHECKS_FAILED : 0;
}
