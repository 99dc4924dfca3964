// E2E STAND-IN (never used outside `npm run e2e`): the webhooks that exist only once something in the
// cluster created them, pointed at the admission stand-in (./admission.ts) as soon as they exist.
// The real Helm charts install webhook configurations backed by a Service (cert-manager's
// `cert-manager-webhook`, mariadb-operator's `mariadb-operator-webhook`, both `failurePolicy: Fail`),
// whose CA bundle their own controllers inject at run time (cert-manager's cainjector, the
// mariadb-operator cert-controller). Nothing behind a Service answers on this cluster, so every
// request they intercept would be refused. The mirror cannot rewrite them as it rewrites a
// manifest's (they are templates of a chart archive served unchanged): this does in the cluster
// what those injectors do there, with the stand-in's URL beside the CA bundle.
// A Helm upgrade patches the configuration by a three-way merge of the release's manifest, the
// chart's new one and the live object: it sets `service` again and keeps the live `url` (a field
// only the live object has), which the API server refuses ("exactly one of url or service is
// required"; found by the pin upgrade). So when a release's record turns pending (Helm writes it
// before it updates anything, and updates webhook configurations last: its InstallOrder), its
// pointed configurations get their upstream clientConfig back at once (a watch of Helm's release
// Secrets); each is pointed here again once Helm has written it, or once the release is done.
import * as fs from "node:fs";
import { rewriteForAdmission, type AdmissionStandIn, webhookPath } from "./admission";
import type { Kube, KubeObject } from "./kube";
import { sleep } from "./proc";

type Json = Record<string, unknown>;

const KINDS = [
  { kind: "MutatingWebhookConfiguration", path: "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations" },
  { kind: "ValidatingWebhookConfiguration", path: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations" },
  { kind: "CustomResourceDefinition", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions" },
] as const;

/** The part of an object that holds its webhooks' clientConfigs, as a merge patch writes it back. */
function hooksPart(kind: string, o: Json): Json {
  return kind === "CustomResourceDefinition" ? { spec: { conversion: (o.spec as Json | undefined)?.conversion } } : { webhooks: o.webhooks };
}

/** The Helm release that owns a live object (`<namespace>/<name>`), if any. */
const releaseOf = (o: KubeObject) => {
  const a = o.metadata.annotations ?? {};
  return a["meta.helm.sh/release-name"] ? `${a["meta.helm.sh/release-namespace"]}/${a["meta.helm.sh/release-name"]}` : undefined;
};

/** A Helm release record's status (its label) that means Helm is about to write the release's objects. */
export const helmBusy = (status: string | undefined) => status !== undefined && (status.startsWith("pending-") || status === "uninstalling");

/** Whether any webhook of the object is still backed by a Service (what nothing answers here). */
export function serviceBacked(o: Json): boolean {
  const hooks = Array.isArray(o.webhooks) ? (o.webhooks as Json[]) : [];
  const conversion = ((o.spec as Json | undefined)?.conversion as Json | undefined)?.webhook as Json | undefined;
  return [...hooks, ...(conversion ? [conversion] : [])].some((w) => !!(w.clientConfig as Json | undefined)?.service);
}

/** Who made a live object: its Helm release (Helm's ownership annotations), else its field managers. */
export function liveSource(o: KubeObject): string {
  const a = o.metadata.annotations ?? {};
  if (a["meta.helm.sh/release-name"]) return `Helm release ${a["meta.helm.sh/release-namespace"]}/${a["meta.helm.sh/release-name"]} (pointed in the cluster)`;
  const managers = ((o.metadata.managedFields as { manager?: string }[] | undefined) ?? []).map((m) => m.manager).filter(Boolean);
  return `live object of ${[...new Set(managers)].join(", ") || "an unknown manager"} (pointed in the cluster)`;
}

/** What a pointed object held before, to give back while Helm writes it. */
interface Pointed {
  kind: string;
  path: string;
  name: string;
  release?: string | undefined;
  upstream: Json;
  /** the resourceVersion the restore left: until Helm writes the object, it is not pointed again */
  restoredAt?: string | undefined;
  /** a restore under way: not pointed meanwhile */
  restoring?: boolean | undefined;
}

export class LiveWebhooks {
  private stopped = false;
  private running: Promise<void>[] = [];
  private readonly abort = new AbortController();
  private readonly objects = new Map<string, Pointed>();
  /** releases (`<namespace>/<name>`) Helm is installing, upgrading, rolling back or uninstalling */
  private readonly busy = new Set<string>();
  /** one line per object pointed (and per time it was pointed again) */
  readonly pointed: string[] = [];
  /** one line per object given its upstream clientConfig back for a Helm operation */
  readonly restored: string[] = [];
  readonly errors = new Set<string>();

  constructor(
    private readonly kube: Kube,
    private readonly admission: AdmissionStandIn,
    private readonly log: string,
  ) {}

  /** One pass: every service-backed webhook of the cluster pointed at the stand-in (not one Helm is about to write). */
  async once(): Promise<void> {
    for (const k of KINDS) {
      for (const o of await this.kube.list<KubeObject>(k.path)) {
        if (!serviceBacked(o)) continue;
        const key = `${k.kind}/${o.metadata.name}`;
        const release = releaseOf(o);
        const before = this.objects.get(key);
        if (before?.restoring || (release && this.busy.has(release) && before?.restoredAt === o.metadata.resourceVersion)) continue;
        const obj = structuredClone({ ...o, kind: k.kind }) as Json;
        const upstream = structuredClone(hooksPart(k.kind, obj));
        const source = liveSource(o);
        const { rewritten } = rewriteForAdmission([obj], this.admission.endpoint, source);
        const known = new Set(this.admission.webhooks.map((w) => webhookPath(w.kind, w.configuration, w.webhook)));
        this.admission.webhooks.push(...rewritten.filter((w) => !known.has(webhookPath(w.kind, w.configuration, w.webhook))));
        // the resourceVersion makes it a conditional update: a concurrent change (Helm's) wins, the next pass tries again
        const patch = { metadata: { resourceVersion: o.metadata.resourceVersion }, ...hooksPart(k.kind, obj) };
        const res = await this.kube.request("PATCH", `${k.path}/${o.metadata.name}`, patch, "application/merge-patch+json");
        const line = `${new Date().toISOString()} ${k.kind} ${o.metadata.name} (${source}): ${rewritten.map((w) => `${w.webhook} was ${w.upstream}`).join(", ")}`;
        fs.appendFileSync(this.log, `${line} → ${res.status}\n`);
        if (res.status < 300) {
          this.pointed.push(line);
          this.objects.set(key, { kind: k.kind, path: k.path, name: o.metadata.name, release, upstream });
        } else if (res.status !== 409) this.errors.add(`PATCH ${k.kind} ${o.metadata.name}: ${res.status} ${res.text.slice(0, 300)}`);
      }
    }
  }

  /** Helm is about to write `release`'s objects: its pointed configurations get their upstream clientConfig back. */
  private async restore(release: string, status: string): Promise<void> {
    const mine = [...this.objects.values()].filter((x) => x.release === release);
    for (const p of mine) p.restoring = true;
    for (const p of mine) {
      const res = await this.kube.request<KubeObject>("PATCH", `${p.path}/${p.name}`, p.upstream, "application/merge-patch+json");
      if (res.status < 300) p.restoredAt = String(res.body.metadata.resourceVersion);
      p.restoring = false;
      const line = `${new Date().toISOString()} ${p.kind} ${p.name}: upstream clientConfig back (Helm release ${release} ${status}) → ${res.status}`;
      fs.appendFileSync(this.log, `${line}\n`);
      if (res.status < 300) this.restored.push(line);
      else if (res.status !== 404) this.errors.add(`restore ${p.kind} ${p.name}: ${res.status} ${res.text.slice(0, 300)}`);
    }
  }

  /** A Helm release record changed: its release busy while it is pending, done once it is not. */
  private async onRecord(o: KubeObject): Promise<void> {
    const { name, status } = o.metadata.labels ?? {};
    if (!name) return;
    const release = `${o.metadata.namespace}/${name}`;
    if (helmBusy(status)) {
      if (this.busy.has(release)) return;
      this.busy.add(release);
      await this.restore(release, status);
    } else if (status === "deployed" || status === "failed") this.busy.delete(release);
  }

  /** Helm's release records, listed then watched, again after every end of the stream. */
  private async watchReleases(): Promise<void> {
    const path = `/api/v1/secrets?labelSelector=${encodeURIComponent("owner=helm")}`;
    while (!this.stopped) {
      try {
        const list = await this.kube.get<{ metadata: { resourceVersion: string }; items: KubeObject[] }>(path);
        for (const o of list?.items ?? []) await this.onRecord(o);
        let queue = Promise.resolve();
        await this.kube.watch(
          `${path}&watch=1&resourceVersion=${list?.metadata.resourceVersion ?? ""}&timeoutSeconds=240`,
          (type, o) => {
            if (type === "ADDED" || type === "MODIFIED") queue = queue.then(() => this.onRecord(o));
          },
          this.abort.signal,
        );
        await queue;
      } catch (e) {
        this.errors.add((e as Error).message);
        await sleep(1000);
      }
    }
  }

  start(): void {
    const poll = async () => {
      while (!this.stopped) {
        try {
          await this.once();
        } catch (e) {
          this.errors.add((e as Error).message); // the API server may be restarting (step 7)
        }
        await sleep(1000);
      }
    };
    this.running = [poll(), this.watchReleases()];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await Promise.all(this.running);
  }
}
