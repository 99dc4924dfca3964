// Changes an operator refuses once its object exists, each with its reason (review/preview.ts lists
// them among a change's findings), as the component that owns the object's kind says
// (`customKinds` of its descriptor, platform/context.ts): a post-render patch that changes a field
// the CR's operator marks immutable, and an object deleted or changed where its kind's webhook may
// hold that (NHC's, while a check remediates a node).
import type { Check } from "../config/problems";
import { kindKey } from "../plan/needs";
import { customKindNamed, type CustomKinds, type HeldChange } from "../platform/context";
import type { RenderedStack } from "../render/rendered";
import type { Index, ObjectRef, StackPreview } from "./preview-model";

interface PatchDoc {
  target?: { kind?: string; name?: string };
  patch?: unknown;
}

const fieldAt = (v: unknown, path: string) =>
  path.split(".").reduce<unknown>((cur, k) => (typeof cur === "object" && cur !== null ? (cur as Record<string, unknown>)[k] : undefined), v);

/**
 * A post-render patch that changes a field the CR's operator refuses to update (its kind's
 * `immutable`) of a release the base already has: its CR exists, so `pulumi up` fails on the release's upgrade.
 */
export function postRenderFindings(b: RenderedStack, h: RenderedStack, bi: Index, kinds: CustomKinds): Check[] {
  const findings: Check[] = [];
  const patchesOf = (r: RenderedStack, file: string | undefined) => (file ? ((r.documents(file)[0] as PatchDoc[] | null) ?? []) : []);
  for (const hu of h.units()) {
    if (hu.kind !== "HelmRelease" || !bi.units.has(hu.name)) continue;
    const bu = b.units().find((u) => u.name === hu.name);
    const before = patchesOf(b, bu?.kind === "HelmRelease" ? bu.postRender : undefined);
    for (const p of patchesOf(h, hu.postRender)) {
      const immutable = customKindNamed(kinds, p.target?.kind ?? "")?.immutable;
      if (!immutable) continue;
      const old = before.find((x) => x.target?.kind === p.target?.kind && x.target?.name === p.target?.name);
      for (const f of immutable.fields) {
        const [x, y] = [fieldAt(old?.patch, f), fieldAt(p.patch, f)];
        if (JSON.stringify(x) === JSON.stringify(y)) continue;
        findings.push({
          level: "error",
          code: "operator-immutable",
          message: `${p.target?.kind} ${p.target?.name} of release ${hu.name}: ${f} changes (${JSON.stringify(x) ?? "unset"} → ${JSON.stringify(y) ?? "unset"}), which its operator refuses to update: the CR must be replaced, and \`pulumi up\` fails on the release's upgrade`,
          reason: immutable.reason,
          fix: 'recreate the CR deliberately (docs/design-decisions.md, "What the charts read no value for"), or leave the field as it is',
        });
      }
    }
  }
  return findings;
}

/**
 * Objects of a kind whose webhook may hold their change (its `held`) deleted, or their held fields
 * changed: one finding per kind, its own (NHC's: `pulumi up` would stop halfway while a check remediates).
 */
export function heldCheckFindings(objects: StackPreview["objects"], kinds: CustomKinds): Check[] {
  const findings: Check[] = [];
  for (const [key, kind] of Object.entries(kinds)) {
    const held = kind?.held;
    if (!held) continue;
    const ofKind = (r: ObjectRef) => !r.patch && kindKey(r) === key;
    const changes: HeldChange[] = [
      ...objects.removed.filter(ofKind).map((r): HeldChange => ({ name: r.name, change: "deleted" })),
      ...objects.changed
        .filter((c) => ofKind(c.ref))
        .flatMap((c): HeldChange[] => {
          const fields = held.fields(c.changes);
          return fields.length > 0 ? [{ name: c.ref.name, change: fields }] : [];
        }),
    ];
    findings.push(...held.finding(changes));
  }
  return findings;
}
