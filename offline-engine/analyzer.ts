// The engine side of the Analyzer protocol, offline: spawn a policy pack the way the Pulumi CLI
// does (`@pulumi/pulumi/cmd/run-policy-pack`, cwd = the pack, stack config in PULUMI_CONFIG), then
// per stack ConfigureStack → (GetAnalyzerInfo, once) → Configure (reconciled like the engine) →
// Analyze per resource, streamed while the program still registers → AnalyzeStack once.
// PULUMI-FACTS.md § 4.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { createInterface } from "node:readline";
import * as A from "@pulumi/pulumi/proto/analyzer_pb";
import { AnalyzerClient, AnalyzerService } from "@pulumi/pulumi/proto/analyzer_grpc_pb";
import type { Registered, RegistrationSink, ResourceHeader } from "./mock-run";
import type { ServiceError } from "@grpc/grpc-js";
import type { JavaScriptValue } from "google-protobuf/google/protobuf/struct_pb";
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
function jsonSafe(value: Record<string, unknown>): Record<string, JavaScriptValue>;
function jsonSafe(value: unknown): JavaScriptValue | undefined;
function jsonSafe(value: unknown): JavaScriptValue | undefined {
  if (value === undefined || typeof value === "function") return undefined;
  if (value === null || typeof value !== "object") {
    return typeof value === "number" && !Number.isFinite(value) ? null : value;
  }
  if (Array.isArray(value)) return value.map((v) => jsonSafe(v) ?? null);
  const out: Record<string, JavaScriptValue> = {};
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
  /** Requests sent so far, and Analyze requests answered from the session's verdicts instead (`Verdicts`). */
  readonly sent: { analyze: number; analyzeStack: number; reused: number };
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

/** The pack process, started the way the Pulumi CLI starts it, once it prints the port it listens on. */
async function spawnPack(opts: PackOptions): Promise<{ child: ChildProcess; port: string }> {
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
  return { child, port };
}

type Reply<T> = (err: ServiceError | null, resp?: T) => void;

/** A unary call as a promise; its error names the method and carries the server's details. */
function unary<T>(method: string, send: (reply: Reply<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => send((err, resp) => (err ? reject(new Error(`${method}: ${err.details ?? err.message}`)) : resolve(resp!))));
}

/** The pack's Analyzer service. Analyze, Remediate and AnalyzeStack take requests already encoded (the properties encoded once per resource). */
class AnalyzerConnection {
  private readonly client: AnalyzerClient;
  constructor(port: string) {
    this.client = new AnalyzerClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  }
  configureStack(req: A.AnalyzerStackConfigureRequest): Promise<A.AnalyzerStackConfigureResponse> {
    return unary("configureStack", (reply) => this.client.configureStack(req, reply));
  }
  getAnalyzerInfo(): Promise<A.AnalyzerInfo> {
    return unary("getAnalyzerInfo", (reply) => this.client.getAnalyzerInfo(new Empty(), reply));
  }
  configure(req: A.ConfigureAnalyzerRequest): Promise<unknown> {
    return unary("configure", (reply) => this.client.configure(req, reply));
  }
  analyze(bytes: Uint8Array): Promise<A.AnalyzeResponse> {
    return this.encoded("analyze", AnalyzerService.analyze, bytes);
  }
  remediate(bytes: Uint8Array): Promise<A.RemediateResponse> {
    return this.encoded("remediate", AnalyzerService.remediate, bytes);
  }
  analyzeStack(bytes: Uint8Array): Promise<A.AnalyzeResponse> {
    return this.encoded("analyzeStack", AnalyzerService.analyzeStack, bytes);
  }
  close(): void {
    this.client.close();
  }
  private encoded<T>(method: string, def: { path: string; responseDeserialize: (b: Buffer) => T }, bytes: Uint8Array): Promise<T> {
    return unary<T>(method, (reply) => this.client.makeUnaryRequest(def.path, asBuffer, def.responseDeserialize, bytes, reply));
  }
}

type InitialConfig = Record<string, { enforcementLevel?: EnforcementLevel; properties: Record<string, unknown> }>;

/** GetAnalyzerInfo: the pack's name, version, policies and their initial config. */
async function readInfo(conn: AnalyzerConnection): Promise<{ info: PackSession["info"]; initial: InitialConfig }> {
  const rawInfo = await conn.getAnalyzerInfo();
  const policies: PolicyInfo[] = rawInfo.getPoliciesList().map((p) => ({
    name: p.getName(),
    description: p.getDescription(),
    enforcementLevel: levelName(p.getEnforcementlevel()),
    kind: p.getPolicyType() === A.PolicyType.POLICY_TYPE_RESOURCE ? "resource" : p.getPolicyType() === A.PolicyType.POLICY_TYPE_STACK ? "stack" : "unknown",
  }));
  const initial: InitialConfig = {};
  rawInfo.getInitialconfigMap().forEach((c: A.PolicyConfig, name: string) => {
    initial[name] = { enforcementLevel: levelName(c.getEnforcementlevel()), properties: c.getProperties()?.toJavaScript() ?? {} };
  });
  return { info: { name: rawInfo.getName(), version: rawInfo.getVersion(), policies }, initial };
}

/** Diagnostics of an Analyze or AnalyzeStack answer, named after the analyzed resource where the pack gives its URN. */
function diagnosticsOf(resp: A.AnalyzeResponse, named: ReadonlyMap<string, { name: string; type: string }>, fallbackUrn = ""): Diagnostic[] {
  return resp.getDiagnosticsList().map((d) => {
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
}

/**
 * The pack's answers to Analyze, by request, for as long as its configuration stays the same. A
 * resource policy sees the request's resource and the pack's configuration only (@pulumi/policy@1.21.0
 * server.js makeAnalyzeRpcFun: each request deserialized and handed to every policy's
 * validateResource; policy/environment.ts: the environment read once from PULUMI_CONFIG), so a
 * request sent again, byte for byte, gets the same answer. Judging a mutated stack sends again every
 * resource the mutation did not touch (policy.test.ts: prod-medium's 168 resources, of which a
 * mutation changes one to three, 52 times); the pack judges each of them once, and AnalyzeStack
 * every time. Any ConfigureStack or Configure starts
 * afresh, so `npm run policy`, which configures before each stack as the engine does, reuses nothing.
 */
class Verdicts {
  private readonly known = new Map<string, Diagnostic[]>();
  readonly sent = { analyze: 0, analyzeStack: 0, reused: 0 };

  key(request: Uint8Array): string {
    return createHash("sha256").update(request).digest("base64");
  }
  get(key: string): Diagnostic[] | undefined {
    const found = this.known.get(key);
    if (found) this.sent.reused++;
    return found;
  }
  set(key: string, found: Diagnostic[]): void {
    this.known.set(key, found);
  }
  clear(): void {
    this.known.clear();
  }
}

/**
 * One stack judged while the program registers: each resource's Analyze sent at once (at most
 * ANALYZE_IN_FLIGHT in flight), its AnalyzerResource kept encoded for the AnalyzeStack at the end.
 */
class Judgement implements StackJudgement {
  private seen = 0;
  private readonly named = new Map<string, { name: string; type: string }>();
  /** Per resource (registration order): its AnalyzerResource for AnalyzeStack, encoded. */
  private readonly listed: Uint8Array[] = [];
  /** Components waiting for their outputs. */
  private readonly pending = new Map<number, ResourceHeader>();
  private readonly found: Diagnostic[][] = [];
  private readonly queue: { index: number; header: ResourceHeader; request: Uint8Array }[] = [];
  private inFlight = 0;
  private failure: Error | undefined;
  private idle: (() => void) | undefined;
  /** The last Struct encoded: a custom resource's outputs are its inputs (mock-run echoes them). */
  private last: { struct: StructMessage; bytes: Uint8Array } | undefined;

  /**
   * `remediate`: the engine asks for remediations before each Analyze. The SDK's Remediate runs
   * only the policies configured at level "remediate" (@pulumi/policy@1.21.0 server.js
   * makeRemediateRpcFun): with none at that level its answer is empty by construction, so the call
   * is made only when one is.
   */
  constructor(
    private readonly conn: AnalyzerConnection,
    private readonly remediate: boolean,
    private readonly verdicts: Verdicts,
    private readonly done: () => void,
  ) {}

  get resources(): number {
    return this.seen;
  }

  registered(r: ResourceHeader, inputs: StructMessage): void {
    this.seen++;
    this.named.set(r.urn, { name: r.name, type: r.type });
    this.queue.push({ index: r.index, header: r, request: encodeAnalyzeRequest(r, this.encode(inputs)) });
    if (!r.custom) this.pending.set(r.index, r);
    this.pump();
  }

  outputs(r: ResourceHeader, outputs: StructMessage): void {
    this.pending.delete(r.index);
    this.listed[r.index] = encodeStackResource(r, this.encode(outputs));
  }

  async finish(): Promise<Diagnostic[]> {
    try {
      // components that never registered outputs are listed with none
      for (const [i, r] of this.pending) this.listed[i] = encodeStackResource(r, new Uint8Array());
      this.pending.clear();
      this.last = undefined;
      await new Promise<void>((resolve) => {
        this.idle = resolve;
        this.pump();
      });
      if (this.failure) throw this.failure;
      const stackReq = encodeAnalyzeStack(this.listed.filter((b) => b !== undefined));
      this.listed.length = 0;
      this.verdicts.sent.analyzeStack++;
      const stackFound = diagnosticsOf(await this.conn.analyzeStack(stackReq), this.named);
      return [...this.found.filter((d) => d !== undefined).flat(), ...stackFound];
    } finally {
      this.done();
    }
  }

  private encode(s: StructMessage): Uint8Array {
    if (this.last?.struct !== s) this.last = { struct: s, bytes: s.serializeBinary() };
    return this.last.bytes;
  }

  private pump(): void {
    while (this.inFlight < ANALYZE_IN_FLIGHT && this.queue.length > 0 && !this.failure) {
      const next = this.queue.shift()!;
      this.inFlight++;
      this.analyzeOne(next).then(
        () => {
          this.inFlight--;
          this.pump();
        },
        (e: Error) => {
          this.inFlight--;
          this.failure ??= e;
          this.pump();
        },
      );
    }
    if (this.inFlight === 0 && (this.queue.length === 0 || this.failure)) this.idle?.();
  }

  private async analyzeOne({ index, header, request }: { index: number; header: ResourceHeader; request: Uint8Array }): Promise<void> {
    // a remediating pack's answers are not reused: the engine would apply a remediation before Analyze
    const key = this.remediate ? undefined : this.verdicts.key(request);
    const known = key === undefined ? undefined : this.verdicts.get(key);
    if (known) {
      if (known.length > 0) this.found[index] = known.map((d) => ({ ...d }));
      return;
    }
    if (this.remediate) {
      const rem = await this.conn.remediate(request);
      if (rem.getRemediationsList().length > 0) throw new Error(`policy pack remediated ${header.name}; remediations are not supported here`);
    }
    this.verdicts.sent.analyze++;
    const ds = diagnosticsOf(await this.conn.analyze(request), this.named, header.urn);
    if (key !== undefined) this.verdicts.set(key, ds);
    if (ds.length > 0) this.found[index] = ds;
  }
}

/** A started pack: ConfigureStack, Configure and the judgements go to it in the engine's order. */
class Session implements PackSession {
  private reconciled: Reconciled | undefined;
  private judging = false;
  private readonly verdicts = new Verdicts();

  constructor(
    readonly info: PackSession["info"],
    private readonly initial: InitialConfig,
    private readonly project: string,
    private readonly dryRun: boolean,
    private readonly conn: AnalyzerConnection,
    private readonly child: ChildProcess,
  ) {}

  async configureStack(stack: string, config: Record<string, string>): Promise<void> {
    if (this.judging) throw new Error("configureStack while a stack is being judged");
    this.verdicts.clear();
    await sendConfigureStack(this.conn, { project: this.project, dryRun: this.dryRun, stack, config });
  }

  async configure(file?: PolicyPackConfigFile): Promise<void> {
    const next = reconcilePolicyConfig(this.info.policies, this.initial, file);
    const req = new A.ConfigureAnalyzerRequest();
    for (const [name, c] of Object.entries(next)) {
      const pc = new A.PolicyConfig();
      pc.setEnforcementlevel(LEVELS[c.enforcementLevel]);
      pc.setProperties(Struct.fromJavaScript(jsonSafe(c.properties)));
      req.getPolicyconfigMap().set(name, pc);
    }
    this.verdicts.clear();
    await this.conn.configure(req);
    this.reconciled = next;
  }

  get sent(): PackSession["sent"] {
    return { ...this.verdicts.sent };
  }

  judge(): StackJudgement {
    if (this.judging) throw new Error("a pack judges one stack at a time: finish the previous judgement first");
    if (!this.reconciled) throw new Error("configure the pack before judging");
    this.judging = true;
    const remediate = Object.values(this.reconciled).some((c) => c.enforcementLevel === "remediate");
    return new Judgement(this.conn, remediate, this.verdicts, () => (this.judging = false));
  }

  async analyze(resources: Registered[]): Promise<Diagnostic[]> {
    if (!this.reconciled) await this.configure();
    const judgement = this.judge();
    resources.forEach((r, index) => {
      const header: ResourceHeader = { ...r, index };
      const inputs = Struct.fromJavaScript(jsonSafe(r.inputs));
      judgement.registered(header, inputs);
      // outputs that are the inputs' own object (mock-run's echo) are sent as the bytes just encoded
      judgement.outputs(header, r.outputs === r.inputs ? inputs : Struct.fromJavaScript(jsonSafe(r.outputs)));
    });
    return judgement.finish();
  }

  usage(): { cpuMs: number; peakKiB: number } | undefined {
    try {
      const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${this.child.pid}/status`, "utf8"));
      // utime and stime, fields 14 and 15 of /proc/<pid>/stat, in clock ticks (USER_HZ: 100 on Linux)
      const stat = fs.readFileSync(`/proc/${this.child.pid}/stat`, "utf8").split(") ")[1].split(" ");
      return hwm ? { cpuMs: (Number(stat[11]) + Number(stat[12])) * 10, peakKiB: Number(hwm[1]) } : undefined;
    } catch {
      return undefined;
    }
  }

  close(): void {
    this.conn.close();
    this.child.kill();
  }
}

async function sendConfigureStack(
  conn: AnalyzerConnection,
  s: { project: string; dryRun: boolean; stack: string; config: Record<string, string> },
): Promise<void> {
  const req = new A.AnalyzerStackConfigureRequest();
  req.setStack(s.stack);
  req.setProject(s.project);
  req.setOrganization("organization");
  req.setDryRun(s.dryRun);
  for (const [k, v] of Object.entries(s.config)) req.getConfigMap().set(k, v);
  await conn.configureStack(req);
}

export async function startPack(opts: PackOptions): Promise<PackSession> {
  const { child, port } = await spawnPack(opts);
  const conn = new AnalyzerConnection(port);
  const dryRun = opts.dryRun ?? true;
  await sendConfigureStack(conn, { project: opts.project, dryRun, stack: opts.stack, config: opts.config });
  const { info, initial } = await readInfo(conn);
  return new Session(info, initial, opts.project, dryRun, conn, child);
}
