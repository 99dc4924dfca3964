// What a change does to the placement, in a few lines instead of the whole table again: per
// component the nodes it gains and loses (`virt-handler: +cmp-04`) and a replica count that
// changes, per node the columns of placement.md's node table that change, and any other line of
// placement.md that changes. Adding one node adds a column to every row of the table, so a line
// diff rewrites all of it. Read from both renders' placement data (placement.json), never from
// the Markdown: the columns and lines are those placement/picture.ts writes of it.
import { componentRows, nodeColumns, placementProse, remainingNodes, replicasText } from "../placement/picture";
import type { RenderedPlacement } from "../render/rendered";

export interface ComponentDelta {
  component: string;
  op: "added" | "removed" | "changed";
  gained: string[];
  lost: string[];
  /** Nodes it may still run on whose state now keeps its new pods off (placement.md's `○`), and those back; absent when none. */
  heldOff?: string[];
  back?: string[];
  replicas?: { before: string; after: string };
}

interface NodeRowDelta {
  node: string;
  op: "added" | "removed" | "changed";
  /** The node table's other columns: `zone: — → zone-a`, or all of them for an added or removed node. */
  fields: string[];
}

export interface PlacementDelta {
  components: ComponentDelta[];
  nodes: NodeRowDelta[];
  /** Other lines of placement.md that changed, prefixed `-` or `+`. */
  lines: string[];
}

/** One-per-node counts follow from the nodes gained or lost: not worth a line of their own. */
const perNode = (replicas: string) => /one per node/.test(replicas);

/** The names of `xs` not in `ys`, in the order of `xs` (sets: a component's nodes are thousands in a large stack). */
function without(xs: readonly string[], ys: readonly string[]): string[] {
  const drop = new Set(ys);
  return xs.filter((n) => !drop.has(n));
}

function componentDeltas(before: RenderedPlacement, after: RenderedPlacement): ComponentDelta[] {
  const rows = (d: RenderedPlacement) =>
    new Map(
      componentRows(d).map((c) => {
        const remaining = new Set(remainingNodes(c));
        const held = c.eligible.filter((n) => !remaining.has(n));
        // the nodes held off show as such: the count alone is what a replica change compares
        return [c.name, { replicas: replicasText({ ...c, heldOff: undefined }), nodes: c.eligible, held }];
      }),
    );
  const b = rows(before);
  const a = rows(after);
  const out: ComponentDelta[] = [];
  for (const name of new Set([...b.keys(), ...a.keys()])) {
    const x = b.get(name);
    const y = a.get(name);
    if (!x) out.push({ component: name, op: "added", gained: y!.nodes, lost: [] });
    else if (!y) out.push({ component: name, op: "removed", gained: [], lost: x.nodes });
    else {
      const gained = without(y.nodes, x.nodes);
      const lost = without(x.nodes, y.nodes);
      const heldOff = without(y.held, x.held);
      const stays = new Set(y.nodes);
      const back = without(x.held, y.held).filter((n) => stays.has(n));
      const replicasChanged = x.replicas !== y.replicas && !(perNode(x.replicas) && perNode(y.replicas));
      if (gained.length + lost.length + heldOff.length + back.length === 0 && !replicasChanged) continue;
      out.push({
        component: name,
        op: "changed",
        gained,
        lost,
        ...(heldOff.length ? { heldOff } : {}),
        ...(back.length ? { back } : {}),
        ...(replicasChanged ? { replicas: { before: x.replicas, after: y.replicas } } : {}),
      });
    }
  }
  return out;
}

function nodeDeltas(before: RenderedPlacement, after: RenderedPlacement): NodeRowDelta[] {
  const rows = (d: RenderedPlacement) => new Map<string, Record<string, string>>(d.nodes.map((n) => [n.name, nodeColumns(n)]));
  const b = rows(before);
  const a = rows(after);
  const describe = (row: Record<string, string>) => Object.entries(row).map(([k, v]) => `${k}: ${v}`);
  const out: NodeRowDelta[] = [];
  for (const name of new Set([...b.keys(), ...a.keys()])) {
    const x = b.get(name);
    const y = a.get(name);
    if (!x) out.push({ node: name, op: "added", fields: describe(y!) });
    else if (!y) out.push({ node: name, op: "removed", fields: describe(x) });
    else {
      const fields = Object.keys({ ...x, ...y })
        .filter((k) => x[k] !== y[k])
        .map((k) => `${k}: ${x[k] ?? "—"} → ${y[k] ?? "—"}`);
      if (fields.length) out.push({ node: name, op: "changed", fields });
    }
  }
  return out;
}

export function placementDelta(before: RenderedPlacement, after: RenderedPlacement): PlacementDelta {
  const b = placementProse(before);
  const a = placementProse(after);
  const lines = [...without(b, a).map((l) => `-${l}`), ...without(a, b).map((l) => `+${l}`)];
  return { components: componentDeltas(before, after), nodes: nodeDeltas(before, after), lines };
}

export function isEmptyDelta(d: PlacementDelta): boolean {
  return d.components.length + d.nodes.length + d.lines.length === 0;
}

/** `+cmp-04 −net-2, replicas 3 → 4` */
export function componentLine(c: ComponentDelta): string {
  const nodes = [...c.gained.map((n) => `+${n}`), ...c.lost.map((n) => `−${n}`)].join(" ");
  if (c.op === "added") return `new, runs on ${c.gained.join(", ") || "no node"}`;
  if (c.op === "removed") return `gone (ran on ${c.lost.join(", ") || "no node"})`;
  return [
    nodes,
    c.heldOff ? `held off ${c.heldOff.join(", ")} by its state` : "",
    c.back ? `back on ${c.back.join(", ")}` : "",
    c.replicas ? `replicas ${c.replicas.before} → ${c.replicas.after}` : "",
  ]
    .filter(Boolean)
    .join(", ");
}
