// The priority classes of design § 2, created by this repository in the first platform phase
// (crds-operators), before the first component that uses them: the platform operators take
// openkeel-control, Galera and RabbitMQ openkeel-infra-critical, VMs openkeel-vm. The design
// has openkeel-chart render them (§ 5.1 `priorityClasses.create`), but § 5.2 "What is implemented"
// lists no such template, and the operators installed before openkeel-infra need them already
// (docs/design-decisions.md).
import { manifestsUnit, type K8sObject, type ManifestsUnit, type Plan, type Unit } from "../plan/plan";

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
const BUILT_IN: ReadonlySet<string> = new Set(["system-node-critical", "system-cluster-critical"]);

/** Classes an upstream artifact creates with itself: usable by that unit, and by every later phase. */
const UPSTREAM: readonly { name: string; unitType: string; source: string }[] = [
  {
    name: "longhorn-critical",
    unitType: "openkeel:platform:Longhorn",
    source: "longhorn/longhorn chart/templates/priorityclass.yaml (value 1e9), the default of defaultSettings.priorityClass (settings.md 1.12.1)",
  },
  {
    name: "kubevirt-cluster-critical",
    unitType: "openkeel:platform:KubeVirtOperator",
    source: "kubevirt-operator.yaml v1.9.0 (PriorityClass, value 1e9; virt-operator hard-codes it on its operands)",
  },
];

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
  /** What creates it, when an upstream artifact does (it exists only once that unit is applied). */
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

const created = (u: Unit) => (u.kind === "Manifests" ? u.objects.filter((o) => o.kind === "PriorityClass").map((o) => o.metadata.name) : []);

/**
 * The priority class names of the Plan that do not exist when their pods are created: not built
 * in, not created by an earlier phase, by a unit of the same phase it waits for, or by the
 * upstream artifact of the unit itself. The API server's Priority admission refuses such pods, so
 * the workload never starts.
 */
export function missingPriorityClasses(plan: Plan): ClassUse[] {
  const earlier = new Set<string>(BUILT_IN);
  const missing: ClassUse[] = [];
  for (const ph of plan.phases) {
    const inPhase = new Map<string, string[]>(ph.units.map((u) => [u.name, created(u)]));
    for (const u of ph.units) {
      const known = new Set([
        ...(u.dependsOn ?? []).flatMap((d) => inPhase.get(d) ?? []),
        ...created(u),
        ...UPSTREAM.filter((x) => x.unitType === u.type).map((x) => x.name),
      ]);
      for (const c of unitClasses(u)) {
        if (earlier.has(c.name) || known.has(c.name)) continue;
        const upstream = UPSTREAM.find((x) => x.name === c.name)?.source;
        missing.push({ unit: u.name, phase: ph.name, ...c, ...(upstream ? { upstream } : {}) });
      }
    }
    for (const u of ph.units) {
      for (const n of created(u)) earlier.add(n);
      for (const x of UPSTREAM) if (x.unitType === u.type) earlier.add(x.name);
    }
  }
  return missing;
}

/** What the check's fix names: the classes that always exist by the time a unit's pods are created. */
export const KNOWN_PRIORITY_CLASSES = `${[...BUILT_IN].join(", ")} (built in), ${Object.values(PRIORITY_CLASSES).join(", ")} (unit ${PRIORITY_CLASSES_UNIT}, phase crds-operators)`;
