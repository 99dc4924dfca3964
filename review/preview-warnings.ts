// The plan-check warnings of a stack between its base and its head, matched by what they mean — their
// code and the key path they are about — not by their text: a warning whose text changed (the
// nodes ovs-two-stacks lists, with one node more) is one warning, changed (old → new), not a new
// one and a resolved one. A node's index in the path is read as its name, so that a node added
// before it does not make it another warning.
import type { RenderedWarning } from "../render/rendered";
import { byCodePoint } from "../config/plain";

export interface WarningChange {
  before: RenderedWarning;
  after: RenderedWarning;
}

export interface WarningChanges {
  added: RenderedWarning[];
  resolved: RenderedWarning[];
  /** Same code and subject, another text (message, reason or fix). */
  changed: WarningChange[];
}

/** One side: its warnings and its nodes in the stack file's order (what `openkeel:nodes[i]` points at). */
interface Side {
  warnings: readonly RenderedWarning[];
  nodes: readonly { name: string }[];
}

const cmp = byCodePoint;

/** `code` and the path, `openkeel:nodes[3]` read as `openkeel:nodes[name=cmp-01]`. */
function subject(w: RenderedWarning, nodes: Side["nodes"]): string {
  const path = (w.path ?? "").replace(/^openkeel:nodes\[(\d+)\]/, (whole, i: string) => {
    const node = nodes[Number(i)];
    return node ? `openkeel:nodes[name=${node.name}]` : whole;
  });
  return `${w.code}\u0000${path}`;
}

const sameText = (a: RenderedWarning, b: RenderedWarning) => a.message === b.message && a.reason === b.reason && a.remediation === b.remediation;

interface Entry {
  w: RenderedWarning;
  key: string;
}

export function warningChanges(base: Side, head: Side): WarningChanges {
  const b: Entry[] = base.warnings.map((w) => ({ w, key: subject(w, base.nodes) }));
  const h: Entry[] = head.warnings.map((w) => ({ w, key: subject(w, head.nodes) }));
  const pairs: [RenderedWarning, RenderedWarning][] = [];
  /** Pair each head warning left with the first base warning left that `match`es it. */
  const pair = (match: (x: Entry, y: Entry) => boolean) => {
    for (const y of [...h]) {
      const i = b.findIndex((x) => match(x, y));
      if (i < 0) continue;
      pairs.push([b[i].w, y.w]);
      b.splice(i, 1);
      h.splice(h.indexOf(y), 1);
    }
  };
  pair((x, y) => x.key === y.key && sameText(x.w, y.w));
  pair((x, y) => x.key === y.key);
  // a render made before warnings carried their path: the one warning of a code on each side is that warning
  const alone = (list: Entry[], code: string) => list.filter((e) => e.w.code === code).length === 1;
  pair((x, y) => (x.w.path === undefined || y.w.path === undefined) && x.w.code === y.w.code && alone(b, x.w.code) && alone(h, y.w.code));
  const order = (p: RenderedWarning, q: RenderedWarning) => cmp(p.code, q.code) || cmp(p.path ?? "", q.path ?? "") || cmp(p.message, q.message);
  return {
    added: h.map((e) => e.w).sort(order),
    resolved: b.map((e) => e.w).sort(order),
    changed: pairs
      .filter(([x, y]) => !sameText(x, y))
      .map(([before, after]) => ({ before, after }))
      .sort((p, q) => order(p.after, q.after)),
  };
}
