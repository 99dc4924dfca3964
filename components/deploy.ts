// The Pulumi layer: applies a Plan. One ComponentResource per unit (./plan-unit.ts), each waiting
// for the units it depends on (derived from what its objects use: plan/needs.ts), not for the whole
// previous phase; the stack's secrets are generated first (./stack-secrets.ts).
import * as pulumi from "@pulumi/pulumi";
import { formatProblem, isCheck, isError } from "../config/problems";
import type { PlanResult } from "../environments";
import { allUnits, type Plan } from "../plan/plan";
import { DEPLOY_GRAPH_ENV, waitsOn, type DeployGraph } from "../plan/needs";
import { bindCluster } from "./cluster";
import { PlanUnit } from "./plan-unit";
import { secretNames, StackSecrets } from "./stack-secrets";

export interface DeployedPlan {
  units: Record<string, PlanUnit>;
}

/**
 * The bench's switch (`npm run bench`, issue 46): `OPENKEEL_DEPLOY_GRAPH=phase-barriers` makes every
 * unit also wait for every unit of the last non-empty phase before it, as this program did before its
 * dependencies were derived, so that the bench deploys both graphs of one program side by side. Not
 * for operators: it only adds waits.
 */
export function deployGraph(env: NodeJS.ProcessEnv = process.env): DeployGraph {
  const v = env[DEPLOY_GRAPH_ENV];
  if (v === undefined || v === "" || v === "dependencies") return "dependencies";
  if (v === "phase-barriers") return v;
  throw new Error(`${DEPLOY_GRAPH_ENV}=${v}: expected dependencies or phase-barriers (the bench's switch)`);
}

/** Apply a Plan: each unit after the units it depends on (and, with phase barriers, after the whole phase before it). */
export function deployPlan(plan: Plan, opts?: pulumi.ComponentResourceOptions, graph: DeployGraph = deployGraph()): DeployedPlan {
  const names = [...secretNames(plan.phases)];
  const secrets = names.length > 0 ? new StackSecrets("stack-secrets", { names }, opts).values : {};
  const units: Record<string, PlanUnit> = {};
  const waits = waitsOn(plan, graph);
  for (const unit of allUnits(plan)) {
    const on = waits.get(unit.name)!.map((d) => {
      const dep = units[d];
      if (!dep) throw new Error(`unit ${unit.name} depends on ${d}, which is not declared before it`);
      return dep;
    });
    units[unit.name] = new PlanUnit(unit.name, { unit, secrets }, { ...opts, dependsOn: on });
  }
  return { units };
}

/**
 * The program once the stack is planned (index.ts plans it from the Pulumi config; `npm run policy`
 * hands over the plan its checks already made, the same Config from the stack file): plan-check
 * warnings logged, errors refused, the cluster bound (nothing registers before the cluster is the
 * stack's: openkeel:cluster), the Plan deployed; the stack's outputs. A user mistake is a RunError:
 * its problems, one line each, without a stack trace.
 */
export async function deployStack(stack: string, result: Pick<PlanResult, "problems" | "plan">, file: string) {
  const { problems, plan } = result;
  for (const w of problems.filter((p) => !isError(p))) pulumi.log.warn(formatProblem({ file, ...w }));
  const errors = problems.filter(isError);
  if (errors.length > 0 || !plan) {
    const what = errors.every(isCheck) ? "plan checks failed" : "invalid stack config";
    throw new pulumi.RunError(`${what} for ${file}:\n${errors.map((p) => `  ${formatProblem({ file, ...p })}`).join("\n")}`);
  }
  const provider = await bindCluster(stack, plan.cluster, file);
  deployPlan(plan, { providers: { kubernetes: provider } });
  return {
    environment: plan.environment,
    topology: plan.topology,
    labelProfile: plan.labelProfile,
    phases: plan.phases.map((p) => ({ name: p.name, units: p.units.map((u) => u.name) })),
    unitCount: allUnits(plan).length,
  };
}
