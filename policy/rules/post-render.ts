// What a release's post-renderer changes in the objects its chart renders, as the pack sees it: the
// pack judges resources, never Helm's manifests, so a component whose placement no chart value
// carries (§ 5.2 "What is implemented" lists what the charts read) is judged by its release's
// post-render record: a ConfigMap in the release's namespace annotated `openkeel.io/post-render-of:
// <release>`, whose `post-render.json` is the post-renderer's input ({release, patches}, each patch
// an RFC 7386 merge patch on one object). The record must be what the release's `postrender`
// applies: that executable's name ends in the first 16 hex digits of the record's SHA-256.
// The pack's own reading of what components/post-render.ts writes, on purpose (test/integration/plan/post-render.test.ts
// holds the two together).
import { createHash } from "node:crypto";
import { type Finding, get, isObject, type ResourceView, type Tree, valuesOf } from "./common";
import { effectivePlacement, type EffectivePlacement } from "./placement";

export const CONFIG_MAP_TYPE = "kubernetes:core/v1:ConfigMap";
const POST_RENDER_OF = "openkeel.io/post-render-of";
const RECORD_KEY = "post-render.json";

/** One merge patch of a release's post-renderer. */
export interface Patch {
  kind: string;
  name: string;
  patch: Tree;
}

/** A release's patches as its record holds them, or why the pack cannot trust them (`problem`). */
export interface ReleasePatches {
  patches: Patch[];
  problem?: Finding;
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The helm release name and namespace of a Release resource. */
export function releaseId(r: ResourceView): { name: string; namespace: string } {
  return { name: str(r.props.name) ?? r.name, namespace: str(r.props.namespace) ?? "default" };
}

function parsePatches(text: string): Patch[] | undefined {
  try {
    const input = JSON.parse(text) as unknown;
    const list = get(input, ["patches"]);
    if (!Array.isArray(list)) return undefined;
    return list.flatMap((p) => {
      const kind = get(p, ["target", "kind"]);
      const name = get(p, ["target", "name"]);
      const patch = get(p, ["patch"]);
      return typeof kind === "string" && typeof name === "string" && isObject(patch) ? [{ kind, name, patch }] : [];
    });
  } catch {
    return undefined;
  }
}

/** The post-render patches of `release` (a Release resource) from the records among `resources`. */
export function releasePatches(resources: ResourceView[], release: ResourceView): ReleasePatches {
  const { name, namespace } = releaseId(release);
  const postrender = str(release.props.postrender);
  const records = resources.filter(
    (r) =>
      r.type === CONFIG_MAP_TYPE &&
      get(r.props, ["metadata", "annotations", POST_RENDER_OF]) === name &&
      (str(get(r.props, ["metadata", "namespace"])) ?? "default") === namespace,
  );
  const fail = (message: string, fix: string): ReleasePatches => ({ patches: [], problem: { urn: release.urn, message, fix } });
  if (records.length === 0) {
    if (!postrender) return { patches: [] };
    return fail(
      `${release.name}: its post-renderer (postrender ${postrender}) has no post-render record, so what it patches cannot be judged`,
      `register the record: a ConfigMap annotated ${POST_RENDER_OF}: ${name} in namespace ${namespace} (components/post-render.ts postRenderRecord)`,
    );
  }
  if (records.length > 1) return fail(`${release.name}: ${records.length} post-render records`, `keep one ConfigMap annotated ${POST_RENDER_OF}: ${name}`);
  const text = str(get(records[0].props, ["data", RECORD_KEY])) ?? "";
  const digest = createHash("sha256").update(text).digest("hex").slice(0, 16);
  if (!postrender?.endsWith(`-${digest}`)) {
    return fail(
      `${release.name}: its post-render record (${records[0].name}) is not what its post-renderer applies (postrender ${postrender ?? "unset"}, record digest ${digest})`,
      "write the record and the executable from the same patches (components/post-render.ts)",
    );
  }
  const patches = parsePatches(text);
  if (patches === undefined)
    return fail(`${release.name}: its post-render record's ${RECORD_KEY} is not a post-render input`, "write it with components/post-render.ts");
  return { patches };
}

/**
 * A resource's props with a post-render record's input parsed in place of its text, so that rules
 * walking values (D1's role keys) see the patches' selectors and tolerations as what they are.
 */
export function parsedRecord(r: ResourceView): Tree {
  if (r.type !== CONFIG_MAP_TYPE || get(r.props, ["metadata", "annotations", POST_RENDER_OF]) === undefined) return r.props;
  const text = get(r.props, ["data", RECORD_KEY]);
  if (typeof text !== "string") return r.props;
  try {
    return { ...r.props, data: { ...(r.props.data as Tree), [RECORD_KEY]: JSON.parse(text) as unknown } };
  } catch {
    return r.props;
  }
}

/** RFC 7386 § 2 MergePatch(target, patch). */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Tree = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/**
 * What a release's patches, in order, make of `<kind> <name>` over `rendered` (what the chart
 * renders there that the pack knows of; nothing by default); undefined: no patch reaches it.
 */
export function patchedObject(patches: readonly Patch[], kind: string, name: string, rendered: Tree = {}): Tree | undefined {
  const mine = patches.filter((p) => p.kind === kind && p.name === name);
  if (mine.length === 0) return undefined;
  const out = mine.reduce<unknown>((o, p) => mergePatch(o, p.patch), rendered);
  return isObject(out) ? out : undefined;
}

/**
 * What a release's patches, in order, make of the pod template of `<kind> <name>` over what the
 * chart renders there for a component it places by no value (nothing); undefined: no patch reaches it.
 */
export function patchedPodSpec(patches: readonly Patch[], kind: string, name: string): Tree | undefined {
  const spec = get(patchedObject(patches, kind, name), ["spec", "template", "spec"]);
  return isObject(spec) ? spec : undefined;
}

/**
 * The labels an OpenKeel chart puts on a workload's pods, `<release>-<suffix>`: what its pods are
 * selected by (the contract charts' openkeel.workload, e2e/charts/_shared/_openkeel.tpl).
 */
export function chartPodLabels(release: string, name: string): Record<string, string> {
  return { "app.kubernetes.io/instance": release, "app.kubernetes.io/name": name };
}

/** A label selector (matchLabels, matchExpressions In/NotIn/Exists/DoesNotExist) over pod labels; a missing one selects no pod. */
export function selectsPods(selector: unknown, labels: Record<string, string>): boolean {
  if (!isObject(selector)) return false;
  const matchLabels = isObject(selector.matchLabels) ? selector.matchLabels : {};
  const exprs = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  return (
    Object.entries(matchLabels).every(([k, v]) => labels[k] === v) &&
    exprs.every((e) => {
      const key = String(get(e, ["key"]));
      const values = get(e, ["values"]);
      const inValues = Array.isArray(values) && key in labels && values.includes(labels[key]);
      const op = get(e, ["operator"]);
      return op === "In" ? inValues : op === "NotIn" ? !inValues : op === "Exists" ? key in labels : op === "DoesNotExist" ? !(key in labels) : false;
    })
  );
}

/** Every `labelSelector` under a tree (pod affinity terms, spread constraints), with its path. */
function labelSelectors(tree: unknown, path: string[] = []): { path: string; selector: unknown }[] {
  if (Array.isArray(tree)) return tree.flatMap((v, i) => labelSelectors(v, [...path, String(i)]));
  if (!isObject(tree)) return [];
  return Object.entries(tree).flatMap(([k, v]) => (k === "labelSelector" ? [{ path: [...path, k].join("."), selector: v }] : labelSelectors(v, [...path, k])));
}

/**
 * A label selector a release's patches of `<kind> <name>` write that matches none of the pods the
 * object makes (`podLabels`): an anti-affinity or spread over nothing keeps nothing apart.
 */
export function selectorMisses(release: ResourceView, patches: readonly Patch[], kind: string, name: string, podLabels: Record<string, string>): Finding[] {
  return patches
    .filter((p) => p.kind === kind && p.name === name)
    .flatMap((p) => labelSelectors(p.patch))
    .filter((s) => !selectsPods(s.selector, podLabels))
    .map((s) => ({
      urn: release.urn,
      message: `${release.name}: the post-render patch of ${kind} ${name} writes ${s.path} ${JSON.stringify(s.selector)}, which matches none of its pods (labels ${JSON.stringify(podLabels)}): it keeps nothing apart`,
      fix: `select the pods by the labels they carry: ${JSON.stringify(podLabels)}`,
    }));
}

/** Whether a pod spec's required anti-affinity keeps its own pods (`labels`) apart on `topologyKey`. */
export function apartOn(podSpec: unknown, topologyKey: string, labels: Record<string, string>): boolean {
  const terms = get(podSpec, ["affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"]);
  return Array.isArray(terms) && terms.some((t) => get(t, ["topologyKey"]) === topologyKey && selectsPods(get(t, ["labelSelector"]), labels));
}

/** What a missing patch leaves to say: the targets the release's patches do have. */
export function targetsOf(patches: readonly Patch[]): string {
  return patches.length > 0 ? patches.map((p) => `${p.kind} ${p.name}`).join(", ") : "none";
}

/**
 * Where a release's patches place its workload `<kind> <release>-<suffix>` (a chart that reads no
 * placement for it places it nowhere: any node, no toleration), its name and pod spec after the
 * patches (undefined: no patch reaches it), what the patches target, the label selectors they write
 * that match none of its pods (`misses`), or why its patches cannot be read (`problem`).
 */
export function patchedPlacement(
  resources: ResourceView[],
  release: ResourceView,
  kind: string,
  suffix: string,
): { name: string; placement: EffectivePlacement; podSpec?: Tree; targets: string; misses: Finding[]; problem?: Finding } {
  const name = `${releaseId(release).name}-${suffix}`;
  const { patches, problem } = releasePatches(resources, release);
  const podSpec = patchedPodSpec(patches, kind, name);
  return {
    name,
    placement: effectivePlacement(podSpec ?? {}, valuesOf(release)),
    ...(podSpec ? { podSpec } : {}),
    targets: targetsOf(patches),
    misses: selectorMisses(release, patches, kind, name, chartPodLabels(releaseId(release).name, name)),
    ...(problem ? { problem } : {}),
  };
}
