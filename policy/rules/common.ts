// What every rule module shares: the resource views rules judge, the policy wrappers (environment
// scope, "what is wrong. Fix: how" messages), and readers for the shapes this repository emits
// (Helm releases and their OpenKeel values, Kubernetes objects). Pure: no server, no Pulumi runtime.
// Its Finding is the pack's own on purpose: the product's finding is config/problems.ts' Check
// (plan checks, the preview's findings), and the pack stands alone beside it, reading only
// config/problems.ts' Problem and formatter.
import { UnknownValueError, type ReportViolation, type ResourceValidationPolicy, type StackValidationPolicy } from "@pulumi/policy";
import { formatPath, formatProblem, type Problem } from "../../config/problems";
import { currentEnvironment, type PolicyEnvironment } from "../environment";

export const RELEASE_TYPE = "kubernetes:helm.sh/v3:Release";
export const NODE_PATCH_TYPE = "kubernetes:core/v1:NodePatch";
export const STORAGE_CLASS_TYPE = "kubernetes:storage.k8s.io/v1:StorageClass";
export const RANDOM_PASSWORD_TYPE = "random:index/randomPassword:RandomPassword";

/** A resource as a rule sees it: resource policies get inputs, stack policies outputs. */
export interface ResourceView {
  type: string;
  name: string;
  urn: string;
  props: Record<string, unknown>;
}

/** What a rule finds: a problem (what is wrong, naming the value path; how to fix it). */
export interface Finding extends Problem {
  /** Stack rules: the resource the finding is about. */
  urn?: string | undefined;
}

export type Decision = "D1" | "D2" | "D3" | "D4" | "D5" | "D6" | "D7" | "D8";
/** `production`: lab stacks are exempt; `everywhere`: lab stacks are held to it too. */
export type Scope = "production" | "everywhere";

interface RuleBase {
  name: string;
  decision: Decision;
  description: string;
  scope: Scope;
}
export interface ResourceRule extends RuleBase {
  check(r: ResourceView, env: PolicyEnvironment): Finding[];
}
export interface StackRule extends RuleBase {
  check(resources: ResourceView[], env: PolicyEnvironment): Finding[];
}

/** A rule of one decision; `production` scope unless it binds labs too. */
export function resourceRule(decision: Decision, name: string, description: string, check: ResourceRule["check"], scope: Scope = "production"): ResourceRule {
  return { name, decision, description, scope, check };
}

export function stackRule(decision: Decision, name: string, description: string, check: StackRule["check"], scope: Scope = "production"): StackRule {
  return { name, decision, description, scope, check };
}

function exemption(rule: RuleBase, env: PolicyEnvironment): string | undefined {
  if (rule.scope === "production" && !env.production) return `${rule.decision} binds production stacks only (${env.reason})`;
  return undefined;
}

/** What the engine shows of a rule, and the environment it judges (an exempt stack says why). */
function environmentFor(rule: RuleBase, args: { notApplicable(reason?: string): never | void }): PolicyEnvironment {
  const env = currentEnvironment();
  const exempt = exemption(rule, env);
  if (exempt) args.notApplicable(exempt);
  return env;
}

const policyHeader = (rule: RuleBase) => ({
  name: rule.name,
  description: `${rule.decision}: ${rule.description}`,
  enforcementLevel: "mandatory" as const,
  severity: "high" as const,
});

export function resourcePolicy(rule: ResourceRule): ResourceValidationPolicy {
  return {
    ...policyHeader(rule),
    validateResource: (args, report: ReportViolation) => {
      const env = environmentFor(rule, args);
      for (const f of rule.check({ type: args.type, name: args.name, urn: args.urn, props: args.props }, env)) report(formatProblem(f));
    },
  };
}

export function stackPolicy(rule: StackRule): StackValidationPolicy {
  return {
    ...policyHeader(rule),
    validateStack: (args, report: ReportViolation) => {
      const env = environmentFor(rule, args);
      const views = args.resources.map((r) => ({ type: r.type, name: r.name, urn: r.urn, props: r.props }));
      for (const f of rule.check(views, env)) report(formatProblem(f), f.urn);
    },
  };
}

// ---- value readers ----

export type Tree = Record<string, unknown>;

/** config/plain.ts isPlainObject, copied on purpose: the pack imports only config's roles and problems. */
export function isObject(v: unknown): v is Tree {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

export function get(root: unknown, path: readonly string[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (!isObject(cur)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

/** The chart of a Helm release: the last segment of `chart` (`oci://…/openkeel-nova` → `openkeel-nova`). */
export function chartOf(r: ResourceView): string | undefined {
  if (r.type !== RELEASE_TYPE || typeof r.props.chart !== "string") return undefined;
  return r.props.chart.replace(/\/+$/, "").split("/").pop();
}

/** A release's values. */
export function valuesOf(r: ResourceView): Tree {
  return isObject(r.props.values) ? r.props.values : {};
}

/**
 * The values a chart reads for itself: a service chart installed as its own release reads them at
 * the top level; inside the umbrella chart they sit under the subchart's name (§ 5.1).
 */
export function chartValues(r: ResourceView, chart: string): Tree {
  const values = valuesOf(r);
  const nested = values[chart];
  return isObject(nested) ? nested : values;
}

export function describeValue(v: unknown): string {
  return v === undefined ? "unset" : JSON.stringify(v);
}

/**
 * A value the engine knows only after the update, e.g. a generated secret in the first preview of
 * a stack. The policy SDK throws when a rule reads one; `walk` hands it over as UNKNOWN instead, so
 * that one unknown leaf does not keep a rule from judging the rest of a release.
 */
export const UNKNOWN: unique symbol = Symbol("unknown during preview");

function read(parent: Tree | unknown[], key: string | number): unknown {
  try {
    return (parent as Record<string | number, unknown>)[key];
  } catch (e) {
    if (e instanceof UnknownValueError) return UNKNOWN;
    throw e;
  }
}

/** Walk a value tree: `visit(path, value)` for every node, arrays indexed. */
export function walk(value: unknown, visit: (path: string[], value: unknown) => void, path: string[] = []): void {
  visit(path, value);
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) walk(read(value, i), visit, [...path, String(i)]);
  else if (isObject(value)) for (const k of Object.keys(value)) walk(read(value, k), visit, [...path, k]);
}

/** A path `walk` reports (list indices as digits), as every problem writes key paths. */
export function valuesPath(path: readonly string[], empty = ""): string {
  return formatPath(
    path.map((p) => (/^\d+$/.test(p) ? Number(p) : p)),
    empty,
  );
}
