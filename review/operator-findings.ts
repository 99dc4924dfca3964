// Changes an operator refuses once its object exists, each with its reason (review/preview.ts lists
// them among a change's findings): a post-render patch that changes a field the CR's operator marks
// immutable (./replace-rules.ts, OPERATOR_IMMUTABLE), and one of our NodeHealthChecks deleted or
// changed where NHC's webhook refuses that while it remediates a node (platform/medik8s-webhook.ts).
import type { Check } from "../config/problems";
import { heldChangeFinding, heldFields, NHC_API_GROUP, NHC_KIND, type HeldChange } from "../platform/medik8s-webhook";
import type { RenderedStack } from "../render/rendered";
import { apiGroup, type Index, type ObjectRef, type StackPreview } from "./preview-model";
import { OPERATOR_IMMUTABLE } from "./replace-rules";

interface PatchDoc {
  target?: { kind?: string; name?: string };
  patch?: unknown;
}

const fieldAt = (v: unknown, path: string) =>
  path.split(".").reduce<unknown>((cur, k) => (typeof cur === "object" && cur !== null ? (cur as Record<string, unknown>)[k] : undefined), v);

/**
 * A post-render patch that changes a field the CR's operator refuses to update (OPERATOR_IMMUTABLE)
 * of a release the base already has: its CR exists, so `pulumi up` fails on the release's upgrade.
 */
export function postRenderFindings(b: RenderedStack, h: RenderedStack, bi: Index): Check[] {
  const findings: Check[] = [];
  const patchesOf = (r: RenderedStack, file: string | undefined) => (file ? ((r.documents(file)[0] as PatchDoc[] | null) ?? []) : []);
  for (const hu of h.units()) {
    if (hu.kind !== "HelmRelease" || !bi.units.has(hu.name)) continue;
    const bu = b.units().find((u) => u.name === hu.name);
    const before = patchesOf(b, bu?.kind === "HelmRelease" ? bu.postRender : undefined);
    for (const p of patchesOf(h, hu.postRender)) {
      const fields = OPERATOR_IMMUTABLE[p.target?.kind ?? ""] ?? [];
      const old = before.find((x) => x.target?.kind === p.target?.kind && x.target?.name === p.target?.name);
      for (const f of fields) {
        const [x, y] = [fieldAt(old?.patch, f), fieldAt(p.patch, f)];
        if (JSON.stringify(x) === JSON.stringify(y)) continue;
        findings.push({
          level: "error",
          code: "operator-immutable",
          message: `${p.target?.kind} ${p.target?.name} of release ${hu.name}: ${f} changes (${JSON.stringify(x) ?? "unset"} → ${JSON.stringify(y) ?? "unset"}), which its operator refuses to update: the CR must be replaced, and \`pulumi up\` fails on the release's upgrade`,
          reason: "mariadb-operator's webhook marks the field immutable; only a new CR takes it",
          fix: 'recreate the CR deliberately (docs/design-decisions.md, "What the charts read no value for"), or leave the field as it is',
        });
      }
    }
  }
  return findings;
}

/**
 * Our NodeHealthChecks deleted, or their selector or template changed: NHC's webhook refuses that
 * while the check remediates a node, and `pulumi up` would stop halfway (platform/medik8s-webhook.ts).
 */
export function heldCheckFindings(objects: StackPreview["objects"]): Check[] {
  const isCheck = (r: ObjectRef) => apiGroup(r.apiVersion) === NHC_API_GROUP && r.kind === NHC_KIND && !r.patch;
  const held: HeldChange[] = [
    ...objects.removed.filter(isCheck).map((r): HeldChange => ({ name: r.name, change: "deleted" })),
    ...objects.changed
      .filter((c) => isCheck(c.ref))
      .flatMap((c): HeldChange[] => {
        const fields = heldFields(c.changes);
        return fields.length > 0 ? [{ name: c.ref.name, change: fields }] : [];
      }),
  ];
  return heldChangeFinding(held);
}
