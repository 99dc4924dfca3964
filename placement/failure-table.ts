// The failure-domain table as data (issue 39): what losing a node, a zone, the nodes the inventory
// drains, or a node while those are drained, costs the cloud. lifecycle/failure-domains.ts computes
// it from the Plan with what each component says of its own losses; placement.json carries it,
// placement.md draws it (below), `npm run plan` prints its one line, and the preview compares a
// change's with its base's. Pure data and text: no judgement here.

/** Fatal: a quorum, the data of some volume, or a function of the whole cloud is gone. Degraded: it runs with less (redundancy, capacity, some members waiting). Holds: touched, and it holds. */
export type LossLevel = "fatal" | "degraded" | "holds";

/** What one component says of one loss: `what` it owns (Galera, Longhorn longhorn-vm, the NHC group …), in one sentence, with the fix when it is not a hold. */
export interface LossFinding {
  what: string;
  level: LossLevel;
  message: string;
  fix?: string | undefined;
}

/**
 * - `node`: any one of `nodes` fails (nodes with the same roles, zone, state and memberships: the
 *   same findings), all the others up;
 * - `zone`: every node of `zone` fails at once (`nodes`);
 * - `drained`: the nodes the inventory puts in maintenance or retiring (`nodes`) are out;
 * - `drained+node`: those are out, and any one of `nodes` fails too.
 */
export type LossKind = "node" | "zone" | "drained" | "drained+node";
export const LOSS_KINDS: readonly LossKind[] = ["node", "zone", "drained", "drained+node"];

export interface FailureDomainRow {
  kind: LossKind;
  /** A zone row's zone. */
  zone?: string | undefined;
  nodes: string[];
  /** In the order of the components that own them; every `what` at most once. */
  findings: LossFinding[];
}

export interface FailureDomainTable {
  /** The zones of the inventory (none: the stack is one failure domain for zones). */
  zones: string[];
  /** The nodes drained in the inventory, out in the rows of kind `drained` and `drained+node`. */
  drained: string[];
  /** The losses this stack must survive (a plan check refuses a fatal one): production a node, large a zone too. */
  required: LossKind[];
  rows: FailureDomainRow[];
}

const LEVEL_ORDER: Record<LossLevel, number> = { holds: 0, degraded: 1, fatal: 2 };

/** The worse of two levels. */
export function worse(a: LossLevel, b: LossLevel): LossLevel {
  return LEVEL_ORDER[a] >= LEVEL_ORDER[b] ? a : b;
}

/** Whether `a` is worse than `b`. */
export function isWorse(a: LossLevel, b: LossLevel): boolean {
  return LEVEL_ORDER[a] > LEVEL_ORDER[b];
}

/** A row's verdict: its worst finding, or holds. */
export function rowLevel(row: FailureDomainRow): LossLevel {
  return row.findings.reduce<LossLevel>((l, f) => worse(l, f.level), "holds");
}

/** What a row loses, as a sentence starts: `losing cmp-a-01`, `losing zone-b`, `losing cp-2 while cp-1 is drained`. */
export function lossText(row: FailureDomainRow, drained: readonly string[]): string {
  const any = (nodes: readonly string[]) => (nodes.length === 1 ? nodes[0] : `any one of ${shortNodes(nodes)}`);
  const out = `${shortNodes(drained)} ${drained.length === 1 ? "is" : "are"} drained`;
  switch (row.kind) {
    case "node":
      return `losing ${any(row.nodes)}`;
    case "zone":
      return `losing zone ${row.zone}`;
    case "drained":
      return `draining ${shortNodes(row.nodes)}`;
    case "drained+node":
      return `losing ${any(row.nodes)} while ${out}`;
  }
}

/** `a, b, c and 4 more` */
function shortNodes(nodes: readonly string[], max = 4): string {
  return nodes.length <= max ? nodes.join(", ") : `${nodes.slice(0, max).join(", ")} and ${nodes.length - max} more`;
}

const KIND_TEXT: Record<LossKind, string> = { node: "one node", zone: "a zone", drained: "the drained nodes", "drained+node": "one node more" };

const mdEscape = (s: string) => s.replace(/\|/g, "\\|");

function findingsCell(row: FailureDomainRow, level: LossLevel): string {
  const found = row.findings.filter((f) => f.level === level);
  return found.length === 0 ? "—" : found.map((f) => `**${mdEscape(f.what)}**: ${mdEscape(f.message)}`).join("<br>");
}

/** The section of placement.md: one row per loss, what it loses and what holds. */
export function failureMarkdown(t: FailureDomainTable | undefined): string[] {
  if (!t) return [];
  const required = t.required.length === 0 ? "none (not a production stack)" : t.required.map((k) => KIND_TEXT[k]).join(" and ");
  const lines = [
    "## Failure domains",
    "",
    "What the cloud loses when nodes fail or drain (lifecycle/failure-domains.ts; docs/node-lifecycle.md#failure-domains): one node",
    "(nodes whose roles, zone and memberships match share a row: any one of them), each zone, the nodes the inventory drains, and",
    "one node more while those are drained. Each component says what the loss costs of what it owns, at worst where the scheduling",
    "leaves a choice: **fatal** (a quorum, the only copies of some data, or a function of the whole cloud gone), **degraded** (it",
    "runs with less), or it holds (touched, listed under holds; what is not listed is untouched). NHC says which lost nodes it fences.",
    "",
    `Zones: ${t.zones.length > 0 ? t.zones.join(", ") : "none"}. Drained: ${t.drained.length > 0 ? t.drained.join(", ") : "none"}. Must survive (a plan check): ${required}.`,
    "",
    "| loss | nodes | verdict | fatal | degraded | holds |",
    "|---|---|---|---|---|---|",
  ];
  for (const row of t.rows) {
    const holds = row.findings.filter((f) => f.level === "holds").map((f) => mdEscape(f.what));
    const loss = row.kind === "zone" ? `zone ${row.zone}` : KIND_TEXT[row.kind];
    lines.push(
      `| ${loss} | ${row.nodes.join(", ")} | ${rowLevel(row)} | ${findingsCell(row, "fatal")} | ${findingsCell(row, "degraded")} | ${holds.join(", ") || "—"} |`,
    );
  }
  lines.push("");
  return lines;
}

/** What the fatal findings of a row are about: `Galera, etcd`. */
function fatalWhat(row: FailureDomainRow): string {
  return row.findings
    .filter((f) => f.level === "fatal")
    .map((f) => f.what)
    .join(", ");
}

/** `npm run plan`'s line: the largest loss the stack survives, and what is fatal. */
export function failureSummary(t: FailureDomainTable | undefined): string | undefined {
  if (!t) return undefined;
  const fatal = (kind: LossKind) => t.rows.filter((r) => r.kind === kind && rowLevel(r) === "fatal");
  const nodes = fatal("node");
  const zones = fatal("zone");
  const degraded = t.rows.filter((r) => rowLevel(r) === "degraded").length;
  const parts: string[] = [];
  if (nodes.length > 0) {
    parts.push(`a single node's loss is fatal: ${nodes.map((r) => `${shortNodes(r.nodes)} (${fatalWhat(r)})`).join("; ")}`);
  } else if (t.zones.length > 0 && zones.length === 0) {
    parts.push(`survives the loss of any one node and of any one zone (${t.zones.join(", ")})`);
  } else {
    parts.push(`survives the loss of any one node`);
    if (zones.length > 0) parts.push(`not of ${zones.map((r) => `zone ${r.zone} (${fatalWhat(r)})`).join(", ")}`);
    else parts.push("no zones");
  }
  const whileDrained = fatal("drained+node");
  if (whileDrained.length > 0)
    parts.push(
      `while ${shortNodes(t.drained)} ${t.drained.length === 1 ? "is" : "are"} drained, losing ${whileDrained.flatMap((r) => r.nodes).length} more node(s) is fatal`,
    );
  parts.push(`degraded by ${degraded} of ${t.rows.length} losses`);
  return `failure domains: ${parts.join("; ")} (placement.md)`;
}
