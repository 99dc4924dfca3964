// The engine side of the Analyzer protocol, offline: spawn a policy pack the way the Pulumi CLI
// does (`@pulumi/pulumi/cmd/run-policy-pack`, cwd = the pack, stack config in PULUMI_CONFIG), then
// per stack ConfigureStack → (GetAnalyzerInfo, once) → Configure (reconciled like the engine) →
// Analyze per resource, streamed while the program still registers → AnalyzeStack once.
// PULUMI-FACTS.md § 4.
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { createInterface } from "node:readline";
import * as A from "@pulumi/pulumi/proto/analyzer_pb";
import { AnalyzerClient, AnalyzerService } from "@pulumi/pulumi/proto/analyzer_grpc_pb";
import type { Registered, RegistrationSink, ResourceHeader } from "./mock-run";
import { Empty, grpc, Struct, withField, withFields, type StructMessage } from "./wire";

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

type Reconciled = Record<string, { enforcementLevel: EnforcementLevel; properties: Record<string, unknown> }>;

/** The engine's ReconcilePolicyPackConfig: every policy's level, then initial config, then the file. */
function reconcilePolicyConfig(
  policies: PolicyInfo[],
  initial: Record<string, { enforcementLevel?: EnforcementLevel; properties: Record<string, unknown> }>,
  file: PolicyPackConfigFile = {},
): Reconciled {
  const out: Reconciled = {};
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
  /** The stack the pack process is started for, and its config as the engine passes it:
   * `<project>:<key>` → string (objects as JSON). */
  stack: string;
  config: Record<string, string>;
  dryRun?: boolean;
}

/** The judging of one stack: a sink for the program's registrations, then the verdict. */
interface StackJudgement extends RegistrationSink {
  /** Every Analyze answered, then AnalyzeStack over every resource: diagnostics in that order. */
  finish(): Promise<Diagnostic[]>;
  /** Resources seen. */
  readonly resources: number;
}

export interface PackSession {
  info: { name: string; version: string; policies: PolicyInfo[] };
  /** ConfigureStack for a stack of the environment the pack was started in (what the engine sends first). */
  configureStack(stack: string, config: Record<string, string>): Promise<void>;
  /** Configure the pack (before analyzing; again after each configureStack, as each operation does). */
  configure(file?: PolicyPackConfigFile): Promise<void>;
  /** Judge one stack, resource by resource as the program registers them. One at a time. */
  judge(): StackJudgement;
  /** Judge recorded resources (a ProgramRun's): every resource, then the stack. */
  analyze(resources: Registered[]): Promise<Diagnostic[]>;
  /** The pack process' CPU time (ms) and peak resident set (VmHWM, KiB) so far; Linux only. */
  usage(): { cpuMs: number; peakKiB: number } | undefined;
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

/**
 * Analyze requests in flight at once: enough that the pack always has the next ones while this
 * process runs the program (a 5000-node stack: the verdict 3 s sooner than with 8 in flight).
 */
const ANALYZE_IN_FLIGHT = 64;

export function packConfigEnv(config: Record<string, string>, max = MAX_CONFIG_ENV): string {
  const full = JSON.stringify(config);
  if (Buffer.byteLength(full) <= max) return full;
  const withoutNodes = JSON.stringify(Object.fromEntries(Object.entries(config).filter(([k]) => !/^[^:]+:nodes$/.test(k))));
  if (Buffer.byteLength(withoutNodes) <= max) return withoutNodes;
  return JSON.stringify(Object.fromEntries(Object.entries(config).filter(([k]) => /^[^:]+:environment$/.test(k))));
}

/** A request whose bytes are already encoded. */
const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** What the engine says of every resource it hands the pack: type, name, URN, options. */
function describe<M extends A.AnalyzeRequest | A.AnalyzerResource>(m: M, r: ResourceHeader): M {
  m.setType(r.type);
  m.setName(r.name);
  m.setUrn(r.urn);
  const o = new A.AnalyzerResourceOptions();
  o.setProtect(r.protect);
  o.setParent(r.parent);
  m.setOptions(o);
  return m;
}

/** Analyze: the resource, then its encoded properties (inputs). */
export function encodeAnalyzeRequest(r: ResourceHeader, props: Uint8Array): Uint8Array {
  return withField(describe(new A.AnalyzeRequest(), r).serializeBinary(), 2, props);
}

/** What AnalyzeStack lists of a resource: the same, its parent and dependencies, then its encoded outputs. */
export function encodeStackResource(r: ResourceHeader, props: Uint8Array): Uint8Array {
  const m = describe(new A.AnalyzerResource(), r);
  m.setParent(r.parent);
  m.setDependenciesList(r.dependencies);
  for (const [k, urns] of Object.entries(r.propertyDependencies)) {
    const pd = new A.AnalyzerPropertyDependencies();
    pd.setUrnsList(urns);
    m.getPropertydependenciesMap().set(k, pd);
  }
  return withField(m.serializeBinary(), 2, props);
}

/** AnalyzeStackRequest: every resource listed, in order. */
export function encodeAnalyzeStack(resources: readonly Uint8Array[]): Uint8Array {
  return withFields(new Uint8Array(), 1, resources);
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
  // transpile only, and each file once: npm run typecheck checks the pack (pack-transpile-only.cjs)
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
  /** A unary call whose request is already encoded (the properties encoded once per resource). */
  const callEncoded = <T>(method: "analyze" | "remediate" | "analyzeStack", bytes: Uint8Array) => {
    const def = (AnalyzerService as any)[method];
    return new Promise<T>((resolve, reject) =>
      client.makeUnaryRequest(def.path, asBuffer, def.responseDeserialize, bytes, (err: any, resp: T) =>
        err ? reject(new Error(`${method}: ${err.details ?? err.message}`)) : resolve(resp),
      ),
    );
  };

  const configureStack = async (stack: string, config: Record<string, string>) => {
    const req = new A.AnalyzerStackConfigureRequest();
    req.setStack(stack);
    req.setProject(opts.project);
    req.setOrganization("organization");
    req.setDryRun(opts.dryRun ?? true);
    for (const [k, v] of Object.entries(config)) req.getConfigMap().set(k, v);
    await call("configureStack", req);
  };
  await configureStack(opts.stack, opts.config);

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
  let reconciled: Reconciled | undefined;
  let judging = false;

  const configure = async (file?: PolicyPackConfigFile) => {
    const next = reconcilePolicyConfig(policies, initial, file);
    const req = new A.ConfigureAnalyzerRequest();
    for (const [name, c] of Object.entries(next)) {
      const pc = new A.PolicyConfig();
      pc.setEnforcementlevel(LEVELS[c.enforcementLevel]);
      pc.setProperties(Struct.fromJavaScript(jsonSafe(c.properties)) as any);
      req.getPolicyconfigMap().set(name, pc);
    }
    await call("configure", req);
    reconciled = next;
  };

  const judge = (): StackJudgement => {
    if (judging) throw new Error("a pack judges one stack at a time: finish the previous judgement first");
    if (!reconciled) throw new Error("configure the pack before judging");
    judging = true;
    // The engine asks for remediations before each Analyze. The SDK's Remediate runs only the
    // policies configured at level "remediate" (@pulumi/policy@1.21.0 server.js
    // makeRemediateRpcFun): with none at that level its answer is empty by construction, so the
    // call is made only when one is.
    const remediate = Object.values(reconciled).some((c) => c.enforcementLevel === "remediate");
    const named = new Map<string, { name: string; type: string }>();
    /** Per resource (registration order): its AnalyzerResource for AnalyzeStack, encoded. */
    const listed: Uint8Array[] = [];
    /** Components waiting for their outputs. */
    const pending = new Map<number, ResourceHeader>();
    const found: Diagnostic[][] = [];
    const queue: { index: number; header: ResourceHeader; request: Uint8Array }[] = [];
    let inFlight = 0;
    let failure: Error | undefined;
    let seen = 0;
    let idle: (() => void) | undefined;
    /** The last Struct encoded: a custom resource's outputs are its inputs (mock-run echoes them). */
    let last: { struct: StructMessage; bytes: Uint8Array } | undefined;
    const encode = (s: StructMessage) => {
      if (last?.struct !== s) last = { struct: s, bytes: s.serializeBinary() };
      return last.bytes;
    };

    const diagnosticsOf = (resp: A.AnalyzeResponse, fallbackUrn = ""): Diagnostic[] =>
      resp.getDiagnosticsList().map((d) => {
        const urn = d.getUrn() || fallbackUrn;
        const r = named.get(urn);
        return {
          policy: d.getPolicyname(),
          packName: d.getPolicypackname(),
          packVersion: d.getPolicypackversion(),
          level: levelName(d.getEnforcementlevel()),
          message: d.getMessage(),
          urn,
          ...(r ? { resourceName: r.name, resourceType: r.type } : {}),
        };
      });
    const pump = () => {
      while (inFlight < ANALYZE_IN_FLIGHT && queue.length > 0 && !failure) {
        const { index, header, request } = queue.shift()!;
        inFlight++;
        (async () => {
          if (remediate) {
            const rem = await callEncoded<A.RemediateResponse>("remediate", request);
            if (rem.getRemediationsList().length > 0) throw new Error(`policy pack remediated ${header.name}; remediations are not supported here`);
          }
          const resp = await callEncoded<A.AnalyzeResponse>("analyze", request);
          const ds = diagnosticsOf(resp, header.urn);
          if (ds.length > 0) found[index] = ds;
        })().then(
          () => {
            inFlight--;
            pump();
          },
          (e: Error) => {
            inFlight--;
            failure ??= e;
            pump();
          },
        );
      }
      if (inFlight === 0 && (queue.length === 0 || failure)) idle?.();
    };

    return {
      get resources() {
        return seen;
      },
      registered(r, inputs) {
        seen++;
        named.set(r.urn, { name: r.name, type: r.type });
        queue.push({ index: r.index, header: r, request: encodeAnalyzeRequest(r, encode(inputs)) });
        if (!r.custom) pending.set(r.index, r);
        pump();
      },
      outputs(r, outputs) {
        pending.delete(r.index);
        listed[r.index] = encodeStackResource(r, encode(outputs));
      },
      async finish() {
        try {
          // components that never registered outputs are listed with none
          for (const [i, r] of pending) listed[i] = encodeStackResource(r, new Uint8Array());
          pending.clear();
          last = undefined;
          await new Promise<void>((resolve) => {
            idle = resolve;
            pump();
          });
          if (failure) throw failure;
          const stackReq = encodeAnalyzeStack(listed.filter((b) => b !== undefined));
          listed.length = 0;
          const stackFound = diagnosticsOf(await callEncoded<A.AnalyzeResponse>("analyzeStack", stackReq));
          return [...found.filter((d) => d !== undefined).flat(), ...stackFound];
        } finally {
          judging = false;
        }
      },
    };
  };

  const session: PackSession = {
    info,
    async configureStack(stack, config) {
      if (judging) throw new Error("configureStack while a stack is being judged");
      await configureStack(stack, config);
    },
    configure,
    judge,
    async analyze(resources) {
      if (!reconciled) await configure();
      const judgement = judge();
      resources.forEach((r, index) => {
        const header: ResourceHeader = { ...r, index };
        judgement.registered(header, Struct.fromJavaScript(jsonSafe(r.inputs)));
        judgement.outputs(header, Struct.fromJavaScript(jsonSafe(r.outputs)));
      });
      return judgement.finish();
    },
    usage() {
      try {
        const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, "utf8"));
        // utime and stime, fields 14 and 15 of /proc/<pid>/stat, in clock ticks (USER_HZ: 100 on Linux)
        const stat = fs.readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1].split(" ");
        return hwm ? { cpuMs: (Number(stat[11]) + Number(stat[12])) * 10, peakKiB: Number(hwm[1]) } : undefined;
      } catch {
        return undefined;
      }
    },
    close() {
      client.close();
      child.kill();
    },
  };
  return session;
}
