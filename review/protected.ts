// The plan-level guard of data-owning units (README, "Removing a unit that owns data"). Pulumi's
// protect flag stops `pulumi up` from deleting a protected resource, but only once someone runs
// it against a cluster; a stack change that drops such a unit (a service turned off, a
// StorageClass gone, a unit no longer protected) should already stop `npm run render`, which
// compares the new Plan with the committed `rendered/<stack>/index.yaml`. `--allow-removal <unit>`
// is the explicit, reviewable way through.
import { objectFileName } from "../render/render";
import { allUnits, type Plan } from "../plan/plan";

export const PROTECTED_REMOVAL_CODE = "protected-removal";

/** What a protected unit of the previous render loses in the new Plan. */
export interface ProtectedLoss {
  unit: string;
  /** `removed`: the unit is gone; `unprotected`: it lost `protect`; `object`: one of its objects is gone. */
  loss: "removed" | "unprotected" | "object";
  /** The object's file name (`storageclass-longhorn-vm.yaml`), for `object`. */
  object?: string;
}

interface IndexUnit {
  name?: unknown;
  protect?: unknown;
  objects?: unknown;
}

/** Protected units of a parsed index.yaml: name → object file names (empty for releases). */
function protectedUnitsOfIndex(index: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const phases = (index as { phases?: unknown } | null)?.phases;
  if (!Array.isArray(phases)) return out;
  for (const ph of phases) {
    const units = (ph as { units?: unknown } | null)?.units;
    if (!Array.isArray(units)) continue;
    for (const u of units as IndexUnit[]) {
      if (u?.protect !== true || typeof u.name !== "string") continue;
      const objects = Array.isArray(u.objects) ? u.objects.filter((o): o is string => typeof o === "string") : [];
      out.set(
        u.name,
        objects.map((o) => o.slice(o.lastIndexOf("/") + 1)),
      );
    }
  }
  return out;
}

/** Every protected unit of `previous` (a parsed index.yaml) that the new Plan drops, unprotects or empties. */
export function protectedLosses(previous: unknown, plan: Plan): ProtectedLoss[] {
  const next = new Map(allUnits(plan).map((u) => [u.name, u]));
  const losses: ProtectedLoss[] = [];
  for (const [name, objects] of protectedUnitsOfIndex(previous)) {
    const unit = next.get(name);
    if (!unit) {
      losses.push({ unit: name, loss: "removed" });
      continue;
    }
    if (!unit.protect) losses.push({ unit: name, loss: "unprotected" });
    const kept = new Set(unit.kind === "Manifests" ? unit.objects.map(objectFileName) : []);
    for (const o of objects) if (!kept.has(o)) losses.push({ unit: name, loss: "object", object: o });
  }
  return losses;
}

export function describeLoss(l: ProtectedLoss): string {
  switch (l.loss) {
    case "removed":
      return `unit ${l.unit} owns data (protected) and would be removed`;
    case "unprotected":
      return `unit ${l.unit} owns data and would lose its protection (protect + retainOnDelete)`;
    case "object":
      return `object ${l.object} of unit ${l.unit}, which owns data (protected), would be removed`;
  }
}
