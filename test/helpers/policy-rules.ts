// The policy pack's rules run as plain functions over what the program registers under the runtime
// mocks: the same rule code the pack runs (policy/rules), without spawning the pack (seconds per
// start), for the property tests' many generated stacks. Props are what the engine would hand the
// pack: inputs (resource rules) and outputs (stack rules), secrets unwrapped as the policy SDK does.
import { deployPlan } from "../../components/deploy";
import type { Plan } from "../../plan/plan";
import { RESOURCE_RULES, STACK_RULES } from "../../policy/rules";
import { formatProblem } from "../../config/problems";
import type { ResourceView } from "../../policy/rules/common";
import type { PolicyEnvironment } from "../../policy/environment";
import { runProgram, SECRET_SIG, SPECIAL_SIG_KEY, type ProgramRun } from "../../offline-engine/mock-run";

function unwrap(v: unknown): any {
  if (Array.isArray(v)) return v.map(unwrap);
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    if (o[SPECIAL_SIG_KEY] === SECRET_SIG) return unwrap(o.value);
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, unwrap(x)]));
  }
  return v;
}

/** Mandatory findings of every rule: `<policy> <resource>: <message>. Fix: …`. */
export function ruleFindings(run: ProgramRun, production: boolean): string[] {
  const env: PolicyEnvironment = { production, reason: production ? "generated production stack" : "generated kind-lab stack" };
  const custom = run.resources.filter((r) => r.custom);
  const inputs: ResourceView[] = custom.map((r) => ({ type: r.type, name: r.name, urn: r.urn, props: unwrap(r.inputs) }));
  const outputs: ResourceView[] = custom.map((r) => ({ type: r.type, name: r.name, urn: r.urn, props: unwrap(r.outputs) }));
  const out: string[] = [];
  for (const rule of RESOURCE_RULES) {
    if (rule.scope === "production" && !production) continue;
    for (const view of inputs) for (const f of rule.check(view, env)) out.push(`${rule.name} ${view.name}: ${formatProblem(f)}`);
  }
  for (const rule of STACK_RULES) {
    if (rule.scope === "production" && !production) continue;
    for (const f of rule.check(outputs, env)) out.push(`${rule.name} ${f.urn ?? "(stack)"}: ${formatProblem(f)}`);
  }
  return out;
}

/** The Pulumi layer applying a Plan under the mocks (what `pulumi preview` would register). */
export function runPlan(plan: Plan): Promise<ProgramRun> {
  return runProgram(plan.stack, { "openkeel:environment": plan.environment }, async () => {
    deployPlan(plan);
  });
}
