// `npm run policy` as a library: run the program of a stack under the runtime mocks and have the
// real policy pack, spawned and driven like the Pulumi engine does, judge what it registers while it
// registers it. One pack process per environment serves every stack of that environment.
import * as path from "node:path";
import { PROJECT } from "../config/schema";
import { environmentOf } from "../policy/environment";
import { startPack, type Diagnostic, type PackSession, type PolicyPackConfigFile } from "./analyzer";
import type { Program, ProgramRun } from "./mock-run";

const PACK_DIR = path.resolve(__dirname, "../policy");

/** The config map the Pulumi CLI hands a program and a pack: `openkeel:<key>` → string (objects as JSON). */
export function pulumiConfigMap(raw: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [`${PROJECT}:${k}`, typeof v === "string" ? v : JSON.stringify(v)]));
}

export interface PolicyResult {
  stack: string;
  /** Resources the program registered (each analyzed). */
  resources: number;
  diagnostics: Diagnostic[];
  mandatory: Diagnostic[];
}

function result(stack: string, resources: number, diagnostics: Diagnostic[]): PolicyResult {
  return { stack, resources, diagnostics, mandatory: diagnostics.filter((d) => d.level === "mandatory") };
}

export async function openPack(stack: string, config: Record<string, string>, packConfig?: PolicyPackConfigFile): Promise<PackSession> {
  const session = await startPack({ packDir: PACK_DIR, project: PROJECT, stack, config });
  try {
    await session.configure(packConfig);
  } catch (e) {
    session.close();
    throw e;
  }
  return session;
}

/**
 * Judge one recorded program run. `session` is a pack started for a stack of the same environment
 * (the tests share one per environment across the runs of a file).
 */
export async function judge(stack: string, run: ProgramRun, session: PackSession): Promise<PolicyResult> {
  return result(stack, run.resources.length, await session.analyze(run.resources));
}

/**
 * Judge a stack's program while it runs: each registration handed to the pack as it happens, nothing
 * recorded (`session` configured as it is).
 */
export async function judgeProgram(s: PolicyStack, session: PackSession): Promise<PolicyResult> {
  const judgement = session.judge();
  // the Pulumi SDK: loaded by now when the caller loaded it while the packs started (policy-command.ts)
  const { streamProgram } = await import("./mock-run");
  try {
    await streamProgram(s.stack, s.config, s.program, judgement);
  } catch (e) {
    // the pack is free for the next stack; no verdict on a run that failed
    await judgement.finish().catch(() => undefined);
    throw e;
  }
  return result(s.stack, judgement.resources, await judgement.finish());
}

/**
 * The environment key of a stack config: what the pack decides from it (policy/environment.ts).
 * Stacks with the same key get the same verdicts from one pack process.
 */
export function environmentKey(config: Record<string, string>): string {
  const env = environmentOf(config);
  return `${env.production ? "production" : "lab"}:${env.environment ?? ""}`;
}

export interface PolicyStack {
  stack: string;
  config: Record<string, string>;
  /** The program to run under the mocks for this stack. */
  program: Program;
}

/**
 * The packs of a run: one process per environment, started on demand or all at once (`prepare`:
 * starting costs most of a second), then the stacks judged one after another (the runtime mocks are
 * process-global) while their programs run. Each judgement is an operation of its own, as with the
 * engine: ConfigureStack (the pack's first stack had it when the pack started), Configure.
 */
export class PackPool {
  private readonly packs = new Map<string, Promise<PackSession>>();
  /** Stacks whose pack was started for them, its ConfigureStack sent. */
  private readonly fresh = new Set<string>();

  /** Start the pack of every environment the stacks need, side by side. */
  prepare(stacks: readonly Omit<PolicyStack, "program">[]): void {
    for (const s of stacks) this.packFor(s);
  }

  private packFor(s: Omit<PolicyStack, "program">): Promise<PackSession> {
    const key = environmentKey(s.config);
    let pack = this.packs.get(key);
    if (!pack) {
      pack = startPack({ packDir: PACK_DIR, project: PROJECT, stack: s.stack, config: s.config });
      pack.catch(() => undefined); // awaited by the first judgement of the environment
      this.packs.set(key, pack);
      this.fresh.add(s.stack);
    }
    return pack;
  }

  async judge(s: PolicyStack, packConfig?: PolicyPackConfigFile): Promise<PolicyResult> {
    const session = await this.packFor(s);
    if (!this.fresh.delete(s.stack)) await session.configureStack(s.stack, s.config);
    await session.configure(packConfig);
    return judgeProgram(s, session);
  }

  /** Each pack process' CPU time and peak resident set so far, for the bench (Linux). */
  async usage(): Promise<{ cpuMs: number; peakKiB: number }[]> {
    const out: { cpuMs: number; peakKiB: number }[] = [];
    for (const p of this.packs.values()) {
      const u = await p.then(
        (s) => s.usage(),
        () => undefined,
      );
      if (u) out.push(u);
    }
    return out;
  }

  close(): void {
    for (const p of this.packs.values())
      p.then(
        (s) => s.close(),
        () => undefined,
      );
  }
}

/** One violation per line block: level, policy, resource, then the reported message. */
export function formatDiagnostic(d: Diagnostic): string {
  const resource = d.resourceName ? `${d.resourceName} (${d.resourceType})` : d.urn || "(stack)";
  return `  ${d.level} [${d.policy}] ${resource}:\n    ${reportedMessage(d).split("\n").join("\n    ")}`;
}

/** The part of a diagnostic's message the policy reported: the engine prefixes the policy's description. */
export function reportedMessage(d: Diagnostic): string {
  const nl = d.message.indexOf("\n");
  return nl >= 0 ? d.message.slice(nl + 1) : d.message;
}
