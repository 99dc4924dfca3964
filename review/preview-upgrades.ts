// The preview's upgrade section: a pin bump shown as the upgrade it is. Per component whose pins
// moved between the two checkouts (platform/upgrades.ts, with the change's rules): from → to, the
// release notes of the versions it passes, what rolls in this stack (DaemonSets node by node on
// the nodes the placement data names, StatefulSets member by member), whether CRDs change, the
// units in phase order, and what the rule says comes first or is done by hand. A step the rule
// does not support is an error of the stack (its fix says which version comes first).
import type { Check } from "../config/problems";
import {
  componentUpgrades,
  ruleApplies,
  ruleScope,
  stackUse,
  type ComponentUpgrade,
  type CrdSource,
  type PinExports,
  type PinMove,
  type UpgradeRule,
} from "../platform/upgrades";
import type { RenderedStack } from "../render/rendered";

/** The pins of both checkouts and the change's rules (what the preview judges a bump by). */
export interface UpgradePins {
  base: PinExports;
  head: PinExports;
  rules: readonly UpgradeRule[];
}

export interface UpgradeView {
  component: string;
  direction: ComponentUpgrade["direction"];
  moves: PinMove[];
  notes: { label: string; url: string }[];
  /** What restarts, one line per workload (or the nodes, for the node OS). */
  rolls: string[];
  crds: string;
  /** The stack's units that carry the pins, by phase in install order. */
  phases: { phase: string; units: string[] }[];
  first: string[];
  manual: string[];
  source: string;
}

const CRDS: Record<CrdSource, string> = {
  chart: "templated by the chart: `helm upgrade` applies the new CRDs with the release",
  manifest: "in the release manifest: applied with it",
  "own-unit": "a unit of their own, applied before the operator (the phase order below)",
  manual: "in the chart's crds/, which Helm never upgrades: apply them by hand first (see First)",
  none: "none",
};

/** How one workload of the placement data restarts, or undefined for what does not roll (a Job's pods, a node selection). */
function rollLine(c: { name: string; kind: string; replicas?: number | undefined; eligible: string[] }): string | undefined {
  const on = c.eligible.join(", ");
  if (c.kind === "DaemonSet") return `DaemonSet \`${c.name}\`: node by node on ${c.eligible.length} node(s): ${on}`;
  if (c.kind === "StatefulSet") return `StatefulSet \`${c.name}\`: member by member, ${c.replicas ?? "each of its"} member(s) on ${on}`;
  if (c.kind === "Deployment") return `Deployment \`${c.name}\`: a rolling update of ${c.replicas ?? "its"} replica(s)`;
  return undefined;
}

/** The workloads of the units (and the rule's extra units or `<unit>/<component>` names), then the nodes when the node OS moves. */
function rollsOf(rule: UpgradeRule, units: string[], nodeConfig: boolean, head: RenderedStack): string[] {
  const extra = rule.rolls ?? [];
  const owned = (c: { name: string; unit: string }) => units.includes(c.unit) || extra.includes(c.unit) || extra.includes(c.name);
  const out = (head.placement?.components ?? []).filter(owned).flatMap((c) => rollLine(c) ?? []);
  if (nodeConfig) {
    const nodes = head.index.nodes.map((n) => n.name).join(", ");
    const kind = [...head.files.keys()].some((f) => f.startsWith("kind/")) ? "the kind cluster is created again" : "every node in turn, one at a time";
    out.push(`the nodes: ${kind} (${nodes})`);
  }
  return out;
}

function viewOf(u: ComponentUpgrade, pins: UpgradePins, head: RenderedStack): UpgradeView {
  const scope = ruleScope(u.rule, pins.head, stackUse(head.index, head.files));
  const phases: UpgradeView["phases"] = [];
  for (const unit of scope.units) {
    const last = phases[phases.length - 1];
    if (last?.phase === unit.phase) last.units.push(unit.name);
    else phases.push({ phase: unit.phase, units: [unit.name] });
  }
  return {
    component: u.rule.component,
    direction: u.direction,
    moves: u.moves,
    notes: u.notes,
    rolls: rollsOf(
      u.rule,
      scope.units.map((x) => x.name),
      scope.nodeConfig,
      head,
    ),
    crds: CRDS[u.rule.crds],
    phases,
    first: [...(u.rule.first ?? [])],
    manual: [...(u.rule.manual ?? [])],
    source: u.rule.source,
  };
}

/** The upgrades of one stack (the components its head render installs) and the steps refused. */
export function stackUpgradeViews(pins: UpgradePins, head: RenderedStack): { views: UpgradeView[]; findings: Check[] } {
  const use = stackUse(head.index, head.files);
  const ups = componentUpgrades(pins.base, pins.head, pins.rules).filter((u) => ruleApplies(u.rule, pins.head, use));
  return {
    views: ups.filter((u) => u.moves.length > 0).map((u) => viewOf(u, pins, head)),
    findings: ups.flatMap((u) => u.problems.map((p) => ({ level: p.level, code: p.code, message: `${p.path} (${p.file}): ${p.message}`, fix: p.fix }))),
  };
}

/** The pins no stack installs (build tools, schema locations) that moved: the report lists them once. */
export function repositoryUpgrades(pins: UpgradePins): ComponentUpgrade[] {
  return componentUpgrades(pins.base, pins.head, pins.rules).filter((u) => u.rule.deployed === false && u.moves.length > 0);
}
