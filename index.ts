// Pulumi entry: `pulumi preview|up -s <stack>` runs this with the stack's config.
// Config → plan checks → Plan → one ComponentResource per unit. Exported as an async function so
// tests can run it under the runtime mocks exactly as the language host does.
import * as pulumi from "@pulumi/pulumi";
import { loadConfig, rawFromPulumiConfig } from "./config/schema";
import { deployPlan } from "./components/deploy";
import { allUnits } from "./plan/plan";
import { ConfigError } from "./config/problems";
import { stackFilePath } from "./config/stack-file";
import { planStack } from "./environments";

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
  for (const w of checks.filter((c) => c.level === "warning")) {
    pulumi.log.warn(`plan check [${w.code}]: ${w.message}. Fix: ${w.remediation}`);
  }
  const errors = checks.filter((c) => c.level === "error");
  if (errors.length > 0 || !plan) {
    throw new pulumi.RunError(
      `plan checks failed for ${file}:\n${errors.map((c) => `  [${c.code}] ${c.path ?? ""}: ${c.message}. Fix: ${c.remediation}`).join("\n")}`,
    );
  }
  deployPlan(plan);
  return {
    environment: plan.environment,
    topology: plan.topology,
    labelProfile: plan.labelProfile,
    phases: plan.phases.map((p) => ({ name: p.name, units: p.units.map((u) => u.name) })),
    unitCount: allUnits(plan).length,
  };
};
