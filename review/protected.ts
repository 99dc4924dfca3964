// The plan-level guard of data-owning units (README, "Removing a unit that owns data"). Pulumi's
// protect flag stops `pulumi up` from deleting a protected resource, but only once someone runs
// it against a cluster; a stack change that drops such a unit (a service turned off, a
// StorageClass gone, a unit no longer protected) should already stop `npm run render`, which
// compares the new Plan with the committed `rendered/<stack>/index.yaml` (read by render/rendered.ts). `--allow-removal <unit>`
// is the explicit, reviewable way through.
import { objectFileName } from "../render/render";
import type { RenderedIndex } from "../render/rendered";
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

/** Protected units of a previous index: name → object file names (empty for releases). */
function protectedUnitsOfIndex(index: RenderedIndex): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const u of index.phases.flatMap((ph) => ph.units)) {
    if (u.protect !== true) continue;
    out.set(
      u.name,
      (u.objects ?? []).map((o) => o.slice(o.lastIndexOf("/") + 1)),
    );
  }
  return out;
}

/** Every protected unit of `previous` (the previous render's index) that the new Plan drops, unprotects or empties. */
export function protectedLosses(previous: RenderedIndex, plan: Plan): ProtectedLoss[] {
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
