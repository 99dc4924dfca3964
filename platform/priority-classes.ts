// The priority classes of design § 2, created by this repository in the first platform phase
// (crds-operators), before the first component that uses them: the platform operators take
// openkeel-control, Galera and RabbitMQ openkeel-infra-critical, VMs openkeel-vm. The design
// has openkeel-chart render them (§ 5.1 `priorityClasses.create`), but § 5.2 "What is implemented"
// lists no such template, and the operators installed before openkeel-infra need them already
// (docs/design-decisions.md).
import type { Check } from "../config/problems";
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

/** § 2's values: far below system-*-critical (2e9), below Longhorn's and KubeVirt's own (1e9). */
export function priorityClassesUnit(): ManifestsUnit {
  return manifestsUnit(PRIORITY_CLASSES_UNIT, "openkeel:platform:PriorityClasses", [
    priorityClass(PRIORITY_CLASSES.infra, 1_000_000, "Galera, RabbitMQ, OVN central (design § 2)"),
    priorityClass(PRIORITY_CLASSES.control, 900_000, "OpenKeel APIs, conductors, schedulers, workers; the operators' controllers (design § 2)"),
    // never preempt anything; only preempted by infra that lost its node (§ 2)
    priorityClass(PRIORITY_CLASSES.vm, 500_000, "virt-launcher pods (design § 2)", true),
  ]);
}

/** Classes the API server creates itself (kube-apiserver's scheduling bootstrap: SystemPriorityClasses). */
const BUILT_IN: ReadonlySet<string> = new Set(BUILT_IN_PRIORITY_CLASSES);

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
    const known = new Set([...BUILT_IN, ...created(u), ...[...waitedFor(u)].flatMap((d) => created(byName.get(d)!))]);
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
export const KNOWN_PRIORITY_CLASSES = `${[...BUILT_IN].join(", ")} (built in), ${Object.values(PRIORITY_CLASSES).join(", ")} (unit ${PRIORITY_CLASSES_UNIT}, phase crds-operators)`;
