// Every pod the scheduler bound during a stack's run, kept after the pod is gone: a Helm hook's Job
// (cert-manager's startupapicheck, Kube-OVN's and NFD's post-delete hooks, Longhorn's upgrade and
// uninstall hooks) runs, kwok completes its pod, and Helm deletes the Job (hook-delete-policy
// hook-succeeded) within seconds, so the placement check cannot find its pods afterwards. A list,
// then a watch from the list's resourceVersion, again after every end of the stream (its timeout,
// the API server's restart in step 7).
import type { Kube, KubeObject } from "./kube";
import { sleep } from "./proc";
import { STARTED_ANNOTATION } from "./readiness";

/** A pod as it was when the scheduler had bound it. */
export interface BoundPod {
  namespace: string;
  name: string;
  uid: string;
  node: string;
  labels: Record<string, string>;
  /** its controller (`Job <name>`, `ReplicaSet <name>` …), if any */
  owner?: { kind: string; name: string };
  /** when the log first saw it bound */
  seen: string;
}

interface PodObject extends KubeObject {
  spec?: { nodeName?: string };
  metadata: KubeObject["metadata"] & { ownerReferences?: { kind: string; name: string; controller?: boolean }[]; annotations?: Record<string, string> };
}

export class PodLog {
  private readonly bound = new Map<string, BoundPod>();
  /** Per pod kwok held (readiness.ts): seconds from its binding to its start. */
  private readonly held = new Map<string, number>();
  private readonly abort = new AbortController();
  private running?: Promise<void>;
  /** the watch's errors, each once (the API server restarts on purpose in step 7) */
  readonly errors = new Set<string>();

  constructor(private readonly kube: Kube) {}

  private record(p: PodObject): void {
    const uid = p.metadata.uid;
    const node = p.spec?.nodeName;
    const started = p.metadata.annotations?.[STARTED_ANNOTATION];
    const scheduled = p.status?.conditions?.find((c) => c.type === "PodScheduled")?.lastTransitionTime as string | undefined;
    if (uid && started && scheduled && !this.held.has(uid)) this.held.set(uid, (Date.parse(started) - Date.parse(scheduled)) / 1000);
    if (!uid || !node || this.bound.has(uid)) return;
    const owner = (p.metadata.ownerReferences ?? []).find((o) => o.controller) ?? p.metadata.ownerReferences?.[0];
    this.bound.set(uid, {
      namespace: p.metadata.namespace ?? "",
      name: p.metadata.name,
      uid,
      node,
      labels: p.metadata.labels ?? {},
      ...(owner ? { owner: { kind: owner.kind, name: owner.name } } : {}),
      seen: new Date().toISOString(),
    });
  }

  start(): void {
    this.running = (async () => {
      while (!this.abort.signal.aborted) {
        try {
          const list = await this.kube.get<{ metadata: { resourceVersion: string }; items: PodObject[] }>("/api/v1/pods");
          for (const p of list?.items ?? []) this.record(p);
          const rv = list?.metadata.resourceVersion ?? "";
          await this.kube.watch(
            `/api/v1/pods?watch=1&resourceVersion=${rv}&timeoutSeconds=240`,
            (type, o) => (type === "ADDED" || type === "MODIFIED" || type === "DELETED") && this.record(o as PodObject),
            this.abort.signal,
          );
        } catch (e) {
          this.errors.add((e as Error).message);
          await sleep(1000);
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  /** How long each pod kwok held waited, from its binding to its start, in seconds (readiness.ts). */
  startWaits(): number[] {
    return [...this.held.values()];
  }

  /** The pods a Job of that namespace and name ran. */
  ofJob(namespace: string, job: string): BoundPod[] {
    return [...this.bound.values()].filter((p) => p.namespace === namespace && p.owner?.kind === "Job" && p.owner.name === job);
  }
}
