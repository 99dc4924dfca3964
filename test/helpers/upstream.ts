// The pinned upstream release manifests, read where they are: the mirror folder beside the
// checkout (OPENKEEL_MIRROR, else ../shared/mirror: `files/<host>/<path>` of each URL), else, where
// there is none (a GitHub runner), downloaded from the pinned URL into node_modules/.cache. Never
// copied into the repository.
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import { defaultMirrorDir } from "../../e2e/harness/driver";
import { mirroredPath } from "../../e2e/harness/mirror";
import type { UpstreamWorkload } from "../../placement/workloads";
import { REPO } from "./stacks";
import { isPlainObject } from "../../config/plain";

const CACHE = path.join(REPO, "node_modules", ".cache", "openkeel-upstream-manifests");

export type ShippedWorkload = Omit<UpstreamWorkload, "designRoles">;

/** Where a pinned manifest is read from: the mirror folder's file, or (no mirror folder) the download cache. */
export function manifestSource(url: string, mirrorDir = defaultMirrorDir(REPO)): { file: string; mirrored: boolean } {
  if (fs.existsSync(mirrorDir)) return { file: mirroredPath(mirrorDir, url), mirrored: true };
  return { file: mirroredPath(CACHE, url), mirrored: false };
}

/** The text of a pinned manifest (downloaded once when there is no mirror folder). */
export async function pinnedManifest(url: string): Promise<string> {
  const { file, mirrored } = manifestSource(url);
  if (fs.existsSync(file)) return fs.readFileSync(file, "utf8");
  if (mirrored) throw new Error(`${file}: not in the mirror folder (it holds every pinned manifest of platform/versions.ts; add the file there)`);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${res.statusText}`);
  const text = await res.text();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return text;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {});

/** Every Deployment, DaemonSet and StatefulSet of a manifest: what places its pods, as the file says it. */
export function shippedWorkloads(text: string): ShippedWorkload[] {
  const out: ShippedWorkload[] = [];
  for (const doc of parseAllDocuments(text)) {
    const o = obj(doc.toJS());
    if (o.kind !== "Deployment" && o.kind !== "DaemonSet" && o.kind !== "StatefulSet") continue;
    const meta = obj(o.metadata);
    const spec = obj(o.spec);
    const pod = obj(obj(spec.template).spec);
    out.push({
      kind: o.kind,
      namespace: String(meta.namespace),
      name: String(meta.name),
      // Kubernetes' default when the manifest sets none
      ...(o.kind !== "DaemonSet" ? { replicas: typeof spec.replicas === "number" ? spec.replicas : 1 } : {}),
      scheduling: {
        nodeSelector: (pod.nodeSelector as Record<string, string> | undefined) ?? {},
        ...(pod.affinity !== undefined ? { affinity: pod.affinity as UpstreamWorkload["scheduling"]["affinity"] } : {}),
        tolerations: (pod.tolerations as UpstreamWorkload["scheduling"]["tolerations"] | undefined) ?? [],
        ...(pod.hostNetwork === true ? { hostNetwork: true } : {}),
      },
    });
  }
  return out;
}

/** An encoded workload in the shape shippedWorkloads reads (replicas absent = 1, as Kubernetes defaults it). */
export function asShipped(w: UpstreamWorkload): ShippedWorkload {
  const { designRoles: _ours, ...shipped } = w;
  return { ...shipped, ...(w.kind !== "DaemonSet" ? { replicas: w.replicas ?? 1 } : {}) };
}
