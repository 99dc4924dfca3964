// The preview's model of a change (review/preview.ts builds it, review/preview-markdown.ts shows it):
// per stack, what `pulumi up` does with each resource, the objects, values and units that change, the
// steps of its nodes, the placement delta, the plan-check warnings, the other files, the policy
// results, and the findings a reviewer acts on or weighs. And the Index of a render: the part of its
// index.yaml the preview compares (render/rendered.ts reads it).
import type { NodeState } from "../config/lifecycle";
import type { Check } from "../config/problems";
import type { Role } from "../config/roles";
import type { NodeSteps } from "../lifecycle/steps";
import type { Change } from "../render/diff";
import type { RenderedIndex, RenderedStack, RenderedWarning } from "../render/rendered";
import type { PlacementDelta } from "./placement-delta";
import type { UpgradePins, UpgradeView } from "./preview-upgrades";
import type { WarningChanges } from "./preview-warnings";

export type Tree = Map<string, string>;

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  /** The file under rendered/<stack>/ (the head's, or the base's for a removed object). */
  file: string;
  /** The unit the object belongs to (index.yaml), and whether that unit owns data (protect). */
  unit?: string;
  protected: boolean;
  /** Applied as a patch (Node role labels, objects an operator owns): never created, replaced or deleted as a whole. */
  patch: boolean;
}

/** An added object, with its body: a reviewer reads a new object whole. */
export interface AddedObject extends ObjectRef {
  body: unknown;
}

export interface ObjectChange {
  ref: ObjectRef;
  changes: Change[];
  action: "update" | "replace";
  /** Changed fields that make `pulumi up` replace the object. */
  replaces: string[];
  /** Changed fields the API server refuses to update (and the provider does not replace). */
  refused: string[];
  /** The replacement deletes the object first (nothing of its name exists in between). */
  deleteFirst?: true;
  /** What the replacement means beyond the object itself (a PriorityClass: the pods that use it). */
  finding?: Check;
}

export interface ValuesChange {
  /** The unit's name (values/<unit>.yaml). */
  unit: string;
  release?: string;
  namespace?: string;
  op: "add" | "remove" | "change";
  changes: Change[];
}

export interface UnitChange {
  name: string;
  op: "add" | "remove" | "change";
  changes: Change[];
}

/** What `pulumi up` does with one resource of the stack. */
export interface Action {
  action: "create" | "update" | "replace" | "delete";
  /** `StorageClass longhorn-vm`, `HelmRelease openkeel-swift`, `Node cmp-04 (patch)`. */
  resource: string;
  unit?: string;
  protected: boolean;
  /** Why: the fields forcing a replacement, the values that change. */
  detail?: string;
}

export interface FileChange {
  file: string;
  op: "add" | "remove" | "change";
  /** Field-level, for YAML files. */
  changes?: Change[];
  /** Line-level, for other text files (lines prefixed "-" or "+"). */
  lines?: string[];
  /** What the change is shown as elsewhere in the preview, instead of its body here. */
  seeAlso?: string;
}

export interface PolicyViolation {
  policy: string;
  /** `mandatory` or `advisory` when the report says. */
  level?: string;
  resource?: string;
  message: string;
}

/**
 * `--policy <file>.json`: what `npm run policy -- --json` found, per stack (`passed`: no mandatory
 * violation); or `{"error": "…"}` when the policy run itself failed, so the report says so.
 */
export interface PolicyReport {
  stacks?: Record<string, { violations: PolicyViolation[]; passed?: boolean }>;
  error?: string;
}

export interface StackPolicy {
  violations: PolicyViolation[];
  passed: boolean;
  /** The policy run failed: no result. */
  error?: string;
}

export interface StackPreview {
  stack: string;
  status: "added" | "removed" | "changed" | "unchanged";
  /** `<environment>/<topology>` of the head (or the base, for a removed stack). */
  title: string;
  /** What the findings were judged against: the base, or what is deployed (review/reference.ts). */
  judged: string;
  settings: Change[];
  /** Components whose pins moved, as upgrades (review/preview-upgrades.ts); empty without both sides' pins. */
  upgrades: UpgradeView[];
  actions: Action[];
  /** What a reviewer must act on (error: `pulumi up` would refuse or fail) or weigh (warning), with its reason. */
  findings: Check[];
  objects: { added: AddedObject[]; removed: ObjectRef[]; changed: ObjectChange[] };
  values: ValuesChange[];
  units: UnitChange[];
  nodes: NodeSteps[];
  /** Undefined: the placement did not change (or one side has no placement data). */
  placement?: PlacementDelta;
  /** Why there is no placement delta although placement.md changed: a side has no placement data. */
  placementNote?: string;
  /** Plan-check warnings new, resolved, or changed (the same code and subject, another text: review/preview-warnings.ts). */
  warnings: WarningChanges;
  other: FileChange[];
  /** Undefined: no policy results were given for this stack. */
  policy?: StackPolicy;
}

export function apiGroup(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

export interface IndexUnit {
  phase: string;
  kind: string;
  type: string;
  release?: string | undefined;
  namespace?: string | undefined;
  protect: boolean;
  objects: string[];
  /** What the unit section of the preview compares: everything but the object list and values file. */
  fields: Record<string, unknown>;
}

export interface Index {
  title: string;
  settings: Record<string, unknown>;
  units: Map<string, IndexUnit>;
  /** object file → its unit */
  unitOf: Map<string, string>;
  nodes: { name: string; roles: Role[]; zone?: string | undefined; state?: NodeState | undefined; kubernetesControlPlane?: boolean | undefined }[];
  warnings: RenderedWarning[];
  environment: string;
  /** What the feasibility model read of the Plan (absent in a render before schema 2). */
  feasibility?: RenderedIndex["feasibility"];
  /** openkeel:allowRemoval of the stack. */
  allowRemoval: string[];
}

/**
 * index.yaml: the parts the preview reports (nodes show as Node objects, objects as objects; the
 * list of node-configuration files as those files; the model's version is no setting of the stack).
 */
export function indexOf(render: RenderedStack): Index {
  // the feasibility facts are what the removal guard reads, not a setting of the stack
  // nor how the program deploys its units (deployGraph: the render's model, issue 46)
  const { stack: _s, schemaVersion: _v, deployGraph: _g, nodes, phases, warnings, nodeConfig: _c, feasibility, ...settings } = render.index;
  const units = new Map<string, IndexUnit>();
  const unitOf = new Map<string, string>();
  for (const ph of phases) {
    for (const u of ph.units) {
      const { objects, values: _values, ...rest } = u;
      for (const f of objects ?? []) unitOf.set(f, u.name);
      units.set(u.name, {
        phase: ph.name,
        kind: u.kind,
        type: u.type,
        release: u.release,
        namespace: u.namespace,
        protect: u.protect === true,
        objects: objects ?? [],
        fields: { phase: ph.name, ...rest },
      });
    }
  }
  return {
    title: [render.index.environment, render.index.topology].filter(Boolean).join("/"),
    settings,
    units,
    unitOf,
    nodes,
    warnings,
    environment: render.index.environment,
    ...(feasibility ? { feasibility } : {}),
    allowRemoval: render.index.allowRemoval ?? [],
  };
}

/** What a transition is judged against (review/reference.ts), as its findings name it. */
export interface Judged {
  /** `deployed/prod-medium, the last deployed commit (1a2b3c4d5e6f)`, `the base`. */
  where: string;
  /** Where the retirement of a node not retiring in the reference was merged, if it was: `commit 1a2b3c4d5e6f (subject)`. */
  retiredAt?(node: string): string | undefined;
}

/** What a stack is judged against (review/reference.ts), and what only the reference can say. */
export interface StackReference {
  /** As the report says it: `deployed/prod-medium, the last deployed commit (…)`. */
  where: string;
  judged: Judged;
  /** What is deployed: its render (undefined: none) and pins. Absent: the stack was never deployed, and the base is the reference. */
  deployed?: { render?: RenderedStack; pins?: UpgradePins };
  /** The deploy order's findings (review/verdict.ts). */
  findings: Check[];
}
