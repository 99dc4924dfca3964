// The policy pack inside the real engine (README step 10): it passes the shipped stack as
// `npm run policy` does; the first preview of a new stack is judged completely; and on production
// stacks the mutations of D1–D8 get the same mandatory violations from `pulumi preview
// --policy-pack policy` as from `npm run policy`. The mutations run as two mutated stacks, not
// eight: the stack config ones (judged by `npm run policy` itself) and the resource ones (judged by
// its library), each decision's rule tripped in both: one engine preview costs 1–3 minutes on 2
// cores, and eight of them did not fit CI's 90 minutes. Which mutation trips which rule alone is
// test/integration/policy/policy.test.ts's subject.
import * as fs from "node:fs";
import * as path from "node:path";
import { run, type RunResult } from "./proc";
import { copyProject, mutateStackConfig, stackFile } from "./project";
import { policyViolations, pulumi, type PolicyViolation } from "./pulumi";
import { describeMutation, mutationLines, planMutations, unjudged, type PolicyMutation } from "./policy-mutations";
import type { RenderedStack } from "./rendered";
import { PACK, type StackRun } from "./stack-run";

function violationSet(vs: { policy: string; resourceName: string }[]): string[] {
  return [...new Set(vs.map((v) => `${v.policy} @ ${v.resourceName || "(stack)"}`))].sort();
}

/** `npm run policy` lines: `  mandatory [policy] name (type):` */
function offlineViolations(text: string): PolicyViolation[] {
  return [...text.matchAll(/^\s+(mandatory|advisory) \[([a-z0-9-]+)\] (.*?)(?: \(([^()]+)\))?:\s*$/gm)].map((m) => ({
    level: m[1],
    policy: m[2],
    resourceName: m[4] ? m[3] : m[3] === "(stack)" ? "" : m[3],
    resourceType: m[4] ?? "",
  }));
}

/** The mandatory violations of an engine run and of an `npm run policy` run, each as a sorted set. */
function mandatory(engineText: string, offlineText: string): { engine: string[]; offline: string[] } {
  return {
    engine: violationSet(policyViolations(engineText).filter((v) => v.level === "mandatory")),
    offline: violationSet(offlineViolations(offlineText).filter((v) => v.level === "mandatory")),
  };
}

/**
 * During the first preview of a new stack the generated secrets are unknown: the pack may only
 * report the documented advisory of d4-metadata-secret (README, Policy pack); any other "can't
 * run" advisory is a policy the engine does not enforce there.
 */
export function freshStackPolicyCheck(r: StackRun, text: string, where: string): void {
  const advisories = policyViolations(text).filter((v) => v.level === "advisory");
  const documented = (v: PolicyViolation) => v.policy === "d4-metadata-secret";
  const lines = [...new Set((text.match(/can't run policy .*$/gm) ?? []).map((l) => l.trim()))];
  r.report.check(
    "the policy pack judges every resource in the first preview of a new stack (only the documented d4-metadata-secret advisory)",
    advisories.every(documented),
    [
      `evaluated on ${where}`,
      ...[...new Set(advisories.map((v) => `${documented(v) ? "documented" : "NOT ENFORCED"}: ${v.policy} @ ${v.resourceName}`))],
      ...lines,
    ],
  );
}

/** README step 10, first half: the pack in the engine passes the shipped stack, and `npm run policy` agrees. */
export async function shippedPolicyStep(r: StackRun, upLogText: string): Promise<void> {
  await r.step("policy pack: npm run policy on the shipped stack", async (s) => {
    const res = await run("npm", ["run", "-s", "policy", "--", "--stack", r.stack], { cwd: r.o.repoRoot, log: r.log("policy-offline") });
    const idempotent = r.logText("preview-idempotent");
    const { engine, offline } = mandatory(upLogText + idempotent, res.stdout);
    s.summary = `npm run policy exit ${res.code}; engine (pulumi up and preview --policy-pack): ${engine.length} mandatory, npm run policy: ${offline.length}`;
    const ran = (text: string) => (text.includes(PACK) ? ` (pack ${PACK} ran)` : " (NO sign of the pack in the engine output)");
    r.report.check(
      "the policy pack runs inside the real engine and passes the shipped stack",
      engine.length === 0 && upLogText.includes(PACK) && idempotent.includes(PACK) && res.code === 0,
      [
        `pulumi up and pulumi preview --policy-pack policy: ${engine.join("; ") || "no mandatory violation"}; up${ran(upLogText)}; preview${ran(idempotent)}`,
        `npm run policy: exit ${res.code}; ${offline.join("; ") || "no mandatory violation"}`,
      ],
    );
  });
}

/**
 * README step 10, second half: the D1–D8 mutated stacks, production stacks only; each decision on
 * a target the stack deploys (policy-mutations.ts), the ways skipped listed with the reason.
 */
export async function mutationsStep(r: StackRun, rendered: RenderedStack): Promise<void> {
  if (r.o.policyMutations && rendered.index.environment !== "kind-lab") {
    await r.step("policy pack D1–D8: mutated stacks, real engine vs npm run policy", async (s) => {
      const plan = planMutations(rendered);
      const lines = mutationLines(plan);
      s.detail.push(...lines);
      // CI keeps only the console: what is not judged says why there too
      for (const l of lines.filter((x) => x.startsWith("skipped:"))) r.o.log(`[${r.stack}]   ${l}`);
      await policyChecks(r, stackFile(r.project, r.stack), plan.planned);
      const mine = r.report.checks.filter((c) => c.name.startsWith("policy pack in the real engine, D"));
      const notJudged = unjudged(plan);
      s.summary = `${mine.filter((c) => c.ok).length}/${mine.length} decisions agree${notJudged.length ? `; not judged (no target in the stack): ${notJudged.join(", ")}` : ""}`;
    });
  } else if (r.o.policyMutations) {
    r.report.notes.push("D1–D8 mutated stacks are run for production stacks only: kind-lab stacks are exempt from D1–D8 (README, Policy pack)");
  }
}

/** A stack of the policy project with the shipped stack file's config (`base`) and its own encryption salt. */
async function initStack(r: StackRun, proj: string, stack: string, base: string, log: string): Promise<{ init: RunResult; file: string }> {
  const init = await pulumi(["stack", "init", stack], proj, r.p!, log);
  const file = stackFile(proj, stack);
  const salt = /^encryptionsalt: .*$/m.exec(fs.readFileSync(file, "utf8"))?.[0] ?? "";
  fs.writeFileSync(file, `${base.replace(/\n*$/, "\n")}${salt}\n`);
  return { init, file };
}

/** A new stack of the shipped config, no state: what a first `pulumi preview` sees (when the first up's preview failed). */
async function freshStackPreview(r: StackRun, proj: string, base: string): Promise<void> {
  const stack = `${r.stack}-new`;
  const log = r.log("policy-new-stack");
  await initStack(r, proj, stack, base, log);
  const res = await pulumi(["preview", "--stack", stack, "--policy-pack", "policy"], proj, r.p!, log);
  await pulumi(["stack", "rm", "--yes", "--force", stack], proj, r.p!, log);
  freshStackPolicyCheck(r, res.stdout + res.stderr, `a preview of a new stack ${stack} (the first pulumi up's preview failed), exit ${res.code}`);
}

/** Mutations judged together on one mutated stack: all stack config ones, or all resource ones. */
interface MutationGroup {
  name: "config" | "resources";
  mutations: PolicyMutation[];
}

/** The planned mutations as their mutated stacks: the config ones together, the resource ones together (a group with none is not run). */
function mutationGroups(planned: PolicyMutation[]): MutationGroup[] {
  const groups: MutationGroup[] = [
    { name: "config", mutations: planned.filter((m) => m.config) },
    { name: "resources", mutations: planned.filter((m) => m.resources) },
  ];
  return groups.filter((g) => g.mutations.length > 0);
}

interface GroupRun {
  g: MutationGroup;
  stack: string;
  init: RunResult;
  real: RunResult;
  offline: RunResult;
  engine: string[];
  offl: string[];
  engineSeconds: number;
}

/** The state of the shipped stack (`exported`), renamed to `stack`. */
function renamedState(exported: string, from: string, stack: string): string {
  return exported
    .split(`urn:pulumi:${from}::`)
    .join(`urn:pulumi:${stack}::`)
    .split(`pulumi:pulumi:Stack::openkeel-${from}"`)
    .join(`pulumi:pulumi:Stack::openkeel-${stack}"`);
}

/**
 * One group's mutated stack, started from the shipped stack's state (`exported`: its generated
 * secrets known, as for an operator changing an existing stack), judged by the engine and offline:
 * stack config by `npm run policy` itself, resource mutations by its library (policy-offline.ts).
 */
async function judgeGroup(r: StackRun, proj: string, base: string, exported: string, g: MutationGroup): Promise<GroupRun> {
  const stack = `${r.stack}-d-${g.name}`;
  const resources = g.mutations.flatMap((m) => m.resources ?? []);
  const env = resources.length ? { OPENKEEL_E2E_MUTATION: JSON.stringify(resources) } : {};
  const log = r.log(`policy-${g.name}`);
  const { init, file } = await initStack(r, proj, stack, base, log);
  for (const m of g.mutations) if (m.config) mutateStackConfig(file, m.config.key, m.config.mutate);
  const stateFile = path.join(r.work, `state-${stack}.json`);
  fs.writeFileSync(stateFile, renamedState(exported, r.stack, stack));
  const imported = await pulumi(["stack", "import", "--stack", stack, "--file", stateFile], proj, r.p!, log);
  if (imported.code !== 0) throw new Error(`pulumi stack import into ${stack} exited ${imported.code}: ${imported.stderr.slice(-600)}`);
  const t0 = Date.now();
  const real = await pulumi(["preview", "--stack", stack, "--policy-pack", "policy"], proj, r.p!, log, { env });
  const engineSeconds = (Date.now() - t0) / 1000;
  const offline = resources.length
    ? await run(path.join(r.o.repoRoot, "node_modules", ".bin", "tsx"), [path.join(__dirname, "policy-offline.ts"), proj, stack], {
        cwd: r.o.repoRoot,
        log,
        env: { ...process.env, ...env },
      })
    : // `npm run policy` itself, on the mutated stack file
      await run("npm", ["run", "-s", "policy", "--", "--stacks-dir", path.dirname(file), "--stack", stack], { cwd: r.o.repoRoot, log });
  const { engine, offline: offl } = mandatory(real.stdout + real.stderr, offline.stdout);
  await pulumi(["stack", "rm", "--yes", "--force", stack], proj, r.p!, log);
  return { g, stack, init, real, offline, engine, offl, engineSeconds };
}

/** One check per decision of the group: its rule tripped in the engine, and the group's verdicts equal offline. */
function reportGroup(r: StackRun, x: GroupRun): void {
  const same = JSON.stringify(x.engine) === JSON.stringify(x.offl);
  const offlineBy = x.g.name === "config" ? "npm run policy" : "npm run policy's library (e2e/harness/policy-offline.ts)";
  for (const m of x.g.mutations) {
    const tripped = x.engine.some((v) => v.toLowerCase().startsWith(`${m.decision.toLowerCase()}-`));
    r.report.check(
      `policy pack in the real engine, ${m.decision} (${m.what}): same mandatory violations as npm run policy`,
      same && tripped && x.real.code !== 0 && x.init.code === 0,
      [
        `mutation: ${describeMutation(m)} (stack ${x.stack}, with ${x.g.mutations
          .filter((o) => o !== m)
          .map((o) => o.decision)
          .join(", ")})`,
        `pulumi preview --policy-pack policy: exit ${x.real.code}, ${x.engineSeconds.toFixed(0)} s; mandatory: ${x.engine.join("; ") || "none"}`,
        `${offlineBy}: exit ${x.offline.code}; mandatory: ${x.offl.join("; ") || "none"}`,
        ...(same ? [] : ["DIFFERENT violations"]),
        ...(tripped ? [] : [`the engine reported no ${m.decision} violation`]),
        `log: ${x.real.log}`,
      ],
    );
  }
}

async function policyChecks(r: StackRun, baseStackFile: string, planned: PolicyMutation[]): Promise<void> {
  // a second copy whose program entry applies the mutation (Pulumi.yaml main)
  const proj = path.join(r.work, "project-policy");
  copyProject(r.o.repoRoot, proj);
  fs.copyFileSync(path.join(r.o.repoRoot, "e2e", "fixtures", "e2e-mutation.ts"), path.join(proj, "e2e-mutation.ts"));
  const pulumiYaml = path.join(proj, "Pulumi.yaml");
  fs.writeFileSync(pulumiYaml, fs.readFileSync(pulumiYaml, "utf8").replace(/^main: .*$/m, "main: e2e-mutation.ts"));
  const base = fs.readFileSync(baseStackFile, "utf8").replace(/^encryptionsalt: .*\n/m, "");
  // Each mutated stack starts from the shipped stack's state: the state of the first pulumi up, renamed.
  const exported = await pulumi(["stack", "export", "--show-secrets"], r.project, r.p!, r.log("policy-export"));
  if (exported.code !== 0) throw new Error(`pulumi stack export exited ${exported.code}`);
  const fresh = r.freshPreviewPending ? freshStackPreview(r, proj, base) : Promise.resolve();
  const results = await Promise.all(mutationGroups(planned).map((g) => judgeGroup(r, proj, base, exported.stdout, g)));
  await fresh;
  for (const x of results) reportGroup(r, x);
}
