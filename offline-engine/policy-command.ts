// `npm run policy` as a function of its arguments: the CLI (scripts/policy.ts), the tests and the
// benchmark run the same code, the last two in-process with the output captured. Every named stack
// must load and pass its plan checks before any pack starts; then one pack process per environment
// judges the stacks one after another, each while its program runs under the runtime mocks.
import * as fs from "node:fs";
import * as path from "node:path";
import { writeWhole } from "../cli/write";
import { PolicyConfigError, type Diagnostic, type PolicyPackConfigFile } from "./analyzer";
import { args, EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, planStacks, UserError, type Io } from "../cli/cli";
import { planWarnings, warningLines, type StackWarning } from "../cli/warnings";
import { isError } from "../config/problems";
import { formatDiagnostic, PackPool, pulumiConfigMap, reportedMessage, type PolicyResult, type PolicyStack } from "./policy-run";

const POLICY_OPTIONS = {
  stack: { type: "string", multiple: true },
  "stacks-dir": { type: "string", default: "stacks" },
  "policy-pack-config": { type: "string" },
  /** The results as JSON on stdout (instead of the text report). */
  json: { type: "boolean", default: false },
  /** The results as JSON in this file as well. */
  out: { type: "string" },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const POLICY_SCRIPT = path.resolve(__dirname, "../scripts/policy.ts");

/** One violation in the JSON report (`npm run preview -- --policy <file>` reads it). */
interface PolicyViolation {
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

/** A stack ready to be judged: planned, its checks passed. */
export interface PlannedStack extends PolicyStack {
  environment: string;
  /** Its plan-check warnings, which the command prints once for the run (its program would log them per stack). */
  warnings: StackWarning[];
}

function readPackConfig(file: string | undefined): PolicyPackConfigFile | undefined {
  if (!file) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    throw new UserError(
      `${file}: cannot read the policy pack config: ${(e as Error).message}. Fix: give a JSON file such as {"all": "mandatory"}`,
      EXIT_BAD_CONFIG,
    );
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new UserError(`${file}: the policy pack config must be a JSON object. Fix: write {"<policy>": "advisory"}`, EXIT_BAD_CONFIG);
  }
  return parsed as PolicyPackConfigFile;
}

/**
 * The stacks named (or every stack), loaded and planned, each with the config the engine would hand
 * its program and pack, and its program: the Pulumi layer applying the plan made here (index.ts
 * would make the same one again from the same config: test/config/config.test.ts).
 */
export function plannedStacks(names: string[] | undefined, stacksDir: string): PlannedStack[] {
  return planStacks(names, stacksDir).map((s) => {
    const warnings = planWarnings([s]);
    // what the program needs of the planning, no more (the placement report is large at scale),
    // and all its closure keeps (not `s`, which holds the report)
    // no errors (planStacks refused them); the warnings go to the command, which prints each once
    const planned = { problems: s.result.problems.filter(isError), plan: s.plan };
    const { file, stack } = s.config;
    return {
      stack,
      environment: s.config.environment,
      warnings,
      config: pulumiConfigMap(s.raw),
      program: async () => (await import("../components/deploy")).deployStack(stack, planned, file),
    };
  });
}

/**
 * Judge the stacks, one pack per environment (of `pool`, or of a pool of their own, closed after);
 * `each` hears of every stack's result as it comes. Returns each pack's CPU time and peak memory
 * (Linux; for the bench).
 */
export async function judgeStacks(
  stacks: PlannedStack[],
  packConfig: PolicyPackConfigFile | undefined,
  each: (s: PlannedStack, r: PolicyResult) => void,
  progress: (line: string) => void = () => {},
  pool?: PackPool,
): Promise<{ cpuMs: number; peakKiB: number }[]> {
  const packs = pool ?? new PackPool();
  try {
    packs.prepare(stacks);
    // the programs' modules (the Pulumi SDK and provider among them, about half a second) load
    // while the packs start, on the other core, instead of after
    if (stacks.length > 0) await Promise.all([import("./mock-run"), import("../components/deploy")]);
    for (const [i, s] of stacks.entries()) {
      progress(`${s.stack}: judging (${i + 1}/${stacks.length})`);
      each(s, await packs.judge(s, packConfig));
    }
    return await packs.usage();
  } finally {
    if (!pool) packs.close();
  }
}

function violation(d: Diagnostic): PolicyViolation {
  const resource = d.resourceName ?? (d.urn || undefined);
  return {
    policy: d.policy,
    level: d.level,
    ...(resource ? { resource } : {}),
    ...(d.resourceType ? { type: d.resourceType } : {}),
    message: reportedMessage(d),
  };
}

/** `pool`: packs kept across commands (the tests); by default the command's own. */
export async function policyCommand(argv: string[], io: Io, progress: (line: string) => void = () => {}, pool?: PackPool): Promise<number> {
  const opts = args(POLICY_OPTIONS, argv, POLICY_SCRIPT);
  const packConfig = readPackConfig(opts["policy-pack-config"]);
  const stacks = plannedStacks(opts.stack, opts["stacks-dir"]!);
  const report: PolicyReportJson = { stacks: {} };
  let failed = 0;
  try {
    await judgeStacks(
      stacks,
      packConfig,
      (s, result) => {
        const advisory = result.diagnostics.length - result.mandatory.length;
        if (!opts.json) {
          io.out(
            `${s.stack} (${s.environment}): ${result.resources} resources analyzed, ${result.mandatory.length} mandatory and ${advisory} advisory violation(s)\n`,
          );
          for (const d of result.diagnostics) io.out(`${formatDiagnostic(d)}\n`);
        }
        report.stacks[s.stack] = {
          environment: s.environment,
          resources: result.resources,
          violations: result.diagnostics.map(violation),
          passed: result.mandatory.length === 0,
        };
        if (result.mandatory.length > 0) failed++;
      },
      progress,
      pool,
    );
  } catch (e) {
    if (e instanceof PolicyConfigError) throw new UserError(`${opts["policy-pack-config"]}: ${e.message}`, EXIT_BAD_CONFIG);
    throw e;
  }
  // on stderr, where the programs logged them, so that --json's stdout stays JSON
  for (const line of warningLines(stacks.flatMap((s) => s.warnings))) io.err(`${line}\n`);
  const json = `${JSON.stringify(report, null, 2)}\n`;
  if (opts.out) writeWhole(opts.out, json);
  if (opts.json) io.out(json);
  else io.out(failed > 0 ? `policy: ${failed} stack(s) violate mandatory policies\n` : `policy: ${stacks.length} stack(s) pass\n`);
  return failed > 0 ? EXIT_CHECKS_FAILED : 0;
}
