// The real Pulumi CLI, as an operator runs it: `pulumi` and the plugins from PATH, a local file
// backend, a passphrase secrets provider, plugins registered at the versions the npm SDKs ask for
// (no automatic acquisition, no ambient plugins), Helm's caches inside the e2e's temp dir.
import * as fs from "node:fs";
import * as path from "node:path";
import { run, which, type RunResult } from "./proc";

export interface PulumiEnv {
  env: NodeJS.ProcessEnv;
  home: string;
}

export function pulumiEnv(tmp: string, stateDir: string, kubeconfig: string): PulumiEnv {
  const home = path.join(tmp, "pulumi-home");
  fs.mkdirSync(stateDir, { recursive: true });
  return {
    home,
    env: {
      ...process.env,
      PULUMI_HOME: home,
      PULUMI_BACKEND_URL: `file://${stateDir}`,
      PULUMI_CONFIG_PASSPHRASE: "openkeel-e2e",
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      PULUMI_IGNORE_AMBIENT_PLUGINS: "true",
      PULUMI_SKIP_CONFIRMATIONS: "true",
      PULUMI_COPILOT: "false",
      KUBECONFIG: kubeconfig,
      HELM_CACHE_HOME: path.join(tmp, "helm", "cache"),
      HELM_CONFIG_HOME: path.join(tmp, "helm", "config"),
      HELM_DATA_HOME: path.join(tmp, "helm", "data"),
      NO_COLOR: "1",
      // type-checking is `npm test`'s job (tsc --noEmit); the engine runs the program transpile-only
      // (an official Pulumi switch), which saves about 5 s per pulumi command on 2 cores
      PULUMI_NODEJS_TRANSPILE_ONLY: "true",
    },
  };
}

/** Register the provider plugins from PATH at the versions of the installed npm SDKs. */
export async function installPlugins(p: PulumiEnv, repoRoot: string, log: string): Promise<string[]> {
  const out: string[] = [];
  for (const [name, pkg] of [
    ["kubernetes", "@pulumi/kubernetes"],
    ["random", "@pulumi/random"],
  ]) {
    const version = JSON.parse(fs.readFileSync(path.join(repoRoot, "node_modules", pkg, "package.json"), "utf8")).version as string;
    const bin = which(`pulumi-resource-${name}`, p.env);
    if (!bin) throw new Error(`pulumi-resource-${name} not found on PATH`);
    if (fs.existsSync(path.join(p.home, "plugins", `resource-${name}-v${version}`))) {
      out.push(`${name} ${version} (already registered)`);
      continue;
    }
    const r = await run("pulumi", ["plugin", "install", "resource", name, version, "--file", bin], { env: p.env, log });
    if (r.code !== 0) throw new Error(`pulumi plugin install resource ${name} ${version} failed: ${r.stderr.slice(-500)}`);
    out.push(`${name} ${version} from ${bin}`);
  }
  return out;
}

export function pulumi(
  args: string[],
  cwd: string,
  p: PulumiEnv,
  log: string,
  extra: { timeoutMs?: number; onStdout?: (s: string) => void; env?: NodeJS.ProcessEnv } = {},
): Promise<RunResult> {
  return run("pulumi", [...args, "--non-interactive"], {
    cwd,
    env: { ...p.env, ...(extra.env ?? {}) },
    log,
    timeoutMs: extra.timeoutMs,
    onStdout: extra.onStdout,
  });
}

/** The engine's summary: the "Resources:" block and the duration, on one line. */
export function summaryLine(text: string): string {
  const lines = text.split("\n");
  const i = lines.findIndex((l) => /^Resources:/.test(l.trim()));
  const parts: string[] = [];
  if (i >= 0) {
    for (let j = i + 1; j < lines.length && lines[j].trim() !== ""; j++) parts.push(lines[j].trim());
  }
  const d = lines.find((l) => /^Duration: /.test(l.trim()));
  if (d) parts.push(d.trim());
  return parts.join(", ") || "(no summary)";
}

/**
 * The "Resources:" block of a preview or update: `{ create: 1, update: 2, unchanged: 40 }`, keyed by
 * the CLI's words (`+ 1 to create`, `~ 2 to update`, `+-1 to replace`, `40 unchanged`); undefined
 * when there is no such block (the run stopped before its summary).
 */
export function resourceCounts(text: string): Record<string, number> | undefined {
  const lines = text.split("\n");
  const i = lines.findIndex((l) => /^Resources:/.test(l.trim()));
  if (i < 0) return undefined;
  const out: Record<string, number> = {};
  for (let j = i + 1; j < lines.length && lines[j].trim() !== ""; j++) {
    // "3 changes. 40 unchanged": the total of the lines above, then the unchanged ones
    const m = /^[^\d]*?(\d+) (?:to )?([a-z-]+)/.exec(lines[j].trim().replace(/^\d+ changes?\. /, ""));
    if (m) out[m[2]] = (out[m[2]] ?? 0) + Number(m[1]);
  }
  return out;
}

/**
 * What is wrong with a `pulumi preview --policy-pack policy` of a deployed stack, or undefined: it
 * must exit 0, propose no change, and show that the pack ran.
 */
export function previewProblem(code: number, text: string, pack: string): string | undefined {
  if (code !== 0) return `exit ${code}`;
  const counts = resourceCounts(text);
  if (!counts) return "no Resources: summary in the output";
  const changes = Object.entries(counts).filter(([k, n]) => k !== "unchanged" && n > 0);
  if (changes.length) return `changes proposed: ${changes.map(([k, n]) => `${n} to ${k}`).join(", ")}`;
  if (!(counts.unchanged > 0)) return "no unchanged resource: the stack is not deployed";
  if (!text.includes(pack)) return `no sign of the policy pack ${pack} in the output`;
  return undefined;
}

export interface PolicyViolation {
  level: string;
  policy: string;
  resourceType: string;
  resourceName: string;
}

/**
 * Policy violations from the CLI's text output (`--json` leaves them out):
 *   - [mandatory]  d2-parallel-ovn  (kubernetes:helm.sh/v3:Release: openkeel-neutron)
 * Stack policies name no resource: `(pulumi:pulumi:Stack: openkeel-prod-medium)` or nothing.
 */
export function policyViolations(text: string): PolicyViolation[] {
  const out: PolicyViolation[] = [];
  const re = /\[(mandatory|advisory|remediate|disabled)\](?:\s+\[severity: [a-z]+\])?\s+([a-z0-9-]+)\s+(?:\(([^\s()]+):\s+([^()]+?)\))?\s*$/gm;
  for (const m of text.matchAll(re)) {
    out.push({ level: m[1], policy: m[2], resourceType: m[3] ?? "", resourceName: (m[4] ?? "").trim() });
  }
  return out;
}

export interface StepRecord {
  op: string;
  urn: string;
  type: string;
  name: string;
}

/** The per-resource steps of `pulumi preview --json`. */
export function previewSteps(json: string): {
  steps: StepRecord[];
  changeSummary: Record<string, number>;
  diagnostics: { severity: string; message: string; urn?: string }[];
} {
  const start = json.indexOf("{");
  const doc = JSON.parse(json.slice(start));
  const steps = ((doc.steps ?? []) as { op: string; urn: string }[]).map((s) => {
    const parts = s.urn.split("::");
    const type = parts[2]?.split("$").pop() ?? "";
    return { op: s.op, urn: s.urn, type, name: parts[3] ?? "" };
  });
  return { steps, changeSummary: doc.changeSummary ?? {}, diagnostics: doc.diagnostics ?? [] };
}

/**
 * Why a `pulumi preview --json` failed: its error diagnostics (the JSON holds every schema
 * description with the word "error", so its lines cannot be grepped), else stderr's last lines.
 */
export function previewErrors(res: { stdout: string; stderr: string }): string[] {
  let errors: string[] = [];
  try {
    errors = previewSteps(res.stdout)
      .diagnostics.filter((d) => d.severity === "error")
      .map((d) => `${d.urn ? `${d.urn}: ` : ""}${d.message.trim()}`);
  } catch {
    // no JSON document: the engine stopped before it wrote one
  }
  return errors.length ? errors : res.stderr.trim().split("\n").slice(-20);
}
