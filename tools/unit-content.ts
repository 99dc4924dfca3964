// What a chart or a pinned manifest really holds, against what its unit states (issue 46): the
// Plan cannot read a remote manifest (fetched at apply time) or a chart (rendered by Helm), so its
// module states their content (plan/needs.ts facts: `content` of the unit, `artifacts` of the
// platform component by version); this reads the real files, the mirror's manifests and `helm
// template` of the chart with the stack's values, with the same reader the Plan's
// own objects go through (plan/needs.ts objectFacts), and says where the statement is wrong.
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import { builtIn, covers, fact, objectFacts, splitFact, valueFacts, type Fact, type KindOffers } from "../plan/needs";
import type { K8sObject, UnitContent } from "../plan/plan";
import { CHART_KUBE_VERSION } from "./chart-placement";
import { helmTemplate } from "./helm";

/** The objects of YAML texts (Lists unfolded; empty documents left out). */
export function yamlObjects(...texts: string[]): K8sObject[] {
  const out: K8sObject[] = [];
  const add = (o: unknown) => {
    const x = o as { kind?: string; items?: unknown[] } | null;
    if (!x?.kind) return;
    if (x.kind === "List") x.items?.forEach(add);
    else out.push(x as K8sObject);
  };
  for (const t of texts) for (const d of parseAllDocuments(t)) add(d.toJS());
  return out;
}

/** The kinds with no namespace: the built-in cluster-scoped ones Helm renders, and every CRD of `objects` whose scope is Cluster. */
const CLUSTER_KINDS = [
  "Namespace",
  "ClusterRole",
  "ClusterRoleBinding",
  "CustomResourceDefinition",
  "PriorityClass",
  "StorageClass",
  "CSIDriver",
  "RuntimeClass",
  "ValidatingWebhookConfiguration",
  "MutatingWebhookConfiguration",
  "APIService",
  "Node",
  "PersistentVolume",
];

/** A chart's objects as Helm applies them: a namespaced object without a namespace is the release's. */
export function inReleaseNamespace(objects: readonly K8sObject[], namespace: string): K8sObject[] {
  const cluster = new Set([
    ...CLUSTER_KINDS,
    ...objects
      .filter((o) => o.kind === "CustomResourceDefinition" && (o.spec as { scope?: string }).scope === "Cluster")
      .map((o) => (o.spec as { names: { kind: string } }).names.kind),
  ]);
  return objects.map((o) => (o.metadata.namespace || cluster.has(o.kind) ? o : { ...o, metadata: { ...o.metadata, namespace } }));
}

/**
 * `helm template` of a chart with a release's values, its crds/ included. Without the release's
 * post-renderer: the statement is of the chart, and what the patches add the Plan reads itself
 * (ContentCase.planReads).
 */
export function chartObjects(r: { chart: string; release: string; namespace: string; valuesFile: string }): K8sObject[] {
  const output = helmTemplate({
    release: r.release,
    namespace: r.namespace,
    chart: r.chart,
    valuesFile: r.valuesFile,
    kubeVersion: CHART_KUBE_VERSION,
    includeCrds: true,
  });
  return inReleaseNamespace(yamlObjects(output), r.namespace);
}

/** The text of the mirror's copies of some URLs (`files/<host>/<path>`). */
export function mirroredTexts(mirrorDir: string, urls: readonly string[]): string[] {
  return urls.map((url) => {
    const u = new URL(url);
    return fs.readFileSync(path.join(mirrorDir, "files", u.host, ...u.pathname.split("/").filter(Boolean)), "utf8");
  });
}

export interface ContentCase {
  /** For the messages: `<unit> <version>` and where it was read. */
  where: string;
  stated: UnitContent | undefined;
  objects: readonly K8sObject[];
  /**
   * What the Plan reads itself, left out of the comparison: the values' and post-render patches'
   * facts, a release's own namespace and pods (plan/needs.ts unitFacts).
   */
  planReads?: { values?: unknown; patches?: unknown; release?: { namespace: string; name: string } };
  /** Whether some unit of the shipped stacks uses a fact: an offer it uses must be stated. */
  used(f: Fact): boolean;
  /** What objects of the components' kinds offer (their descriptors' kindOffers): a manifest's Certificate makes the Secret its pods mount. */
  kinds: KindOffers;
}

/** The facts of a stated content that matter: uses in full (but the admission their kinds imply, and what every cluster has), offers as stated. */
function comparable(uses: Iterable<Fact>, planReads: Set<Fact>): Fact[] {
  return [...uses].filter((u) => splitFact(u)[0] !== "admission" && !builtIn(u) && !planReads.has(u)).sort();
}

/**
 * Where a statement is wrong about its file: a use of the file it does not state, or one it states
 * the file does not have; an offer it states the file does not make, or one the file makes that a
 * unit of the shipped stacks uses and it does not state.
 */
export function contentProblems(c: ContentCase): string[] {
  const release = c.planReads?.release;
  const own = [...(release ? [fact.release(release.namespace, release.name)] : [])];
  const computed = objectFacts(c.objects, undefined, c.kinds);
  const planReads = new Set([
    ...valueFacts(c.planReads?.values ?? {}, release?.namespace ?? "default").uses,
    ...valueFacts(c.planReads?.patches ?? {}, release?.namespace ?? "default").uses,
    ...(release ? [fact.namespace(release.namespace)] : []),
  ]);
  const uses = comparable(
    [...computed.uses].filter((u) => !own.includes(u)),
    planReads,
  );
  const stated = comparable(c.stated?.uses ?? [], new Set());
  const offers = [...computed.offers];
  const problems = [
    ...uses.filter((u) => !stated.includes(u)).map((u) => `${c.where}: uses ${u}, which its statement does not say`),
    ...stated.filter((u) => !uses.includes(u)).map((u) => `${c.where}: its statement says it uses ${u}, which it does not`),
    ...(c.stated?.offers ?? []).filter((o) => !offers.some((x) => covers(x, o))).map((o) => `${c.where}: its statement says it offers ${o}, which it does not`),
    ...offers
      .filter((o) => c.used(o) && !(c.stated?.offers ?? []).some((s) => covers(s, o) || covers(o, s)))
      .map((o) => `${c.where}: offers ${o}, which a unit uses, and its statement does not say`),
  ];
  return problems.sort();
}
