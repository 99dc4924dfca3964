// What Helm recorded of a release in the cluster: its release records (Secrets of type
// helm.sh/release.v1, labelled owner=helm, name=<release>, status, version), the objects of its
// manifest and its hooks, as Helm v3 writes them (pkg/storage/driver/secrets.go: the release JSON,
// gzipped, base64 in `data.release`, which the API returns base64 again).
import { gunzipSync } from "node:zlib";
import { parseAllDocuments } from "yaml";
import type { Kube, KubeObject } from "./kube";

/** A Helm release record (a Secret of type helm.sh/release.v1). */
export interface HelmReleaseSecret extends KubeObject {
  data: { release: string };
}

/** A hook of a release as Helm records it (pkg/release/hook.go). */
export interface HelmHook {
  name: string;
  kind: string;
  path: string;
  manifest: string;
  events: string[];
}

/** The parts of the release JSON the e2e reads. */
interface HelmReleaseJson {
  manifest: string;
  hooks?: HelmHook[];
  chart?: { metadata?: { name?: string; version?: string } };
}

/** The Helm release records of a release (`status`: of that status only), newest first. */
export async function releaseRecords(kube: Kube, namespace: string, release: string, status?: string): Promise<HelmReleaseSecret[]> {
  const selector = `owner=helm,name=${release}${status ? `,status=${status}` : ""}`;
  const secrets = await kube.list<HelmReleaseSecret>(`/api/v1/namespaces/${namespace}/secrets?labelSelector=${encodeURIComponent(selector)}`);
  return secrets.sort((a, b) => Number(b.metadata.labels?.version) - Number(a.metadata.labels?.version));
}

function releaseJson(record: HelmReleaseSecret): HelmReleaseJson {
  return JSON.parse(gunzipSync(Buffer.from(Buffer.from(record.data.release, "base64").toString("utf8"), "base64")).toString("utf8")) as HelmReleaseJson;
}

const docs = (text: string) =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => !!o?.kind);

/** The objects a deployed Helm release wrote, from its record (hooks aside). */
export function releaseObjects(record: HelmReleaseSecret): KubeObject[] {
  return docs(releaseJson(record).manifest);
}

/** The hooks of a release, each with its objects. */
export function releaseHooks(record: HelmReleaseSecret): (HelmHook & { objects: KubeObject[] })[] {
  return (releaseJson(record).hooks ?? []).map((h) => ({ ...h, objects: docs(h.manifest) }));
}

/** The chart and version a record was installed from. */
export function releaseChart(record: HelmReleaseSecret): string {
  const m = releaseJson(record).chart?.metadata;
  return `${m?.name ?? "?"} ${m?.version ?? "?"}`;
}
