// The preview as Markdown for a pull-request comment: a summary table of every stack, then per
// changed stack what a reviewer approves, most important first — errors (what `pulumi up` would
// refuse), warnings with their reasons, the actions per resource, the manual steps per node, the
// placement delta — then the details (object bodies and diffs, values, units, other files, policy).
// Deterministic: the same model gives the same bytes.
import { formatPath, type Check } from "../config/problems";
import type { NodeSteps } from "../lifecycle/steps";
import { WHOLE_DOCUMENT, type Change } from "../render/diff";
import { toYaml } from "../render/render";
import { componentLine } from "./placement-delta";
import type { StackPreview } from "./preview-model";
import type { UpgradeView } from "./preview-upgrades";
import type { WarningChange } from "./preview-warnings";
import type { RenderedWarning } from "../render/rendered";

export const REPORT_MARKER = "<!-- openkeel-preview -->";

function fence(lang: string, body: string): string {
  const longest = Math.max(2, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const f = "`".repeat(longest + 1);
  return `${f}${lang}\n${body.replace(/\n$/, "")}\n${f}`;
}

function indent(text: string, by: string): string {
  return text
    .split("\n")
    .map((l) => (l ? by + l : l))
    .join("\n");
}

function yamlLines(v: unknown): string[] {
  if (v === undefined) return ["(absent)"];
  return toYaml(v).replace(/\n$/, "").split("\n");
}

/** Field changes as a `diff` block: `@@ path @@`, then the old value (-) and the new one (+). */
function changesBlock(changes: Change[]): string {
  const out: string[] = [];
  for (const c of changes) {
    out.push(`@@ ${formatPath(c.path, WHOLE_DOCUMENT)}${c.op === "reorder" ? " (order)" : ""} @@`);
    if (c.op !== "add") for (const l of yamlLines(c.before)) out.push(`- ${l}`);
    if (c.op !== "remove") for (const l of yamlLines(c.after)) out.push(`+ ${l}`);
  }
  return fence("diff", out.join("\n"));
}

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

function objectLabel(r: StackPreview["objects"]["removed"][number]): string {
  // The Pulumi layer applies rendered Node objects as NodePatches (it never creates or deletes a Node).
  const applied = r.kind === "Node" && r.apiVersion === "v1" ? ", applied as a NodePatch" : "";
  return `${r.kind} \`${r.namespace ? `${r.namespace}/` : ""}${r.name}\` (\`${r.apiVersion}\`${applied})`;
}

function counts(p: StackPreview): Record<"create" | "update" | "replace" | "delete", number> {
  const c = { create: 0, update: 0, replace: 0, delete: 0 };
  for (const a of p.actions) c[a.action]++;
  return c;
}

/** A stack's actions by kind, its errors and its warnings (findings, new and changed plan-check warnings): the summary's numbers. */
export function totals(p: StackPreview): ReturnType<typeof counts> & { errors: number; warnings: number } {
  return { ...counts(p), errors: errorsOf(p).length, warnings: warningsOf(p).length + p.warnings.added.length + p.warnings.changed.length };
}

const errorsOf = (p: StackPreview) => p.findings.filter((f) => f.level === "error");
const warningsOf = (p: StackPreview) => p.findings.filter((f) => f.level === "warning");

function countLine(p: StackPreview): string {
  const c = counts(p);
  const parts = (["create", "update", "replace", "delete"] as const).filter((a) => c[a]).map((a) => `${a} ${c[a]}`);
  if (p.upgrades.length) parts.unshift(`upgrade of ${p.upgrades.length} component(s)`);
  if (p.nodes.length) parts.push(`steps on ${p.nodes.length} node(s)`);
  if (p.placement) parts.push(`placement of ${p.placement.components.length} component(s), ${p.placement.nodes.length} node(s)`);
  if (p.warnings.resolved.length) parts.push(`${p.warnings.resolved.length} resolved plan-check warning(s)`);
  if (p.settings.length) parts.push(`${p.settings.length} stack field(s)`);
  if (p.other.length) parts.push(`${p.other.length} other file(s)`);
  return parts.join(", ");
}

/** A plan-check warning's text after its code: the message, why, and the fix. */
const warningText = (w: RenderedWarning) => `${w.message}.${w.reason ? ` Why: ${w.reason}.` : ""}${w.remediation ? ` Fix: ${w.remediation}.` : ""}`;

/** A warning of the same code and subject on both sides, another text: what changed, old → new. */
function changedWarningLine({ before, after }: WarningChange): string {
  const label = { message: "", reason: "why: ", remediation: "fix: " } as const;
  const parts = (["message", "reason", "remediation"] as const)
    .filter((k) => before[k] !== after[k])
    .map((k) => `${label[k]}${before[k] ?? "(none)"} → ${after[k] ?? "(none)"}`);
  return `- changed plan-check warning **${after.code}**${after.path ? ` (\`${after.path}\`)` : ""}: ${parts.join("; ")}`;
}

function findingLine(f: Check): string {
  return `- **${f.code}**: ${f.message}.${f.reason ? ` Why: ${f.reason}.` : ""}${f.fix ? ` Fix: ${f.fix}.` : ""}`;
}

function policyCell(p: StackPreview): string {
  if (!p.policy) return "not run";
  if (p.policy.error !== undefined) return "❌ failed to run";
  if (p.policy.violations.length === 0) return "✅ passed";
  return `${p.policy.passed ? "⚠️" : "❌"} ${p.policy.violations.length} violation(s)`;
}

const list = (xs: string[]) => (xs.length ? xs.join(", ") : "none");

/** `compute, storage → network`, `new: compute, storage`, `was: network`. */
function rolesChange(s: NodeSteps): string {
  if (s.change === "added") return `new: ${list(s.roles.after ?? [])}`;
  if (s.change === "removed") return `removed, was: ${list(s.roles.before ?? [])}`;
  const before = list(s.roles.before ?? []);
  const after = list(s.roles.after ?? []);
  return before === after ? before : `${before} → ${after}`;
}

/** `1.12.1 → 1.12.2`, and the pins when several move differently. */
function movesText(u: UpgradeView): string {
  const distinct = u.moves.filter((m, i) => u.moves.findIndex((o) => o.from === m.from && o.to === m.to) === i);
  const one = (m: UpgradeView["moves"][number]) => (m.from === m.to ? `${m.from} (${m.detailFrom ?? "?"} → ${m.detailTo ?? "?"})` : `${m.from} → ${m.to}`);
  return distinct.length === 1 ? one(distinct[0]) : distinct.map((m) => `\`${m.path}\` ${one(m)}`).join(", ");
}

/** Each upgraded component: from → to, notes, CRDs, phase order, what rolls, what comes first and what is done by hand. */
function upgradeLines(p: StackPreview, h: string): string[] {
  if (!p.upgrades.length) return [];
  const out = [`${h}# Upgrades`, ""];
  for (const u of p.upgrades) {
    out.push(`**${u.component}** ${movesText(u)}${u.direction === "upgrade" ? "" : ` (${u.direction})`}`, "");
    if (u.notes.length) out.push(`- release notes: ${u.notes.map((n) => `[${n.label}](${n.url})`).join(", ")}`);
    out.push(`- CRDs: ${u.crds}`);
    if (u.phases.length) out.push(`- phase order: ${u.phases.map((ph) => `${ph.phase}: ${ph.units.map((x) => `\`${x}\``).join(" → ")}`).join("; then ")}`);
    if (u.rolls.length) out.push("- rolls:", ...u.rolls.map((r) => `  - ${r}`));
    if (u.first.length) out.push("- first:", ...u.first.map((f) => `  - ${f}`));
    if (u.manual.length) out.push("- by hand, after `pulumi up`:", ...u.manual.map((m) => `  - ${m}`));
    out.push(`- upgrade rule: ${u.source}`, "");
  }
  return out;
}

/** Errors, warnings (findings, new and changed plan-check warnings), upgrades, stack settings and actions: what a reviewer weighs first. */
function verdictLines(p: StackPreview, h: string): string[] {
  const out: string[] = [];
  const errors = errorsOf(p);
  // what the findings were judged against: what is deployed, else the base (review/reference.ts)
  if (p.findings.length) out.push(`Judged against ${p.judged}.`, "");
  if (errors.length) out.push("**❌ Errors: `pulumi up` would refuse or fail on these**", "", ...errors.map(findingLine), "");
  const warnings = warningsOf(p);
  if (warnings.length + p.warnings.added.length + p.warnings.changed.length) {
    out.push("**⚠️ Warnings**", "", ...warnings.map(findingLine));
    for (const w of p.warnings.added) out.push(`- new plan-check warning **${w.code}**: ${warningText(w)}`);
    out.push(...p.warnings.changed.map(changedWarningLine), "");
  }
  out.push(...upgradeLines(p, h));
  if (p.settings.length) out.push(`${h}# Stack (index.yaml)`, "", changesBlock(p.settings), "");
  if (p.actions.length) {
    out.push(`${h}# Actions`, "", "| action | resource | unit | why |", "|---|---|---|---|");
    for (const a of p.actions) {
      const action = a.action === "replace" || a.action === "delete" ? `**${a.action}**` : a.action;
      out.push(`| ${action} | ${cell(a.resource)} | ${a.unit ? `${cell(a.unit)}${a.protected ? " 🔒" : ""}` : ""} | ${cell(a.detail ?? "")} |`);
    }
    out.push("");
  }
  return out;
}

/**
 * A merge deploys (.github/workflows/deploy.yml: \`pulumi up\` behind the stack's GitHub environment,
 * whose reviewers approve it): a step before it is done before approving that deployment.
 */
const WHEN = { before: "before approving the deployment (the merge's `pulumi up`)", after: "after `pulumi up`" } as const;

/** The steps per node, in order, and the placement delta. */
function nodeAndPlacementLines(p: StackPreview, h: string): string[] {
  const out: string[] = [];
  if (p.nodes.length) {
    out.push(
      `${h}# Node steps`,
      "",
      "State changes, and the steps outside Kubernetes, in this order (`pulumi up` changes labels, cordons, requests drains and evictions, and changes workloads only):",
      "",
    );
    for (const n of p.nodes) {
      out.push(`- **${n.node}** (${rolesChange(n)}${n.state ? `; state ${n.state.before} → ${n.state.after}` : ""})`);
      n.steps.forEach((s, i) => out.push(`  ${i + 1}. ${WHEN[s.when]}, ${s.what}: \`${s.command}\` — ${s.why}`));
    }
    out.push("");
  }
  if (p.placement || p.placementNote) {
    out.push(`${h}# Placement`, "");
    if (p.placementNote) out.push(`${p.placementNote}.`, "");
    const d = p.placement;
    for (const c of d?.components ?? []) out.push(`- \`${c.component}\`: ${componentLine(c)}`);
    for (const n of d?.nodes ?? [])
      out.push(`- node \`${n.node}\`: ${n.op === "changed" ? "" : `${n.op} (`}${n.fields.join("; ")}${n.op === "changed" ? "" : ")"}`);
    if (d?.lines.length) out.push("", fence("diff", d.lines.join("\n")));
    out.push("");
  }
  return out;
}

/** Added objects whole, changed ones field by field; Helm values; units. */
function objectLines(p: StackPreview, h: string): string[] {
  const out: string[] = [];
  const o = p.objects;
  if (o.added.length + o.changed.length) {
    out.push(`${h}# Objects`, "");
    for (const r of o.added) {
      out.push(
        `- new ${objectLabel(r)} — \`${r.file}\``,
        "",
        "  <details><summary>object</summary>",
        "",
        indent(fence("yaml", toYaml(r.body)), "  "),
        "",
        "  </details>",
        "",
      );
    }
    for (const c of o.changed) out.push(`${objectLabel(c.ref)} — \`${c.ref.file}\``, "", changesBlock(c.changes), "");
  }
  const changedValues = p.values.filter((v) => v.changes.length);
  if (changedValues.length) {
    out.push(`${h}# Helm values`, "");
    for (const v of changedValues) {
      const rel = v.release ? ` (release \`${v.release}\`${v.namespace ? ` in \`${v.namespace}\`` : ""})` : "";
      out.push(`\`${v.unit}\`${rel}: ${v.changes.length} field(s)`, "", changesBlock(v.changes), "");
    }
  }
  const changedUnits = p.units.filter((u) => u.op === "change");
  if (changedUnits.length) {
    out.push(`${h}# Units`, "");
    for (const u of changedUnits) out.push(`\`${u.name}\`: changed`, "", changesBlock(u.changes), "");
  }
  return out;
}

/** Resolved plan-check warnings, other rendered files, policy results. */
function restLines(p: StackPreview, h: string): string[] {
  const out: string[] = [];
  if (p.warnings.resolved.length) {
    out.push(`${h}# Plan-check warnings resolved`, "");
    for (const w of p.warnings.resolved) out.push(`- ✅ **${w.code}**: ${w.message}`);
    out.push("");
  }
  if (p.other.length) {
    out.push(`${h}# Other rendered files`, "");
    for (const f of p.other) {
      const op = f.op === "add" ? "added" : f.op === "remove" ? "removed" : "changed";
      if (f.seeAlso) out.push(`- \`${f.file}\`: ${op} (see ${f.seeAlso})`);
      else if (f.changes?.length) out.push("", `\`${f.file}\`: ${op}`, "", changesBlock(f.changes), "");
      else if (f.lines?.length) out.push("", `\`${f.file}\`: ${op}`, "", fence("diff", f.lines.join("\n")), "");
      else out.push(`- \`${f.file}\`: ${op}`);
    }
    out.push("");
  }
  if (p.policy) {
    out.push(`${h}# Policy`, "");
    if (p.policy.error !== undefined) out.push(`❌ The policy pack did not run: ${p.policy.error}`, "");
    else if (p.policy.violations.length === 0) out.push("No violations.", "");
    else {
      out.push("| level | policy | resource | message |", "|---|---|---|---|");
      for (const v of p.policy.violations)
        out.push(`| ${cell(v.level ?? (p.policy.passed ? "advisory" : ""))} | ${cell(v.policy)} | ${cell(v.resource ?? "")} | ${cell(v.message)} |`);
      out.push("");
    }
  }
  return out;
}

/** One stack's section: what it needs from a reviewer first, then every detail. */
export function stackMarkdown(p: StackPreview, heading = "###"): string {
  const out: string[] = [`${heading} ${p.stack} — ${p.title}`, ""];
  if (p.status === "added") out.push("New stack: everything below is added.", "");
  if (p.status === "removed") out.push("Stack removed: everything below is removed.", "");
  if (p.status === "unchanged") out.push("No changes.", "");
  else out.push(`Changes: ${countLine(p) || "none"}.`, "");
  out.push(...verdictLines(p, heading), ...nodeAndPlacementLines(p, heading), ...objectLines(p, heading), ...restLines(p, heading));
  return out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/\n+$/, "\n");
}

export interface ReportInput {
  base: string;
  stacks: StackPreview[];
  /** Policy output as text (any non-JSON --policy file), shown once for all stacks. */
  policyText?: string | undefined;
  /** The JSON policy report as given, kept in the report for whatever reads the comment. */
  policyJson?: string | undefined;
  /** Pins that reach no stack (build tools, schema locations) and moved: `kubeconform v0.7.0 → v0.7.1`. */
  tools?: string[] | undefined;
  /** `--stack`: the only stacks rendered (the others were not looked at). */
  only?: string[] | undefined;
}

function summaryTable(r: ReportInput): string[] {
  const withPolicy = r.stacks.some((s) => s.policy);
  const out = [
    `| stack | ${["create", "update", "replace", "delete", "errors", "warnings", ...(withPolicy ? ["policy"] : [])].join(" | ")} |`,
    `|---|${"---:|".repeat(6)}${withPolicy ? "---|" : ""}`,
  ];
  for (const s of r.stacks) {
    const t = totals(s);
    const cells = [t.create, t.update, t.replace, t.delete, t.errors, t.warnings].map(String);
    const name = s.status === "unchanged" ? `${s.stack} (no changes)` : s.status === "changed" ? s.stack : `${s.stack} (${s.status})`;
    out.push(`| ${name} | ${cells.join(" | ")}${withPolicy ? ` | ${policyCell(s)}` : ""} |`);
  }
  return out;
}

function header(r: ReportInput): string[] {
  const errors = r.stacks.reduce((n, s) => n + errorsOf(s).length, 0);
  return [
    REPORT_MARKER,
    "## Render preview",
    "",
    `Base: ${r.base} → this change (${r.only?.length ? `${r.only.map((s) => `\`${s}\``).join(", ")} only, --stack: rendered` : "every stack rendered"} offline from both).`,
    "",
    ...(errors ? [`❌ **${errors} error(s)**: \`pulumi up\` would refuse or fail on this change (see each stack's Errors).`, ""] : []),
  ];
}

/** The whole report: summary table, then every changed stack's section, then policy output. */
export function reportMarkdown(r: ReportInput): string {
  const out = [...header(r), ...summaryTable(r), ""];
  if (r.tools?.length) out.push(`Build tools and schema locations (no stack runs them): ${r.tools.join("; ")}.`, "");
  for (const s of r.stacks) if (s.status !== "unchanged" || s.policy?.violations.length || s.policy?.error !== undefined) out.push(stackMarkdown(s), "");
  if (r.policyText !== undefined) out.push("### Policy", "", fence("text", r.policyText), "");
  if (r.policyJson !== undefined) {
    out.push(
      "<details><summary>Policy results as JSON (<code>npm run policy -- --json</code>)</summary>",
      "",
      fence("json", r.policyJson),
      "",
      "</details>",
      "",
    );
  }
  return out.join("\n").replace(/\n+$/, "\n");
}

/** GitHub rejects comments over 65,536 characters: past the limit, the summary and a pointer. */
export const COMMENT_LIMIT = 60_000;

export function commentMarkdown(r: ReportInput, full = reportMarkdown(r)): string {
  if (full.length <= COMMENT_LIMIT) return full;
  const out = [
    ...header(r),
    ...summaryTable(r),
    "",
    `The full report (${full.length} characters) is too long for a comment: see \`report.md\` in the workflow's \`preview\` artifact.`,
    "",
  ];
  return out.join("\n");
}

/** The report of a preview that could not compare: which side failed to render, and why. */
export function failedMarkdown(base: string, what: string, message: string): string {
  return [
    REPORT_MARKER,
    "## Render preview — ❌ failed",
    "",
    `Base: ${base} → this change.`,
    "",
    `${what}: nothing was compared, and no earlier preview applies to this change.`,
    "",
    fence("text", message.trim() || "(no output)"),
    "",
  ].join("\n");
}
