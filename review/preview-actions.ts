// What `pulumi up` does with each resource of a change (review/preview.ts lists them): per object
// and release the action — create, update, replace (with the field that forces it: ./replace-rules.ts)
// or delete — and what it would refuse, as errors: a protected unit replaced, a field the API server
// will not update; and the data-owning units the change loses (deleted or unprotected), each an
// error unless the stack's openkeel:allowRemoval lists it.
import { byCodePoint } from "../config/plain";
import { formatPath, type Check } from "../config/problems";
import { WHOLE_DOCUMENT } from "../render/diff";
import type { Action, Index, IndexUnit, ObjectRef, StackPreview, UnitChange, ValuesChange } from "./preview-model";

function objectName(r: ObjectRef): string {
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}${r.patch ? " (patch)" : ""}`;
}

const FIX_PROTECTED_REPLACE = 'leave the field as it is, or replace the object deliberately (docs/operating.md, "Replacing an object that owns data")';
const FIX_PROTECTED_DELETE =
  'keep it in the stack, or, if its data may go, add the unit to openkeel:allowRemoval in this change (docs/operating.md, "Removing a unit that owns data")';

/** What the actions of a change find: the actions, what `pulumi up` refuses, and the data-owning units it loses (openkeel:allowRemoval may allow those). */
export interface Acting {
  actions: Action[];
  findings: Check[];
  losses: { unit: string; finding: Check }[];
}

/** Objects of Manifests units: the action `pulumi up` takes on each, and what it would refuse. */
function objectActions(objects: StackPreview["objects"], goneUnits: ReadonlySet<string>, bi: Index, out: Acting): void {
  for (const o of objects.added) out.actions.push({ action: "create", resource: objectName(o), ...(o.unit ? { unit: o.unit } : {}), protected: o.protected });
  for (const c of objects.changed) {
    const r = c.ref;
    const protectedBefore = r.unit !== undefined && bi.units.get(r.unit)?.protect === true;
    out.actions.push({
      action: c.action,
      resource: objectName(r),
      ...(r.unit ? { unit: r.unit } : {}),
      protected: protectedBefore,
      detail:
        c.action === "replace"
          ? `${c.replaces.join(", ")} cannot change in place${c.deleteFirst ? ": deleted, then created again" : ""}`
          : shortList(c.changes.map((x) => formatPath(x.path, WHOLE_DOCUMENT))),
    });
    if (c.finding) out.findings.push(c.finding);
    if (c.action === "replace" && protectedBefore) {
      out.findings.push({
        level: "error",
        code: "protected-replace",
        message: `${objectName(r)} of unit ${r.unit} would be replaced: ${c.replaces.join(", ")} cannot change in place, and the unit is protected, so \`pulumi up\` refuses`,
        reason: "the unit owns data (protect + retainOnDelete): a replacement deletes the object and creates it again",
        fix: FIX_PROTECTED_REPLACE,
      });
    }
    if (c.refused.length) {
      out.findings.push({
        level: "error",
        code: "update-refused",
        message: `${objectName(r)}: ${c.refused.join(", ")} cannot be updated, and \`pulumi up\` would try (the Kubernetes API refuses it)`,
        reason: "the provider updates this field in place, and the API server forbids that",
        fix: `keep ${c.refused.join(", ")} as it is, or delete the object by hand and let \`pulumi up\` create it again (docs/operating.md, "Replacing an object that owns data")`,
      });
    }
  }
  for (const o of objects.removed) {
    out.actions.push({ action: "delete", resource: objectName(o), ...(o.unit ? { unit: o.unit } : {}), protected: o.protected });
    // a unit gone as a whole is one finding, not one per object
    if (o.protected && !o.patch && o.unit && !goneUnits.has(o.unit)) {
      out.losses.push({
        unit: o.unit,
        finding: {
          level: "error",
          code: "protected-delete",
          message: `${objectName(o)} of unit ${o.unit} would be deleted, and the unit is protected, so \`pulumi up\` refuses`,
          reason: "the unit owns data (protect + retainOnDelete)",
          fix: FIX_PROTECTED_DELETE,
        },
      });
    }
  }
}

/**
 * What a unit waits for (`dependsOn`, `waitsFor`): the engine orders its steps by it and never
 * updates a resource for it (dependencies are no input), so a change of it alone is no action; the
 * units section still shows it.
 */
const ORDER_ONLY = new Set(["dependsOn", "waitsFor"]);

/** A release or remote manifest whose unit changes: updated, or replaced when its name or namespace changes. */
function changedUnitAction(u: UnitChange, unit: IndexUnit, v: ValuesChange | undefined, bi: Index, out: Acting): void {
  const changes = u.changes.filter((c) => !ORDER_ONLY.has(String(c.path[0])));
  if (changes.length === 0 && !v) return;
  u = { ...u, changes };
  const resource = `${unit.kind === "HelmRelease" ? "HelmRelease" : "Manifest"} ${u.name}`;
  // the provider replaces a Helm release whose name or namespace changes (pulumi-kubernetes
  // provider/pkg/provider/helm_release.go, Diff: forceNewFields .name and .namespace)
  const forced = u.changes.filter((c) => c.path[0] === "release" || c.path[0] === "namespace").map((c) => formatPath(c.path, WHOLE_DOCUMENT));
  const protectedBefore = bi.units.get(u.name)?.protect === true;
  const action = unit.kind === "HelmRelease" && forced.length ? "replace" : "update";
  const detail =
    action === "replace"
      ? `${forced.join(", ")} cannot change in place`
      : [...u.changes.map((c) => formatPath(c.path, WHOLE_DOCUMENT)), ...(v ? [valuesDetail(v)] : [])].join("; ");
  out.actions.push({ action, resource, unit: u.name, protected: protectedBefore, detail });
  if (action === "replace" && protectedBefore) {
    out.findings.push({
      level: "error",
      code: "protected-replace",
      message: `HelmRelease ${u.name} would be replaced (${forced.join(", ")} changes), and the unit is protected, so \`pulumi up\` refuses`,
      reason: "the release owns data: a replacement uninstalls it and installs it again",
      fix: FIX_PROTECTED_REPLACE,
    });
  }
  if (protectedBefore && !unit.protect) {
    out.losses.push({
      unit: u.name,
      finding: {
        level: "error",
        code: "protected-unprotect",
        message: `unit ${u.name} owns data and would lose its protection (protect + retainOnDelete): \`pulumi up\` unprotects it, and any later change may then delete it`,
        reason: "the protection is what makes pulumi up refuse to delete the data",
        fix: FIX_PROTECTED_DELETE,
      },
    });
  }
}

/** Releases and remote manifests (objects of Manifests units are objectActions'). */
function unitActions(units: UnitChange[], values: ValuesChange[], bi: Index, hi: Index, out: Acting): void {
  const valuesOf = new Map(values.map((v) => [v.unit, v]));
  for (const u of units) {
    const unit = (u.op === "remove" ? bi : hi).units.get(u.name)!;
    if (unit.kind === "Manifests") {
      if (u.op === "remove" && unit.protect) out.losses.push({ unit: u.name, finding: protectedUnitGone(u.name, `${unit.objects.length} object(s)`) });
      continue;
    }
    const resource = `${unit.kind === "HelmRelease" ? "HelmRelease" : "Manifest"} ${u.name}`;
    if (u.op === "add") out.actions.push({ action: "create", resource, unit: u.name, protected: unit.protect });
    else if (u.op === "remove") {
      out.actions.push({ action: "delete", resource, unit: u.name, protected: unit.protect });
      if (unit.protect)
        out.losses.push({ unit: u.name, finding: protectedUnitGone(u.name, unit.kind === "HelmRelease" ? `release ${unit.release}` : "its manifest") });
    } else changedUnitAction(u, unit, valuesOf.get(u.name), bi, out);
  }
  // releases whose values change and nothing else
  for (const v of values) {
    if (v.op !== "change" || units.some((u) => u.name === v.unit)) continue;
    out.actions.push({
      action: "update",
      resource: `HelmRelease ${v.unit}`,
      unit: v.unit,
      protected: bi.units.get(v.unit)?.protect === true,
      detail: valuesDetail(v),
    });
  }
}

/** Objects, releases and manifests: the action `pulumi up` takes on each, and what it would refuse. */
export function actionsOf(objects: StackPreview["objects"], units: UnitChange[], values: ValuesChange[], bi: Index, hi: Index): Acting {
  const out: Acting = { actions: [], findings: [], losses: [] };
  objectActions(objects, new Set(units.filter((u) => u.op === "remove").map((u) => u.name)), bi, out);
  unitActions(units, values, bi, hi, out);
  const order = { delete: 0, replace: 1, update: 2, create: 3 };
  out.actions.sort((p, q) => order[p.action] - order[q.action] || byCodePoint(p.resource, q.resource));
  return out;
}

/** `a, b, c and 2 more` */
function shortList(items: string[], max = 3): string {
  return `${items.slice(0, max).join(", ")}${items.length > max ? ` and ${items.length - max} more` : ""}`;
}

function valuesDetail(v: ValuesChange): string {
  return `values ${shortList(v.changes.map((c) => formatPath(c.path, WHOLE_DOCUMENT)))}`;
}

function protectedUnitGone(unit: string, what: string): Check {
  return {
    level: "error",
    code: "protected-delete",
    message: `unit ${unit} (${what}) would be deleted, and it is protected, so \`pulumi up\` refuses`,
    reason: "the unit owns data (protect + retainOnDelete)",
    fix: FIX_PROTECTED_DELETE,
  };
}

/**
 * The data-owning units the change loses: each an error, but for a unit the stack's
 * openkeel:allowRemoval lists (reviewed in the pull request that adds it), which is said, with what
 * the deploy does; an entry that lets nothing go is said too, so that it does not stay to let a
 * later removal through unreviewed.
 */
export function removalFindings(losses: Acting["losses"], hi: Index, where: string): Check[] {
  const allowed = new Set(hi.allowRemoval);
  const out: Check[] = losses.map(({ unit, finding }) =>
    allowed.has(unit)
      ? {
          level: "warning",
          code: "removal-allowed",
          message: `${finding.message}: allowed, openkeel:allowRemoval lists ${unit}`,
          reason:
            "the deploy unprotects its resources in the stack's state first, and pulumi up then forgets them and leaves them in the cluster (retainOnDelete)",
          fix: `after the deploy, delete what should go with kubectl, deliberately, then remove ${unit} from openkeel:allowRemoval`,
          path: "openkeel:allowRemoval",
        }
      : finding,
  );
  for (const unit of hi.allowRemoval) {
    if (losses.some((l) => l.unit === unit)) continue;
    out.push({
      level: "warning",
      code: "allow-removal-unused",
      message: `openkeel:allowRemoval lists ${unit}, which loses nothing against ${where}`,
      reason: "an entry left in place would let a later removal of the unit through without its own review",
      fix: `remove ${unit} from openkeel:allowRemoval (once its removal is deployed, nothing needs it)`,
      path: "openkeel:allowRemoval",
    });
  }
  return out;
}
