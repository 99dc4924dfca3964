// The policy pack in tests: the real pack, spawned and driven through the Analyzer protocol
// (offline-engine/analyzer.ts), judging what the program registers under the runtime mocks. A pack
// reads the environment from the stack config it is started with, so a file starts one pack per
// environment and reuses it for every run of that environment (spawning costs seconds).
import program from "../../index";
import { deployPlan } from "../../components/deploy";
import type { Plan } from "../../plan/plan";
import { planStack } from "../../environments";
import type { Diagnostic, PackSession } from "../../offline-engine/analyzer";
import { runProgram, type ProgramRun } from "../../offline-engine/mock-run";
import { judge, judgeProgram, openPack, pulumiConfigMap, type PolicyResult } from "../../offline-engine/policy-run";
import { shippedPlan } from "./plans";
import { mutatedConfig, shippedRaw } from "./stacks";

export async function packFor(stack: string): Promise<PackSession> {
  return openPack(stack, pulumiConfigMap(shippedRaw(stack)));
}

/** The stack config changed by `mutate`, as the program reads it. */
function mutatedConfigMap(stack: string, mutate?: (raw: any) => void): Record<string, string> {
  const raw = structuredClone(shippedRaw(stack));
  mutate?.(raw);
  return pulumiConfigMap(raw);
}

/** The program of a stack whose config was changed by `mutate` (validated as the loader does), judged by `pack` while it runs. */
export function judgeMutatedConfig(stack: string, mutate: (raw: any) => void, pack: PackSession): Promise<PolicyResult> {
  mutatedConfig(stack, mutate); // throws a ConfigError if the mutation is not a valid config
  return judgeProgram({ stack, config: mutatedConfigMap(stack, mutate), program }, pack);
}

/** The Pulumi layer applying a stack's Plan changed by `mutate` (the Plan of the stack's config changed by `config`, if given), judged by `pack` while it runs. */
export function judgeMutatedPlan(stack: string, mutate: (plan: Plan) => void, pack: PackSession, config?: (raw: any) => void): Promise<PolicyResult> {
  const plan = config ? planStack(mutatedConfig(stack, config)).plan! : shippedPlan(stack).plan!;
  mutate(plan);
  return judgeProgram({ stack, config: mutatedConfigMap(stack, config), program: async () => deployPlan(plan) }, pack);
}

/** A shipped stack's program, judged by `pack` while it runs. */
export function judgeShipped(stack: string, pack: PackSession): Promise<PolicyResult> {
  return judgeProgram({ stack, config: pulumiConfigMap(shippedRaw(stack)), program }, pack);
}

export async function runShipped(stack: string): Promise<ProgramRun> {
  return runProgram(stack, pulumiConfigMap(shippedRaw(stack)), program);
}

export { judge, type PolicyResult, type Diagnostic };

/** Mandatory violations of one policy. */
export function violations(result: PolicyResult, policy: string): Diagnostic[] {
  return result.mandatory.filter((d) => d.policy === policy);
}

export function summary(result: PolicyResult): string {
  return result.diagnostics.map((d) => `${d.level} ${d.policy} ${d.resourceName ?? d.urn}: ${d.message}`).join("\n");
}
