// What a change does to every stack, for a reviewer: two renders (base and head, as file trees)
// compared stack by stack — objects added, removed and changed (matched by API group, kind,
// namespace and name, not by file path), Helm values per release, units and chart pins, new and
// resolved plan-check warnings, other rendered files, and policy results when given. Pure: trees in,
// a model and Markdown out, in a stable order with no timestamps, so the PR comment only changes
// when the render does.
import { parse, parseAllDocuments } from "yaml";
import { toYaml } from "../../render/render";
import { diff, formatPath, type Change } from "./ydiff";

export type Tree = Map<string, string>;

interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  /** The file under rendered/<stack>/ (the head's, or the base's for a removed object). */
  file: string;
}

/** An added object, with its body: a reviewer reads a new object whole. */
interface AddedObject extends ObjectRef {
  body: unknown;
}

interface ObjectChange {
  ref: ObjectRef;
  changes: Change[];
}

interface ValuesChange {
  /** The unit's name (values/<unit>.yaml). */
  unit: string;
  release?: string;
  namespace?: string;
  op: "add" | "remove" | "change";
  changes: Change[];
}

interface UnitChange {
  name: string;
  op: "add" | "remove" | "change";
  changes: Change[];
}

interface Warning {
  code: string;
  message: string;
  remediation?: string;
}

interface FileChange {
  file: string;
  op: "add" | "remove" | "change";
  /** Field-level, for YAML files. */
  changes?: Change[];
  /** Line-level, for other text files (lines prefixed "-" or "+"). */
  lines?: string[];
}

interface PolicyViolation {
  policy: string;
  level: string;
  resource?: string;
  message: string;
}

/** `--policy <file>.json`: what `npm run policy` found, per stack. */
export interface PolicyReport {
  stacks: Record<string, { violations: PolicyViolation[] }>;
}

export interface StackPreview {
  stack: string;
  status: "added" | "removed" | "changed" | "unchanged";
  /** `<environment>/<topology>` of the head (or the base, for a removed stack). */
  title: string;
  settings: Change[];
  objects: { added: AddedObject[]; removed: ObjectRef[]; changed: ObjectChange[] };
  values: ValuesChange[];
  units: UnitChange[];
  warnings: { added: Warning[]; resolved: Warning[] };
  other: FileChange[];
  /** Undefined: no policy results were given for this stack. */
  policy?: PolicyViolation[];
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** `rendered/`-shaped tree (`<stack>/<path>`) → one tree per stack. */
function byStack(tree: Tree): Map<string, Tree> {
  const out = new Map<string, Tree>();
  for (const [file, content] of tree) {
    const slash = file.indexOf("/");
    if (slash < 0) continue;
    const stack = file.slice(0, slash);
    if (stack.startsWith(".")) continue;
    if (!out.has(stack)) out.set(stack, new Map());
    out.get(stack)!.set(file.slice(slash + 1), content);
  }
  return out;
}

function apiGroup(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

interface ParsedObject {
  ref: ObjectRef;
  body: unknown;
}

function objectsOf(tree: Tree): Map<string, ParsedObject> {
  const out = new Map<string, ParsedObject>();
  for (const [file, content] of tree) {
    if (!file.startsWith("objects/")) continue;
    parseAllDocuments(content).forEach((doc, i) => {
      const body = doc.toJS() as Record<string, any> | null;
      if (body === null || body === undefined) return;
      const meta = (body.metadata ?? {}) as Record<string, unknown>;
      const ref: ObjectRef = {
        apiVersion: String(body.apiVersion ?? ""),
        kind: String(body.kind ?? ""),
        ...(meta.namespace ? { namespace: String(meta.namespace) } : {}),
        name: String(meta.name ?? `${file}#${i}`),
        file,
      };
      out.set(`${apiGroup(ref.apiVersion)}|${ref.kind}|${ref.namespace ?? ""}|${ref.name}`, { ref, body });
    });
  }
  return out;
}

interface Index {
  title: string;
  settings: Record<string, unknown>;
  units: Map<string, Record<string, unknown>>;
  warnings: Warning[];
}

/** index.yaml: the parts the preview reports (nodes show as Node objects, objects as objects). */
function indexOf(tree: Tree): Index {
  const raw = tree.has("index.yaml") ? ((parse(tree.get("index.yaml")!) ?? {}) as Record<string, any>) : {};
  const { stack: _s, nodes: _n, phases, warnings, ...settings } = raw;
  const units = new Map<string, Record<string, unknown>>();
  for (const ph of (phases ?? []) as { name: string; units?: Record<string, unknown>[] }[]) {
    for (const u of ph.units ?? []) {
      const { objects: _o, values: _v, ...rest } = u;
      units.set(String(u.name), { phase: ph.name, ...rest });
    }
  }
  return {
    title: [raw.environment, raw.topology].filter(Boolean).join("/"),
    settings,
    units,
    warnings: ((warnings ?? []) as Warning[]).map((w) => ({ code: String(w.code), message: String(w.message), ...(w.remediation ? { remediation: String(w.remediation) } : {}) })),
  };
}

function lineDiff(a: string, b: string): string[] {
  const x = a.split("\n");
  const y = b.split("\n");
  if (x.length * y.length > 4_000_000) return ["(too large for a line diff)"];
  const n = x.length;
  const m = y.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      i++;
      j++;
    } else if (i < n && (j >= m || lcs[i + 1][j] >= lcs[i][j + 1])) out.push(`-${x[i++]}`);
    else out.push(`+${y[j++]}`);
  }
  return out;
}

function isYaml(file: string): boolean {
  return /\.ya?ml$/.test(file);
}

function fileChange(file: string, before: string | undefined, after: string | undefined): FileChange | undefined {
  if (before === after) return undefined;
  const op = before === undefined ? "add" : after === undefined ? "remove" : "change";
  if (op !== "change") return { file, op };
  if (isYaml(file)) {
    try {
      const pa = parseAllDocuments(before!).map((d) => d.toJS());
      const pb = parseAllDocuments(after!).map((d) => d.toJS());
      return { file, op, changes: diff(pa.length === 1 ? pa[0] : pa, pb.length === 1 ? pb[0] : pb) };
    } catch {
      // not YAML after all: fall through to lines
    }
  }
  if (/\.(md|txt|json|conf|toml|ini)$/.test(file)) return { file, op, lines: lineDiff(before!, after!) };
  return { file, op };
}

function warningKey(w: Warning): string {
  return `${w.code}\u0000${w.message}`;
}

/** Compare one stack's base and head trees (either may be absent). */
export function previewStack(stack: string, base: Tree | undefined, head: Tree | undefined, policy?: PolicyReport): StackPreview {
  const b = base ?? new Map<string, string>();
  const h = head ?? new Map<string, string>();
  const bi = indexOf(b);
  const hi = indexOf(h);

  const bo = objectsOf(b);
  const ho = objectsOf(h);
  const keys = [...new Set([...bo.keys(), ...ho.keys()])].sort(cmp);
  const objects: StackPreview["objects"] = { added: [], removed: [], changed: [] };
  for (const k of keys) {
    const x = bo.get(k);
    const y = ho.get(k);
    if (!x) objects.added.push({ ...y!.ref, body: y!.body });
    else if (!y) objects.removed.push(x.ref);
    else {
      const changes = diff(x.body, y.body);
      if (changes.length) objects.changed.push({ ref: y.ref, changes });
    }
  }

  const valuesFiles = [...new Set([...b.keys(), ...h.keys()])].filter((f) => /^values\/[^/]+\.ya?ml$/.test(f)).sort(cmp);
  const values: ValuesChange[] = [];
  for (const f of valuesFiles) {
    const unit = f.replace(/^values\//, "").replace(/\.ya?ml$/, "");
    const x = b.get(f);
    const y = h.get(f);
    if (x === y) continue;
    const meta = hi.units.get(unit) ?? bi.units.get(unit) ?? {};
    const op = x === undefined ? "add" : y === undefined ? "remove" : "change";
    const changes = diff(x === undefined ? undefined : parse(x), y === undefined ? undefined : parse(y));
    if (op === "change" && changes.length === 0) continue;
    values.push({
      unit,
      ...(meta.release ? { release: String(meta.release) } : {}),
      ...(meta.namespace ? { namespace: String(meta.namespace) } : {}),
      op,
      changes: op === "change" ? changes : [],
    });
  }

  const units: UnitChange[] = [];
  for (const name of [...new Set([...bi.units.keys(), ...hi.units.keys()])].sort(cmp)) {
    const x = bi.units.get(name);
    const y = hi.units.get(name);
    if (!x) units.push({ name, op: "add", changes: diff({}, y) });
    else if (!y) units.push({ name, op: "remove", changes: [] });
    else {
      const changes = diff(x, y);
      if (changes.length) units.push({ name, op: "change", changes });
    }
  }

  const bw = new Set(bi.warnings.map(warningKey));
  const hw = new Set(hi.warnings.map(warningKey));
  const sortW = (ws: Warning[]) => ws.sort((p, q) => cmp(p.code, q.code) || cmp(p.message, q.message));
  const warnings = {
    added: sortW(hi.warnings.filter((w) => !bw.has(warningKey(w)))),
    resolved: sortW(bi.warnings.filter((w) => !hw.has(warningKey(w)))),
  };

  const other: FileChange[] = [];
  for (const f of [...new Set([...b.keys(), ...h.keys()])].sort(cmp)) {
    if (f === "index.yaml" || f.startsWith("objects/") || /^values\/[^/]+\.ya?ml$/.test(f)) continue;
    const c = fileChange(f, b.get(f), h.get(f));
    if (c) other.push(c);
  }

  const settings = base && head ? diff(bi.settings, hi.settings) : [];
  const changed =
    settings.length + objects.added.length + objects.removed.length + objects.changed.length + values.length + units.length +
      warnings.added.length + warnings.resolved.length + other.length >
    0;
  const violations = policy?.stacks[stack]?.violations;
  return {
    stack,
    status: !base ? "added" : !head ? "removed" : changed ? "changed" : "unchanged",
    title: (head ? hi.title : bi.title) || stack,
    settings,
    objects,
    values,
    units,
    warnings,
    other,
    ...(violations
      ? {
          policy: [...violations].sort(
            (p, q) => cmp(p.policy, q.policy) || cmp(p.resource ?? "", q.resource ?? "") || cmp(p.message, q.message),
          ),
        }
      : {}),
  };
}

/** Every stack present in either render (optionally only some), sorted by name. */
export function previewAll(base: Tree, head: Tree, opts: { stacks?: string[]; policy?: PolicyReport } = {}): StackPreview[] {
  const bs = byStack(base);
  const hs = byStack(head);
  const names = [...new Set([...bs.keys(), ...hs.keys()])].filter((s) => !opts.stacks?.length || opts.stacks.includes(s)).sort(cmp);
  return names.map((s) => previewStack(s, bs.get(s), hs.get(s), opts.policy));
}

// ---- Markdown ----

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
    out.push(`@@ ${formatPath(c.path)}${c.op === "reorder" ? " (order)" : ""} @@`);
    if (c.op !== "add") for (const l of yamlLines(c.before)) out.push(`- ${l}`);
    if (c.op !== "remove") for (const l of yamlLines(c.after)) out.push(`+ ${l}`);
  }
  return fence("diff", out.join("\n"));
}

function objectLabel(r: ObjectRef): string {
  // The Pulumi layer applies rendered Node objects as NodePatches (it never creates or deletes a Node).
  const applied = r.kind === "Node" && r.apiVersion === "v1" ? ", applied as a NodePatch" : "";
  return `${r.kind} \`${r.namespace ? `${r.namespace}/` : ""}${r.name}\` (\`${r.apiVersion}\`${applied})`;
}

function countLine(p: StackPreview): string {
  const parts: string[] = [];
  const o = p.objects;
  if (o.added.length + o.removed.length + o.changed.length) parts.push(`objects +${o.added.length} −${o.removed.length} ~${o.changed.length}`);
  if (p.values.length) parts.push(`values of ${p.values.length} release(s)`);
  if (p.units.length) parts.push(`${p.units.length} unit(s)`);
  if (p.warnings.added.length) parts.push(`${p.warnings.added.length} new warning(s)`);
  if (p.warnings.resolved.length) parts.push(`${p.warnings.resolved.length} resolved warning(s)`);
  if (p.settings.length) parts.push(`${p.settings.length} stack field(s)`);
  if (p.other.length) parts.push(`${p.other.length} other file(s)`);
  return parts.join(", ");
}

function policyCell(p: StackPreview): string {
  if (!p.policy) return "not run";
  if (p.policy.length === 0) return "✅ passed";
  const mandatory = p.policy.filter((v) => v.level === "mandatory").length;
  return `${mandatory ? "❌" : "⚠️"} ${p.policy.length} violation(s)`;
}

/** One stack's section: everything that changed, field by field. */
export function stackMarkdown(p: StackPreview, heading = "###"): string {
  const h = heading;
  const out: string[] = [`${h} ${p.stack} — ${p.title}`, ""];
  if (p.status === "added") out.push("New stack: everything below is added.", "");
  if (p.status === "removed") out.push("Stack removed: everything below is removed.", "");
  if (p.status === "unchanged") out.push("No changes.", "");
  else out.push(`Changes: ${countLine(p) || "none"}.`, "");

  if (p.settings.length) out.push(`${h}# Stack (index.yaml)`, "", changesBlock(p.settings), "");

  const o = p.objects;
  if (o.added.length + o.removed.length + o.changed.length) {
    out.push(`${h}# Objects`, "");
    if (o.added.length) {
      out.push("**Added**", "");
      for (const r of o.added) {
        out.push(`- ${objectLabel(r)} — \`${r.file}\``, "", "  <details><summary>object</summary>", "", indent(fence("yaml", toYaml(r.body)), "  "), "", "  </details>", "");
      }
    }
    if (o.removed.length) {
      out.push("**Removed**", "");
      for (const r of o.removed) out.push(`- ${objectLabel(r)} — \`${r.file}\``);
      out.push("");
    }
    if (o.changed.length) {
      out.push("**Changed**", "");
      for (const c of o.changed) out.push(`${objectLabel(c.ref)} — \`${c.ref.file}\``, "", changesBlock(c.changes), "");
    }
  }

  if (p.values.length) {
    out.push(`${h}# Helm values`, "");
    for (const v of p.values) {
      const rel = v.release ? ` (release \`${v.release}\`${v.namespace ? ` in \`${v.namespace}\`` : ""})` : "";
      const what = v.op === "add" ? "new release" : v.op === "remove" ? "release removed" : `${v.changes.length} field(s)`;
      out.push(`\`${v.unit}\`${rel}: ${what}`, "");
      if (v.changes.length) out.push(changesBlock(v.changes), "");
    }
  }

  if (p.units.length) {
    out.push(`${h}# Units`, "");
    for (const u of p.units) {
      out.push(`\`${u.name}\`: ${u.op === "add" ? "added" : u.op === "remove" ? "removed" : "changed"}`, "");
      if (u.changes.length) out.push(changesBlock(u.changes), "");
    }
  }

  if (p.warnings.added.length + p.warnings.resolved.length) {
    out.push(`${h}# Plan-check warnings`, "");
    for (const w of p.warnings.added) out.push(`- ⚠️ new **${w.code}**: ${w.message}${w.remediation ? `. Fix: ${w.remediation}` : ""}`);
    for (const w of p.warnings.resolved) out.push(`- ✅ resolved **${w.code}**: ${w.message}`);
    out.push("");
  }

  if (p.other.length) {
    out.push(`${h}# Other rendered files`, "");
    for (const f of p.other) {
      out.push(`\`${f.file}\`: ${f.op === "add" ? "added" : f.op === "remove" ? "removed" : "changed"}`, "");
      if (f.changes?.length) out.push(changesBlock(f.changes), "");
      else if (f.lines?.length) out.push(fence("diff", f.lines.join("\n")), "");
    }
  }

  if (p.policy) {
    out.push(`${h}# Policy`, "");
    if (p.policy.length === 0) out.push("No violations.", "");
    else {
      out.push("| level | policy | resource | message |", "|---|---|---|---|");
      const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
      for (const v of p.policy) out.push(`| ${cell(v.level)} | ${cell(v.policy)} | ${cell(v.resource ?? "")} | ${cell(v.message)} |`);
      out.push("");
    }
  }
  return out.join("\n").replace(/\n+$/, "\n");
}

export interface ReportInput {
  base: string;
  stacks: StackPreview[];
  /** Policy output as text (any non-JSON --policy file), shown once for all stacks. */
  policyText?: string;
}

function summaryTable(r: ReportInput): string[] {
  const withPolicy = r.stacks.some((s) => s.policy);
  const out = [
    `| stack | ${["objects added", "removed", "changed", "values", "new warnings", ...(withPolicy ? ["policy"] : [])].join(" | ")} |`,
    `|---|${"---:|".repeat(5)}${withPolicy ? "---|" : ""}`,
  ];
  for (const s of r.stacks) {
    const cells = [s.objects.added.length, s.objects.removed.length, s.objects.changed.length, s.values.length, s.warnings.added.length].map(String);
    const name = s.status === "unchanged" ? `${s.stack} (no changes)` : s.status === "changed" ? s.stack : `${s.stack} (${s.status})`;
    out.push(`| ${name} | ${cells.join(" | ")}${withPolicy ? ` | ${policyCell(s)}` : ""} |`);
  }
  return out;
}

function header(r: ReportInput): string[] {
  return [REPORT_MARKER, "## Render preview", "", `Base: ${r.base} → this change (every stack rendered offline from both).`, ""];
}

/** The whole report: summary table, then every changed stack's section, then policy output. */
export function reportMarkdown(r: ReportInput): string {
  const out = [...header(r), ...summaryTable(r), ""];
  for (const s of r.stacks) if (s.status !== "unchanged" || s.policy?.length) out.push(stackMarkdown(s), "");
  if (r.policyText !== undefined) out.push("### Policy", "", fence("text", r.policyText), "");
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
