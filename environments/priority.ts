// The plan check of priority classes: every priorityClassName the Plan writes exists when its pods
// are created (platform/priority-classes.ts finds the ones that do not). A name the stack file wrote
// (a release's raw values) is the stack's mistake; one this repository wrote is its bug.
import { type Check, formatPath, valueAt } from "../config/problems";
import { type LoadedConfig } from "../config/schema";
import type { Plan } from "../plan/plan";
import { KNOWN_PRIORITY_CLASSES, missingPriorityClasses } from "../platform/priority-classes";
import { stackKey } from "./storage";
import { serviceOfRelease } from "../openkeel/registry";

export function priorityClassChecks(plan: Plan, cfg: LoadedConfig): Check[] {
  return missingPriorityClasses(plan).map((use) => {
    const message = `unit ${use.unit} (phase ${use.phase}), ${use.where} ${formatPath(use.path)}: priority class ${use.name} does not exist yet${use.upstream ? ` (${use.upstream}: only once that unit is applied)` : ""}, so the API server refuses its pods`;
    const key = use.where === "values" ? (stackKey(cfg, use.unit, use.path) ?? placementKey(cfg, use.unit, use.path)) : undefined;
    // nothing the stack file wrote explains it: this repository asked for it
    if (key === undefined) throw new Error(`priority classes of stack ${cfg.stack}: ${message}`);
    return { level: "error", code: "priority-class-missing", message, fix: `name one of ${KNOWN_PRIORITY_CLASSES}, or remove the key`, path: key };
  });
}

/** The stack key of a class named in a service's placement override (`placement.<component>.priorityClassName`). */
function placementKey(cfg: LoadedConfig, unit: string, path: (string | number)[]): string | undefined {
  const service = serviceOfRelease(unit);
  if (!service || path[0] !== "placement" || valueAt(cfg.services[service]?.placement, path.slice(1)) === undefined) return undefined;
  return formatPath(["openkeel:services", service, ...path]);
}
