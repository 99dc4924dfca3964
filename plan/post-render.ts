// Post-render patches of a Helm release: what the design requires of an object a chart renders
// where the chart reads no value for it (§ 5.2 "What is implemented" is all the OpenKeel charts
// read). A patch is data of the Plan, rendered into rendered/<stack>/postrender/<release>.yaml for
// review, applied by Helm's post-renderer at apply time (components/post-render.ts) and, before
// they judge anything, by the placement readers to the objects they model: one function applies
// it everywhere (applyPostRender).
//
// A patch is a JSON merge patch (RFC 7386, `kubectl patch --type merge`): maps merge key by key, a
// list or a scalar replaces what the chart rendered, null removes a key. Helm 3 hands the
// post-renderer the release's manifests only, not its hooks (helm.sh/helm/v3@v3.18.6
// pkg/action/action.go renderResources: `pr.Run(b)` runs on the sorted manifests, the hooks are
// returned apart), so a hook is never a target.
import { isPlainObject } from "../config/plain";
export interface PostRenderTarget {
  kind: string;
  name: string;
}

export interface PostRenderPatch {
  /** The one object of the release's manifests it applies to. */
  target: PostRenderTarget;
  /** Why the chart cannot render it: the design row it carries and the chart's gap. */
  why: string;
  /** RFC 7386 merge patch over the rendered object. */
  patch: Record<string, unknown>;
}

/** A patch that cannot apply: its target is missing from the release's manifests, or named twice. */
export class PostRenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PostRenderError";
  }
}

/** RFC 7386 § 2: MergePatch(target, patch). Pure: neither argument is changed. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

const targetId = (t: PostRenderTarget) => `${t.kind} ${t.name}`;

/**
 * The objects of a release after its patches, in their order. Every patch must find exactly one
 * object of its kind and name: a chart that renders it no more (or twice) would otherwise leave
 * the design's requirement silently unmet.
 */
export function applyPostRender<T extends { kind?: unknown; metadata?: { name?: unknown } }>(
  release: string,
  objects: readonly T[],
  patches: readonly PostRenderPatch[],
): T[] {
  const out = [...objects];
  for (const p of patches) {
    const at = out.flatMap((o, i) => (o.kind === p.target.kind && o.metadata?.name === p.target.name ? [i] : []));
    if (at.length !== 1) {
      throw new PostRenderError(
        `post-render of release ${release}: ${at.length === 0 ? "no" : at.length} ${targetId(p.target)} in its manifests (the patch ${at.length === 0 ? "has no target" : "is ambiguous"}: ${p.why})`,
      );
    }
    out[at[0]] = mergePatch(out[at[0]], p.patch) as T;
  }
  return out;
}

/** The object a patch leaves when the chart's rendering is `rendered` (a reader's model of one object). */
export function patchedObject<T extends { kind: string; metadata: { name: string } }>(release: string, rendered: T, patches: readonly PostRenderPatch[]): T {
  const mine = patches.filter((p) => p.target.kind === rendered.kind && p.target.name === rendered.metadata.name);
  return applyPostRender(release, [rendered], mine)[0];
}
