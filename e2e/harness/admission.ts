// E2E STAND-IN (never used outside `npm run e2e`): the admission stand-in. An HTTPS server on
// 127.0.0.1 that answers every admission webhook and conversion webhook of the upstream manifests
// the mirror serves: on the kubelet-less cluster nothing behind a Service answers (no kube-proxy, no
// pod network), and a webhook with `failurePolicy: Fail` would refuse every request it intercepts.
// The mirror points each configuration's clientConfig at this server (rewriteForAdmission, with the
// CA bundle generated here) instead of deleting the configuration: the API server still calls every
// webhook on every request it matches, dry runs included, and the report lists what each one saw.
// It admits everything unchanged (no defaulting patch) and converts by rewriting apiVersion only,
// but for the webhooks whose decision an e2e step needs (handlers): KubeVirt's eviction admitter,
// NHC's rule while a check remediates.
// On the e2e's own cluster it answers a webhook only while the Service upstream pointed it at has a
// ready endpoint (`reachable`): what the API server would reach there is the webhook's pod, once
// the scheduler placed it and kwok reported it Ready. Before that the call fails (HTTP 500 here, a
// refused connection there), and a `failurePolicy: Fail` webhook refuses the request, as a cluster
// whose webhook pod is not ready yet does.
import * as fs from "node:fs";
import type { ServerResponse } from "node:http";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { run } from "./proc";

/** A webhook the stand-in answers for: its configuration and what upstream pointed it at. */
export interface StandInWebhook {
  /** MutatingWebhookConfiguration, ValidatingWebhookConfiguration or CustomResourceDefinition (conversion). */
  kind: string;
  configuration: string;
  webhook: string;
  /** The upstream clientConfig it replaced, e.g. `service rabbitmq-system/cluster-operator-webhook-service:443/mutate-…`. */
  upstream: string;
  /** The manifest it came from (`<host>/<path>`). */
  manifest: string;
  /** The Service upstream pointed it at, if any. */
  service?: { namespace: string; name: string };
}

/** One request the stand-in answered. */
export interface AnsweredRequest {
  /** The path it was called on (webhookPath of one webhook). */
  path: string;
  /** e.g. `CREATE rabbitmq.com/v1beta1 RabbitmqCluster openkeel/openkeel-chart-rabbitmq (dry run)`, or a conversion. */
  what: string;
  status: number;
  /** when it was answered */
  at?: string;
}

/** Where the stand-in is: the base URL the mirror writes into the configurations, and their caBundle. */
export interface AdmissionEndpoint {
  url: string;
  caBundle: string;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

const WEBHOOK_CONFIGURATIONS = new Set(["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]);

/** The stand-in's path of one webhook: what it was called for is in the URL (an AdmissionReview does not name its webhook). */
export function webhookPath(kind: string, configuration: string, webhook: string): string {
  return `/${encodeURIComponent(kind)}/${encodeURIComponent(configuration)}/${encodeURIComponent(webhook)}`;
}

function describeClientConfig(cc: unknown): string {
  const c = isObj(cc) ? cc : {};
  const svc = isObj(c.service) ? c.service : undefined;
  if (svc) return `service ${svc.namespace}/${svc.name}:${svc.port ?? 443}${svc.path ?? ""}`;
  return typeof c.url === "string" ? `url ${c.url}` : "no clientConfig";
}

/**
 * Point every webhook of the manifest's objects at the stand-in (in place): each webhook of a
 * Mutating/ValidatingWebhookConfiguration, each CRD's conversion webhook. Returns what it rewrote,
 * and what it cannot stand in for (an aggregated APIService: its service cannot be a URL).
 */
export function rewriteForAdmission(objects: Json[], at: AdmissionEndpoint, manifest: string): { rewritten: StandInWebhook[]; problems: string[] } {
  const rewritten: StandInWebhook[] = [];
  const problems: string[] = [];
  const point = (kind: string, configuration: string, webhook: string, holder: Json) => {
    const svc = isObj(holder.clientConfig) && isObj(holder.clientConfig.service) ? holder.clientConfig.service : undefined;
    const service = svc ? { namespace: String(svc.namespace), name: String(svc.name) } : undefined;
    rewritten.push({ kind, configuration, webhook, upstream: describeClientConfig(holder.clientConfig), manifest, ...(service ? { service } : {}) });
    holder.clientConfig = { url: `${at.url}${webhookPath(kind, configuration, webhook)}`, caBundle: at.caBundle };
  };
  for (const o of objects) {
    const kind = String(o.kind);
    const name = String((o.metadata as Json | undefined)?.name);
    if (WEBHOOK_CONFIGURATIONS.has(kind)) {
      for (const w of Array.isArray(o.webhooks) ? o.webhooks : []) if (isObj(w)) point(kind, name, String(w.name), w);
    } else if (kind === "CustomResourceDefinition") {
      const conversion = isObj(o.spec) && isObj(o.spec.conversion) ? o.spec.conversion : undefined;
      if (conversion?.strategy === "Webhook" && isObj(conversion.webhook)) point(kind, name, "conversion", conversion.webhook);
    } else if (kind === "APIService" && isObj(o.spec) && isObj(o.spec.service)) {
      problems.push(`${manifest}: APIService ${name} is served by ${describeClientConfig({ service: o.spec.service })}, which the e2e cannot stand in for`);
    }
  }
  return { rewritten, problems };
}

/** The answer to an AdmissionReview: allowed, unchanged. */
function admit(review: Json): { body: Json; what: string } {
  const req = isObj(review.request) ? review.request : {};
  const k = isObj(req.kind) ? req.kind : {};
  const gv = [k.group, k.version].filter(Boolean).join("/");
  const target = `${req.namespace ? `${req.namespace}/` : ""}${req.name ?? "(generated name)"}`;
  return {
    body: { apiVersion: review.apiVersion ?? "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid: req.uid, allowed: true } },
    what: `${req.operation} ${gv} ${k.kind} ${target}${req.dryRun ? " (dry run)" : ""}`,
  };
}

/** The answer to a ConversionReview: every object at the desired apiVersion, its fields as they are. */
function convert(review: Json): { body: Json; what: string } {
  const req = isObj(review.request) ? review.request : {};
  const objects = (Array.isArray(req.objects) ? req.objects : []).filter(isObj);
  return {
    body: {
      apiVersion: review.apiVersion ?? "apiextensions.k8s.io/v1",
      kind: "ConversionReview",
      response: { uid: req.uid, convertedObjects: objects.map((o) => ({ ...o, apiVersion: req.desiredAPIVersion })), result: { status: "Success" } },
    },
    what: `convert ${objects.length} object(s) to ${req.desiredAPIVersion}`,
  };
}

/** A CA and a serving certificate for 127.0.0.1, made with openssl (as cluster.sh makes the cluster's). */
async function certificates(dir: string, log: string): Promise<{ ca: string; cert: string; key: string }> {
  fs.mkdirSync(dir, { recursive: true });
  const f = (n: string) => path.join(dir, n);
  fs.writeFileSync(f("server.ext"), "subjectAltName = IP:127.0.0.1\nextendedKeyUsage = serverAuth\nkeyUsage = digitalSignature, keyEncipherment\n");
  const steps: string[][] = [
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      f("ca.key"),
      "-out",
      f("ca.crt"),
      "-days",
      "2",
      "-subj",
      "/CN=openkeel-e2e-admission-stand-in-ca",
    ],
    ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", f("server.key"), "-out", f("server.csr"), "-subj", "/CN=127.0.0.1"],
    [
      "x509",
      "-req",
      "-in",
      f("server.csr"),
      "-CA",
      f("ca.crt"),
      "-CAkey",
      f("ca.key"),
      "-CAcreateserial",
      "-out",
      f("server.crt"),
      "-days",
      "2",
      "-extfile",
      f("server.ext"),
    ],
  ];
  for (const args of steps) {
    const res = await run("openssl", args, { log });
    if (res.code !== 0) throw new Error(`openssl ${args[0]} exited ${res.code}: ${res.stderr.slice(-500)}`);
  }
  return { ca: fs.readFileSync(f("ca.crt"), "utf8"), cert: fs.readFileSync(f("server.crt"), "utf8"), key: fs.readFileSync(f("server.key"), "utf8") };
}

export class AdmissionStandIn {
  readonly answered: AnsweredRequest[] = [];
  /** Every webhook the mirror pointed here. */
  readonly webhooks: StandInWebhook[] = [];
  /** Webhooks that decide (kubevirt-eviction.ts), by path: the others admit unchanged. */
  readonly handlers = new Map<string, (review: Json) => Promise<{ body: Json; what: string }>>();
  /** Webhooks that decide by their name, whatever configuration holds them (OLM names its configurations `<generateName>-<random>`: nhc-change.ts). */
  readonly handlersByWebhook = new Map<string, (review: Json) => Promise<{ body: Json; what: string }>>();
  /** Whether a Service has a ready endpoint (set on the e2e's own cluster); unset, every webhook answers. */
  reachable?: (service: { namespace: string; name: string }) => Promise<boolean>;
  private server?: https.Server;
  endpoint: AdmissionEndpoint = { url: "", caBundle: "" };

  /** Generate the certificates in `dir` and listen on 127.0.0.1 (a free port). */
  async start(dir: string, log: string): Promise<AdmissionEndpoint> {
    const { ca, cert, key } = await certificates(dir, log);
    this.server = https.createServer({ cert, key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => void this.answer((req.url ?? "/").split("?")[0], Buffer.concat(chunks).toString("utf8"), res));
    });
    await new Promise<void>((ok) => this.server!.listen(0, "127.0.0.1", ok));
    this.endpoint = { url: `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`, caBundle: Buffer.from(ca).toString("base64") };
    return this.endpoint;
  }

  private async answer(p: string, text: string, res: ServerResponse): Promise<void> {
    let status = 200;
    let body: Json;
    let what: string;
    try {
      const review = JSON.parse(text) as Json;
      const hook = this.webhooks.find((w) => webhookPath(w.kind, w.configuration, w.webhook) === p);
      if (!hook) throw new Error(`no webhook of the served manifests at ${p}`);
      const decide = this.handlers.get(p) ?? this.handlersByWebhook.get(hook.webhook);
      ({ body, what } = decide ? await decide(review) : review.kind === "ConversionReview" ? convert(review) : admit(review));
      if (hook.service && this.reachable && !(await this.reachable(hook.service).catch(() => false))) {
        status = 500;
        body = { error: `no ready endpoint behind service ${hook.service.namespace}/${hook.service.name}` };
        what = `UNREACHABLE (no ready endpoint of service ${hook.service.namespace}/${hook.service.name}: the call fails): ${what}`;
      }
    } catch (e) {
      status = 400;
      body = { error: (e as Error).message };
      what = `refused: ${(e as Error).message}`;
    }
    this.answered.push({ path: p, what, status, at: new Date().toISOString() });
    const out = JSON.stringify(body);
    // Each answer closes its connection. Kept alive, Node closes it after 5 s idle (the server's
    // keepAliveTimeout), and an API server that reuses it at that moment gets "connection reset by
    // peer" for its POST, which Go's transport does not retry (net/http transport.go
    // shouldRetryRequest: a request on a reused connection is replayed only if it is idempotent,
    // request.go isReplayable): the object's create fails (seen in CI: a Certificate of the
    // RabbitMQ operator, 2026-12-06).
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(out), connection: "close" });
    res.end(out);
  }

  /** The report's lines: every webhook it stood in for, with what it answered; then any request it refused. */
  summary(): string[] {
    const known = new Set(this.webhooks.map((w) => webhookPath(w.kind, w.configuration, w.webhook)));
    const refused = this.answered.filter((a) => !known.has(a.path)).map((a) => `REFUSED a request on ${a.path}: ${a.what}`);
    const lines = this.webhooks.map((w) => {
      const at = webhookPath(w.kind, w.configuration, w.webhook);
      const seen = this.answered.filter((a) => a.path === at);
      const counts = new Map<string, number>();
      for (const a of seen) counts.set(a.what, (counts.get(a.what) ?? 0) + 1);
      const what = [...counts].map(([req, n]) => `${req}${n > 1 ? ` ×${n}` : ""}`);
      return `${w.kind} ${w.configuration} / ${w.webhook} (${w.manifest}; upstream ${w.upstream}): ${seen.length} request(s)${what.length ? `: ${what.join("; ")}` : ""}`;
    });
    return [...lines, ...refused];
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections?.();
    await new Promise<void>((ok) => this.server!.close(() => ok()));
  }
}
