// `npm run e2e`: the real Pulumi engine and a real Kubernetes control plane, per stack:
//   render → cluster (cluster.sh, unless --kubeconfig) → mirror → stand-in controller → Nodes →
//   pulumi stack init → pulumi up --policy-pack (kube-apiserver restarted mid-way) → rerun →
//   checks (objects accepted, role labels, placement by the real scheduler, storage classes) →
//   pulumi preview --policy-pack policy --expect-no-changes → policy pack D1–D8 against
//   `npm run policy` → day 2 (a new compute node: exact preview steps, up) → day-2 transitions of
//   production stacks (NodeHealthChecks, a disabled hypervisor through a rollout, maintenance
//   drains, a retirement to the removal, a health check reshaped while it remediates) → pulumi destroy (protected objects stay). The
//   preview-timing mode (`--time-preview`, for `npm run bench`) stops after the first up and
//   times that preview instead.
// It reads the program only through its rendered output and its CLIs (`npm run render`,
// `npm run policy`); see e2e/README.md. Each step there is a named function of its module:
// setup.ts (1–6), up.ts (7, 9 and the timed previews), cluster-checks.ts (8), policy-checks.ts
// (10), day2.ts (11), day2-transitions.ts (11a–11e), nhc-change.ts (11f), destroy.ts (12); stack-run.ts records a
// stack's steps and checks. A new scenario is a module of steps and one line in runStack.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { dayTwo } from "./day2";
import { dayTwoTransitions } from "./day2-transitions";
import { heldCheckChange } from "./nhc-change";
import { destroySteps } from "./destroy";
import { mutationsStep, shippedPolicyStep } from "./policy-checks";
import { checkAfterUp } from "./cluster-checks";
import { run, stop, which } from "./proc";
import { installPlugins, pulumiEnv, type PulumiEnv } from "./pulumi";
import { programWaits } from "./rendered";
import type { Report } from "./report";
import { setUp } from "./setup";
import { Fatal, StackRun, type E2EOptions } from "./stack-run";
import { OldProgram, upgradeSteps } from "./upgrade";
import { CONTRACT_CHARTS_DIR } from "./mirror";
import { PredecessorProgram } from "./predecessor";
import { endReadinessDelays, firstUp, idempotentPreviewStep, judgeFirstUp, recordTimings, timePreviews, upLog } from "./up";

export type { E2EOptions } from "./stack-run";

/** cluster.sh of the engine kit: env OPENKEEL_E2E_CLUSTER_SCRIPT, else ../shared/engine/cluster.sh. */
export function defaultClusterScript(repoRoot: string): string {
  return path.resolve(process.env.OPENKEEL_E2E_CLUSTER_SCRIPT ?? path.join(repoRoot, "..", "shared", "engine", "cluster.sh"));
}

/** The folder of the real release manifests: env OPENKEEL_MIRROR, else ../shared/mirror (files/<host>/<path> of their URLs). */
export function defaultMirrorDir(repoRoot: string): string {
  return path.resolve(process.env.OPENKEEL_MIRROR ?? path.join(repoRoot, "..", "shared", "mirror"));
}

/**
 * The mirror folder of a run: `--mirror` when given; on the e2e's own cluster the default folder;
 * on an existing cluster (--kubeconfig) none unless named. There pods really run: the real
 * operators would start and wait for cert-manager's certificates (the cert-manager chart is a
 * stand-in without a controller), and that cluster's API server would call their webhooks, which
 * it cannot reach on the admission stand-in at 127.0.0.1 of this machine. So the manifests keep
 * their stand-ins there.
 */
export function runMirrorDir(repoRoot: string, flag: string | undefined, kubeconfig: string | undefined): string | undefined {
  if (flag !== undefined) return path.resolve(flag);
  if (kubeconfig !== undefined && process.env.OPENKEEL_MIRROR === undefined) return undefined;
  return defaultMirrorDir(repoRoot);
}

/** The e2e of one stack: README "The steps, per stack", in order; the preview-timing mode stops after the first up. */
async function runStack(stack: string, o: E2EOptions, tmp: string, sharedHome: PulumiEnv, upgradeFrom?: OldProgram): Promise<Report> {
  const r = new StackRun(stack, o, tmp);
  running.add(r);
  // the pin-upgrade mode: the current program at the predecessors, per stack (predecessor.ts)
  const old =
    upgradeFrom ?? (o.fromPredecessors ? new PredecessorProgram(path.join(r.work, "predecessor-program"), CONTRACT_CHARTS_DIR, o.repoRoot) : undefined);
  try {
    const { rendered, first } = await setUp(r, sharedHome, old); // 1–6
    const up = await firstUp(r); // 7
    if (o.firstUpTiming) {
      recordTimings(r, "first pulumi up", up.logs, first);
      if (!up.last.ok) throw new Fatal(up.last.name);
      return r.report;
    }
    if (o.readinessDelays && r.ownCluster) await endReadinessDelays(r);
    if (o.previewTiming) {
      recordTimings(r, "first pulumi up", up.logs, rendered);
      if (!up.last.ok) throw new Fatal(up.last.name);
      await timePreviews(r, o.previewTiming.tries, o.previewTiming.turn);
      return r.report;
    }
    await judgeFirstUp(r, first, up);
    const upText = old ? await upgradeSteps(r, up.last.ok, rendered) : upLog(r, up); // 7b: --upgrade-from, --from-predecessors
    await r.checkStep("checks after pulumi up", () => checkAfterUp(r, rendered, "after pulumi up")); // 8
    await idempotentPreviewStep(r); // 9
    await shippedPolicyStep(r, upText); // 10
    await mutationsStep(r, rendered);
    const last = await dayTwo(r, rendered); // 11
    const transitioned = await dayTwoTransitions(r, rendered, last); // 11a–11e
    const final = await heldCheckChange(r, transitioned); // 11f
    await destroySteps(r, final); // 12
  } catch (e) {
    if (!(e instanceof Fatal)) {
      r.report.steps.push({ name: "driver", seconds: 0, ok: false, detail: [`internal error: ${(e as Error).stack}`] });
    }
  } finally {
    await tearDown(r);
    running.delete(r);
  }
  return r.report;
}

/** The stacks under way, for a run stopped by a signal. */
const running = new Set<StackRun>();

/**
 * Stopped by SIGINT or SIGTERM: the stand-in controller and the clusters of the stacks under way go
 * too (cluster.sh's processes outlive this one, and the controller would poll a dead API server),
 * and the temp folder, unless --keep; then the exit code of the signal.
 */
function stopOnSignal(o: E2EOptions, tmp: string): () => void {
  const handler = (signal: NodeJS.Signals) => {
    o.log(`e2e: ${signal}: stopping ${[...running].map((r) => r.stack).join(", ") || "nothing"} under way`);
    void Promise.all(
      [...running].map(async (r) => {
        await stop(r.controller);
        if (r.ownCluster && !o.keep) await run(o.clusterScript, ["down", r.clusterDir], { log: r.log("cluster") });
      }),
    ).finally(() => {
      if (!o.keep) fs.rmSync(tmp, { recursive: true, force: true });
      process.exit(signal === "SIGINT" ? 130 : 143);
    });
  };
  process.once("SIGINT", handler);
  process.once("SIGTERM", handler);
  return () => {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
  };
}

/** One line of the stand-in controller's log (standin-controller.ts). */
interface ControllerAction {
  time: string;
  action: string;
  object: string;
  detail?: string;
}

/** The stand-in controller's actions, from its log. */
function controllerActions(r: StackRun): ControllerAction[] {
  const actionsLog = path.join(r.logs, "standin-controller.jsonl");
  if (!fs.existsSync(actionsLog)) return [];
  return fs
    .readFileSync(actionsLog, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ControllerAction);
}

/** The report's list of what the program waits on, each with the stand-in controller's actions on that object. */
function reportWaits(r: StackRun, actions: ControllerAction[]): void {
  if (!r.rendered) return;
  for (const w of programWaits(r.rendered)) {
    const by = actions.filter((a) => a.object === w.object).map((a) => `${a.action}${a.detail ? ` (${a.detail})` : ""}`);
    r.report.waits.push(
      `${w.object} waits for ${w.condition} (${w.timeoutSeconds} s): ${by.length ? `the stand-in controller: ${by.join("; ")}` : "nothing of the stand-in controller answered it"}`,
    );
  }
}

/** After a stack's run, whatever happened: the controller and the mirror stopped, the cluster down (unless --keep), the reports written. */
async function tearDown(r: StackRun): Promise<void> {
  const { o, report: rep } = r;
  await stop(r.controller);
  const actions = controllerActions(r);
  rep.controller.push(
    ...actions
      .filter((a) => !["start", "stop"].includes(a.action))
      .map((a) => `${a.time} ${a.action}: ${a.object}${a.detail ? ` — ${a.detail.replace(/\s+/g, " ").trim()}` : ""}`),
  );
  reportWaits(r, actions);
  await r.podLog?.stop();
  if (r.liveWebhooks) {
    await r.liveWebhooks.stop();
    rep.standIns.push(
      `the Helm releases' webhooks (e2e/harness/live-webhooks.ts): every webhook configuration the real charts install is backed by a Service, whose CA bundle the chart's own controller injects at run time (cert-manager's cainjector, mariadb-operator's cert-controller); nothing behind a Service answers here, so each is pointed at the admission stand-in in the cluster once it exists; while Helm writes its release, it has its upstream clientConfig back (Helm's three-way merge would keep the url beside the Service it writes): ${r.liveWebhooks.pointed.length ? r.liveWebhooks.pointed.join("; ") : "none existed"}`,
    );
    if (r.liveWebhooks.restored.length)
      rep.notes.push(`the live webhooks given their upstream clientConfig back while Helm wrote their release: ${r.liveWebhooks.restored.join("; ")}`);
    if (r.liveWebhooks.errors.size) rep.notes.push(`pointing the live webhooks: ${[...r.liveWebhooks.errors].join("; ")}`);
  }
  if (r.podLog?.errors.size) rep.notes.push(`the pod log's watch ended with errors (it listed again each time): ${[...r.podLog.errors].join("; ")}`);
  if (r.admission) {
    rep.admission.push(...r.admission.summary());
    await r.admission.close();
  }
  if (r.mirror) {
    rep.notes.push(
      `mirror served ${r.mirror.requests.filter((q) => q.status === 200).length} requests; refused: ${[...new Set(r.mirror.requests.filter((q) => q.status !== 200).map((q) => q.path))].join(", ") || "none"}`,
    );
    await r.mirror.close();
  }
  r.kube?.close();
  if (r.ownCluster && !o.keep) {
    await run(o.clusterScript, ["down", r.clusterDir], { log: r.log("cluster") });
  } else if (r.ownCluster) {
    rep.notes.push(`cluster kept (--keep): export KUBECONFIG=${r.kubeconfig}; stop it with ${o.clusterScript} down ${r.clusterDir}`);
  }
  rep.finished = Date.now();
  rep.write(path.join(r.dir, "report.md"));
  if (Object.keys(r.timings).length) fs.writeFileSync(path.join(r.dir, "timings.json"), JSON.stringify({ stack: r.stack, ...r.timings }, null, 2));
  // machine-readable step times (for `npm run bench` and CI)
  fs.writeFileSync(
    path.join(r.dir, "steps.json"),
    JSON.stringify(
      {
        stack: r.stack,
        ok: rep.ok,
        seconds: (rep.finished - rep.started) / 1000,
        steps: rep.steps.map((x) => ({ name: x.name, seconds: x.seconds, ok: x.ok, skipped: x.skipped ?? false, summary: x.summary ?? "" })),
        failedChecks: rep.checks.filter((c) => !c.ok).map((c) => c.name),
        ...(rep.previewSeconds.length ? { previewSeconds: rep.previewSeconds } : {}),
      },
      null,
      2,
    ),
  );
}

/** Why the e2e cannot run (exit 2), or undefined. */
function cannotRun(o: E2EOptions): string | undefined {
  const missing = ["pulumi", "kubectl", "pulumi-resource-kubernetes", "pulumi-resource-random"].filter((b) => !which(b));
  if (missing.length)
    return `not on PATH: ${missing.join(", ")}. Put the engine's bin dir on PATH (../shared/engine/build.sh → $HOME/.cache/openkeel-engine/bin) or install the released Pulumi CLI and plugins.`;
  if (!o.kubeconfig && !fs.existsSync(o.clusterScript))
    return `no cluster script at ${o.clusterScript} (set --cluster-script or OPENKEEL_E2E_CLUSTER_SCRIPT, or pass --kubeconfig)`;
  return undefined;
}

/** Where a run's reports go: the preview-timing and first-up-timing modes each in a folder of their own. */
function reportsRoot(o: E2EOptions): string {
  if (o.previewTiming) return path.join(o.outRoot, "preview-timing");
  if (o.firstUpTiming) return path.join(o.outRoot, "first-up", o.deployGraph ?? "dependencies");
  return o.outRoot;
}

/** Every stack in turn, each on its own cluster; the reports. */
async function runStacks(o: E2EOptions): Promise<Report[]> {
  const outRoot = reportsRoot(o);
  fs.mkdirSync(outRoot, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-e2e-"));
  // kubectl's discovery cache stays in the temp dir, not in $HOME
  process.env.KUBECACHEDIR = path.join(tmp, "kube-cache");
  const home = pulumiEnv(tmp, path.join(tmp, "state"), o.kubeconfig ?? "");
  const old = o.upgradeFrom && new OldProgram(o.upgradeFrom, o.repoRoot, tmp);
  const unwatch = stopOnSignal(o, tmp);
  try {
    const plugins = await installPlugins(home, o.repoRoot, path.join(outRoot, "plugins.log"));
    o.log(`e2e: plugins ${plugins.join("; ")}; temp ${tmp}`);
    const reports: Report[] = [];
    for (const stack of o.stacks) reports.push(await runStack(stack, { ...o, outRoot }, tmp, home, old));
    return reports;
  } finally {
    unwatch();
    await old?.remove(path.join(outRoot, "upgrade-worktree.log"));
    if (!o.keep) fs.rmSync(tmp, { recursive: true, force: true });
  }
}

export async function runE2E(o: E2EOptions): Promise<number> {
  const why = cannotRun(o);
  if (why) {
    o.log(`e2e: ${why}`);
    return 2;
  }
  const t0 = Date.now();
  const reports = await runStacks(o);
  const outRoot = reportsRoot(o);
  o.log("");
  o.log("e2e step times:");
  for (const rep of reports) {
    for (const s of rep.steps)
      o.log(`  ${rep.stack.padEnd(12)} ${s.seconds.toFixed(1).padStart(7)} s  ${s.skipped ? "skip" : s.ok ? "ok  " : "FAIL"}  ${s.name}`);
    o.log(rep.verdictLine(path.join(outRoot, rep.stack, "report.md")));
  }
  if (o.previewTiming)
    for (const rep of reports)
      o.log(`  ${rep.stack.padEnd(12)} pulumi preview --policy-pack policy: ${rep.previewSeconds.map((x) => `${x.toFixed(2)} s`).join(", ") || "not timed"}`);
  for (const line of reports.flatMap((rep) => rep.whyFailed())) o.log(line);
  o.log(`e2e: ${((Date.now() - t0) / 1000).toFixed(0)} s in all; ${reports.every((x) => x.ok) ? "PASS" : "FAIL"}`);
  return reports.every((x) => x.ok) ? 0 : 1;
}

export interface PreviewTiming {
  stack: string;
  ok: boolean;
  /** every timed try, in seconds (empty when the setup or a try failed) */
  seconds: number[];
  /** what failed, when not ok: the failed steps and checks */
  failure?: string;
  report: string;
}

/** A stack's first up in the first-up-timing mode: its timings.json (`first pulumi up`), or why there is none. */
export interface FirstUpTiming {
  stack: string;
  ok: boolean;
  timings?: Record<string, unknown>;
  failure?: string;
  report: string;
}

/** The first-up-timing mode for the bench (issue 46): per stack, what its first `pulumi up` waited on, under `o.deployGraph`. */
export async function timeFirstUps(o: E2EOptions & { firstUpTiming: true }): Promise<FirstUpTiming[] | { cannotRun: string }> {
  const why = cannotRun(o);
  if (why) return { cannotRun: why };
  const reports = await runStacks(o);
  return reports.map((rep) => {
    const dir = path.join(reportsRoot(o), rep.stack);
    const timings = path.join(dir, "timings.json");
    const report = path.join(dir, "report.md");
    if (rep.ok && fs.existsSync(timings))
      return { stack: rep.stack, ok: true, timings: JSON.parse(fs.readFileSync(timings, "utf8")) as Record<string, unknown>, report };
    const failed = [...rep.failedSteps.map((x) => `step "${x.name}": ${x.detail.find((d) => d.startsWith("errors:")) ?? x.summary ?? "failed"}`)];
    return { stack: rep.stack, ok: false, failure: failed.join("; ").slice(0, 600) || "no timed first up", report };
  });
}

/** The preview-timing mode for the bench: per stack, the times of `pulumi preview --policy-pack policy`. */
export async function timeEnginePreviews(o: E2EOptions & { previewTiming: { tries: number } }): Promise<PreviewTiming[] | { cannotRun: string }> {
  const why = cannotRun(o);
  if (why) return { cannotRun: why };
  const reports = await runStacks(o);
  return reports.map((rep) => {
    const report = path.join(o.outRoot, "preview-timing", rep.stack, "report.md");
    if (rep.ok && rep.previewSeconds.length === o.previewTiming.tries) return { stack: rep.stack, ok: true, seconds: rep.previewSeconds, report };
    const failed = [
      ...rep.failedSteps.map((x) => `step "${x.name}": ${x.detail.find((d) => d.startsWith("error: ")) ?? x.summary ?? "failed"}`),
      ...rep.failedChecks.map((c) => `check "${c.name}"`),
    ];
    return { stack: rep.stack, ok: false, seconds: [], failure: failed.join("; ").slice(0, 600) || "no timed preview", report };
  });
}
