// How the pack learns which environment it is judging. The Pulumi CLI starts a policy pack with the
// stack's configuration in PULUMI_CONFIG (a JSON map `<project>:<key>` → string, the same map the
// program reads), so the pack reads `openkeel:environment` from it: one source of truth, known to
// resource and stack policies alike, in `pulumi preview --policy-pack` and in `npm run policy`.
// The SDK hands policies nothing else of the stack config (its ConfigureStack keeps the stack tags
// only: @pulumi/policy@1.21.0 server.js), so a pack process judges one environment. `npm run policy`
// shares one process among the stacks of one environment, grouped by `environmentOf` below, the
// same function the pack applies to PULUMI_CONFIG; which is why nothing here names a stack.
// Fail closed: when the environment cannot be read, the stack is judged as production.
const LAB_ENVIRONMENT = "kind-lab";
const PROJECT = "openkeel";

export interface PolicyEnvironment {
  /** `openkeel:environment` of the stack, when the engine passed it. */
  environment?: string | undefined;
  /** Held to every decision: anything but an explicit kind-lab stack. */
  production: boolean;
  /** Why the pack decided so, for messages. */
  reason: string;
}

/** The environment a stack config (`<project>:<key>` → value, as in PULUMI_CONFIG) puts the pack in. */
export function environmentOf(config: Record<string, unknown>): PolicyEnvironment {
  const value = config[`${PROJECT}:environment`] ?? config[`${PROJECT}:config:environment`];
  const environment = typeof value === "string" ? value : undefined;
  if (environment === LAB_ENVIRONMENT) {
    return { environment, production: false, reason: `${PROJECT}:environment is ${LAB_ENVIRONMENT}` };
  }
  return {
    environment,
    production: true,
    reason:
      environment === undefined
        ? `no ${PROJECT}:environment in the stack config the engine passed (PULUMI_CONFIG): judged as production`
        : `${PROJECT}:environment is ${environment}`,
  };
}

/** PULUMI_CONFIG as the engine sets it; unreadable → no config (fail closed: production). */
export function environmentFromProcess(env: NodeJS.ProcessEnv = process.env): PolicyEnvironment {
  let config: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(env.PULUMI_CONFIG ?? "{}");
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) config = parsed;
  } catch {
    // unreadable config: fail closed below
  }
  return environmentOf(config);
}

let cached: PolicyEnvironment | undefined;
/** The environment of this pack process, read once: the engine starts it with one stack's config. */
export function currentEnvironment(): PolicyEnvironment {
  cached ??= environmentFromProcess();
  return cached;
}
