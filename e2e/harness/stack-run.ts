// One stack's run of the e2e: its options, directories and report, what its steps share (the
// cluster, the mirror, the project copy), and a step: timed, recorded, its exception a failed step
// (a fatal step ends the stack's run). The engine-output readers every step uses sit here too.
import type { ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { AdmissionStandIn } from "./admission";
import type { Kube } from "./kube";
import type { LiveWebhooks } from "./live-webhooks";
import type { Mirror } from "./mirror";
import type { PodLog } from "./pod-log";
import type { NodeSpec } from "./nodes";
import { run, type RunResult } from "./proc";
import { summaryLine, type PulumiEnv } from "./pulumi";
import { readRendered, type RenderedStack } from "./rendered";
import { failureLines, Report, stepFailed, type StepResult } from "./report";
import type { DeployGraph } from "../../plan/needs";
import type { ReadinessDelays } from "./readiness";

/** The commit `--upgrade-from` names (upgrade.ts resolveUpgradeFrom). */
export interface UpgradeFrom {
  /** as given (`last-release` resolved to the tag or the file's ref) */
  ref: string;
  commit: string;
  /** where the ref came from, for the report */
  where: string;
}

export interface E2EOptions {
  repoRoot: string;
  stacks: string[];
  kubeconfig?: string | undefined;
  keep: boolean;
  clusterScript: string;
  schemasDir: string;
  /**
   * The real release manifests, laid out as `files/<host>/<path>` of their URLs (../shared/mirror).
   * Undefined: none, every manifest is a stand-in (the default on an existing cluster: driver.ts).
   */
  mirrorDir?: string | undefined;
  outRoot: string;
  /** restart kube-apiserver during the first `pulumi up` (only on a cluster the e2e started) */
  interrupt: boolean;
  /** D1–D8 mutated stacks (production stacks only) */
  policyMutations: boolean;
  /** the day-2 transitions of production stacks (README steps 11a–11e) */
  transitions: boolean;
  /**
   * Time `pulumi preview --policy-pack policy` of the deployed stack instead of the whole e2e: the
   * setup, one `pulumi up --policy-pack policy` (no API server restart), then `tries` previews, each
   * of which must exit 0, propose no change and show the pack; then the cluster goes down. Reports
   * go to <outRoot>/preview-timing/<stack>. `turn` runs after each try (the bench times the offline
   * path there, so that both sides are taken in turns on the same machine).
   */
  previewTiming?: { tries: number; turn?: (stack: string) => Promise<void> } | undefined;
  /** Deploy each stack first with the program of this commit, then upgrade it to the current one (upgrade.ts). */
  upgradeFrom?: UpgradeFrom | undefined;
  /** Deploy each stack first with every pin at its predecessor (predecessor.ts), then apply today's pins in one pulumi up. */
  fromPredecessors?: boolean | undefined;
  /**
   * cluster.sh's ports moved by this much (`--port-offset`), for e2e runs side by side on one
   * machine: cluster.sh replaces a taken default port by the next free one, but two clusters
   * starting at once both find the same port free.
   */
  portOffset?: number | undefined;
  /**
   * The bench's switch (`--deploy-graph`, components/deploy.ts): the current program's units also
   * wait for the whole phase before their own (`phase-barriers`), to compare with its own graph.
   * @default the program's own: each unit after what it depends on
   */
  deployGraph?: DeployGraph | undefined;
  /**
   * On the e2e's own cluster, kwok holds each pod as a kubelet pulling and starting it would, until
   * the first up ends (readiness.ts); `--no-readiness-delays`: none.
   * @default none
   */
  readinessDelays?: ReadinessDelays | undefined;
  /**
   * Only what timing a stack's first `pulumi up` needs (the bench, issue 46): steps 1–6 and one `pulumi
   * up --yes --policy-pack policy`, not interrupted, its timings; then the cluster goes down. Reports
   * in <outRoot>/first-up/<graph>/<stack>.
   */
  firstUpTiming?: boolean | undefined;
  log: (line: string) => void;
}

/** The policy pack's name (policy/index.ts), as the engine prints it when the pack ran. */
export const PACK = "openkeel-placement";

/** The type token of a Helm release, as the engine names the resource. */
export const RELEASE = "kubernetes:helm.sh/v3:Release";

/** Ends a stack's run after a fatal step (already recorded). */
export class Fatal extends Error {}

export class StackRun {
  readonly report: Report;
  readonly dir: string;
  readonly logs: string;
  readonly work: string;
  kubeconfig = "";
  kube?: Kube;
  mirror?: Mirror;
  admission?: AdmissionStandIn;
  /** the Helm releases' webhooks, pointed at the admission stand-in once they exist (own cluster only) */
  liveWebhooks?: LiveWebhooks;
  /** every pod the scheduler bound, kept after it is gone (Helm hooks) */
  podLog?: PodLog;
  controller?: ChildProcess;
  ownCluster = false;
  clusterDir = "";
  project = "";
  rendered?: RenderedStack;
  p?: PulumiEnv;
  /** the first preview failed: judge a new stack's preview in the policy step instead */
  freshPreviewPending = false;
  nodes: NodeSpec[] = [];
  /** timings.json: the first up's and an upgrade's (up.ts recordTimings) */
  readonly timings: Record<string, unknown> = {};

  constructor(
    readonly stack: string,
    readonly o: E2EOptions,
    readonly tmp: string,
  ) {
    this.report = new Report(stack);
    this.dir = path.join(o.outRoot, stack);
    this.logs = path.join(this.dir, "logs");
    this.work = path.join(tmp, stack);
    fs.rmSync(this.dir, { recursive: true, force: true });
    fs.mkdirSync(this.logs, { recursive: true });
    fs.mkdirSync(this.work, { recursive: true });
  }

  log(name: string): string {
    return path.join(this.logs, `${name}.log`);
  }

  /** A log's text so far ("" before the command that writes it ran). */
  logText(name: string): string {
    return fs.existsSync(this.log(name)) ? fs.readFileSync(this.log(name), "utf8") : "";
  }

  /** Run one step: timed, recorded, its exceptions turned into a failed step. */
  async step(name: string, fn: (s: StepResult) => Promise<unknown>, opts: { fatal?: boolean } = {}): Promise<StepResult> {
    const s: StepResult = { name, seconds: 0, ok: true, detail: [] };
    const t0 = Date.now();
    this.o.log(`[${this.stack}] ${name} …`);
    try {
      await fn(s);
    } catch (e) {
      s.ok = false;
      s.detail.push(`error: ${(e as Error).message}`);
    }
    s.seconds = (Date.now() - t0) / 1000;
    this.report.steps.push(s);
    this.report.write(path.join(this.dir, "report.md"));
    this.o.log(`[${this.stack}] ${name}: ${s.skipped ? "skipped" : s.ok ? "ok" : "FAILED"} (${s.seconds.toFixed(1)} s)${s.summary ? ` — ${s.summary}` : ""}`);
    // CI keeps only the console: a failure says why there, not only in report.md
    if (stepFailed(s)) for (const line of failureLines(s)) this.o.log(`[${this.stack}]   ${line}`);
    if (!s.ok && opts.fatal) throw new Fatal(name);
    return s;
  }

  /** A step that runs checks: its summary is their verdicts, and it fails with any of them. */
  async checkStep(name: string, checks: () => Promise<void>): Promise<StepResult> {
    return this.step(name, async (s) => {
      const before = this.report.checks.length;
      await checks();
      const ran = this.report.checks.slice(before);
      s.summary = ran.map((c) => `${c.ok ? "ok" : "FAILED"}: ${c.name}`).join("; ");
      s.ok = ran.every((c) => c.ok);
    });
  }
}

/** `npm run render` of the stack into `out` (the stack files of `stacksDir`, else the program's), by the program at `program` (default the repository). */
export async function render(r: StackRun, stacksDir: string | undefined, out: string, logName: string, program = r.o.repoRoot): Promise<RenderedStack> {
  const args = ["run", "-s", "render", "--", "--stack", r.stack, "--out", out, ...(stacksDir ? ["--stacks-dir", stacksDir] : [])];
  const res = await run("npm", args, { cwd: program, log: r.log(logName) });
  if (res.code !== 0) throw new Error(`npm run render exited ${res.code}:\n${(res.stderr || res.stdout).trim().slice(-2000)}`);
  return readRendered(out, r.stack);
}

/**
 * A pulumi command's result on its step: its log, exit and summary line, and its error lines when
 * it failed (`fails`: the step fails with it).
 */
export function recordRun(s: StepResult, res: RunResult, fails = true): void {
  s.log = res.log;
  s.summary = `exit ${res.code}; ${summaryLine(res.stdout)}`;
  if (res.code !== 0) {
    if (fails) s.ok = false;
    s.detail.push(`errors:\n${errorLines(res.stdout + res.stderr).join("\n")}`);
  }
}

/** The engine's error lines, each once (at most 60). */
export function errorLines(text: string): string[] {
  const lines = text
    .split("\n")
    .filter((l) => /\berror\b|failed|refusing|cannot|protected/i.test(l))
    .map((l) => l.trimEnd());
  return [...new Set(lines)].slice(0, 60);
}

/** The changed lines of a `pulumi preview --diff` (at most 60). */
export function changesOf(text: string): string[] {
  return text
    .split("\n")
    .filter((l) => /^\s+[~+-]{1,2}\+?\s/.test(l) || /^\s+\+-\s/.test(l))
    .slice(0, 60);
}

/** Warnings the API server returned (unknown fields pruned, PodSecurity) as the engine printed them. */
export function apiWarnings(text: string): string[] {
  return [
    ...new Set(
      text
        .split("\n")
        .filter((l) => /unknown field|would violate PodSecurity|Warning:.*(deprecated|unknown)/i.test(l))
        .map((l) => l.trim()),
    ),
  ];
}

/** A resource of a stack export, as the e2e reads it. */
export interface StateResource {
  urn?: string;
  protect?: boolean;
  retainOnDelete?: boolean;
}

/** The stack export's resources (empty when the export failed). */
export function stateResources(exported: RunResult): StateResource[] {
  if (exported.code !== 0) return [];
  const state = JSON.parse(exported.stdout) as { deployment?: { resources?: StateResource[] } };
  return state.deployment?.resources ?? [];
}
