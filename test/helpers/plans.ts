// Test helpers: the Plan of a stack and the units and objects in it.
import { formatProblem, isCheck, isError } from "../../config/problems";
import type { LoadedConfig } from "../../config/schema";
import { planStack, resolveStack, type PlanResult } from "../../environments";
import type { StackContext } from "../../platform/context";
import { allUnits, findUnit, type HelmReleaseUnit, type K8sObject, type ManifestsUnit, type Plan } from "../../plan/plan";
import { onceEach, shippedConfig } from "./stacks";

/** The context every builder of a stack's Plan reads (the stack's resolution). */
export function contextOf(cfg: LoadedConfig): StackContext {
  return resolveStack(cfg).ctx;
}

/** What planning a shipped stack gives (its Plan, placement and problems), as a copy of one planning. */
export const shippedPlan = onceEach((stack): PlanResult => planStack(shippedConfig(stack)));

/** The Plan of a shipped stack (by name) or of a config; throws with the failed checks. */
export function planOf(stack: string | LoadedConfig): Plan {
  const r = typeof stack === "string" ? shippedPlan(stack) : planStack(stack);
  if (!r.plan) throw new Error(`no plan: ${r.problems.map((c) => `[${c.code}] ${c.message}`).join("; ")}`);
  return r.plan;
}

/**
 * What planning a config refuses in its values (the values contract's problems, not plan checks),
 * one formatted line each: `file: key path: what. Fix: how`. It must refuse something.
 */
export function valueProblems(cfg: LoadedConfig): string[] {
  const lines = planStack(cfg)
    .problems.filter((p) => isError(p) && !isCheck(p))
    .map((p) => formatProblem({ file: cfg.file, ...p }));
  if (lines.length === 0) throw new Error(`expected planning ${cfg.stack} to refuse its values`);
  return lines;
}

export function unitNames(plan: Plan, phaseName: string): string[] {
  return plan.phases.find((p) => p.name === phaseName)!.units.map((u) => u.name);
}

export function release(plan: Plan, name: string): HelmReleaseUnit {
  const u = findUnit(plan, name);
  if (u?.kind !== "HelmRelease")
    throw new Error(
      `no release ${name}; have ${allUnits(plan)
        .map((x) => x.name)
        .join(", ")}`,
    );
  return u;
}

/** The values of a release, loosely typed for assertions. */
export function valuesOf(plan: Plan, name: string): any {
  return release(plan, name).values;
}

/** The OpenKeel releases: the infrastructure release and one per service. */
export function openkeelReleases(plan: Plan): HelmReleaseUnit[] {
  return allUnits(plan).filter((u): u is HelmReleaseUnit => u.kind === "HelmRelease" && u.type.startsWith("openkeel:openkeel:"));
}

export function objectsOf(plan: Plan, unit: string): K8sObject[] {
  const u = findUnit(plan, unit);
  if (u?.kind !== "Manifests") throw new Error(`no Manifests unit ${unit}`);
  return (u as ManifestsUnit).objects;
}

/** An object of the Plan by kind and name, in one unit or in any. */
export function object(plan: Plan, kind: string, name: string, unit?: string): any {
  const pool = unit ? objectsOf(plan, unit) : allUnits(plan).flatMap((u) => (u.kind === "Manifests" ? u.objects : []));
  const o = pool.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind} ${name} in ${unit ?? "the plan"}`);
  return o;
}
