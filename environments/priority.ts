// The plan checks of priority classes: every priorityClassName the Plan writes exists when its pods
// are created, and the classes keep § 2's order (platform/priority-classes.ts finds both). A name or
// a tier map the stack file wrote (a release's raw values) is the stack's mistake; a missing class this
// repository wrote is its bug, and an order its own classes break is named with the file to mend.
import { type Check, formatPath, valueAt } from "../config/problems";
import { type LoadedConfig } from "../config/schema";
import type { Plan } from "../plan/plan";
import { upstreamPriorityClassesOf } from "../platform/component";
import {
  KNOWN_PRIORITY_CLASSES,
  missingPriorityClasses,
  PRIORITY_CLASSES,
  PRIORITY_CLASSES_FILE,
  priorityOrder,
  priorityOrderFindings,
} from "../platform/priority-classes";
import { environmentComponents } from "./registry";
import { stackKey } from "./storage";
import { serviceOfRelease } from "../openkeel/registry";

/**
 * The classes the upstreams of every environment's components create: § 2's order is the design's,
 * the same on every stack, whichever of them a stack installs.
 */
export const UPSTREAM_PRIORITY_CLASSES = upstreamPriorityClassesOf(environmentComponents());

/** § 2's order, highest first, in words: what every finding of the order quotes. */
export const PRIORITY_ORDER = priorityOrder(UPSTREAM_PRIORITY_CLASSES);

export function priorityClassChecks(plan: Plan, cfg: LoadedConfig): Check[] {
  return missingPriorityClasses(plan).map((use) => {
    const message = `unit ${use.unit} (phase ${use.phase}), ${use.where} ${formatPath(use.path)}: priority class ${use.name} does not exist yet${use.upstream ? ` (${use.upstream}: only once that unit is applied)` : ""}, so the API server refuses its pods`;
    const key = use.where === "values" ? (stackKey(cfg, use.unit, use.path) ?? placementKey(cfg, use.unit, use.path)) : undefined;
    // nothing the stack file wrote explains it: this repository asked for it
    if (key === undefined) throw new Error(`priority classes of stack ${cfg.stack}: ${message}`);
    return { level: "error", code: "priority-class-missing", message, fix: `name one of ${KNOWN_PRIORITY_CLASSES}, or remove the key`, path: key };
  });
}

/**
 * § 2's order of priority classes, on every stack: a tier map a release's raw values override that
 * would let a lower tier preempt a higher one (or keep a higher one from preempting it) is the
 * stack's, at its key; the classes this repository creates out of order are refused on every stack,
 * naming platform/priority-classes.ts.
 */
export function priorityOrderChecks(plan: Plan, cfg: LoadedConfig): Check[] {
  return priorityOrderFindings(plan, UPSTREAM_PRIORITY_CLASSES).map((f) => {
    const order = `§ 2's order, highest first: ${PRIORITY_ORDER}`;
    if (!f.at) return { level: "error", code: "priority-order", file: PRIORITY_CLASSES_FILE, message: f.message, fix: `restore ${order} (DESIGN_TIERS)` };
    const key = stackKey(cfg, f.at.unit, f.at.path);
    // a tier map this repository wrote otherwise than § 2's classes: its bug
    if (key === undefined) throw new Error(`priority order of stack ${cfg.stack}: ${f.message}`);
    const tier = String(f.at.path.at(-1)) as keyof typeof PRIORITY_CLASSES;
    return {
      level: "error",
      code: "priority-order",
      message: f.message,
      fix: `remove the override (the release then runs its ${tier} tier at ${PRIORITY_CLASSES[tier]}); ${order}`,
      path: key,
    };
  });
}

/** The stack key of a class named in a service's placement override (`placement.<component>.priorityClassName`). */
function placementKey(cfg: LoadedConfig, unit: string, path: (string | number)[]): string | undefined {
  const service = serviceOfRelease(unit);
  if (!service || path[0] !== "placement" || valueAt(cfg.services[service]?.placement, path.slice(1)) === undefined) return undefined;
  return formatPath(["openkeel:services", service, ...path]);
}
