// What each unit of a Plan uses and what it offers, read from its objects and values, and the
// dependencies between units derived from them (issue 46): a unit waits for the units that offer
// what it uses, and for nothing else but its hand-written edges, each with its reason. The phases
// stay the grouping of the docs and the render, not barriers.
//
// A fact is one string, `<what> <name>`:
//   api <group>/<Kind>            the API of a custom kind (a CRD): needed to create an object of it
//   admission <group>/<resource>  a webhook with failurePolicy Fail admits objects of it: served by its
//                                 unit's pods, so an object of it waits until they answer
//   namespace <name>              a namespace exists
//   priorityclass <name>          the Priority admission refuses a pod whose class does not exist
//   storageclass <name>           the class of a volume
//   runtimeclass <name>           the RuntimeClass of a pod
//   attachment <ns>/<name>        a NetworkAttachmentDefinition a pod or a setting names
//   network pods                  the pod network (the CNI): a pod not on the host network gets no
//                                 sandbox without it
//   network attachments           Multus, which attaches a pod's secondary networks
//   secret <ns>/<name>            a Secret a pod mounts or reads
//   nodelabel <key>               a label a pod's node selection reads (set by the node-roles patches)
//   object <group>/<Kind> <ns>/<name>  an object another unit (or its controller) creates, which this
//                                 one patches (a core kind: `object Node /<name>`)
//   release <ns>/<name>           the pods of a Helm release (`app.kubernetes.io/instance`), which a
//                                 Service selects: Pulumi waits for the Service's endpoints
//   loadbalancer addresses        an address pool that gives a LoadBalancer Service its address
//
// What a unit offers comes from its objects (a CRD, a Namespace, a class, a webhook configuration, a
// workload), from its `content` (a chart or manifest the Plan cannot read: stated beside the unit,
// held to the mirror's files by test/integration/plan/unit-content.test.ts), and from what its
// objects make at run time (`offersAtRunTime`, each with its reason); what an object of a custom
// kind makes once its controller acts on it (a Certificate's Secret) is its component's knowledge,
// handed in (`KindOffers`). What its pods use once they run, which no object shows
// (`usesAtRunTime`, each with its reason), makes it wait for a unit that offers it, when one does.
// What the cluster has already (built-in kinds, namespaces and classes, the environment's own pod
// network and classes) needs no unit.
import { isPlainObject } from "../config/plain";
import type { K8sObject, Plan, Unit, UnitContent } from "./plan";

export type Fact = string;

export const fact = {
  api: (group: string, kind: string): Fact => `api ${group}/${kind}`,
  admission: (group: string, resource: string): Fact => `admission ${group}/${resource}`,
  namespace: (name: string): Fact => `namespace ${name}`,
  priorityClass: (name: string): Fact => `priorityclass ${name}`,
  storageClass: (name: string): Fact => `storageclass ${name}`,
  runtimeClass: (name: string): Fact => `runtimeclass ${name}`,
  attachment: (namespace: string, name: string): Fact => `attachment ${namespace}/${name}`,
  secret: (namespace: string, name: string): Fact => `secret ${namespace}/${name}`,
  nodeLabel: (key: string): Fact => `nodelabel ${key}`,
  object: (groupKind: string, namespace: string | undefined, name: string): Fact => `object ${groupKind} ${namespace ?? ""}/${name}`,
  release: (namespace: string, name: string): Fact => `release ${namespace}/${name}`,
  podNetwork: "network pods" as Fact,
  attachments: "network attachments" as Fact,
  loadBalancer: "loadbalancer addresses" as Fact,
};

/**
 * The API groups the API server serves itself, its default feature gates on (Kubernetes v1.36.3:
 * `kubectl api-versions` on the e2e's control plane, cluster.sh of ../shared/engine): their kinds
 * need no CRD.
 */
const BUILT_IN_GROUPS: ReadonlySet<string> = new Set([
  "",
  "admissionregistration.k8s.io",
  "apiextensions.k8s.io",
  "apiregistration.k8s.io",
  "apps",
  "authentication.k8s.io",
  "authorization.k8s.io",
  "autoscaling",
  "batch",
  "certificates.k8s.io",
  "coordination.k8s.io",
  "discovery.k8s.io",
  "events.k8s.io",
  "flowcontrol.apiserver.k8s.io",
  "networking.k8s.io",
  "node.k8s.io",
  "policy",
  "rbac.authorization.k8s.io",
  "resource.k8s.io",
  "scheduling.k8s.io",
  "storage.k8s.io",
]);

/** Namespaces every cluster has (kube-apiserver creates them: the system namespaces controller). */
const BUILT_IN_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"];
/** Classes the API server creates itself (its scheduling bootstrap: SystemPriorityClasses). */
export const BUILT_IN_PRIORITY_CLASSES = ["system-node-critical", "system-cluster-critical"];

/** What the cluster has before any unit: built in, or the environment's own (kind's pod network and class). */
export interface ClusterFacts {
  /** The environment brings its pod network (kind's kindnet): no unit offers it. */
  podNetwork: boolean;
  /** StorageClasses the environment provides itself. */
  storageClasses: readonly string[];
}

/** What every cluster has: its built-in kinds, namespaces and classes, and its Nodes. */
export function builtIn(f: Fact): boolean {
  const [what, name] = splitFact(f);
  switch (what) {
    case "api":
      return BUILT_IN_GROUPS.has(name.slice(0, name.lastIndexOf("/")));
    case "namespace":
      return BUILT_IN_NAMESPACES.includes(name);
    case "priorityclass":
      return BUILT_IN_PRIORITY_CLASSES.includes(name);
    case "object":
      // Nodes register themselves; the Plan only patches them
      return name.startsWith("/Node /");
    default:
      return false;
  }
}

function clusterHas(f: Fact, cluster: ClusterFacts): boolean {
  if (builtIn(f)) return true;
  if (f === fact.podNetwork) return cluster.podNetwork;
  const [what, name] = splitFact(f);
  return what === "storageclass" && cluster.storageClasses.includes(name);
}

/** Facts a unit may use that nothing offers without it being a mistake: it then waits for nothing. */
const OPTIONAL = new Set(["admission", "secret", "nodelabel", "release"]);

export function splitFact(f: Fact): [string, string] {
  const i = f.indexOf(" ");
  return [f.slice(0, i), f.slice(i + 1)];
}

/** The resource of a kind, as the API server guesses it (k8s.io/apimachinery pkg/api/meta/restmapper.go, UnsafeGuessKindToResource). */
export function resourceOf(kind: string): string {
  const lower = kind.toLowerCase();
  if (lower.endsWith("s")) return `${lower}es`;
  if (lower.endsWith("y")) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

const groupOf = (apiVersion: string) => (apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "");

/** The key of an object's kind, `<group>/<Kind>` (`/<Kind>` in the core group): KindOffers' keys, and the components' custom kinds'. */
export const kindKey = (o: { apiVersion: string; kind: string }) => `${groupOf(o.apiVersion)}/${o.kind}`;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

export interface Facts {
  offers: Set<Fact>;
  uses: Set<Fact>;
}

/**
 * What an object of a custom kind offers other units once the controller that serves the kind has
 * acted on it, by `<group>/<Kind>`: the component that installs the kind knows it, the Plan does not
 * (each component's `kindOffers`, platform/component.ts). Without an entry, an object of the kind
 * offers nothing but itself.
 */
export type KindOffers = Readonly<Partial<Record<string, (o: K8sObject) => readonly Fact[]>>>;

const emptyFacts = (): Facts => ({ offers: new Set(), uses: new Set() });

/** The pod specs of an object that makes pods: a workload's template, a CronJob's, a Pod's own. */
function podTemplates(o: Obj): { metadata: Obj; spec: Obj }[] {
  const spec = obj(o.spec);
  switch (o.kind) {
    case "Pod":
      return [{ metadata: obj(o.metadata), spec }];
    case "Deployment":
    case "DaemonSet":
    case "StatefulSet":
    case "ReplicaSet":
    case "Job":
      return [{ metadata: obj(obj(spec.template).metadata), spec: obj(obj(spec.template).spec) }];
    case "CronJob": {
      const template = obj(obj(obj(spec.jobTemplate).spec).template);
      return [{ metadata: obj(template.metadata), spec: obj(template.spec) }];
    }
    default:
      return [];
  }
}

/** `k8s.v1.cni.cncf.io/networks`: a comma list (`[ns/]name[@iface]`) or a JSON list of {name, namespace}. */
export const NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks";

function attachmentsOf(annotation: string, namespace: string): Fact[] {
  const trimmed = annotation.trim();
  if (trimmed.startsWith("[")) {
    const parsed = JSON.parse(trimmed) as { name: string; namespace?: string }[];
    return parsed.map((n) => fact.attachment(n.namespace ?? namespace, n.name));
  }
  return trimmed
    .split(",")
    .map((s) => s.trim().split("@")[0])
    .filter((s) => s !== "")
    .map((s) => (s.includes("/") ? fact.attachment(s.slice(0, s.indexOf("/")), s.slice(s.indexOf("/") + 1)) : fact.attachment(namespace, s)));
}

/** What a pod spec uses: its class, network, runtime and Secrets (its attachments, node labels and volumes' classes: namedFacts). */
function podFacts(pod: { metadata: Obj; spec: Obj }, namespace: string, out: Facts): void {
  const { spec } = pod;
  const priority = str(spec.priorityClassName);
  if (priority) out.uses.add(fact.priorityClass(priority));
  if (spec.hostNetwork !== true) out.uses.add(fact.podNetwork);
  const runtime = str(spec.runtimeClassName);
  if (runtime) out.uses.add(fact.runtimeClass(runtime));
  const secret = (name: unknown, optional: unknown) => {
    if (str(name) && optional !== true) out.uses.add(fact.secret(namespace, str(name)!));
  };
  for (const v of list(spec.volumes).map(obj)) {
    secret(obj(v.secret).secretName, obj(v.secret).optional);
    for (const s of list(obj(v.projected).sources).map(obj)) secret(obj(s.secret).name, obj(s.secret).optional);
  }
  for (const c of [...list(spec.containers), ...list(spec.initContainers)].map(obj)) {
    for (const e of list(c.env).map(obj)) secret(obj(obj(e.valueFrom).secretKeyRef).name, obj(obj(e.valueFrom).secretKeyRef).optional);
    for (const e of list(c.envFrom).map(obj)) secret(obj(e.secretRef).name, obj(e.secretRef).optional);
  }
  for (const p of list(spec.imagePullSecrets).map(obj)) secret(p.name, false);
}

/**
 * What a tree names by its keys, anywhere (objects, values, post-render patches): node label keys,
 * storage, priority and runtime classes, the attachments of a pod template's annotation or of
 * Longhorn's storage network setting. `namespace`: where a name without one is.
 */
function namedFacts(tree: unknown, out: Facts, namespace: string, key = "", parents: readonly string[] = []): void {
  if (typeof tree === "string") {
    if (tree === "") return;
    if (key === NETWORKS_ANNOTATION) {
      out.uses.add(fact.attachments);
      for (const a of attachmentsOf(tree, namespace)) out.uses.add(a);
      return;
    }
    if (/^storageClass(Name)?$/.test(key)) out.uses.add(fact.storageClass(tree));
    else if (/^priorityClass(Name)?$/.test(key) || parents.at(-1) === "priorityClasses") out.uses.add(fact.priorityClass(tree));
    // the OpenKeel charts select nodes by the role labels of global.nodeRoles (§ 5.1)
    else if (key === "label" && parents.at(-3) === "nodeRoles" && parents.at(-2) === "roles") out.uses.add(fact.nodeLabel(tree));
    else if (key === "key" && parents.includes("nodeSelectorTerms")) out.uses.add(fact.nodeLabel(tree));
    else if (key === "runtimeClassName") out.uses.add(fact.runtimeClass(tree));
    // Longhorn's storage network setting: the attachment its instance managers get (`<ns>/<name>`)
    else if (key === "storageNetwork" && tree.includes("/")) {
      out.uses.add(fact.attachment(tree.slice(0, tree.indexOf("/")), tree.slice(tree.indexOf("/") + 1)));
      out.uses.add(fact.attachments);
    }
    return;
  }
  if (Array.isArray(tree)) {
    for (const v of tree) namedFacts(v, out, namespace, key, parents);
    return;
  }
  if (!isPlainObject(tree)) return;
  if (key === "nodeSelector") for (const k of Object.keys(tree)) out.uses.add(fact.nodeLabel(k));
  for (const [k, v] of Object.entries(tree)) namedFacts(v, out, namespace, k, key === "" ? parents : [...parents, key]);
}

/** The webhooks of a configuration that refuse what they cannot admit (failurePolicy Fail, the v1 default), by resource created or updated. */
function admitted(o: Obj): Fact[] {
  const out: Fact[] = [];
  for (const w of list(o.webhooks).map(obj)) {
    if ((w.failurePolicy ?? "Fail") !== "Fail") continue;
    for (const r of list(w.rules).map(obj)) {
      const ops = list(r.operations);
      if (!ops.some((op) => op === "CREATE" || op === "UPDATE" || op === "*")) continue;
      for (const g of list(r.apiGroups))
        for (const res of list(r.resources)) if (!String(res).includes("/") || res === "*/*") out.push(fact.admission(String(g), String(res).split("/")[0]));
    }
  }
  return out;
}

/** What one object offers and uses. */
function addObject(o: K8sObject, out: Facts, patch: boolean, kinds: KindOffers): void {
  const group = groupOf(o.apiVersion);
  const ns = o.metadata.namespace;
  const name = o.metadata.name;
  if (!BUILT_IN_GROUPS.has(group)) out.uses.add(fact.api(group, o.kind));
  out.uses.add(fact.admission(group, resourceOf(o.kind)));
  if (ns) out.uses.add(fact.namespace(ns));
  if (patch) {
    out.uses.add(fact.object(kindKey(o), ns, name));
    if (o.kind === "Node") for (const k of Object.keys(o.metadata.labels ?? {})) out.offers.add(fact.nodeLabel(k));
  }
  const spec = obj(o.spec);
  switch (kindKey(o)) {
    case "apiextensions.k8s.io/CustomResourceDefinition":
      out.offers.add(fact.api(String(spec.group), String(obj(spec.names).kind)));
      break;
    case "/Namespace":
      out.offers.add(fact.namespace(name));
      break;
    case "scheduling.k8s.io/PriorityClass":
      out.offers.add(fact.priorityClass(name));
      break;
    case "storage.k8s.io/StorageClass":
      out.offers.add(fact.storageClass(name));
      break;
    case "node.k8s.io/RuntimeClass":
      out.offers.add(fact.runtimeClass(name));
      break;
    case "k8s.cni.cncf.io/NetworkAttachmentDefinition":
      out.offers.add(fact.attachment(ns ?? "default", name));
      break;
    case "/Secret":
      out.offers.add(fact.secret(ns ?? "default", name));
      break;
    case "admissionregistration.k8s.io/ValidatingWebhookConfiguration":
    case "admissionregistration.k8s.io/MutatingWebhookConfiguration":
      for (const f of admitted(o)) out.offers.add(f);
      break;
    case "/Service": {
      if (spec.type === "LoadBalancer") out.uses.add(fact.loadBalancer);
      const instance = str(obj(spec.selector)["app.kubernetes.io/instance"]);
      if (instance) out.uses.add(fact.release(ns ?? "default", instance));
      break;
    }
    case "apps/Deployment":
    case "apps/DaemonSet":
    case "apps/StatefulSet":
      if (!patch) out.offers.add(fact.object(kindKey(o), ns, name));
      break;
  }
  for (const f of kinds[kindKey(o)]?.(o) ?? []) out.offers.add(f);
  for (const pod of patch ? [] : podTemplates(o as unknown as Obj)) podFacts(pod, ns ?? "default", out);
  // a CRD's schema names keys, not classes or labels
  if (o.kind !== "CustomResourceDefinition") namedFacts(o, out, ns ?? "default");
}

/** Whether an object only amends one that exists (a Node, or `openkeel.io/apply-as: patch`). */
export type IsPatch = (o: K8sObject) => boolean;

/** What a list of objects offers and uses; a use one of them offers is theirs already and left out. */
export function objectFacts(objects: readonly K8sObject[], isPatch: IsPatch = () => false, kinds: KindOffers = {}): Facts {
  const out = emptyFacts();
  for (const o of objects) addObject(o, out, isPatch(o), kinds);
  return withoutOwn(out);
}

/** What a values tree (a chart's values, its post-render patches) names: classes, node labels, attachments; `namespace`: the release's. */
export function valueFacts(values: unknown, namespace: string): Facts {
  const out = emptyFacts();
  namedFacts(values, out, namespace);
  return out;
}

/** An offered fact covers a used one: the same, or an admission of the same group and resource, or a wildcard. */
export function covers(offer: Fact, use: Fact): boolean {
  if (offer === use) return true;
  const [w1, o] = splitFact(offer);
  const [w2, u] = splitFact(use);
  if (w1 !== "admission" || w2 !== "admission") return false;
  const [og, or] = [o.slice(0, o.lastIndexOf("/")), o.slice(o.lastIndexOf("/") + 1)];
  const [ug, ur] = [u.slice(0, u.lastIndexOf("/")), u.slice(u.lastIndexOf("/") + 1)];
  return (og === "*" || og === ug) && (or === "*" || or === ur);
}

function withoutOwn(f: Facts): Facts {
  const offers = [...f.offers];
  return { offers: f.offers, uses: new Set([...f.uses].filter((u) => !offers.some((o) => covers(o, u)))) };
}

function merge(...all: Facts[]): Facts {
  const out = emptyFacts();
  for (const f of all) {
    for (const o of f.offers) out.offers.add(o);
    for (const u of f.uses) out.uses.add(u);
  }
  return out;
}

/** Whether an object of a Manifests unit amends an object it does not create. */
function isPatchObject(o: K8sObject): boolean {
  return (o.apiVersion === "v1" && o.kind === "Node") || o.metadata.annotations?.["openkeel.io/apply-as"] === "patch";
}

/** A stated content's uses, with the admission of every kind it creates (objectFacts adds them for objects it reads). */
function statedFacts(c: UnitContent | undefined): Facts {
  const uses = new Set(c?.uses ?? []);
  for (const u of c?.uses ?? []) {
    const [what, name] = splitFact(u);
    if (what === "api") uses.add(fact.admission(name.slice(0, name.lastIndexOf("/")), resourceOf(name.slice(name.lastIndexOf("/") + 1))));
  }
  return { offers: new Set(c?.offers ?? []), uses };
}

/** Everything a unit offers and uses: its objects or values, its stated content, what it makes at run time. */
export function unitFacts(u: Unit, kinds: KindOffers = {}): Facts {
  const stated = statedFacts(u.content);
  const runTime: Facts = { offers: new Set((u.offersAtRunTime ?? []).flatMap((r) => r.facts)), uses: new Set() };
  switch (u.kind) {
    case "Manifests":
      return withoutOwn(merge(objectFacts(u.objects, isPatchObject, kinds), stated, runTime));
    case "HelmRelease": {
      const own: Facts = { offers: new Set([fact.release(u.namespace, u.release)]), uses: new Set([fact.namespace(u.namespace)]) };
      const patched = valueFacts(
        (u.postRender ?? []).map((p) => p.patch),
        u.namespace,
      );
      return withoutOwn(merge(own, valueFacts(u.values, u.namespace), patched, stated, runTime));
    }
    case "RemoteManifest":
      return withoutOwn(merge(stated, runTime));
  }
}

/** An edge of the graph: the unit it waits for, and why (every fact of the other unit it uses, or the hand-written reason). */
export interface Edge {
  unit: string;
  facts: Fact[];
  why?: string;
}

/** A unit's use that no unit before it offers, and the cluster does not have. */
export interface Unmet {
  unit: string;
  fact: Fact;
}

export interface Dependencies {
  /** Per unit, in plan order: the units it waits for. */
  edges: Map<string, Edge[]>;
  /** Uses nothing before the unit offers (a mistake: the API server or the scheduler would refuse or strand it). */
  unmet: Unmet[];
}

/**
 * The dependencies of a Plan's units: each unit waits for every unit before it (in the Plan's
 * order: the phases, then each phase's units) that offers something it uses, and for its
 * hand-written edges. A unit whose content is not known (a remote manifest at a version no
 * statement covers) waits for every unit before it. `kinds`: what objects of the kinds of the
 * stack's components offer (platform/component.ts kindOffersOf).
 */
export function dependencies(plan: Pick<Plan, "phases">, cluster: ClusterFacts, kinds: KindOffers = {}): Dependencies {
  const units = plan.phases.flatMap((p) => p.units);
  const facts = new Map(units.map((u) => [u.name, unitFacts(u, kinds)]));
  const edges = new Map<string, Edge[]>();
  const unmet: Unmet[] = [];
  units.forEach((u, i) => {
    const before = units.slice(0, i);
    const mine = new Map<string, Edge>();
    if (u.contentUnknown) for (const b of before) mine.set(b.name, { unit: b.name, facts: [], why: u.contentUnknown });
    for (const use of [...facts.get(u.name)!.uses].sort()) {
      if (clusterHas(use, cluster)) continue;
      const providers = before.filter((b) => [...facts.get(b.name)!.offers].some((o) => covers(o, use)));
      if (providers.length === 0 && !OPTIONAL.has(splitFact(use)[0])) unmet.push({ unit: u.name, fact: use });
      for (const p of providers) {
        const e = mine.get(p.name) ?? { unit: p.name, facts: [] };
        e.facts.push(use);
        mine.set(p.name, e);
      }
    }
    // what its pods use once they run: waited for where a unit before it offers it, never unmet
    for (const r of u.usesAtRunTime ?? [])
      for (const use of r.facts)
        for (const p of before.filter((b) => [...facts.get(b.name)!.offers].some((o) => covers(o, use)))) {
          const e = mine.get(p.name) ?? { unit: p.name, facts: [] };
          mine.set(p.name, { ...e, why: e.why ?? r.why });
        }
    for (const w of u.waitsFor ?? []) {
      const e = mine.get(w.unit) ?? { unit: w.unit, facts: [] };
      mine.set(w.unit, { ...e, why: w.why });
    }
    edges.set(u.name, [...mine.values()]);
  });
  return { edges, unmet };
}

/** The Plan with each unit's `dependsOn` set to the units it waits for (sorted), and what nothing offers. */
export function withDependencies(plan: Plan, cluster: ClusterFacts, kinds: KindOffers): { plan: Plan; unmet: Unmet[] } {
  const { edges, unmet } = dependencies(plan, cluster, kinds);
  const phases = plan.phases.map((p) => ({
    ...p,
    units: p.units.map((u) => {
      const on = (edges.get(u.name) ?? []).map((e) => e.unit).sort();
      const { dependsOn: _was, ...rest } = u;
      return (on.length > 0 ? { ...rest, dependsOn: on } : rest) as Unit;
    }),
  }));
  return { plan: { ...plan, phases }, unmet };
}

/**
 * What is wrong with a Plan's dependencies, checked against its facts: a use of something a unit
 * before it offers with no edge to that unit; an edge to a unit whose offers it does not use, unless
 * hand-written with a reason; a hand-written edge without a reason, or where an object shows the need
 * (it is derived then, and says more than a reason); an edge to a unit after it. Empty for every Plan
 * composePlan makes (test/plan/needs.test.ts holds the shipped stacks to it and trips each case).
 */
export function graphProblems(plan: Pick<Plan, "phases">, cluster: ClusterFacts, kinds: KindOffers): string[] {
  const derived = dependencies({ phases: plan.phases.map((p) => ({ ...p, units: p.units.map((u) => ({ ...u, waitsFor: [] })) })) }, cluster, kinds).edges;
  const units = plan.phases.flatMap((p) => p.units);
  const problems: string[] = [];
  units.forEach((u, i) => {
    const before = new Set(units.slice(0, i).map((b) => b.name));
    const on = new Set(u.dependsOn ?? []);
    const needed = derived.get(u.name) ?? [];
    const written = new Map((u.waitsFor ?? []).map((w) => [w.unit, w.why]));
    for (const e of needed)
      if (!on.has(e.unit))
        problems.push(
          `${u.name} uses ${e.facts.length ? e.facts.join(", ") : `at run time what ${e.unit} offers (${e.why})`} of ${e.unit}, but does not depend on it`,
        );
    for (const d of on) {
      if (!before.has(d)) problems.push(`${u.name} depends on ${d}, which is not before it`);
      else if (!needed.some((e) => e.unit === d) && !written.has(d))
        problems.push(`${u.name} depends on ${d}, whose objects it does not use, and no hand-written edge says why`);
    }
    for (const [w, why] of written) {
      if (why.trim() === "") problems.push(`${u.name}'s hand-written edge to ${w} has no reason`);
      const shown = needed.find((e) => e.unit === w && e.facts.length > 0);
      if (shown) problems.push(`${u.name}'s hand-written edge to ${w} is shown by its objects (${shown.facts.join(", ")}): derive it instead`);
      if (!on.has(w)) problems.push(`${u.name} does not depend on ${w}, which its hand-written edge names`);
    }
  });
  return problems;
}

/**
 * How a Plan is deployed: each unit after the units it depends on (`dependencies`), or also after
 * every unit of the last non-empty phase before it (`phase-barriers`, what this repository did before
 * issue 46; the bench deploys both to compare them).
 */
export type DeployGraph = "dependencies" | "phase-barriers";

/** The bench's switch to the program (components/deploy.ts deployGraph): `phase-barriers`. */
export const DEPLOY_GRAPH_ENV = "OPENKEEL_DEPLOY_GRAPH";

/** The phases of a Plan or of its render: each unit's name and what it depends on. */
export interface GraphPhases {
  phases: readonly { units: readonly { name: string; dependsOn?: readonly string[] | undefined }[] }[];
}

/** What each unit waits for under a deploy graph, in plan order. */
export function waitsOn(plan: GraphPhases, graph: DeployGraph = "dependencies"): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let previous: string[] = [];
  for (const p of plan.phases) {
    for (const u of p.units) out.set(u.name, [...new Set([...(graph === "phase-barriers" ? previous : []), ...(u.dependsOn ?? [])])]);
    if (p.units.length > 0) previous = p.units.map((u) => u.name);
  }
  return out;
}

/**
 * The chain of units, each waiting for the one before it, whose weights add up to the most (by
 * default each unit weighs 1: the longest chain by count): what no parallelism takes off a deploy.
 */
export function longestChain(
  plan: GraphPhases,
  graph: DeployGraph = "dependencies",
  weight: (unit: string) => number = () => 1,
): { units: string[]; weight: number } {
  type Chain = { units: string[]; weight: number };
  const heavier = (a: Chain, b: Chain | undefined): Chain => (b && b.weight > a.weight ? b : a);
  const best = new Map<string, Chain>();
  for (const [unit, on] of waitsOn(plan, graph)) {
    const before = on.map((d) => best.get(d)).reduce<Chain>(heavier, { units: [], weight: 0 });
    best.set(unit, { units: [...before.units, unit], weight: before.weight + weight(unit) });
  }
  return [...best.values()].reduce<Chain>(heavier, { units: [], weight: 0 });
}
