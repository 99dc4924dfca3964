// The priority classes of design § 2, created by this repository in the first platform phase
// (crds-operators), before the first component that uses them: the platform operators take
// openkeel-control, Galera and RabbitMQ openkeel-infra-critical, VMs openkeel-vm. The design
// has openkeel-chart render them (§ 5.1 `priorityClasses.create`), but § 5.2 "What is implemented"
// lists no such template, and the operators installed before openkeel-infra need them already
// (docs/design-decisions.md).
import { valueAt, type Check } from "../config/problems";
import { manifestsUnit, type K8sObject, type ManifestsUnit, type Plan, type Unit } from "../plan/plan";
import { BUILT_IN_PRIORITY_CLASSES, splitFact, unitFacts } from "../plan/needs";

/** § 2's classes by their role in `global.placementDefaults.priorityClasses`. */
export const PRIORITY_CLASSES = {
  infra: "openkeel-infra-critical",
  control: "openkeel-control",
  vm: "openkeel-vm",
} as const;

export const PRIORITY_CLASSES_UNIT = "priority-classes";

/**
 * A stack deployed by a program before this unit (the last release, .ci/last-release) has these
 * classes already, created by its openkeel-chart release (`priorityClasses.create`). The unit adopts
 * them in the upgrade's first `pulumi up`, before that release's upgrade drops them:
 * - `helm.sh/resource-policy: keep`: Helm's upgrade deletes what the new manifest no longer holds
 *   unless the *live* object carries it (helm v3.18.6 pkg/kube/client.go Update, the loop over
 *   original.Difference(target)), so without it the release's upgrade deletes the classes this
 *   unit has just taken over;
 * - `pulumi.com/patchForce`: Helm's field manager holds their description, and server-side apply
 *   refuses a second writer of a different value ("Server-Side Apply field conflict detected", the
 *   upgrade run of the e2e); the provider creates by upsert (components/cluster.ts).
 */
const ADOPTED_FROM_HELM = { "helm.sh/resource-policy": "keep", "pulumi.com/patchForce": "true" };

function priorityClass(name: string, value: number, description: string, preemptNever = false): K8sObject {
  return {
    apiVersion: "scheduling.k8s.io/v1",
    kind: "PriorityClass",
    metadata: { name, annotations: { ...ADOPTED_FROM_HELM } },
    // globalDefault false is the API's default, and what the API server returns without the field
    value,
    ...(preemptNever ? { preemptionPolicy: "Never" } : {}),
    description,
  };
}

type Tier = keyof typeof PRIORITY_CLASSES;

/** § 2's table: each tier's value, whether its pods may preempt, and what runs at it. */
const DESIGN_TIERS: Readonly<Record<Tier, { value: number; preempts: boolean; runs: string }>> = {
  infra: { value: 1_000_000, preempts: true, runs: "Galera, RabbitMQ, OVN central" },
  control: { value: 900_000, preempts: true, runs: "the APIs, conductors, schedulers, workers and the operators' controllers" },
  // never preempt anything; only preempted by infra that lost its node (§ 2)
  vm: { value: 500_000, preempts: false, runs: "VMs (virt-launcher pods)" },
};
/** The tiers from the highest: each one's pods may preempt those of the tiers after it. */
const TIER_ORDER: readonly Tier[] = ["infra", "control", "vm"];

/** § 2's values: far below system-*-critical (2e9), below Longhorn's and KubeVirt's own (1e9). */
export function priorityClassesUnit(): ManifestsUnit {
  const of = (tier: Tier, description: string) =>
    priorityClass(PRIORITY_CLASSES[tier], DESIGN_TIERS[tier].value, `${description} (design § 2)`, !DESIGN_TIERS[tier].preempts);
  return manifestsUnit(PRIORITY_CLASSES_UNIT, "openkeel:platform:PriorityClasses", [
    of("infra", "Galera, RabbitMQ, OVN central"),
    of("control", "OpenKeel APIs, conductors, schedulers, workers; the operators' controllers"),
    of("vm", "virt-launcher pods"),
  ]);
}

/** A class no unit of ours creates, with its value as its creator writes it. */
interface FixedClass {
  name: string;
  value: number;
}

/**
 * Classes the API server creates itself (k8s.io/kubernetes v1.36.3 pkg/apis/scheduling/v1/helpers.go
 * systemPriorityClasses, lines 29-43: SystemCriticalPriority + 1000 and SystemCriticalPriority, twice
 * the highest value a user's class may have, pkg/apis/scheduling/types.go lines 29-32).
 */
const BUILT_IN_VALUES: Readonly<Record<string, number>> = { "system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000 };
const BUILT_IN: readonly FixedClass[] = BUILT_IN_PRIORITY_CLASSES.map((name) => ({ name, value: BUILT_IN_VALUES[name]! }));

/**
 * A class an upstream artifact creates with itself, with its value as it ships it and where upstream
 * says so: its component declares it (`priorityClasses` of its descriptor), for the priority order
 * (which unit creates it, and so who may use it, is that unit's stated content: plan/needs.ts).
 */
export interface UpstreamPriorityClass extends FixedClass {
  source: string;
}

const PRIORITY_KEY = /^priorityClass(Name|es)?$/;

type Path = (string | number)[];

/** A class name a unit writes: in its values, in an object of it, or in a post-render patch. */
export interface ClassUse {
  unit: string;
  phase: string;
  name: string;
  /** `values`, `<Kind> <name>` of an object, or `postRender <Kind> <name>`. */
  where: string;
  path: Path;
  /** The unit that creates it, when one after this unit does (it exists only once that unit is applied). */
  upstream?: string;
}

/** Every class name a value tree names: a string under `priorityClassName`, `priorityClass` or in `priorityClasses`. */
function namedClasses(tree: unknown, path: Path = [], under = false, out: { name: string; path: Path }[] = []): { name: string; path: Path }[] {
  if (typeof tree === "string") {
    if (under && tree !== "") out.push({ name: tree, path });
  } else if (Array.isArray(tree)) tree.forEach((v, i) => namedClasses(v, [...path, i], under, out));
  else if (typeof tree === "object" && tree !== null) {
    for (const [k, v] of Object.entries(tree)) namedClasses(v, [...path, k], under || PRIORITY_KEY.test(k), out);
  }
  return out;
}

function unitClasses(u: Unit): { name: string; where: string; path: Path }[] {
  switch (u.kind) {
    case "Manifests":
      return u.objects.flatMap((o) => namedClasses(o).map((c) => ({ ...c, where: `${o.kind} ${o.metadata.name}` })));
    case "HelmRelease":
      return [
        ...namedClasses(u.values).map((c) => ({ ...c, where: "values" })),
        ...(u.postRender ?? []).flatMap((p) => namedClasses(p.patch).map((c) => ({ ...c, where: `postRender ${p.target.kind} ${p.target.name}` }))),
      ];
    case "RemoteManifest":
      return [];
  }
}

/** The classes a unit creates: its PriorityClass objects, or its chart's or manifest's (its content: plan/needs.ts). */
const created = (u: Unit) =>
  [...unitFacts(u).offers].flatMap((f) => {
    const [what, name] = splitFact(f);
    return what === "priorityclass" ? [name] : [];
  });

/**
 * The priority class names of the Plan that do not exist when their pods are created: not built
 * in, not created by the unit itself or by a unit it waits for (its dependsOn, transitively:
 * plan/needs.ts puts the class's unit there when it comes before). The API server's Priority
 * admission refuses such pods, so the workload never starts.
 */
export function missingPriorityClasses(plan: Plan): ClassUse[] {
  const units = plan.phases.flatMap((ph) => ph.units.map((u) => ({ u, phase: ph.name })));
  const byName = new Map(units.map(({ u }) => [u.name, u]));
  const creator = new Map(units.flatMap(({ u }) => created(u).map((c) => [c, u.name] as const)));
  const waitedFor = (u: Unit, seen = new Set<string>()): Set<string> => {
    for (const d of u.dependsOn ?? []) if (!seen.has(d) && byName.has(d)) waitedFor(byName.get(d)!, seen.add(d));
    return seen;
  };
  const missing: ClassUse[] = [];
  for (const { u, phase } of units) {
    const known = new Set([...BUILT_IN.map((c) => c.name), ...created(u), ...[...waitedFor(u)].flatMap((d) => created(byName.get(d)!))]);
    for (const c of unitClasses(u)) {
      if (known.has(c.name)) continue;
      const from = creator.get(c.name);
      missing.push({ unit: u.name, phase, ...c, ...(from ? { upstream: `unit ${from}, which it does not wait for` } : {}) });
    }
  }
  return missing;
}

/**
 * The fields of a PriorityClass the API server refuses to update (kubernetes/kubernetes
 * pkg/apis/scheduling/validation/validation.go, ValidatePriorityClassUpdate: "value is immutable",
 * ValidateImmutableField of preemptionPolicy). The Pulumi Kubernetes provider would update them in
 * place (its `forceNew` table, provider/pkg/provider/diff.go, lists no scheduling.k8s.io kind), and
 * `pulumi up` would fail; so the program replaces a class whose one of them changes, deleting it
 * first (its name stays: components/plan-unit.ts).
 */
export const PRIORITY_CLASS_IMMUTABLE = ["value", "preemptionPolicy"] as const;

export const isPriorityClass = (o: { apiVersion: string; kind: string }): boolean => o.apiVersion === "scheduling.k8s.io/v1" && o.kind === "PriorityClass";

/** One immutable field of a class that differs between what the cluster has and what the program applies. */
export interface ClassFieldChange {
  field: (typeof PRIORITY_CLASS_IMMUTABLE)[number];
  before: unknown;
  after: unknown;
}

/**
 * The immutable fields that differ between two versions of a class, as written: the engine compares
 * what the program applies, so a preemptionPolicy written out where it was left to the API's
 * default (PreemptLowerPriority) replaces the class too.
 */
export function immutableChanges(before: Record<string, unknown>, after: Record<string, unknown>): ClassFieldChange[] {
  return PRIORITY_CLASS_IMMUTABLE.filter((f) => before[f] !== after[f]).map((field) => ({ field, before: before[field], after: after[field] }));
}

const PRIORITY_CLASS_REPLACE_CODE = "priority-class-replace";

/**
 * What replacing a class means, worded once for the preview and for `npm run plan` / `npm run
 * render`: the Priority admission plugin resolves a pod's priority (and preemption policy) from its
 * class when the pod is created, and the API refuses to change a pod's priority afterwards
 * (kubernetes/kubernetes plugin/pkg/admission/priority/admission.go, admitPod: only on Create), so
 * running pods keep the old value until they are created again; and while the class is deleted,
 * the same plugin refuses every new pod that names it ("no PriorityClass with name … was found").
 * `users`: the units whose pods name the class, when known.
 */
export function classReplacement(name: string, changes: readonly ClassFieldChange[], users: readonly string[] = []): Check {
  const what = changes.map((c) => `${c.field} ${JSON.stringify(c.before) ?? "unset"} → ${JSON.stringify(c.after) ?? "unset"}`).join(", ");
  const fields = changes.map((c) => c.field).join(" and ");
  const list = `kubectl get pods -A -o jsonpath='{range .items[?(@.spec.priorityClassName=="${name}")]}{.metadata.namespace}/{.metadata.name}{"\\n"}{end}'`;
  return {
    level: "warning",
    code: PRIORITY_CLASS_REPLACE_CODE,
    message: `PriorityClass ${name}: ${what}, which the API server does not update in place, so pulumi up deletes the class and creates it again; running pods keep the priority they were admitted with until they are re-created, and a pod created in between is refused until its controller retries`,
    reason: "the Priority admission plugin resolves a pod's priority from its class when the pod is created, and a pod's priority never changes afterwards",
    fix: `after pulumi up, re-create the pods that run with ${name} (${list}${users.length ? `; the units that set it: ${users.join(", ")}` : ""}): kubectl rollout restart of their Deployments, StatefulSets and DaemonSets, a live migration of VMs; or keep ${fields} as it is`,
  };
}

/**
 * The units whose pods a class is set on (priorityClassName, priorityClass: values, objects,
 * post-render patches), sorted. Not the class map every OpenKeel release is given
 * (`global.placementDefaults.priorityClasses`): which of its pods take which class is the chart's.
 */
export function classUsers(plan: Plan, name: string): string[] {
  const units = plan.phases.flatMap((ph) => ph.units);
  const sets = (u: Unit) => unitClasses(u).some((c) => c.name === name && !c.path.includes("priorityClasses"));
  return [...new Set(units.filter(sets).map((u) => u.name))].sort();
}

/**
 * The classes of this Plan whose value or preemption policy differs from the cluster's (`deployed`:
 * the PriorityClass objects of the stack's committed render): each replaced by `pulumi up`.
 */
export function priorityClassReplacements(plan: Plan, deployed: readonly K8sObject[]): Check[] {
  const out: Check[] = [];
  for (const o of plan.phases.flatMap((ph) => ph.units).flatMap((u) => (u.kind === "Manifests" ? u.objects : []))) {
    const was = isPriorityClass(o) ? deployed.find((d) => isPriorityClass(d) && d.metadata.name === o.metadata.name) : undefined;
    const changes = was ? immutableChanges(was, o) : [];
    if (changes.length) out.push(classReplacement(o.metadata.name, changes, classUsers(plan, o.metadata.name)));
  }
  return out;
}

/** What the check's fix names: the classes that always exist by the time a unit's pods are created. */
export const KNOWN_PRIORITY_CLASSES = `${BUILT_IN.map((c) => c.name).join(", ")} (built in), ${Object.values(PRIORITY_CLASSES).join(", ")} (unit ${PRIORITY_CLASSES_UNIT}, phase crds-operators)`;

// ---- the order (§ 2) --------------------------------------------------------------------------

/** Where the classes of the order are written: what a finding that no stack key causes names. */
export const PRIORITY_CLASSES_FILE = "platform/priority-classes.ts";

/** A class as the scheduler ranks it: its value, and whether its pods may preempt (preemptionPolicy). */
interface Ranked {
  value: number;
  preempts: boolean;
}

/** Every class a pod of the Plan may name, ranked: the built-in and upstream ones, and those the Plan creates. */
function rankedClasses(plan: Plan, upstream: readonly UpstreamPriorityClass[]): Map<string, Ranked> {
  const out = new Map<string, Ranked>([...BUILT_IN, ...upstream].map((c) => [c.name, { value: c.value, preempts: true }]));
  for (const u of plan.phases.flatMap((ph) => ph.units)) {
    for (const o of u.kind === "Manifests" ? u.objects.filter(isPriorityClass) : []) {
      out.set(o.metadata.name, { value: Number(o.value), preempts: o.preemptionPolicy !== "Never" });
    }
  }
  return out;
}

/** § 2's order, highest first, in words, with the classes the components' upstreams create: what every finding of the order quotes. */
export function priorityOrder(upstream: readonly UpstreamPriorityClass[]): string {
  return [
    ...[...BUILT_IN, ...upstream]
      .sort((a, b) => b.value - a.value)
      .reduce(
        (groups, c) => {
          const last = groups.at(-1);
          if (last?.value === c.value) last.names.push(c.name);
          else groups.push({ value: c.value, names: [c.name] });
          return groups;
        },
        [] as { value: number; names: string[] }[],
      )
      .map((g) => `${g.names.join(" = ")} (${g.value})`),
    ...TIER_ORDER.map((t) => `${PRIORITY_CLASSES[t]} (${DESIGN_TIERS[t].value}${DESIGN_TIERS[t].preempts ? "" : ", never preempts"}: ${DESIGN_TIERS[t].runs})`),
  ].join(" > ");
}

/** The classes above ours of the lowest value, and that value: what keeps the nodes, the pod network, the volumes and the VMs' operator up. */
function lowestFixed(upstream: readonly UpstreamPriorityClass[]): { names: string[]; value: number } {
  const fixed = [...BUILT_IN, ...upstream];
  const value = Math.min(...fixed.map((c) => c.value));
  return { names: fixed.filter((c) => c.value === value).map((c) => c.name), value };
}

/** One way a tier map breaks the order: the tier whose class is wrong, and why. */
interface OrderBreak {
  tier: Tier;
  message: string;
}

/**
 * How the classes `map` gives the tiers break § 2's order (empty when they keep it). A tier whose
 * class has not § 2's value and policy is judged: strictly below the tiers before it and above those
 * after it (a pod preempts only pods of a lower value, and none with preemptionPolicy Never:
 * k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go
 * PodEligibleToPreemptOthers line 364, isPreemptionAllowed line 397), below the classes of what the
 * control plane runs on (Longhorn, KubeVirt, the built-in ones), never preempting for the VMs and
 * preempting for the infra tier (§ 2: VMs are "only preempted by infra that lost its node"). A class
 * it cannot rank (one that does not exist) is priority-class-missing's.
 */
function orderBreaks(map: Readonly<Record<Tier, string>>, classes: ReadonlyMap<string, Ranked>, upstream: readonly UpstreamPriorityClass[]): OrderBreak[] {
  const lowest = lowestFixed(upstream);
  const at = (t: Tier) => classes.get(map[t]);
  const show = (t: Tier) => `${map[t]} (${at(t)!.value}${at(t)!.preempts ? "" : ", never preempts"})`;
  const moved = TIER_ORDER.filter((t) => at(t) !== undefined && (at(t)!.value !== DESIGN_TIERS[t].value || at(t)!.preempts !== DESIGN_TIERS[t].preempts));
  return moved.flatMap((tier) => {
    const mine = at(tier)!;
    const i = TIER_ORDER.indexOf(tier);
    const { runs } = DESIGN_TIERS[tier];
    const ranked = TIER_ORDER.filter((o) => o !== tier && at(o) !== undefined);
    const above = ranked.filter((o) => TIER_ORDER.indexOf(o) < i && at(o)!.value <= mine.value);
    const below = ranked.filter((o) => TIER_ORDER.indexOf(o) > i && at(o)!.value >= mine.value);
    const names = (ts: Tier[]) => ts.map((t) => DESIGN_TIERS[t].runs).join(" and ");
    const faults: string[] = [];
    if (mine.value >= lowest.value)
      faults.push(`it is not below ${lowest.names.join(" and ")} (${lowest.value}): it could preempt what the control plane runs on`);
    if (above.length > 0) {
      const preempted = above.filter((o) => mine.preempts && at(o)!.value < mine.value);
      faults.push(
        `it is not below ${above.map(show).join(" and ")}: ${names(above)} could no longer preempt them` +
          (preempted.length ? `, and they would preempt ${names(preempted)}` : ""),
      );
    }
    if (below.length > 0) {
      const preempting = below.filter((o) => at(o)!.preempts && at(o)!.value > mine.value);
      faults.push(
        `it is not above ${below.map(show).join(" and ")}: they could no longer preempt ${names(below)}` +
          (preempting.length ? `, and ${names(preempting)} would preempt them` : ""),
      );
    }
    if (tier === "vm" && mine.preempts)
      faults.push("its pods preempt: a VM started on a full node would evict what runs below it, where § 2 has VMs preempt nothing");
    if (tier === "infra" && !mine.preempts) faults.push("its pods never preempt: a member that lost its node could not take a VM's place (§ 2)");
    return faults.length > 0 ? [{ tier, message: `${runs} run at ${show(tier)}: ${faults.join("; ")}` }] : [];
  });
}

/** Every class map a unit of the Plan writes: the OpenKeel releases' `global.placementDefaults.priorityClasses`, with its values path. */
function tierMaps(plan: Plan): { unit: string; path: string[]; map: Record<Tier, string> }[] {
  const path = ["global", "placementDefaults", "priorityClasses"];
  return plan.phases
    .flatMap((ph) => ph.units)
    .flatMap((u) => {
      const map = u.kind === "HelmRelease" ? valueAt(u.values, path) : undefined;
      return map && typeof map === "object" ? [{ unit: u.name, path, map: map as Record<Tier, string> }] : [];
    });
}

/** One break of the order: in the classes this repository creates (`code`), or in a release's tier map (its unit and values path). */
export interface OrderFinding {
  message: string;
  /** The values path of the tier's class in the release's values; absent: the classes themselves (this repository's). */
  at?: { unit: string; path: (string | number)[] };
}

/**
 * § 2's order of priority classes held on a Plan: the classes it creates, ranked with the built-in
 * and upstream ones, and every tier map a release is given. A tier map that names § 2's classes is
 * judged once, as the classes themselves.
 */
export function priorityOrderFindings(plan: Plan, upstream: readonly UpstreamPriorityClass[]): OrderFinding[] {
  const classes = rankedClasses(plan, upstream);
  const own = orderBreaks(PRIORITY_CLASSES, classes, upstream).map((b) => ({ message: `PriorityClass ${PRIORITY_CLASSES[b.tier]}: ${b.message}` }));
  if (own.length > 0) return own;
  return tierMaps(plan).flatMap(({ unit, path, map }) =>
    orderBreaks(map, classes, upstream).map((b) => ({
      message: `release ${unit}, tier ${b.tier} (${map[b.tier]}): ${b.message}`,
      at: { unit, path: [...path, b.tier] },
    })),
  );
}
