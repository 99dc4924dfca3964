// How the pack learns which environment it is judging. The Pulumi CLI starts a policy pack with the
// stack's configuration in PULUMI_CONFIG (a JSON map `<project>:<key>` → string, the same map the
// program reads), so the pack reads `openkeel:environment` from it: one source of truth, known to
// resource and stack policies alike, in `pulumi preview --policy-pack` and in `npm run policy`.
// Fail closed: when the environment cannot be read, the stack is judged as production.
const LAB_ENVIRONMENT = "kind-lab";
const PROJECT = "openkeel";

export interface PolicyEnvironment {
  /** `openkeel:environment` of the stack, when the engine passed it. */
  environment?: string;
  stack?: string;
  /** Held to every decision: anything but an explicit kind-lab stack. */
  production: boolean;
  /** Why the pack decided so, for messages. */
  reason: string;
}

function readEnvironment(env: NodeJS.ProcessEnv = process.env): PolicyEnvironment {
  const stack = env.PULUMI_STACK || env.PULUMI_NODEJS_STACK || undefined;
  let config: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(env.PULUMI_CONFIG ?? "{}");
    if (parsed && typeof parsed === "object") config = parsed;
  } catch {
    // unreadable config: fail closed below
  }
  const value = config[`${PROJECT}:environment`] ?? config[`${PROJECT}:config:environment`];
  const environment = typeof value === "string" ? value : undefined;
  if (environment === LAB_ENVIRONMENT) {
    return { environment, stack, production: false, reason: `stack ${stack ?? "?"} is a kind-lab stack` };
  }
  return {
    environment,
    stack,
    production: true,
    reason:
      environment === undefined
        ? `no ${PROJECT}:environment in the stack config the engine passed (PULUMI_CONFIG): judged as production`
        : `stack ${stack ?? "?"} is a ${environment} stack`,
  };
}

let cached: PolicyEnvironment | undefined;
/** The environment of this pack process (the engine starts one pack per stack operation). */
export function currentEnvironment(): PolicyEnvironment {
  cached ??= readEnvironment();
  return cached;
}
