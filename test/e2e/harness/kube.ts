// A small Kubernetes REST client for the e2e (the driver's checks and the stand-in controller poll a
// lot; a kubectl process per request would cost more CPU than the cluster). It reads a kubeconfig's
// current context: client certificates or a bearer token, inline (`*-data`) or as files. Anything
// else (exec plugins, auth providers) is not supported: use a kubeconfig with certificates.
import * as fs from "node:fs";
import * as https from "node:https";
import * as path from "node:path";
import { parse } from "yaml";

export interface KubeResponse<T = any> {
  status: number;
  body: T;
  text: string;
}

type Obj = Record<string, any>;

function readMaybe(data: string | undefined, file: string | undefined, base: string): Buffer | undefined {
  if (data) return Buffer.from(data, "base64");
  if (file) return fs.readFileSync(path.resolve(base, file));
  return undefined;
}

export class Kube {
  private agent: https.Agent;
  private server: URL;
  private token?: string;

  constructor(readonly kubeconfig: string) {
    const cfg = parse(fs.readFileSync(kubeconfig, "utf8")) as Obj;
    const base = path.dirname(kubeconfig);
    const ctxName = cfg["current-context"];
    const ctx = (cfg.contexts as Obj[]).find((c) => c.name === ctxName)?.context ?? cfg.contexts?.[0]?.context;
    const cluster = (cfg.clusters as Obj[]).find((c) => c.name === ctx.cluster)?.cluster;
    const user = (cfg.users as Obj[]).find((u) => u.name === ctx.user)?.user ?? {};
    if (user.exec || user["auth-provider"])
      throw new Error(
        `${kubeconfig}: exec/auth-provider credentials are not supported by the e2e client; use a kubeconfig with client certificates or a token`,
      );
    this.server = new URL(cluster.server);
    this.token = user.token ?? (user.tokenFile ? fs.readFileSync(path.resolve(base, user.tokenFile), "utf8").trim() : undefined);
    this.agent = new https.Agent({
      keepAlive: true,
      maxSockets: 8,
      ca: readMaybe(cluster["certificate-authority-data"], cluster["certificate-authority"], base),
      cert: readMaybe(user["client-certificate-data"], user["client-certificate"], base),
      key: readMaybe(user["client-key-data"], user["client-key"], base),
      rejectUnauthorized: cluster["insecure-skip-tls-verify"] !== true,
    });
  }

  request<T = any>(method: string, apiPath: string, body?: unknown, contentType = "application/json", timeoutMs = 30_000): Promise<KubeResponse<T>> {
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
            let parsed: any = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              /* not JSON */
            }
            resolve({ status: res.statusCode ?? 0, body: parsed, text });
          });
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method} ${apiPath}: timeout`)));
      req.on("error", reject);
      if (data !== undefined) req.write(data);
      req.end();
    });
  }

  async get<T = any>(apiPath: string): Promise<T | undefined> {
    const r = await this.request<T>("GET", apiPath);
    if (r.status === 404) return undefined;
    if (r.status >= 300) throw new Error(`GET ${apiPath}: ${r.status} ${r.text.slice(0, 500)}`);
    return r.body;
  }

  async list(apiPath: string): Promise<Obj[]> {
    return ((await this.get<Obj>(apiPath))?.items as Obj[]) ?? [];
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
