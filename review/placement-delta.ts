// What a change does to placement.md, in a few lines instead of the whole table again: per
// component the nodes it gains and loses (`virt-handler: +cmp-04`) and a replica count that
// changes, per node the columns of the node table that change, and any other line that changes.
// Adding one node adds a column to every row of the table, so a line diff rewrites all of it.

export interface ComponentDelta {
  component: string;
  op: "added" | "removed" | "changed";
  gained: string[];
  lost: string[];
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
  /** Other lines that changed, prefixed `-` or `+`. */
  lines: string[];
}

interface Parsed {
  components: Map<string, { replicas: string; nodes: string[] }>;
  nodes: Map<string, Record<string, string>>;
  lines: string[];
}

const cells = (line: string) =>
  line
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());

function parsePlacement(text: string): Parsed {
  const out: Parsed = { components: new Map(), nodes: new Map(), lines: [] };
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith("|")) {
      // comments are not content: a change to them alone is no change
      if (lines[i].trim() !== "" && !/^<!--.*-->$/.test(lines[i].trim())) out.lines.push(lines[i]);
      continue;
    }
    const table: string[] = [];
    for (; i < lines.length && lines[i].startsWith("|"); i++) table.push(lines[i]);
    i--;
    const header = cells(table[0]);
    const rows = table.slice(2).map(cells);
    if (header[0] === "component") {
      const replicas = header.indexOf("replicas");
      const firstNode = header.indexOf("reaches") + 1;
      const nodeNames = header.slice(firstNode).map((h) => h.split("<br>")[0]);
      for (const r of rows) {
        out.components.set(r[0], {
          replicas: replicas >= 0 ? r[replicas] : "",
          nodes: nodeNames.filter((_, k) => r[firstNode + k] === "●"),
        });
      }
    } else if (header[1] === "node") {
      for (const r of rows) out.nodes.set(r[1], Object.fromEntries(header.map((h, k) => [h, r[k]]).filter(([h]) => h !== "node")));
    } else {
      out.lines.push(...table);
    }
  }
  return out;
}

/** One-per-node counts follow from the nodes gained or lost: not worth a line of their own. */
const perNode = (replicas: string) => /one per node/.test(replicas);

export function placementDelta(before: string, after: string): PlacementDelta {
  const b = parsePlacement(before);
  const a = parsePlacement(after);
  const components: ComponentDelta[] = [];
  for (const name of [...new Set([...b.components.keys(), ...a.components.keys()])]) {
    const x = b.components.get(name);
    const y = a.components.get(name);
    if (!x) components.push({ component: name, op: "added", gained: y!.nodes, lost: [] });
    else if (!y) components.push({ component: name, op: "removed", gained: [], lost: x.nodes });
    else {
      const gained = y.nodes.filter((n) => !x.nodes.includes(n));
      const lost = x.nodes.filter((n) => !y.nodes.includes(n));
      const replicasChanged = x.replicas !== y.replicas && !(perNode(x.replicas) && perNode(y.replicas));
      if (gained.length + lost.length === 0 && !replicasChanged) continue;
      components.push({ component: name, op: "changed", gained, lost, ...(replicasChanged ? { replicas: { before: x.replicas, after: y.replicas } } : {}) });
    }
  }
  const nodes: NodeRowDelta[] = [];
  const describe = (row: Record<string, string>) => Object.entries(row).map(([k, v]) => `${k}: ${v}`);
  for (const name of [...new Set([...b.nodes.keys(), ...a.nodes.keys()])]) {
    const x = b.nodes.get(name);
    const y = a.nodes.get(name);
    if (!x) nodes.push({ node: name, op: "added", fields: describe(y!) });
    else if (!y) nodes.push({ node: name, op: "removed", fields: describe(x) });
    else {
      const fields = Object.keys({ ...x, ...y })
        .filter((k) => x[k] !== y[k])
        .map((k) => `${k}: ${x[k] ?? "—"} → ${y[k] ?? "—"}`);
      if (fields.length) nodes.push({ node: name, op: "changed", fields });
    }
  }
  const lines = [...b.lines.filter((l) => !a.lines.includes(l)).map((l) => `-${l}`), ...a.lines.filter((l) => !b.lines.includes(l)).map((l) => `+${l}`)];
  return { components, nodes, lines };
}

export function isEmptyDelta(d: PlacementDelta): boolean {
  return d.components.length + d.nodes.length + d.lines.length === 0;
}

/** `+cmp-04 −net-2, replicas 3 → 4` */
export function componentLine(c: ComponentDelta): string {
  const nodes = [...c.gained.map((n) => `+${n}`), ...c.lost.map((n) => `−${n}`)].join(" ");
  if (c.op === "added") return `new, runs on ${c.gained.join(", ") || "no node"}`;
  if (c.op === "removed") return `gone (ran on ${c.lost.join(", ") || "no node"})`;
  return [nodes, c.replicas ? `replicas ${c.replicas.before} → ${c.replicas.after}` : ""].filter(Boolean).join(", ");
}
