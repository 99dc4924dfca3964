// E2E STAND-IN (never used outside `npm run e2e`): the webhooks that exist only once something in the
// cluster created them, pointed at the admission stand-in (./admission.ts) as soon as they exist.
// The real Helm charts install webhook configurations backed by a Service (cert-manager's
// `cert-manager-webhook`, mariadb-operator's `mariadb-operator-webhook`, both `failurePolicy: Fail`),
// whose CA bundle their own controllers inject at run time (cert-manager's cainjector, the
// mariadb-operator cert-controller). Nothing behind a Service answers on this cluster, so every
// request they intercept would be refused. The mirror cannot rewrite them as it rewrites a
// manifest's (they are templates of a chart archive served unchanged): this does in the cluster
// what those injectors do there, with the stand-in's URL beside the CA bundle. A Helm upgrade puts
// the Service back (its three-way merge); the next poll points it here again.
import * as fs from "node:fs";
import { rewriteForAdmission, type AdmissionStandIn, webhookPath } from "./admission";
import type { Kube, KubeObject } from "./kube";
import { sleep } from "./proc";

type Json = Record<string, unknown>;

const KINDS = [
  { kind: "MutatingWebhookConfiguration", path: "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", field: "webhooks" },
  { kind: "ValidatingWebhookConfiguration", path: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", field: "webhooks" },
  { kind: "CustomResourceDefinition", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", field: "spec" },
] as const;

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

export class LiveWebhooks {
  private stopped = false;
  private running?: Promise<void>;
  /** one line per object pointed (and per time it was pointed again) */
  readonly pointed: string[] = [];
  readonly errors = new Set<string>();

  constructor(
    private readonly kube: Kube,
    private readonly admission: AdmissionStandIn,
    private readonly log: string,
  ) {}

  /** One pass: every service-backed webhook of the cluster pointed at the stand-in. */
  async once(): Promise<void> {
    for (const k of KINDS) {
      for (const o of await this.kube.list<KubeObject>(k.path)) {
        if (!serviceBacked(o)) continue;
        const obj = { ...o, kind: k.kind } as Json;
        const source = liveSource(o);
        const { rewritten } = rewriteForAdmission([obj], this.admission.endpoint, source);
        const known = new Set(this.admission.webhooks.map((w) => webhookPath(w.kind, w.configuration, w.webhook)));
        this.admission.webhooks.push(...rewritten.filter((w) => !known.has(webhookPath(w.kind, w.configuration, w.webhook))));
        // the resourceVersion makes it a conditional update: a concurrent change (Helm's) wins, the next pass tries again
        const patch = { metadata: { resourceVersion: o.metadata.resourceVersion }, [k.field]: obj[k.field] };
        const res = await this.kube.request("PATCH", `${k.path}/${o.metadata.name}`, patch, "application/merge-patch+json");
        const line = `${new Date().toISOString()} ${k.kind} ${o.metadata.name} (${source}): ${rewritten.map((w) => `${w.webhook} was ${w.upstream}`).join(", ")}`;
        fs.appendFileSync(this.log, `${line} → ${res.status}\n`);
        if (res.status < 300) this.pointed.push(line);
        else if (res.status !== 409) this.errors.add(`PATCH ${k.kind} ${o.metadata.name}: ${res.status} ${res.text.slice(0, 300)}`);
      }
    }
  }

  start(): void {
    this.running = (async () => {
      while (!this.stopped) {
        try {
          await this.once();
        } catch (e) {
          this.errors.add((e as Error).message); // the API server may be restarting (step 7)
        }
        await sleep(1000);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}
