// Pulumi entry: `pulumi preview|up -s <stack>` runs this with the stack's config.
// Config → plan checks → Plan → the cluster binding → one ComponentResource per unit. Exported as
// an async function so tests can run it under the runtime mocks exactly as the language host does.
import * as pulumi from "@pulumi/pulumi";
import { deployStack } from "./components/deploy";
import { rawFromPulumiConfig, loadConfig } from "./config/load";
import { ConfigError } from "./config/problems";
import { stackFilePath, withFacts } from "./config/stack-file";
import { planStack } from "./environments";
import { STACK_DECLARATIONS } from "./environments/registry";

export = async () => {
  const stack = pulumi.getStack();
  const file = stackFilePath(stack);
  let config;
  try {
    config = withFacts(loadConfig(rawFromPulumiConfig(pulumi.runtime.allConfig()), { stack, file }, STACK_DECLARATIONS));
  } catch (e) {
    // A user mistake: the message says what and where; a stack trace would only hide it.
    if (e instanceof ConfigError) throw new pulumi.RunError(`invalid stack config:\n${e.message}`);
    throw e;
  }
  // planStack returns every other mistake (plan checks, the OpenKeel values contract with the raw
  // overrides, the placement checks); deployStack refuses them
  return deployStack(stack, planStack(config), file);
};
