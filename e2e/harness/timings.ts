// What a `pulumi up` waited on (issue 37 item 7): from the engine's event log (`pulumi up
// --event-log <file>`: one JSON engine event per line, pulumi/pulumi sdk/go/common/apitype
// events.go, timestamps in whole seconds), the time of each resource's step in the update (its
// ResourcePreEvent to its ResOutputsEvent or ResOpFailedEvent; the preview's events, `planning`,
// left out), of each unit of the Plan (its resources, first start to last end), each phase and each
// Helm release; and the longest chain of dependencies between units (each unit after its
// `dependsOn`, and under the bench's phase barriers also after every unit of the phase before it, as
// components/deploy.ts orders them: plan/needs.ts waitsOn): the sum of its units' times, and its
// share of the update's time, what no parallelism can take off the up.
import type { RenderedIndex } from "../../render/rendered";
import { longestChain as heaviestChain, type DeployGraph } from "../../plan/needs";

interface EventMetadata {
  op: string;
  urn: string;
  type: string;
  new?: { parent?: string };
  old?: { parent?: string };
}

interface EngineEvent {
  timestamp: number;
  resourcePreEvent?: { metadata: EventMetadata; planning?: boolean };
  resOutputsEvent?: { metadata: EventMetadata; planning?: boolean };
  resOpFailedEvent?: { metadata: EventMetadata };
}

export interface ResourceStep {
  urn: string;
  type: string;
  op: string;
  parent?: string | undefined;
  start: number;
  end?: number | undefined;
  failed?: boolean | undefined;
}

/** The update's resource steps of an event log (the preview's left out). */
export function resourceSteps(eventLog: string): ResourceStep[] {
  const steps = new Map<string, ResourceStep>();
  for (const line of eventLog.split("\n")) {
    if (!line.trim()) continue;
    const e = JSON.parse(line) as EngineEvent;
    const pre = e.resourcePreEvent;
    if (pre && !pre.planning) {
      const m = pre.metadata;
      steps.set(m.urn, { urn: m.urn, type: m.type, op: m.op, parent: m.new?.parent ?? m.old?.parent, start: e.timestamp });
    }
    const out = e.resOutputsEvent && !e.resOutputsEvent.planning ? e.resOutputsEvent.metadata : e.resOpFailedEvent?.metadata;
    const s = out && steps.get(out.urn);
    if (s) {
      s.end = e.timestamp;
      if (e.resOpFailedEvent) s.failed = true;
    }
  }
  return [...steps.values()];
}

export interface Span {
  name: string;
  start: number;
  end: number;
  seconds: number;
}

export interface DeployTimings {
  /** the update's first step to its last */
  seconds: number;
  phases: Span[];
  units: (Span & { phase: string; changed: number })[];
  releases: (Span & { op: string })[];
  /**
   * The longest chain of dependencies between units: its units' own times added up (`seconds`),
   * its span from its first unit's start to its last unit's end, and that span's share of the
   * update (whole-second timestamps: each unit's time may be off by a second, the span by one).
   */
  chain: { units: string[]; seconds: number; span: number; share: number };
}

const nameOf = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);

/**
 * How a render's program deployed its units: the bench's switch (`switched`) on a program that reads
 * it, else what its index says; a program before issue 46 says nothing, and its units waited for the
 * whole phase before theirs.
 */
export function deployedGraph(index: Pick<RenderedIndex, "deployGraph">, switched: DeployGraph | undefined): DeployGraph {
  return index.deployGraph === undefined ? "phase-barriers" : (switched ?? index.deployGraph);
}

/** The timings of an update against the Plan's units (the rendered index), deployed under `graph`. */
export function deployTimings(steps: ResourceStep[], index: Pick<RenderedIndex, "phases">, graph: DeployGraph = "dependencies"): DeployTimings {
  const unitNames = new Set(index.phases.flatMap((p) => p.units.map((u) => u.name)));
  const byUrn = new Map(steps.map((s) => [s.urn, s]));
  // the unit a step belongs to: the nearest ancestor that is a unit's component (type openkeel:…)
  const unitOf = (s: ResourceStep): string | undefined => {
    for (let at: ResourceStep | undefined = s, hops = 0; at && hops < 20; at = at.parent ? byUrn.get(at.parent) : undefined, hops++) {
      if (at.type.startsWith("openkeel:") && unitNames.has(nameOf(at.urn))) return nameOf(at.urn);
    }
    return undefined;
  };
  const spans = new Map<string, { start: number; end: number; changed: number }>();
  for (const s of steps) {
    const u = unitOf(s);
    if (!u || s.type.startsWith("openkeel:")) continue;
    const end = s.end ?? s.start;
    const cur = spans.get(u) ?? { start: s.start, end, changed: 0 };
    spans.set(u, { start: Math.min(cur.start, s.start), end: Math.max(cur.end, end), changed: cur.changed + (s.op === "same" ? 0 : 1) });
  }
  const span = (name: string, start: number, end: number): Span => ({ name, start, end, seconds: end - start });
  const units = index.phases.flatMap((p) =>
    p.units
      .filter((u) => spans.has(u.name))
      .map((u) => ({ ...span(u.name, spans.get(u.name)!.start, spans.get(u.name)!.end), phase: p.name, changed: spans.get(u.name)!.changed })),
  );
  const phases = index.phases
    .map((p) => units.filter((u) => u.phase === p.name))
    .filter((us) => us.length > 0)
    .map((us) => span(us[0].phase, Math.min(...us.map((u) => u.start)), Math.max(...us.map((u) => u.end))));
  const releases = steps
    .filter((s) => s.type === "kubernetes:helm.sh/v3:Release")
    .map((s) => ({ ...span(nameOf(s.urn), s.start, s.end ?? s.start), op: s.failed ? `${s.op} (failed)` : s.op }));
  const all = steps.filter((s) => !s.type.startsWith("pulumi:"));
  const seconds = all.length ? Math.max(...all.map((s) => s.end ?? s.start)) - Math.min(...all.map((s) => s.start)) : 0;
  const chain = longestChain(index, new Map(units.map((u) => [u.name, u.seconds])), seconds, graph);
  const first = units.find((u) => u.name === chain.units[0]);
  const last = units.find((u) => u.name === chain.units.at(-1));
  const chainSpan = first && last ? last.end - first.start : 0;
  return { seconds, phases, units, releases, chain: { ...chain, span: chainSpan, share: seconds > 0 ? chainSpan / seconds : 0 } };
}

/** The chain of dependent units whose times add up to the most (components/deploy.ts's order under `graph`); its share: of their sum. */
export function longestChain(
  index: Pick<RenderedIndex, "phases">,
  seconds: ReadonlyMap<string, number>,
  total: number,
  graph: DeployGraph = "dependencies",
): Omit<DeployTimings["chain"], "span"> {
  const top = heaviestChain(index, graph, (u) => seconds.get(u) ?? 0);
  return { units: top.units, seconds: top.weight, share: total > 0 ? top.weight / total : 0 };
}

/** The report's lines of one update's timings. */
export function timingLines(label: string, t: DeployTimings): string[] {
  const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
  return [
    `${label}: the update took ${t.seconds} s (engine timestamps, whole seconds); the longest chain of dependencies spans ${t.chain.span} s of it (${pct(t.chain.share)}), its units' own times ${t.chain.seconds} s: ${t.chain.units.join(" → ")}`,
    `${label}, phases: ${t.phases.map((p) => `${p.name} ${p.seconds} s`).join(", ")}`,
    `${label}, Helm releases: ${t.releases.map((r) => `${r.name} ${r.seconds} s (${r.op})`).join(", ") || "none"}`,
    `${label}, units (longest first): ${[...t.units]
      .sort((a, b) => b.seconds - a.seconds)
      .map((u) => `${u.name} ${u.seconds} s`)
      .join(", ")}`,
  ];
}
