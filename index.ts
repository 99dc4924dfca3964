// Pulumi entry: `pulumi preview|up -s <stack>` runs this with the stack's config.
// Config → plan checks → Plan → the cluster binding → one ComponentResource per unit. Exported as an async function so
// tests can run it under the runtime mocks exactly as the language host does.
import * as pulumi from "@pulumi/pulumi";
import { bindCluster } from "./components/cluster";
import { deployPlan } from "./components/deploy";
import { rawFromPulumiConfig, loadConfig } from "./config/load";
import { ConfigError, formatProblem, isError } from "./config/problems";
import { stackFilePath } from "./config/stack-file";
import { planStack } from "./environments";
import { allUnits } from "./plan/plan";

export = async () => {
  const stack = pulumi.getStack();
  const file = stackFilePath(stack);
  let result;
  try {
    // planStack also checks the OpenKeel values against their contract (raw overrides included)
    result = planStack(loadConfig(rawFromPulumiConfig(pulumi.runtime.allConfig()), { stack, file }));
  } catch (e) {
    // A user mistake: the message says what and where; a stack trace would only hide it.
    if (e instanceof ConfigError) throw new pulumi.RunError(`invalid stack config:\n${e.message}`);
    throw e;
  }
  const { checks, plan } = result;
  for (const w of checks.filter((c) => !isError(c))) pulumi.log.warn(formatProblem({ ...w, file }));
  const errors = checks.filter(isError);
  if (errors.length > 0 || !plan) {
    throw new pulumi.RunError(`plan checks failed for ${file}:\n${errors.map((c) => `  ${formatProblem({ ...c, file })}`).join("\n")}`);
  }
  // nothing registers before the cluster is the stack's (openkeel:cluster)
  const provider = await bindCluster(stack, plan.cluster, file);
  deployPlan(plan, { providers: { kubernetes: provider } });
  return {
    environment: plan.environment,
    topology: plan.topology,
    labelProfile: plan.labelProfile,
    phases: plan.phases.map((p) => ({ name: p.name, units: p.units.map((u) => u.name) })),
    unitCount: allUnits(plan).length,
  };
};
