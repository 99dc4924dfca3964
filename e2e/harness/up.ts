// The first `pulumi up --policy-pack policy` of a stack, with kube-apiserver restarted mid-way, and
// its reruns until one converges (README step 7); the idempotent preview after it (step 9); and the
// preview-timing mode's timed previews (`--time-preview`).
import * as fs from "node:fs";
import * as path from "node:path";
import { webhookPath } from "./admission";
import { deployedGraph, deployTimings, resourceSteps, timingLines, type DeployTimings } from "./timings";
import { kwokConfigFile } from "./readiness";
import { protectedStillThere } from "./cluster-checks";
import { freshStackPolicyCheck } from "./policy-checks";
import { run, sleep, type RunResult } from "./proc";
import { previewProblem, pulumi, summaryLine } from "./pulumi";
import type { RenderedStack } from "./rendered";
import type { StepResult } from "./report";
import { apiWarnings, changesOf, errorLines, PACK, type StackRun } from "./stack-run";

/** Whether the API server restart is still to come (`pending`) or happened (`interrupted`). */
interface RestartState {
  interrupted: boolean;
  pending: boolean;
}

/** The outcome of the first up and its reruns. */
export interface FirstUp {
  /** The last `pulumi up` step. */
  last: StepResult;
  restart: RestartState;
  /** The index (in the report's steps) of the run kube-apiserver was restarted in; -1: none. */
  interruptedAt: number;
  /** The logs of every `pulumi up` run, in order. */
  logs: string[];
}

/**
 * How long a `pulumi up` may take before it counts as hung. The bench's first up of prod-large with
 * the phases as barriers waits on every pod's readiness delay along the whole chain: on a loaded
 * 2-core machine it passed 20 min (stop 50's attempt, killed at 1208 s), so its runs get longer.
 */
export const upTimeoutMs = (r: Pick<StackRun, "o">) => (r.o.firstUpTiming ? 45 : 20) * 60_000;

/** `pulumi up …`, restarting kube-apiserver once the first OpenKeel Helm release exists (mid-way). */
async function upWithRestart(r: StackRun, s: StepResult, args: string[], logName: string, state: RestartState): Promise<RunResult> {
  let watching = state.pending;
  let restart: Promise<void> | undefined;
  const watcher = (async () => {
    while (watching) {
      await sleep(1000);
      try {
        const rel = await r.kube!.list(`/api/v1/namespaces/openkeel/secrets?labelSelector=${encodeURIComponent("owner=helm")}`);
        if (rel.length > 0 && watching) {
          watching = false;
          state.interrupted = true;
          state.pending = false;
          s.detail.push(
            `kube-apiserver restarted while the program was applying (first OpenKeel Helm release ${rel[0].metadata.labels?.name} installed), ${new Date().toISOString()}`,
          );
          restart = run(r.o.clusterScript, ["restart", r.clusterDir, "kube-apiserver"], { log: r.log("cluster") }).then((x) => {
            s.detail.push(`cluster.sh restart kube-apiserver: exit ${x.code} after ${x.seconds.toFixed(0)} s`);
          });
        }
      } catch {
        /* API server busy */
      }
    }
  })();
  const res = await pulumi(args, r.project, r.p!, r.log(logName), { timeoutMs: upTimeoutMs(r), env: EVENT_LOG_ENV });
  watching = false;
  await watcher;
  await restart;
  if (state.pending) s.detail.push("no OpenKeel release appeared before the run ended: the API server was not restarted during it");
  return res;
}

/** One `pulumi up` step; an interrupted run's errors are judged by the rerun, a failed preview stage fails it. */
function upStep(r: StackRun, state: RestartState, title: string, args: string[], logName: string): Promise<StepResult> {
  return r.step(title + (state.pending ? " (kube-apiserver restarted mid-way)" : ""), async (s) => {
    const before = state.interrupted;
    const res = await upWithRestart(r, s, [...args, "--event-log", eventLog(r, logName)], logName, state);
    const thisRunInterrupted = !before && state.interrupted;
    s.log = res.log;
    s.summary = `exit ${res.code}; ${summaryLine(res.stdout)}`;
    const warnings = apiWarnings(res.stdout + res.stderr);
    if (warnings.length) s.detail.push(`API server warnings:\n${warnings.join("\n")}`);
    if (res.code !== 0) {
      s.detail.push(`errors:\n${errorLines(res.stdout + res.stderr).join("\n")}`);
      if (!/^Updating \(/m.test(res.stdout)) {
        s.ok = false;
        s.detail.push("the run failed in its preview stage, before changing anything");
      } else if (!thisRunInterrupted) s.ok = false;
      else s.detail.push("the run was interrupted on purpose: its errors are judged by the rerun");
    }
    return res;
  });
}

/**
 * Reruns after the interrupted run, at most, and in all. A run that fails before the restart could
 * happen (the restart waits for the first OpenKeel release) does not use up the reruns after it:
 * the last release's program (d7db523, `--upgrade-from`) creates its SNR objects before the
 * operator's webhook is served (the defect the medik8s-installed unit fixed, issue 39 item 6), so
 * its first up and one or two reruns fail there, and the restart fell on its third rerun.
 */
const RERUNS_AFTER_RESTART = 3;
const RERUNS_IN_ALL = 6;

/** Whether step 7 runs `pulumi up` again: the last run failed, the restart is still to come, or the last run was the interrupted one. */
export function rerunAgain(s: { reruns: number; afterRestart: number; lastOk: boolean; restartPending: boolean; lastInterrupted: boolean }): boolean {
  if (s.reruns >= RERUNS_IN_ALL || s.afterRestart >= RERUNS_AFTER_RESTART) return false;
  return !s.lastOk || s.restartPending || s.lastInterrupted;
}

/**
 * README step 7: `pulumi up --yes --policy-pack policy` (kube-apiserver restarted mid-way on the
 * e2e's own cluster); past a failed preview stage with `--skip-preview`; then reruns until a run
 * after the interrupted one passes (RERUNS_AFTER_RESTART after it, RERUNS_IN_ALL in all).
 */
export async function firstUp(r: StackRun): Promise<FirstUp> {
  const o = r.o;
  const rep = r.report;
  const timing = o.previewTiming !== undefined || o.firstUpTiming === true;
  const restart: RestartState = { interrupted: false, pending: o.interrupt && r.ownCluster && !timing };
  let last = await upStep(r, restart, "pulumi up --yes --policy-pack policy", ["up", "--yes", "--policy-pack", "policy"], "up");
  const logs = ["up"];
  const runs = [last];
  // a new stack's first preview: can the pack judge every resource? (unknown secrets make rules advisory)
  const firstPreviewFailed = !last.ok && last.detail.some((d) => d.includes("preview stage"));
  if (!firstPreviewFailed && !timing) freshStackPolicyCheck(r, r.logText("up"), "the first pulumi up's preview");
  if (firstPreviewFailed) {
    r.freshPreviewPending = true;
    logs.push("up-skip-preview");
    last = await upStep(
      r,
      restart,
      "pulumi up --yes --skip-preview --policy-pack policy (to get past the failed preview)",
      ["up", "--yes", "--skip-preview", "--policy-pack", "policy"],
      "up-skip-preview",
    );
    runs.push(last);
  }
  let interruptedAt = restart.interrupted ? rep.steps.length - 1 : -1;
  const recovered: StepResult[] = [];
  let afterRestart = 0;
  const again = (reruns: number) =>
    rerunAgain({ reruns, afterRestart, lastOk: last.ok, restartPending: restart.pending, lastInterrupted: interruptedAt === rep.steps.length - 1 });
  for (let i = 1; again(i - 1); i++) {
    logs.push(`up-rerun-${i}`);
    last = await upStep(
      r,
      restart,
      `pulumi up --yes --policy-pack policy (rerun ${i}${interruptedAt >= 0 ? ": converges" : ""})`,
      ["up", "--yes", "--policy-pack", "policy"],
      `up-rerun-${i}`,
    );
    runs.push(last);
    if (restart.interrupted && interruptedAt < 0) interruptedAt = rep.steps.length - 1;
    else if (interruptedAt >= 0) afterRestart++;
    if (!last.ok && interruptedAt >= 0 && HELM_NAME_IN_USE.test(r.logText(logs.at(-1)!))) await clearPendingInstalls(r, last, recovered);
  }
  if (o.upgradeFrom && last.ok) oldProgramWebhookRaces(r, runs.slice(0, -1), logs);
  if (last.ok) for (const step of recovered) step.ok = true;
  return { last, restart, interruptedAt, logs };
}

/**
 * Helm's refusal to install a release whose record an interrupted install left `pending-install`
 * (helm.sh/helm/v3@v3.18.6, the provider's, pkg/action/install.go:545-551 availableName: only an
 * uninstalled or failed record may be replaced). The restart mid-way can fall inside an install, and
 * no rerun of `pulumi up` clears it.
 */
export const HELM_NAME_IN_USE = /cannot re-use a name that is still in use/;

/**
 * What docs/operating.md tells an operator to do then: delete the record Helm left pending, keeping
 * the objects it created, which the next install adopts (they carry its release's annotations:
 * pkg/action/install.go:349-354, validate.go:65-86 existingResourceConflict). The run that met it
 * is judged by the rerun after the recovery (`recovered`: made ok once a rerun converges).
 */
async function clearPendingInstalls(r: StackRun, step: StepResult, recovered: StepResult[]): Promise<void> {
  const pending = await r.kube!.list(`/api/v1/secrets?labelSelector=${encodeURIComponent("owner=helm,status=pending-install")}`);
  for (const secret of pending) {
    const { namespace, name } = secret.metadata;
    const res = await run("kubectl", ["delete", "secret", "-n", namespace!, name, "--kubeconfig", r.kubeconfig], { log: r.log("helm-pending") });
    step.detail.push(
      `the operator's recovery (docs/operating.md): kubectl -n ${namespace} delete secret ${name} (Helm's pending-install record): exit ${res.code}`,
    );
  }
  if (pending.length > 0) recovered.push(step);
}

/**
 * A failed run of the old program (`--upgrade-from`) whose every error is an admission webhook the
 * API server could not call yet: the last release (d7db523) creates its SNR objects as soon as OLM
 * names the CSV, before the operator serves its webhooks (the defect the medik8s-installed unit
 * fixed, issue 39 item 6), as it would on a real cluster. Its rerun converged: the run is the old
 * release's, judged by that rerun, and the report says so. Any other error still fails it.
 */
function oldProgramWebhookRaces(r: StackRun, runs: StepResult[], logs: string[]): void {
  runs.forEach((step, i) => {
    if (step.ok || !onlyUnservedWebhooks(r.logText(logs[i]))) return;
    step.ok = true;
    step.detail.push(
      "the last release's own defect: its every error is an admission webhook not served yet (its SNR objects before the operator); a later rerun converged",
    );
    r.report.notes.push(
      `${step.name}: failed on the old program's SNR objects before their webhook was served (the defect medik8s-installed fixed); judged by the rerun that converged`,
    );
  });
}

/**
 * A failed pulumi run whose every diagnostic error is a webhook call the API server could not make,
 * besides its "update failed" line, the operations those errors cancelled ("context canceled") and
 * the program's log call that came after the engine stopped ("Channel has been shut down").
 */
export function onlyUnservedWebhooks(log: string): boolean {
  const errors = log
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith("error: "));
  const webhook = errors.filter((l) => /failed calling webhook "[^"]+": failed to call webhook/.test(l));
  return webhook.length > 0 && errors.every((l) => webhook.includes(l) || CONSEQUENCES.some((c) => c.test(l)));
}

/** The error lines that follow from a failed run rather than stand for an error of their own. */
const CONSEQUENCES = [/^error: (update|preview) failed$/, /: context canceled$/, /^error: Error: Channel has been shut down$/];

/** `--event-log` is a flag of pulumi up only with the CLI's debug commands enabled (pulumi/pulumi v3.276.0 pkg/cmd/pulumi/operations/up.go 1023-1028). */
export const EVENT_LOG_ENV = { PULUMI_DEBUG_COMMANDS: "true" };

/** The engine's event log of a pulumi command (its log's name). */
export function eventLog(r: StackRun, logName: string): string {
  return path.join(r.logs, `${logName}.events.jsonl`);
}

/**
 * The timings of a deploy (timings.ts) into the report and timings.json: `label` the up, `logs` its
 * runs in order, each whose update started timed (a failed preview stage starts none); the first is
 * `label`, the others `label, <log>`.
 */
export function recordTimings(r: StackRun, label: "first pulumi up" | "pin upgrade" | "upgrade", logs: string[], rendered: RenderedStack): void {
  let timed = 0;
  for (const name of logs) {
    const file = eventLog(r, name);
    if (!fs.existsSync(file)) continue;
    const steps = resourceSteps(fs.readFileSync(file, "utf8"));
    if (steps.length === 0) continue;
    // a first up interrupted by the API server restart is timed until then; its rerun times the rest
    const key = timed === 0 ? label : `${label}, ${name}`;
    const t = deployTimings(steps, rendered.index, deployedGraph(rendered.index, r.o.deployGraph));
    r.timings[key] = { log: name, ...t };
    r.report.timings.push(...timingLines(`${key} (${name})`, t));
    timed++;
  }
  if (timed === 0) r.report.timings.push(`${label}: no event log with an update (${logs.join(", ")})`);
}

/** The text of every `pulumi up` run's log. */
export function upLog(r: StackRun, up: FirstUp): string {
  return up.logs.map((n) => r.logText(n)).join("\n");
}

/** What the first up proves: the interrupted run converged with nothing protected deleted; the API server accepted every object. */
export async function judgeFirstUp(r: StackRun, rendered: RenderedStack, up: FirstUp): Promise<void> {
  const rep = r.report;
  recordTimings(r, "first pulumi up", up.logs, rendered);
  if (r.o.interrupt && r.ownCluster) {
    const still = await protectedStillThere(r, rendered, "after-interrupt");
    const ok = up.restart.interrupted && up.last.ok && up.interruptedAt >= 0 && up.interruptedAt < rep.steps.length - 1 && still.ok;
    rep.check("interrupted pulumi up: the rerun converges and nothing protected was deleted", ok, [
      up.restart.interrupted
        ? `kube-apiserver was restarted during step ${up.interruptedAt + 1} (${rep.steps[up.interruptedAt]?.name})`
        : "the API server was never restarted during a run",
      `last pulumi up: ${up.last.ok ? "ok" : "FAILED"} (${up.last.name})`,
      ...still.detail,
    ]);
  }
  if (r.o.interrupt && !r.ownCluster) rep.notes.push("no kube-apiserver restart: the cluster is not the e2e's own (--kubeconfig)");
  if (!r.o.upgradeFrom) snrWebhookCheck(r, rendered);
  else r.report.notes.push("the SNR webhook wait is not judged: the first install is the old program's (--upgrade-from)");
  const upWarnings = apiWarnings(upLog(r, up));
  rep.check("every object accepted by the real API server (no unknown fields pruned, no PodSecurity warnings)", upWarnings.length === 0, upWarnings);
}

/** The stand-in controller's actions so far (its JSON-lines log). */
function controllerLog(r: StackRun): { time: string; action: string; object: string }[] {
  const f = path.join(r.logs, "standin-controller.jsonl");
  if (!fs.existsSync(f)) return [];
  return fs
    .readFileSync(f, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { time: string; action: string; object: string });
}

/** The SNR CSV's webhooks (../standins/olm.ts), by name. */
const SNR_WEBHOOKS = ["vselfnoderemediationconfig.kb.io", "vselfnoderemediationtemplate.kb.io", "mselfnoderemediationtemplate.kb.io"];

/**
 * Issue 39 item 6, on a clean cluster: the SNR configuration patch (and the template) reach the SNR
 * operator's webhooks only once they answer. The stand-in OLM creates the webhooks when the
 * Subscription is installed and the operator's Deployment 15 s later; until its pods are Ready a
 * call finds no endpoint and, failurePolicy Fail, the request is refused (admission.ts reachable).
 */
export function snrWebhookCheck(r: StackRun, rendered: RenderedStack): void {
  if (!r.admission?.reachable || !rendered.units.some((u) => u.name === "medik8s-remediation")) return;
  const paths = new Map(
    r.admission.webhooks.filter((w) => SNR_WEBHOOKS.includes(w.webhook)).map((w) => [webhookPath(w.kind, w.configuration, w.webhook), w.webhook]),
  );
  const calls = r.admission.answered.filter((a) => paths.has(a.path));
  const unreachable = calls.filter((a) => a.status === 500);
  const configCalls = calls.filter((a) => paths.get(a.path) === "vselfnoderemediationconfig.kb.io" && a.status === 200);
  const ok = paths.size > 0 && unreachable.length === 0 && configCalls.length > 0;
  const ready = controllerLog(r).find((a) => a.action === "set status.phase Succeeded" && a.object.includes("/self-node-remediation."))?.time;
  const wait = (r.timings["first pulumi up"] as DeployTimings | undefined)?.units.find((u) => u.name === "medik8s-installed");
  r.report.check("medik8s: the SNR configuration and template reach the operator's webhooks only once they answer (the first install waits for the CSV)", ok, [
    `${paths.size} SNR webhook(s) pointed at the admission stand-in; ${calls.length} call(s), ${unreachable.length} before the operator's pods were ready`,
    ...calls.map((a) => `${a.at} ${paths.get(a.path)}: ${a.status === 200 ? "answered" : "NO ENDPOINT"}: ${a.what}`),
    ...(configCalls.length === 0 ? ["no call of the config's webhook was answered: the configuration never reached the API server through it"] : []),
    ready && wait
      ? `the SNR CSV Succeeded (its Deployment available) at ${ready}; the program's medik8s-installed unit ran ${new Date(wait.start * 1000).toISOString()} to ${new Date(wait.end * 1000).toISOString()}: ${wait.start * 1000 < Date.parse(ready) ? "it reached the wait before the operator was ready, and waited" : "the operator was ready before the program reached the wait (not exercised in this run)"}`
      : `the wait's timing is not known (CSV Succeeded: ${ready ?? "not in the stand-in controller's log"}; medik8s-installed: ${wait ? "timed" : "not in the first up's event log"})`,
  ]);
}

/** README step 9: the command an operator runs before every change, the pack included: nothing to change, nothing refused. */
export async function idempotentPreviewStep(r: StackRun): Promise<void> {
  await r.step("pulumi preview --policy-pack policy --expect-no-changes", async (s) => {
    const res = await pulumi(["preview", "--expect-no-changes", "--diff", "--policy-pack", "policy"], r.project, r.p!, r.log("preview-idempotent"));
    s.log = res.log;
    s.summary = `exit ${res.code}; ${summaryLine(res.stdout)}`;
    if (res.code !== 0) {
      s.ok = false;
      s.detail.push(`changes or errors:\n${changesOf(res.stdout).join("\n")}\n${errorLines(res.stdout + res.stderr).join("\n")}`);
    }
  });
}

/** `pulumi preview --policy-pack policy` of the deployed stack, `tries` times; every try must pass previewProblem. */
export async function timePreviews(r: StackRun, tries: number, turn?: (stack: string) => Promise<void>): Promise<void> {
  await r.step(`pulumi preview --policy-pack policy, timed (${tries} tries)`, async (s) => {
    for (let i = 1; i <= tries; i++) {
      const res = await pulumi(["preview", "--policy-pack", "policy"], r.project, r.p!, r.log(`preview-timed-${i}`));
      const problem = previewProblem(res.code, res.stdout + res.stderr, PACK);
      s.detail.push(`try ${i}: ${res.seconds.toFixed(2)} s, exit ${res.code}; ${summaryLine(res.stdout)}${problem ? `; ${problem}` : ""}`);
      if (problem) throw new Error(`try ${i} of pulumi preview --policy-pack policy: ${problem}\n${errorLines(res.stdout + res.stderr).join("\n")}`);
      r.report.previewSeconds.push(res.seconds);
      await turn?.(r.stack);
    }
    s.summary = `${r.report.previewSeconds.map((x) => x.toFixed(2)).join(", ")} s`;
  });
}

/** After the first up: kwok started again without the delays (its other state is the cluster's). */
export async function endReadinessDelays(r: StackRun): Promise<void> {
  await r.step("kwok: readiness delays end after the first pulumi up (cluster.sh restart kwok)", async (s) => {
    fs.rmSync(kwokConfigFile(r.clusterDir), { force: true });
    const res = await run(r.o.clusterScript, ["restart", r.clusterDir, "kwok"], { log: r.log("cluster") });
    if (res.code !== 0) throw new Error(`cluster.sh restart kwok exited ${res.code}: ${res.stderr.slice(-800)}`);
    const waits = r.podLog?.startWaits() ?? [];
    const sorted = [...waits].sort((a, b) => a - b);
    const pick = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    s.summary = waits.length
      ? `${waits.length} pods held ${pick(0).toFixed(0)}–${sorted.at(-1)!.toFixed(0)} s (median ${pick(0.5).toFixed(0)} s) from bound to started`
      : "no pod was held";
    // each held pod waited at least the minimum (whole seconds: the pod log's clock and kwok's differ by the watch)
    const short = waits.filter((w) => w < r.o.readinessDelays!.minSeconds - 1);
    r.report.checks.push({
      name: "readiness delays: every pod the first up made waited between the bounds before it started",
      ok: waits.length > 0 && short.length === 0,
      detail: [s.summary, ...(short.length ? [`${short.length} started sooner than ${r.o.readinessDelays!.minSeconds} s`] : [])],
    });
  });
}
