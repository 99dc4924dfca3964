// What a change does to every stack, for a reviewer: two renders (base and head, read through the
// rendered model, render/rendered.ts: each file parsed once per side) compared stack by stack, into
// the model of ./preview-model.ts. This module orchestrates; each part has its own: the diff of
// objects, values, units, placement and other files (./preview-diff.ts); the action `pulumi up`
// takes on each resource and what it would refuse (./preview-actions.ts); per node the steps outside
// Kubernetes, in order (lifecycle/steps.ts, with what the components contribute); the upgrades
// (./preview-upgrades.ts); plan-check warnings new, resolved or changed (./preview-warnings.ts); and
// the findings, each check beside its concern, listed in findingsOf: the releases'
// (./release-findings.ts, with each service's own, `changeFindings` of its descriptor), the nodes'
// (./node-findings.ts), what an operator refuses (./operator-findings.ts), the cluster binding
// (./binding-findings.ts), the failure domains (./failure-delta.ts). Policy results when given.
// Pure: trees in, a model out, in a stable order with no timestamps, so the PR comment only changes
// when the render does (Markdown: ./preview-markdown.ts).
import { byCodePoint } from "../config/plain";
import type { Check } from "../config/problems";
import { resolveEnvironment } from "../environments";
import { nodeSteps } from "../lifecycle/steps";
import { diff } from "../render/diff";
import { RenderedStack, renderedStacks } from "../render/rendered";
import { bindingFindings } from "./binding-findings";
import { failureDomainFindings } from "./failure-delta";
import { nodeFindings } from "./node-findings";
import { heldCheckFindings, postRenderFindings } from "./operator-findings";
import { actionsOf, removalFindings, type Acting } from "./preview-actions";
import { changesOf, otherFiles, placementOf, type Changes } from "./preview-diff";
import type { Judged, PolicyReport, StackPolicy, StackPreview, StackReference, Tree } from "./preview-model";
import { stackUpgradeViews, type UpgradePins } from "./preview-upgrades";
import { warningChanges } from "./preview-warnings";
import { quorumFindings, serviceChangeFindings, serviceFindings } from "./release-findings";

/**
 * What the components of every environment contribute to a node's life: each decides from the
 * renders whether its steps apply (an eviction only where one was requested), so all are asked;
 * and what their operators refuse of objects of their kinds (./operator-findings.ts).
 */
const { lifecycles: LIFECYCLES, kinds: KINDS } = resolveEnvironment();

/** Compare one stack's two renders (either may be absent), judged against the base. */
export function previewStack(stack: string, base: Tree | undefined, head: Tree | undefined, policy?: PolicyReport, pins?: UpgradePins): StackPreview {
  // the two sides share their parses: a file unchanged by the change is parsed once
  const parsed = new Map<string, unknown[]>();
  const read = (tree: Tree | undefined, where: string) => tree && new RenderedStack(tree, `${where}/${stack}`, parsed);
  return compare(stack, read(base, "the base"), read(head, "this change"), policy, pins, { where: "the base" });
}

/** What both the preview and the verdict judge of two renders: their changes (./preview-diff.ts), and what `pulumi up` does with them (./preview-actions.ts). */
type Judging = Changes & { acting: Acting };

function judgingOf(base: RenderedStack | undefined, head: RenderedStack | undefined): Judging {
  const c = changesOf(base, head);
  return { ...c, acting: actionsOf(c.objects, c.units, c.values, c.bi, c.hi) };
}

/**
 * What the change finds against `c.b`, the render it is judged against: what `pulumi up` would
 * refuse or fail on (errors), and what a reviewer weighs (warnings). `both`: the stack is on both
 * sides (a stack added or removed has no transition of its nodes, binding or upgrades).
 */
function findingsOf(c: Judging, both: boolean, pins: UpgradePins | undefined, judged: Judged): Check[] {
  const { b, h, bi, hi } = c;
  return [
    ...(both && pins ? stackUpgradeViews(pins, h).findings : []),
    ...c.acting.findings,
    ...removalFindings(c.acting.losses, hi, judged.where),
    ...serviceFindings(c.units, bi, hi),
    ...heldCheckFindings(c.objects, KINDS),
    ...quorumFindings(c.values),
    ...(both
      ? [...postRenderFindings(b, h, bi, KINDS), ...nodeFindings(bi, hi, judged), ...serviceChangeFindings(bi, hi, judged.where), ...bindingFindings(b, h)]
      : []),
    // a loss of nodes this change makes worse (lifecycle/failure-domains.ts, ./failure-delta.ts)
    ...(both ? failureDomainFindings(b.placement?.failureDomains, h.placement?.failureDomains) : []),
  ];
}

/**
 * The verdict's transition checks of one stack (review/verdict.ts): the preview's findings of going
 * from `reference` (what the stack is judged against) to `head`; none without a reference.
 */
export function transitionFindings(reference: RenderedStack | undefined, head: RenderedStack, judged: Judged): Check[] {
  return reference ? findingsOf(judgingOf(reference, head), true, undefined, judged) : [];
}

function compare(
  stack: string,
  base: RenderedStack | undefined,
  head: RenderedStack | undefined,
  policy: PolicyReport | undefined,
  pins: UpgradePins | undefined,
  judged: Judged,
): StackPreview {
  const both = base !== undefined && head !== undefined;
  const c = judgingOf(base, head);
  const { b, h, bi, hi, objects, values, units } = c;
  const warnings = warningChanges(bi, hi);
  const { delta: placement, note: placementNote } = both ? placementOf(b, h) : {};
  const nodes = both ? nodeSteps(b, h, LIFECYCLES) : [];
  const other = otherFiles(b, h, placement, nodes);
  const actions = c.acting.actions;
  const upgrades = both && pins ? stackUpgradeViews(pins, h).views : [];
  const settings = both ? diff(bi.settings, hi.settings) : [];
  const changed =
    settings.length +
      upgrades.length +
      actions.length +
      values.length +
      units.length +
      warnings.added.length +
      warnings.resolved.length +
      warnings.changed.length +
      other.length +
      (placement ? 1 : 0) >
    0;
  return {
    stack,
    status: !base ? "added" : !head ? "removed" : changed ? "changed" : "unchanged",
    title: (head ? hi.title : bi.title) || stack,
    judged: judged.where,
    settings,
    upgrades,
    actions,
    findings: findingsOf(c, both, pins, judged),
    objects,
    values,
    units,
    nodes,
    ...(placement ? { placement } : {}),
    ...(placementNote ? { placementNote } : {}),
    warnings,
    other,
    ...policyOf(stack, policy),
  };
}

function policyOf(stack: string, policy: PolicyReport | undefined): { policy?: StackPolicy } {
  if (!policy) return {};
  if (policy.error !== undefined) return { policy: { violations: [], passed: false, error: policy.error } };
  const s = policy.stacks?.[stack];
  if (!s) return {};
  const violations = [...s.violations].sort(
    (p, q) => byCodePoint(p.policy, q.policy) || byCodePoint(p.resource ?? "", q.resource ?? "") || byCodePoint(p.message, q.message),
  );
  return { policy: { violations, passed: s.passed ?? !violations.some((v) => v.level === "mandatory") } };
}

/**
 * Every stack present in either render (optionally only some), sorted by name. The changes shown
 * are the base's to the head's; the findings are judged against each stack's reference
 * (`references`: what is deployed, else the base).
 */
export function previewAll(
  base: Tree,
  head: Tree,
  opts: {
    stacks?: string[] | undefined;
    policy?: PolicyReport | undefined;
    pins?: UpgradePins | undefined;
    references?: ReadonlyMap<string, StackReference> | undefined;
  } = {},
): StackPreview[] {
  // the two sides share their parses: a file unchanged by the change is parsed once
  const parsed = new Map<string, unknown[]>();
  const bs = renderedStacks(base, "the base", parsed);
  const hs = renderedStacks(head, "this change", parsed);
  const names = [...new Set([...bs.keys(), ...hs.keys()])].filter((s) => !opts.stacks?.length || opts.stacks.includes(s)).sort(byCodePoint);
  return names.map((s) => {
    const ref = opts.references?.get(s);
    const shown = compare(s, bs.get(s), hs.get(s), opts.policy, opts.pins, ref && !ref.deployed ? ref.judged : { where: "the base" });
    const h = hs.get(s);
    if (!ref || !h) return shown;
    const against = ref.deployed
      ? findingsOf(judgingOf(ref.deployed.render, h), ref.deployed.render !== undefined, ref.deployed.pins, ref.judged)
      : shown.findings;
    return { ...shown, judged: ref.where, findings: [...ref.findings, ...against] };
  });
}

/** Errors anywhere: `pulumi up` would refuse or fail on this change. */
export function hasErrors(stacks: StackPreview[]): boolean {
  return stacks.some((s) => s.findings.some((f) => f.level === "error"));
}
