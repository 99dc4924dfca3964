// Test helpers: the shipped stacks, mutated copies of them, and Pulumi-style config maps.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { stringify } from "yaml";
import { loadConfig } from "../../config/load";
import { ConfigError, isCheck, isError, type Problem } from "../../config/problems";
import { planStack } from "../../environments";
import { PROJECT, type LoadedConfig } from "../../config/schema";
import { listStacks, rawFromStackYaml, readStack, stackFilePath } from "../../config/stack-file";
import { renderPlan } from "../../render/rendered";
import type { Tree } from "../../review/preview-model";
import { STACK_DECLARATIONS } from "../../environments/registry";

export const REPO = path.resolve(__dirname, "../..");
export const STACKS_DIR = path.join(REPO, "stacks");
/** Every stack file of stacks/: a new one is tested by every suite that loops over these. */
export const SHIPPED_STACKS = listStacks(STACKS_DIR);

/**
 * What `make` gives for a shipped stack, made once per worker and handed out as a copy (a test may
 * change what it gets). The stack files do not change during a run (tests edit copies, tempStacks),
 * and parsing, validating and planning the same four files again and again was most of the suites'
 * CPU: 1368 plans in one `npm test`, 26 s of them repeats.
 */
export function onceEach<T>(make: (stack: string) => T): (stack: string) => T {
  const made = new Map<string, T>();
  return (stack) => {
    if (!made.has(stack)) made.set(stack, make(stack));
    return structuredClone(made.get(stack)!);
  };
}

export const shippedRaw = onceEach((stack): Record<string, unknown> => {
  const file = stackFilePath(stack, STACKS_DIR);
  return rawFromStackYaml(fs.readFileSync(file, "utf8"), file);
});

export const shippedConfig = onceEach((stack): LoadedConfig => readStack(stack, STACKS_DIR, STACK_DECLARATIONS));

/** The shipped stacks of an environment. */
function stacksOf(environment: "kind-lab" | "talos-production"): string[] {
  return SHIPPED_STACKS.filter((s) => shippedRaw(s).environment === environment);
}
export const PRODUCTION_STACKS = stacksOf("talos-production");

/**
 * Warnings every shipped production stack carries on purpose, whatever a test changes: the design's
 * open question of two OVS stacks (test/openkeel/ovs-stacks.test.ts), and hardware facts that no
 * shipped stack has, since it describes no real machine (test/nodes/facts-checks.test.ts).
 */
export const STANDING_WARNINGS: readonly string[] = ["ovs-two-stacks", "machine-facts-missing"];
export const isStandingWarning = (p: { code?: string | undefined; level?: string | undefined }) =>
  p.level === "warning" && p.code !== undefined && STANDING_WARNINGS.includes(p.code);

/** A shipped stack's raw config, changed by `mutate`, validated. */
export function mutatedConfig(stack: string, mutate: (raw: any) => void): LoadedConfig {
  const raw = structuredClone(shippedRaw(stack));
  mutate(raw);
  return loadConfig(raw, { stack, file: `stacks/Pulumi.${stack}.yaml` }, STACK_DECLARATIONS);
}

/** The config map the Pulumi CLI hands a program: `openkeel:<key>` → string (objects as JSON). */
/** A config's render as the preview reads it (path → content); a config that does not plan fails the test with its problems. */
export function renderTree(cfg: LoadedConfig): Tree {
  const r = planStack(cfg);
  if (!r.plan) throw new Error(`${cfg.stack} does not plan: ${JSON.stringify(r.problems.map((p) => p.message))}`);
  return new Map(renderPlan(r.plan, r.placement).map((f) => [f.path, f.content]));
}

export function pulumiConfigOf(raw: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [`${PROJECT}:${k}`, typeof v === "string" ? v : JSON.stringify(v)]));
}

/** A temporary stacks folder holding the given stack files (name → YAML text or config object). */
export function tempStacks(files: Record<string, string | Record<string, unknown>>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-stacks-"));
  for (const [stack, body] of Object.entries(files)) {
    const text = typeof body === "string" ? body : stringify({ config: Object.fromEntries(Object.entries(body).map(([k, v]) => [`${PROJECT}:${k}`, v])) });
    fs.writeFileSync(path.join(dir, `Pulumi.${stack}.yaml`), text);
  }
  return dir;
}

/** The problems `fn` is refused with (it must throw a ConfigError). */
export function problemsOf(fn: () => unknown): Problem[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error("expected a ConfigError");
}

/**
 * The problems a mutated shipped stack's config is refused with (it must be refused): the loader's
 * (the schema), else its environment's config rules (planStack's problems that are not plan checks).
 */
export function configProblems(stack: string, mutate: (raw: any) => void): Problem[] {
  let cfg: LoadedConfig;
  try {
    cfg = mutatedConfig(stack, mutate);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  const problems = planStack(cfg).problems.filter((p) => isError(p) && !isCheck(p));
  if (problems.length === 0) throw new Error("expected the config to be refused");
  return problems;
}
