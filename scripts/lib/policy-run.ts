// `npm run policy` as a library: run the program of a stack under the runtime mocks, then judge what
// it registered with the real policy pack, spawned and driven like the Pulumi engine does.
import * as path from "node:path";
import { PROJECT } from "../../config/schema";
import { startPack, type Diagnostic, type PackSession, type PolicyPackConfigFile } from "./analyzer";
import type { ProgramRun } from "./mock-run";

const PACK_DIR = path.resolve(__dirname, "../../policy");

/** The config map the Pulumi CLI hands a program and a pack: `openkeel:<key>` → string (objects as JSON). */
export function pulumiConfigMap(raw: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [`${PROJECT}:${k}`, typeof v === "string" ? v : JSON.stringify(v)]));
}

export interface PolicyResult {
  stack: string;
  run: ProgramRun;
  diagnostics: Diagnostic[];
  mandatory: Diagnostic[];
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
 * Judge one program run. `session` reuses a pack started for the same stack config (the engine
 * starts one per operation; the tests share one across mutations of a stack's Plan).
 */
export async function judge(stack: string, run: ProgramRun, session: PackSession): Promise<PolicyResult> {
  const diagnostics = await session.analyze(run.resources);
  return { stack, run, diagnostics, mandatory: diagnostics.filter((d) => d.level === "mandatory") };
}

/** One violation per line block: level, policy, resource, then the reported message. */
export function formatDiagnostic(d: Diagnostic): string {
  const resource = d.resourceName ? `${d.resourceName} (${d.resourceType})` : d.urn || "(stack)";
  // The engine prefixes the policy description; the reported part says what is wrong and the fix.
  const nl = d.message.indexOf("\n");
  const reported = nl >= 0 ? d.message.slice(nl + 1) : d.message;
  return `  ${d.level} [${d.policy}] ${resource}:\n    ${reported.split("\n").join("\n    ")}`;
}
