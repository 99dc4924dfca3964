// A small Kubernetes REST client for the e2e (the driver's checks and the stand-in controller poll a
// lot; a kubectl process per request would cost more CPU than the cluster). It reads a kubeconfig's
// current context: client certificates or a bearer token, inline (`*-data`) or as files. Anything
// else (exec plugins, auth providers) is not supported: use a kubeconfig with certificates.
import * as fs from "node:fs";
import * as https from "node:https";
import * as path from "node:path";
import { parse } from "yaml";

export interface KubeResponse<T = unknown> {
  status: number;
  body: T;
  text: string;
}

/** The metadata of an object, the fields the e2e reads. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

export interface Condition {
  type: string;
  status: string;
  [key: string]: unknown;
}

/**
 * A Kubernetes object as the API server (or a rendered file) holds it. `get` and `list` type the
 * answer by what the caller asked for (a Secret, a Subscription): the API server's answer to a
 * path is the type of that path, as with any REST client.
 */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  status?: { conditions?: Condition[]; [key: string]: unknown };
  [key: string]: unknown;
}

/** The parts of a kubeconfig the client reads. */
interface Kubeconfig {
  "current-context"?: string;
  contexts?: { name: string; context: { cluster: string; user: string } }[];
  clusters?: { name: string; cluster: Record<string, string | boolean | undefined> & { server: string } }[];
  users?: { name: string; user: Record<string, unknown> }[];
}

function text(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function readMaybe(data: string | undefined, file: string | undefined, base: string): Buffer | undefined {
  if (data) return Buffer.from(data, "base64");
  if (file) return fs.readFileSync(path.resolve(base, file));
  return undefined;
}

export class Kube {
  private agent: https.Agent;
  private server: URL;
  private token: string | undefined;
  /** The kubeconfig's current context, and the server of its cluster as written (what a stack binds: openkeel:cluster). */
  readonly context: string | undefined;
  readonly apiServer: string | undefined;

  constructor(readonly kubeconfig: string) {
    const cfg = parse(fs.readFileSync(kubeconfig, "utf8")) as Kubeconfig;
    const base = path.dirname(kubeconfig);
    this.context = cfg["current-context"];
    const current = cfg.contexts?.find((c) => c.name === this.context)?.context;
    this.apiServer = cfg.clusters?.find((c) => c.name === current?.cluster)?.cluster?.server;
    const ctx = current ?? cfg.contexts?.[0]?.context;
    const cluster = cfg.clusters?.find((c) => c.name === ctx?.cluster)?.cluster;
    if (!ctx || !cluster) throw new Error(`${kubeconfig}: no context with a cluster`);
    const user = cfg.users?.find((u) => u.name === ctx.user)?.user ?? {};
    if (user.exec || user["auth-provider"])
      throw new Error(
        `${kubeconfig}: exec/auth-provider credentials are not supported by the e2e client; use a kubeconfig with client certificates or a token`,
      );
    this.server = new URL(cluster.server);
    const tokenFile = text(user.tokenFile);
    this.token = text(user.token) ?? (tokenFile ? fs.readFileSync(path.resolve(base, tokenFile), "utf8").trim() : undefined);
    this.agent = new https.Agent({
      keepAlive: true,
      maxSockets: 8,
      ca: readMaybe(text(cluster["certificate-authority-data"]), text(cluster["certificate-authority"]), base),
      cert: readMaybe(text(user["client-certificate-data"]), text(user["client-certificate"]), base),
      key: readMaybe(text(user["client-key-data"]), text(user["client-key"]), base),
      rejectUnauthorized: cluster["insecure-skip-tls-verify"] !== true,
    });
  }

  request<T = unknown>(method: string, apiPath: string, body?: unknown, contentType = "application/json", timeoutMs = 30_000): Promise<KubeResponse<T>> {
    return new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
      const req = https.request(
        {
          method,
          host: this.server.hostname,
          port: this.server.port || 443,
          path: `${this.server.pathname.replace(/\/$/, "")}${apiPath}`,
          agent: this.agent,
          timeout: timeoutMs,
          headers: {
            accept: "application/json",
            ...(data !== undefined ? { "content-type": contentType, "content-length": Buffer.byteLength(data) } : {}),
            ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              /* not JSON */
            }
            resolve({ status: res.statusCode ?? 0, body: parsed as T, text });
          });
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method} ${apiPath}: timeout`)));
      req.on("error", reject);
      if (data !== undefined) req.write(data);
      req.end();
    });
  }

  async get<T = KubeObject>(apiPath: string): Promise<T | undefined> {
    const r = await this.request<T>("GET", apiPath);
    if (r.status === 404) return undefined;
    if (r.status >= 300) throw new Error(`GET ${apiPath}: ${r.status} ${r.text.slice(0, 500)}`);
    return r.body;
  }

  async list<T = KubeObject>(apiPath: string): Promise<T[]> {
    return (await this.get<{ items?: T[] }>(apiPath))?.items ?? [];
  }

  /** Create; an existing object is left as it is. Returns the status code. */
  async create(apiPath: string, obj: unknown): Promise<KubeResponse> {
    const r = await this.request("POST", apiPath, obj);
    if (r.status >= 300 && r.status !== 409) throw new Error(`POST ${apiPath}: ${r.status} ${r.text.slice(0, 800)}`);
    return r;
  }

  async mergePatch(apiPath: string, patch: unknown): Promise<KubeResponse> {
    const r = await this.request("PATCH", apiPath, patch, "application/merge-patch+json");
    if (r.status >= 300) throw new Error(`PATCH ${apiPath}: ${r.status} ${r.text.slice(0, 800)}`);
    return r;
  }

  /**
   * A watch (`apiPath` with `watch=1`): `onEvent` for each event until the server ends the stream
   * (its timeout, a restart) or `signal` aborts; resolves then, rejects on a connection error.
   */
  watch(apiPath: string, onEvent: (type: string, obj: KubeObject) => void, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          method: "GET",
          host: this.server.hostname,
          port: this.server.port || 443,
          path: `${this.server.pathname.replace(/\/$/, "")}${apiPath}`,
          // its own connection: a watch holds it for minutes
          agent: new https.Agent({ ...this.agent.options, keepAlive: false }),
          signal,
          headers: { accept: "application/json", ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) },
        },
        (res) => {
          if ((res.statusCode ?? 0) >= 300) {
            res.resume();
            reject(new Error(`watch ${apiPath}: ${res.statusCode}`));
            return;
          }
          let buffered = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            buffered += chunk;
            let nl: number;
            while ((nl = buffered.indexOf("\n")) >= 0) {
              const line = buffered.slice(0, nl).trim();
              buffered = buffered.slice(nl + 1);
              if (line) {
                const e = JSON.parse(line) as { type: string; object: KubeObject };
                onEvent(e.type, e.object);
              }
            }
          });
          res.on("end", () => resolve());
          res.on("error", (e) => (signal.aborted ? resolve() : reject(e)));
        },
      );
      req.on("error", (e) => (signal.aborted ? resolve() : reject(e)));
      req.end();
    });
  }

  async ready(): Promise<boolean> {
    try {
      return (await this.request("GET", "/readyz", undefined, undefined, 3000)).status === 200;
    } catch {
      return false;
    }
  }

  close(): void {
    this.agent.destroy();
  }
}
