// The engine side of the Analyzer protocol, offline: spawn a policy pack the way the Pulumi CLI
// does (`@pulumi/pulumi/cmd/run-policy-pack`, cwd = the pack, stack config in PULUMI_CONFIG), then
// ConfigureStack → GetAnalyzerInfo → Configure (reconciled like the engine) → Remediate + Analyze
// per resource → AnalyzeStack once. PULUMI-FACTS.md § 4.
import { spawn, type ChildProcess } from "node:child_process";
import * as path from "node:path";
import { createInterface } from "node:readline";
import * as A from "@pulumi/pulumi/proto/analyzer_pb";
import { AnalyzerClient } from "@pulumi/pulumi/proto/analyzer_grpc_pb";
import type { Registered } from "./mock-run";

// The proto classes check `instanceof` against the google-protobuf / grpc-js copies that
// @pulumi/pulumi resolves, so requests are built with those exact copies.
const pulumiDir = path.dirname(require.resolve("@pulumi/pulumi/package.json"));
const fromPulumi = (m: string) => require(require.resolve(m, { paths: [pulumiDir] }));
const grpc = fromPulumi("@grpc/grpc-js");
const { Struct } = fromPulumi("google-protobuf/google/protobuf/struct_pb");
const { Empty } = fromPulumi("google-protobuf/google/protobuf/empty_pb");

type EnforcementLevel = "advisory" | "mandatory" | "remediate" | "disabled";
const LEVELS: Record<EnforcementLevel, number> = {
  advisory: A.EnforcementLevel.ADVISORY,
  mandatory: A.EnforcementLevel.MANDATORY,
  disabled: A.EnforcementLevel.DISABLED,
  remediate: A.EnforcementLevel.REMEDIATE,
};
function levelName(n: number): EnforcementLevel {
  return (Object.keys(LEVELS) as EnforcementLevel[]).find((k) => LEVELS[k] === n) ?? "advisory";
}

/** `--policy-pack-config` file content: `{"all": level, "<policy>": level | {enforcementLevel, …}}`. */
export type PolicyPackConfigFile = Record<string, EnforcementLevel | ({ enforcementLevel?: EnforcementLevel } & Record<string, unknown>)>;

interface PolicyInfo {
  name: string;
  description: string;
  enforcementLevel: EnforcementLevel;
  kind: "resource" | "stack" | "unknown";
}

export interface Diagnostic {
  policy: string;
  packName: string;
  packVersion: string;
  level: EnforcementLevel;
  message: string;
  /** The resource the violation is about (resource policies: the analyzed one). Empty: the stack. */
  urn: string;
  /** Name and type of that resource, when it is one of the analyzed resources. */
  resourceName?: string;
  resourceType?: string;
}

/** A problem with the caller's policy configuration (unknown policy, bad level). */
export class PolicyConfigError extends Error {}

/** The engine's ReconcilePolicyPackConfig: every policy's level, then initial config, then the file. */
function reconcilePolicyConfig(
  policies: PolicyInfo[],
  initial: Record<string, { enforcementLevel?: EnforcementLevel; properties: Record<string, unknown> }>,
  file: PolicyPackConfigFile = {},
): Record<string, { enforcementLevel: EnforcementLevel; properties: Record<string, unknown> }> {
  const out: Record<string, { enforcementLevel: EnforcementLevel; properties: Record<string, unknown> }> = {};
  for (const p of policies) out[p.name] = { enforcementLevel: p.enforcementLevel, properties: {} };
  for (const [name, c] of Object.entries(initial)) {
    if (!out[name]) continue;
    if (c.enforcementLevel) out[name].enforcementLevel = c.enforcementLevel;
    Object.assign(out[name].properties, c.properties);
  }
  const checkLevel = (where: string, level: unknown): EnforcementLevel => {
    if (typeof level !== "string" || !(level in LEVELS)) {
      throw new PolicyConfigError(`${where}: enforcement level ${JSON.stringify(level)} is not one of ${Object.keys(LEVELS).join(", ")}`);
    }
    return level as EnforcementLevel;
  };
  if ("all" in file) {
    const all = checkLevel("all", file.all);
    for (const p of Object.values(out)) p.enforcementLevel = all;
  }
  for (const [name, c] of Object.entries(file)) {
    if (name === "all") continue;
    if (!out[name]) {
      throw new PolicyConfigError(`policy ${JSON.stringify(name)} is not in the pack (it has: ${Object.keys(out).join(", ")})`);
    }
    if (typeof c === "string") out[name].enforcementLevel = checkLevel(name, c);
    else {
      const { enforcementLevel, ...properties } = c;
      if (enforcementLevel !== undefined) out[name].enforcementLevel = checkLevel(name, enforcementLevel);
      Object.assign(out[name].properties, properties);
    }
  }
  return out;
}

/** Wire-safe copy: no `undefined`, no functions; unknown values already travel as sentinels. */
function jsonSafe(value: unknown): any {
  if (value === undefined || typeof value === "function") return undefined;
  if (value === null || typeof value !== "object") {
    return typeof value === "number" && !Number.isFinite(value) ? null : value;
  }
  if (Array.isArray(value)) return value.map((v) => jsonSafe(v) ?? null);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const s = jsonSafe(v);
    if (s !== undefined) out[k] = s;
  }
  return out;
}

export interface PackOptions {
  /** The pack folder (holds PulumiPolicy.yaml and package.json). */
  packDir: string;
  project: string;
  stack: string;
  /** The stack config as the engine passes it: `<project>:<key>` → string (objects as JSON). */
  config: Record<string, string>;
  dryRun?: boolean;
}

export interface PackSession {
  info: { name: string; version: string; policies: PolicyInfo[] };
  /** Configure the pack (call once, before analyzing). */
  configure(file?: PolicyPackConfigFile): Promise<void>;
  /** Analyze every resource, then the stack; diagnostics in that order. */
  analyze(resources: Registered[]): Promise<Diagnostic[]>;
  close(): void;
}

function readPort(child: ChildProcess, stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", (l) => resolve(l.trim()));
    child.once("exit", (code) => reject(new Error(`the policy pack exited (code ${code}) before it listened:\n${stderr()}`)));
    child.once("error", reject);
  });
}

/**
 * Linux refuses an environment string longer than 128 KiB (MAX_ARG_STRLEN: spawn fails with
 * E2BIG), and the config of a stack of about a thousand nodes is longer. The pack reads
 * `<project>:environment` only (policy/environment.ts), so past that size it gets the config
 * without the inventory (`<project>:nodes`), then with its environment alone.
 */
export const MAX_CONFIG_ENV = 120 * 1024;

/** Analyze requests in flight at once (npm run bench: about twice as fast as one at a time on 2 cores). */
const ANALYZE_IN_FLIGHT = 8;

export function packConfigEnv(config: Record<string, string>, max = MAX_CONFIG_ENV): string {
  const full = JSON.stringify(config);
  if (Buffer.byteLength(full) <= max) return full;
  const withoutNodes = JSON.stringify(Object.fromEntries(Object.entries(config).filter(([k]) => !/^[^:]+:nodes$/.test(k))));
  if (Buffer.byteLength(withoutNodes) <= max) return withoutNodes;
  return JSON.stringify(Object.fromEntries(Object.entries(config).filter(([k]) => /^[^:]+:environment$/.test(k))));
}

export async function startPack(opts: PackOptions): Promise<PackSession> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PULUMI_CONFIG: packConfigEnv(opts.config),
    PULUMI_PROJECT: opts.project,
    PULUMI_STACK: opts.stack,
    PULUMI_DRY_RUN: String(opts.dryRun ?? true),
    PULUMI_NODEJS_PROJECT: opts.project,
    PULUMI_NODEJS_STACK: opts.stack,
    PULUMI_NODEJS_DRY_RUN: String(opts.dryRun ?? true),
  };
  delete env.PULUMI_CONFIG_SECRET_KEYS;
  const entry = require.resolve("@pulumi/pulumi/cmd/run-policy-pack", { paths: [opts.packDir] });
  // transpile only: npm run typecheck checks the pack; a type-check per start cost seconds (pack-transpile-only.cjs)
  const preload = path.join(__dirname, "pack-transpile-only.cjs");
  const child = spawn(process.execPath, ["-r", preload, entry, "127.0.0.1:0", "."], { cwd: opts.packDir, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += String(d)));
  let port: string;
  try {
    port = await readPort(child, () => stderr);
  } catch (e) {
    child.kill();
    throw e;
  }
  if (!/^\d+$/.test(port)) {
    child.kill();
    throw new Error(`the policy pack printed ${JSON.stringify(port)} instead of its port:\n${stderr}`);
  }
  const client: any = new AnalyzerClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const call = <T>(method: string, req: unknown) =>
    new Promise<T>((resolve, reject) =>
      client[method](req, (err: any, resp: T) => (err ? reject(new Error(`${method}: ${err.details ?? err.message}`)) : resolve(resp))),
    );

  const stackReq = new A.AnalyzerStackConfigureRequest();
  stackReq.setStack(opts.stack);
  stackReq.setProject(opts.project);
  stackReq.setOrganization("organization");
  stackReq.setDryRun(opts.dryRun ?? true);
  for (const [k, v] of Object.entries(opts.config)) stackReq.getConfigMap().set(k, v);
  await call("configureStack", stackReq);

  const rawInfo = await call<A.AnalyzerInfo>("getAnalyzerInfo", new Empty());
  const policies: PolicyInfo[] = rawInfo.getPoliciesList().map((p) => ({
    name: p.getName(),
    description: p.getDescription(),
    enforcementLevel: levelName(p.getEnforcementlevel()),
    kind: p.getPolicyType() === A.PolicyType.POLICY_TYPE_RESOURCE ? "resource" : p.getPolicyType() === A.PolicyType.POLICY_TYPE_STACK ? "stack" : "unknown",
  }));
  const initial: Record<string, { enforcementLevel?: EnforcementLevel; properties: Record<string, unknown> }> = {};
  rawInfo.getInitialconfigMap().forEach((c: A.PolicyConfig, name: string) => {
    initial[name] = { enforcementLevel: levelName(c.getEnforcementlevel()), properties: c.getProperties()?.toJavaScript() ?? {} };
  });
  const info = { name: rawInfo.getName(), version: rawInfo.getVersion(), policies };
  let configured = false;

  const options = (r: Registered) => {
    const o = new A.AnalyzerResourceOptions();
    o.setProtect(r.protect);
    o.setParent(r.parent);
    return o;
  };
  /** What the engine says of every resource it hands the pack: type, name, URN, properties, options. */
  const describe = <M extends A.AnalyzeRequest | A.AnalyzerResource>(m: M, r: Registered, props: Record<string, unknown>): M => {
    m.setType(r.type);
    m.setName(r.name);
    m.setUrn(r.urn);
    m.setProperties(Struct.fromJavaScript(jsonSafe(props)));
    m.setOptions(options(r));
    return m;
  };

  const session: PackSession = {
    info,
    async configure(file) {
      const reconciled = reconcilePolicyConfig(policies, initial, file);
      const req = new A.ConfigureAnalyzerRequest();
      for (const [name, c] of Object.entries(reconciled)) {
        const pc = new A.PolicyConfig();
        pc.setEnforcementlevel(LEVELS[c.enforcementLevel]);
        pc.setProperties(Struct.fromJavaScript(jsonSafe(c.properties)));
        req.getPolicyconfigMap().set(name, pc);
      }
      await call("configure", req);
      configured = true;
    },
    async analyze(resources) {
      if (!configured) await session.configure();
      const byUrn = new Map(resources.map((r) => [r.urn, r]));
      const out: Diagnostic[] = [];
      const collect = (resp: A.AnalyzeResponse, fallback?: Registered) => {
        for (const d of resp.getDiagnosticsList()) {
          const urn = d.getUrn() || fallback?.urn || "";
          const r = byUrn.get(urn);
          out.push({
            policy: d.getPolicyname(),
            packName: d.getPolicypackname(),
            packVersion: d.getPolicypackversion(),
            level: levelName(d.getEnforcementlevel()),
            message: d.getMessage(),
            urn,
            ...(r ? { resourceName: r.name, resourceType: r.type } : {}),
          });
        }
      };
      // A few resources in flight at once (each still remediated, then analyzed): the pack works
      // while this side encodes the next request. Diagnostics keep the resources' order.
      const responses: A.AnalyzeResponse[] = new Array(resources.length);
      let next = 0;
      const worker = async () => {
        while (next < resources.length) {
          const i = next++;
          const r = resources[i];
          const req = describe(new A.AnalyzeRequest(), r, r.inputs);
          // The engine asks for remediations first and analyzes the remediated properties; this
          // pack remediates nothing, which the call confirms.
          const rem = await call<A.RemediateResponse>("remediate", req);
          if (rem.getRemediationsList().length > 0) {
            throw new Error(`policy pack remediated ${r.name}; remediations are not supported here`);
          }
          responses[i] = await call<A.AnalyzeResponse>("analyze", req);
        }
      };
      await Promise.all(Array.from({ length: Math.min(ANALYZE_IN_FLIGHT, resources.length) }, worker));
      responses.forEach((resp, i) => collect(resp, resources[i]));
      const stackReq = new A.AnalyzeStackRequest();
      stackReq.setResourcesList(
        resources.map((r) => {
          const ar = describe(new A.AnalyzerResource(), r, r.outputs);
          ar.setParent(r.parent);
          ar.setDependenciesList(r.dependencies);
          for (const [k, urns] of Object.entries(r.propertyDependencies)) {
            const pd = new A.AnalyzerPropertyDependencies();
            pd.setUrnsList(urns);
            ar.getPropertydependenciesMap().set(k, pd);
          }
          return ar;
        }),
      );
      collect(await call<A.AnalyzeResponse>("analyzeStack", stackReq));
      return out;
    },
    close() {
      client.close();
      child.kill();
    },
  };
  return session;
}
