// The workflows: linted by the pinned actionlint, actions pinned to commits; pull requests run every
// pipeline step, replace the preview comment even when the render fails, and preview the lab only;
// a merge deploys the lab, then each production stack behind its GitHub environment; a schedule
// checks every stack for drift and opens an issue; production credentials are read only by jobs in
// an environment, never by a pull-request job. CI (.ci/run) runs the README's test command, which
// installs the tools first.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as semver from "semver";
import { parse } from "yaml";
import { PRODUCTION_STACKS, REPO, SHIPPED_STACKS } from "../../helpers/stacks";
import { TS_RUN, tsCommand } from "../../../cli/ts-command";
import { testSteps } from "../../../tools/dev-scripts";

const WORKFLOWS = path.join(REPO, ".github/workflows");
const temps: string[] = [];
afterAll(() => temps.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function lint(argv: string[] = []) {
  const r = spawnSync(...tsCommand(path.join(REPO, "scripts/lint-workflows.ts"), argv), { cwd: REPO, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

type Step = { name?: string; id?: string; if?: string; uses?: string; run?: string; with?: Record<string, unknown>; env?: Record<string, string> };
const load = (file: string) => parse(fs.readFileSync(path.join(WORKFLOWS, file), "utf8"));
const wf = load("pull-request.yml");
const deploy = load("deploy.yml");
const drift = load("drift.yml");
const steps = (job: string, w = wf) => w.jobs[job].steps as Step[];
const ALL = fs
  .readdirSync(WORKFLOWS)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort();

/** The index of the checks job's step that runs `npm test`. */
const testStep = (w: any) => (w.jobs.checks.steps as Step[]).findIndex((s) => s.run?.trim() === "npm test");

/**
 * Why pull-request.yml's checks job could end green without `npm test` having run and passed; empty
 * when it cannot. A step is skipped by its `if:`, or by an earlier failure (which fails the job
 * anyway); `continue-on-error` makes a failure green; the last step must fail the job unless the
 * test step's outcome is success, whatever happened before it.
 */
function testGateProblems(w: any): string[] {
  const job = w.jobs.checks;
  const all = job.steps as (Step & { "continue-on-error"?: unknown })[];
  const problems: string[] = [];
  if (job.if !== undefined || job["continue-on-error"] !== undefined) problems.push("the job is conditioned or continue-on-error");
  const tests = all.filter((s) => s.run?.trim() === "npm test");
  if (tests.length !== 1) problems.push(`${tests.length} steps run exactly \`npm test\` (want 1)`);
  for (const t of tests) {
    if (t.id !== "tests") problems.push("the npm test step's id is not `tests`, which the last step reads");
    if (t.if !== undefined) problems.push(`the npm test step is conditioned: if: ${t.if}`);
    if (t["continue-on-error"] !== undefined) problems.push("the npm test step is continue-on-error: its failure would not fail the job");
  }
  const gate = all.at(-1)!;
  const gated = /!cancelled\(\)/.test(gate.if ?? "") && (gate.if ?? "").includes("steps.tests.outcome != 'success'") && /\bexit 1\b/.test(gate.run ?? "");
  if (!gated || gate["continue-on-error"] !== undefined) problems.push("the last step does not fail the job when the npm test step's outcome is not success");
  return problems;
}

/** The secrets a job reads: `secrets.NAME`, or `secrets[…]` (a name chosen at run time). */
function secretsOf(job: unknown): string[] {
  const text = JSON.stringify(job);
  return [...new Set([...text.matchAll(/secrets(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[)/g)].map((m) => m[1] ?? "[dynamic]"))].sort();
}

/**
 * The environment of a CI script a test runs: this process's, without what the CI run that runs
 * this suite set for itself: its e2e lock (the stand-in npm would wait for it), its start and its
 * budget (the script under test counts its own 90 minutes from its own start), and `drop`.
 */
function ciEnv(...drop: string[]): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of ["OPENKEEL_E2E_LOCK", "OPENKEEL_CI_STARTED", "OPENKEEL_CI_BUDGET_MINUTES", ...drop]) delete env[key];
  return env;
}

describe("actionlint", () => {
  it("passes over .github/workflows/", () => {
    const r = lint();
    expect(r.stdout + r.stderr).toMatch(/actionlint: \d+ workflow\(s\) clean/);
    expect(r.code).toBe(0);
  });

  it("trips on a broken workflow: exit 1 with file, line and rule", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-actionlint-"));
    temps.push(dir);
    fs.writeFileSync(
      path.join(dir, "bad.yml"),
      "on: pull_request\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo ${{ steps.nope.outputs.x }}\n",
    );
    const r = lint(["--dir", dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/bad\.yml:6:\d+: property "nope" is not defined in object type .* \[expression\]/);
  });
});

describe(".github/workflows/", () => {
  it("holds the pull-request, deploy and drift workflows; every action pinned to a commit, with its tag beside it", () => {
    expect(ALL).toEqual(["deploy.yml", "drift.yml", "pull-request.yml"]);
    for (const file of ALL) {
      const text = fs.readFileSync(path.join(WORKFLOWS, file), "utf8");
      const uses = [...text.matchAll(/^\s*(?:- )?uses: (\S+)(.*)$/gm)];
      expect(uses.length, file).toBeGreaterThanOrEqual(3);
      for (const [, ref, comment] of uses) {
        expect(ref, `${file}: ${ref}`).toMatch(/^[\w.-]+\/[\w.-]+(\/[\w./-]+)?@[0-9a-f]{40}$/);
        expect(comment, `${file}: ${ref}`).toMatch(/^ # v\d+\.\d+\.\d+$/);
      }
    }
  });

  it("production credentials are read only by jobs in a GitHub environment, never by a pull-request job", () => {
    for (const file of ALL) {
      const w = load(file);
      const onPullRequests = Object.keys(w.on).some((t) => t.startsWith("pull_request"));
      for (const [name, job] of Object.entries<any>(w.jobs)) {
        const read = secretsOf(job).filter((x) => x !== "GITHUB_TOKEN");
        if (onPullRequests) {
          // the lab's credentials at most: a kubeconfig named for the lab, a backend token that reaches the lab stack only
          expect(job.environment, `${file} ${name}`).toBeUndefined();
          expect(
            read.filter((x) => !["KUBECONFIG_LAB", "PULUMI_ACCESS_TOKEN", "PULUMI_CONFIG_PASSPHRASE"].includes(x)),
            `${file} ${name}`,
          ).toEqual([]);
          expect(JSON.stringify(job), `${file} ${name}`).not.toMatch(/PROD/);
        } else if (read.length > 0) {
          expect(job.environment, `${file} ${name} reads ${read.join(", ")}`).toBeDefined();
        }
      }
    }
    // the check above can fail: the workflows do read credentials, in environments
    expect(secretsOf(deploy.jobs.production)).toContain("KUBECONFIG");
    expect(secretsOf(drift.jobs.drift)).toContain("[dynamic]");
  });
});

describe(".github/workflows/pull-request.yml", () => {
  it("runs on pull requests: install, tools, actionlint, drift, validate, tests, policy as JSON, preview and its comment", () => {
    expect(Object.keys(wf.on)).toEqual(["pull_request"]);
    const runs = steps("checks")
      .map((s) => s.run ?? "")
      .join("\n");
    for (const cmd of [
      "npm ci",
      "npm run tools",
      "npm run lint:workflows",
      "npm run drift",
      "npm run validate",
      "npm run urns -- --base HEAD^1",
      "npm test",
      "npm run preview -- --base HEAD^1",
    ]) {
      expect(runs, cmd).toContain(cmd);
    }
    expect(wf.jobs.checks.permissions).toEqual({ contents: "read", "pull-requests": "write" });
    // the runner is no root: the CNI check's namespaces need unprivileged user namespaces, before npm test
    const all = steps("checks");
    const userns = all.findIndex((s) => /sudo sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0/.test(s.run ?? ""));
    expect(userns).toBeGreaterThanOrEqual(0);
    expect(userns).toBeLessThan(testStep(wf));
    expect(wf.permissions).toEqual({ contents: "read" });
  });

  it("cannot go green without npm test: its step is never conditioned nor allowed to fail, and the last step fails the job unless it passed", () => {
    expect(testGateProblems(wf)).toEqual([]);
    const gate = steps("checks").at(-1)!;
    expect(gate.if).toBe("${{ !cancelled() && steps.tests.outcome != 'success' }}");
    expect(gate.run).toMatch(/::error title=Tests::npm test did not pass/);
  });

  it.each<[string, (w: any) => void, RegExp]>([
    ["the npm test step removed", (w) => w.jobs.checks.steps.splice(testStep(w), 1), /0 steps run exactly `npm test`/],
    ["npm test skipped without the offline schemas (as before)", (w) => (w.jobs.checks.steps[testStep(w)].if = "vars.SCHEMAS_REPOSITORY != ''"), /conditioned/],
    ["npm test allowed to fail", (w) => (w.jobs.checks.steps[testStep(w)]["continue-on-error"] = true), /continue-on-error/],
    ["npm test's failure swallowed", (w) => (w.jobs.checks.steps[testStep(w)].run = "npm test || true"), /0 steps run exactly `npm test`/],
    ["the gate removed", (w) => w.jobs.checks.steps.pop(), /the last step does not fail the job/],
    [
      "the gate on failure only (a skipped npm test passes it)",
      (w) => (w.jobs.checks.steps.at(-1).if = "steps.tests.outcome == 'failure'"),
      /the last step does not fail the job/,
    ],
    ["the whole job allowed to fail", (w) => (w.jobs.checks["continue-on-error"] = true), /job .* continue-on-error/],
  ])("a mutated copy where %s is refused", (_what, mutate, problem) => {
    const copy = structuredClone(wf);
    mutate(copy);
    expect(testGateProblems(copy).join("\n")).toMatch(problem);
  });

  it("policy results go to the preview as JSON; a policy run without its report fails loudly and the preview says so", () => {
    const policy = steps("checks").find((s) => s.id === "policy")!;
    expect(policy.run).toContain("npm run --silent policy -- --json > .preview/policy.json");
    expect(policy.run).toMatch(/::error title=Policy::npm run policy -- --json wrote no JSON report/);
    expect(policy.run).toMatch(/writeFileSync\("\.preview\/policy\.json", JSON\.stringify\(\{ error: /);
    expect(policy.run).toMatch(/exit 1\n\s*fi\n\s*exit "\$status"/);
    const preview = steps("checks").find((s) => s.id === "preview")!;
    expect(preview.run).toContain("policy=(--policy .preview/policy.json)");
    const gate = steps("checks").find((s) => s.name === "The policy pack must pass")!;
    expect(gate.if).toBe("steps.policy.outcome == 'failure'");
  });

  it("the PR comment is replaced on every run, whatever the preview's outcome: a failed render is a report marked failed", () => {
    const all = steps("checks");
    const comment = all.find((s) => s.uses?.startsWith("marocchino/sticky-pull-request-comment@"))!;
    expect(comment.with).toEqual({ header: "openkeel-preview", path: "repo/.preview/comment.md" });
    expect(comment.if).not.toMatch(/steps\.preview\.outcome/);
    expect(comment.if).toMatch(/!cancelled\(\)/);
    // a preview that stopped before writing anything still replaces the old comment
    const fallback = all.find((s) => s.if?.includes("hashFiles('repo/.preview/comment.md') == ''"))!;
    expect(all.indexOf(fallback)).toBeLessThan(all.indexOf(comment));
    expect(fallback.run).toContain("## Render preview — ❌ failed");
    expect(fallback.run).toContain("> .preview/comment.md");
    // the preview step itself is not allowed to fail quietly
    expect((all.find((s) => s.id === "preview") as Record<string, unknown>)["continue-on-error"]).toBeUndefined();
  });

  it("previews the lab only with pulumi/actions and the policy pack, and only when its credentials are configured", () => {
    const job = wf.jobs["pulumi-preview"];
    expect(job.strategy).toBeUndefined();
    const pulumi = steps("pulumi-preview").find((s) => s.uses?.startsWith("pulumi/actions@"))!;
    expect(pulumi.with).toMatchObject({ command: "preview", policyPacks: "policy", "comment-on-pr": true });
    expect(pulumi.with!["stack-name"]).toMatch(/'lab'/);
    expect(pulumi.if).toBe("steps.credentials.outputs.configured == 'true'");
    const credentials = steps("pulumi-preview").find((s) => s.id === "credentials")!;
    expect(credentials.run).toContain("::notice title=pulumi preview skipped (lab)");
    for (const s of steps("pulumi-preview").slice(1)) expect(s.if, s.name ?? s.uses).toBe("steps.credentials.outputs.configured == 'true'");
  });

  it("every workflow uses the Pulumi CLI of the SDK in package.json", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8"));
    for (const w of [wf, deploy, drift]) expect(w.env.PULUMI_VERSION).toBe(pkg.dependencies["@pulumi/pulumi"]);
  });

  it("runs the e2e on a kind cluster of the lab's rendered config, with the released CLI and plugins at the pins", async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8"));
    const { KIND_VERSION } = await import("../../../platform/versions");
    expect(wf.env.KIND_VERSION).toBe(KIND_VERSION);
    expect(wf.env.PULUMI_KUBERNETES_VERSION).toBe(pkg.dependencies["@pulumi/kubernetes"]);
    expect(wf.env.PULUMI_RANDOM_VERSION).toBe(pkg.dependencies["@pulumi/random"]);
    const job = wf.jobs.e2e;
    expect(job.needs).toBe("checks");
    // no credentials: nothing but the job's own cluster
    expect(JSON.stringify(job)).not.toMatch(/secrets\./);
    const run = steps("e2e")
      .map((s) => s.run ?? "")
      .join("\n");
    expect(run).toContain('kind create cluster --config rendered/lab/kind/cluster.yaml --kubeconfig "$RUNNER_TEMP/kind-kubeconfig"');
    expect(run).toContain('npm run e2e -- --kubeconfig "$RUNNER_TEMP/kind-kubeconfig" --stack lab');
    expect(run).toContain('curl -fsSL https://get.pulumi.com | sh -s -- --version "$PULUMI_VERSION"');
  });
});

describe(".github/workflows/deploy.yml", () => {
  const up = (job: string) => steps(job, deploy).find((s) => s.uses?.startsWith("pulumi/actions@") && s.with?.command === "up")!;

  it("runs on a merge to main, one deployment at a time, never cancelled half-way; by hand, a commit of main it is given", () => {
    expect(deploy.on.push).toEqual({ branches: ["main"] });
    expect(Object.keys(deploy.on).sort()).toEqual(["push", "workflow_dispatch"]);
    expect(deploy.on.workflow_dispatch.inputs.commit).toMatchObject({ type: "string", required: false, default: "" });
    expect(deploy.env.DEPLOY_COMMIT).toBe("${{ inputs.commit || github.sha }}");
    expect(deploy.concurrency).toEqual({ group: "deploy", "cancel-in-progress": false });
    expect(deploy.permissions).toEqual({ contents: "read" });
    // every job checks out that commit with the history the gate searches, and only a commit of main goes further
    for (const job of ["verify", "lab", "production"]) {
      const checkout = steps(job, deploy).find((s) => s.uses?.startsWith("actions/checkout@"))!;
      expect(checkout.with, job).toMatchObject({ ref: "${{ env.DEPLOY_COMMIT }}", "fetch-depth": 0 });
    }
    const onMain = steps("verify", deploy).findIndex((s) => s.name === "The commit is on main");
    expect(onMain).toBe(1);
    expect(steps("verify", deploy)[onMain].run).toContain('git merge-base --is-ancestor "$DEPLOY_COMMIT" origin/main');
  });

  it("first checks what was merged, then pulumi up the lab in its environment, then each production stack in its own, one at a time", () => {
    const verify = steps("verify", deploy)
      .map((s) => s.run ?? "")
      .join("\n");
    expect(verify).toContain("npm run drift");
    expect(verify).toContain("npm run policy");
    expect(deploy.jobs.lab.needs).toBe("verify");
    expect(deploy.jobs.lab.environment).toBe("lab");
    expect(up("lab").with).toMatchObject({ command: "up", policyPacks: "policy" });
    expect(up("lab").with!["stack-name"]).toMatch(/'lab'/);

    const prod = deploy.jobs.production;
    expect(prod.needs).toBe("lab");
    expect(prod.environment).toBe("${{ matrix.stack }}");
    expect([...prod.strategy.matrix.stack].sort()).toEqual([...PRODUCTION_STACKS].sort());
    expect(prod.strategy["max-parallel"]).toBe(1);
    expect(prod.strategy["fail-fast"]).toBe(true);
    expect(up("production").with).toMatchObject({ command: "up", policyPacks: "policy" });
    expect(up("production").with!["stack-name"]).toContain("matrix.stack");
  });

  it("the credentials are the environment's (the same secret names in each), and missing ones fail the deployment", () => {
    for (const job of ["lab", "production"]) {
      expect(deploy.jobs[job].env.KUBECONFIG_DATA).toBe("${{ secrets.KUBECONFIG }}");
      const check = steps(job, deploy)[0];
      expect(check.run).toMatch(/::error title=pulumi up/);
      expect(check.run).toContain("exit 1");
      for (const s of steps(job, deploy)) expect(s.if, s.name ?? s.uses).toBeUndefined();
    }
  });

  it("the kubeconfig must reach the stack's own cluster (openkeel:cluster): npm run cluster after it is written, before pulumi up", () => {
    for (const [job, stack] of [
      ["lab", "lab"],
      ["production", '"$STACK"'],
    ] as const) {
      const all = steps(job, deploy);
      const written = all.findIndex((s) => s.run?.includes("KUBECONFIG=$RUNNER_TEMP/kubeconfig"));
      const check = all.findIndex((s) => s.run === `npm run cluster -- --stack ${stack}`);
      expect(written, job).toBeGreaterThan(-1);
      expect(check, job).toBeGreaterThan(written);
      expect(check, job).toBeLessThan(all.indexOf(up(job)));
    }
    expect(steps("production", deploy).find((s) => s.run?.startsWith("npm run cluster"))!.env).toEqual({ STACK: "${{ matrix.stack }}" });
  });

  it("judges the commit against deployed/<stack> (the gate: npm run plan), lets go what openkeel:allowRemoval lists, pulumi up, and moves deployed/<stack> forward, never forced", () => {
    for (const [job, stack] of [
      ["lab", "lab"],
      ["production", "${{ matrix.stack }}"],
    ] as const) {
      const all = steps(job, deploy);
      const check = all.findIndex((s) => s.run?.includes('npm run plan -- --stack "$STACK"'));
      const mark = all.findIndex((s) => s.run?.includes('"HEAD:refs/heads/deployed/$STACK"'));
      expect(check, job).toBeGreaterThan(all.findIndex((s) => s.run?.startsWith("npm run cluster")));
      expect(check, job).toBeLessThan(all.indexOf(up(job)));
      // the fetched ref is the one review/committed-pins.ts reads; a stack never deployed (exit 2) is compared with HEAD
      expect(all[check].run).toContain('"+refs/heads/deployed/$STACK:refs/remotes/origin/deployed/$STACK"');
      expect(all[check].run).toMatch(/"\$status" -eq 2/);
      expect(mark, job).toBe(all.length - 1);
      expect(mark, job).toBeGreaterThan(all.indexOf(up(job)));
      expect(all[mark].run, job).not.toContain("--force");
      for (const i of [check, mark]) expect(all[i].env, job).toEqual({ STACK: stack, GITHUB_TOKEN: "${{ secrets.GITHUB_TOKEN }}" });
      expect(deploy.jobs[job].permissions, job).toEqual({ contents: "write" });
      // the history of deployed/<stack>, not one commit: the gate looks for what to deploy first
      expect(all[check].run, job).not.toContain("--depth");
      // between the gate and pulumi up: the Pulumi CLI alone, then the removals the stack allows
      const cli = all.findIndex((s) => s.uses?.startsWith("pulumi/actions@") && s.with?.command === undefined);
      const unprotect = all.findIndex((s) => s.name === "Unprotect what openkeel:allowRemoval lets go");
      expect([check < cli, cli < unprotect, unprotect < all.indexOf(up(job))], job).toEqual([true, true, true]);
      expect(all[cli].with, job).toEqual({ "pulumi-version": "${{ env.PULUMI_VERSION }}" });
      expect(all[unprotect].run, job).toContain('npm run --silent removals -- --stack "$STACK" --state "$RUNNER_TEMP/state.json"');
      expect(all[unprotect].run, job).toContain('pulumi state unprotect --stack "$PULUMI_STACK" --yes "$urn"');
      expect(all[unprotect].env!.PULUMI_STACK, job).toBe(up(job).with!["stack-name"]);
    }
  });
});

describe(".github/workflows/drift.yml", () => {
  it("runs on a schedule (and by hand) over every shipped stack, in the read-only drift environment", () => {
    expect(drift.on.schedule).toHaveLength(1);
    expect(drift.on.schedule[0].cron).toMatch(/^\d+ \d+ \* \* \*$/);
    expect(Object.keys(drift.on).sort()).toEqual(["schedule", "workflow_dispatch"]);
    const job = drift.jobs.drift;
    expect(job.environment).toBe("drift");
    expect(job.strategy.matrix.include.map((m: { stack: string }) => m.stack).sort()).toEqual([...SHIPPED_STACKS].sort());
    expect(drift.permissions).toEqual({ contents: "read", issues: "write" });
  });

  it("pulumi preview --refresh --expect-no-changes; on drift an issue is opened (or commented) and the job fails", () => {
    const all = steps("drift", drift);
    const preview = all.find((s) => s.id === "preview")!;
    expect(preview.uses).toMatch(/^pulumi\/actions@/);
    expect(preview.with).toMatchObject({ command: "preview", refresh: true, "expect-no-changes": true });
    const issue = all.find((s) => s.name === "Open or update the drift issue")!;
    expect(issue.if).toBe("steps.preview.outcome == 'failure'");
    expect(issue.env!.GH_TOKEN).toBe("${{ github.token }}");
    expect(issue.run).toContain('gh issue create --title "$title" --label drift');
    expect(issue.run).toContain('gh issue comment "$number"');
    const gate = all[all.length - 1];
    expect(gate.if).toBe("steps.preview.outcome == 'failure'");
    expect(gate.run).toContain("exit 1");
  });
});

describe("CI entry and npm test", () => {
  it(".ci/run runs the README's test command; npm test installs the tools, type-checks and lints first", () => {
    const ci = fs.readFileSync(path.join(REPO, ".ci/run"), "utf8");
    expect(ci).toMatch(/^npm ci --no-audit --no-fund\n/m);
    expect(ci).toMatch(/^ {2}npm test\n/m);
    expect(ci).toMatch(/^PATH="\$bin:\$PATH" npm test\n/m);
    // the engine builds beside the tests (started before npm ci), and the e2e runs after both, on the LTS
    expect(ci.indexOf("setsid .ci/e2e build")).toBeLessThan(ci.indexOf("npm ci --no-audit --no-fund"));
    expect(ci).toMatch(/^if ! wait "\$engine"; then$/m);
    expect(ci.trimEnd().endsWith('\nPATH="$bin:$PATH" .ci/e2e')).toBe(true);
    const readme = fs.readFileSync(path.join(REPO, "README.md"), "utf8");
    expect(readme).toMatch(/^npm test\s/m);
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8"));
    expect(pkg.scripts.test).toBe("node -r ./cli/ts-run.cjs scripts/test.ts");
    // npm test's steps, in order, each with this Node: the tools; the type check, which covers the
    // policy pack the offline policy run only transpiles (incremental: a rerun checks what changed
    // only; its state lives in node_modules/.cache); the linter and the formatter over all code
    // (.oxlintrc.json, .oxfmtrc.json); then the suites, with the arguments given
    const rel = (a: string) => (path.isAbsolute(a) && a.startsWith(REPO) ? path.relative(REPO, a) : a);
    const steps = testSteps(["test/x.test.ts"]).map(([command, argv]) => [command === process.execPath ? "node" : command, ...argv.map(rel)].join(" "));
    expect(steps).toEqual([
      `node -r ${rel(TS_RUN)} scripts/tools.ts`,
      "node node_modules/typescript-native/bin/tsc --noEmit -p . --moduleResolution bundler --incremental --tsBuildInfoFile node_modules/.cache/tsc/tsbuildinfo",
      "node node_modules/oxlint/bin/oxlint --report-unused-disable-directives-severity=error .",
      "node node_modules/oxfmt/bin/oxfmt --check .",
      "node node_modules/vitest/vitest.mjs run test/x.test.ts",
    ]);
    // TypeScript 7 checks; TypeScript 5 stays the compiler Pulumi's runtime and ts-node load (tsconfig.json)
    expect(pkg.devDependencies["typescript-native"]).toMatch(/^npm:typescript@7\./);
  });

  it("the linter refuses `any` and functions longer than a screen outside the suites, and stale disable comments", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lint-probe-"));
    try {
      const lines = Array.from({ length: 81 }, (_, i) => `  const v${i} = ${i};`).join("\n");
      const sum = Array.from({ length: 81 }, (_, i) => `v${i}`).join(" + ");
      fs.writeFileSync(path.join(dir, "long.ts"), `export function f(x: any): number {\n${lines}\n  return x + ${sum};\n}\n`);
      fs.writeFileSync(path.join(dir, "stale.ts"), `// eslint-disable-next-line @typescript-eslint/no-require-imports\nexport const y = 1;\n`);
      const r = spawnSync(path.join(REPO, "node_modules/.bin/oxlint"), ["--report-unused-disable-directives-severity=error", "-c", ".oxlintrc.json", dir], {
        cwd: REPO,
        encoding: "utf8",
      });
      expect(r.status).toBe(1);
      expect(r.stdout).toContain("no-explicit-any");
      expect(r.stdout).toContain("max-lines-per-function");
      expect(r.stdout).toContain("Unused eslint-disable directive");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("Node.js: what the dependencies require, the LTS in CI, the machine's and the LTS in .ci/run", () => {
  /** Every installed package's engines.node, with the package's path under node_modules. */
  function dependencyEngines(): { pkg: string; node: string }[] {
    const lock = JSON.parse(fs.readFileSync(path.join(REPO, "package-lock.json"), "utf8"));
    return Object.keys(lock.packages)
      .filter((p) => p !== "" && fs.existsSync(path.join(REPO, p, "package.json")))
      .flatMap((p) => {
        const node = JSON.parse(fs.readFileSync(path.join(REPO, p, "package.json"), "utf8")).engines?.node;
        return typeof node === "string" ? [{ pkg: p.replace(/^.*node_modules\//, ""), node }] : [];
      });
  }

  it("package.json's engines admit only what every installed dependency admits, and the pinned LTS every workflow sets up", async () => {
    const { CI_NODE_VERSION } = await import("../../../platform/versions");
    expect(CI_NODE_VERSION).toMatch(/^24\.\d+\.\d+$/);
    for (const [file, w] of [
      ["pull-request.yml", wf],
      ["deploy.yml", deploy],
      ["drift.yml", drift],
    ] as const) {
      expect(w.env.NODE_VERSION, file).toBe(CI_NODE_VERSION);
      const setups = Object.values<any>(w.jobs).flatMap((j) => (j.steps as Step[]).filter((s) => s.uses?.startsWith("actions/setup-node@")));
      expect(setups.length, file).toBeGreaterThan(0);
      for (const s of setups) expect(s.with!["node-version"], file).toBe("${{ env.NODE_VERSION }}");
    }
    const { engines } = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8"));
    expect(engines).toEqual({ node: "^22.12.0 || ^24.0.0" });
    expect(semver.satisfies(CI_NODE_VERSION, engines.node)).toBe(true);
    const deps = dependencyEngines();
    // @pulumi/pulumi 3.276 asks for Node.js 22; vite and the linters for 22.12 on 22
    expect(deps.find((d) => d.pkg === "@pulumi/pulumi")?.node).toBe(">=22");
    expect(deps.filter((d) => !semver.subset(engines.node, d.node)).map((d) => `${d.pkg}: ${d.node}`)).toEqual([]);
    // Node 20, which npm ci warns about (EBADENGINE), is out; so is 22 below 22.12
    expect(semver.satisfies("20.19.0", engines.node) || semver.satisfies("22.11.0", engines.node)).toBe(false);
    // the README says what a machine with an older Node.js gets (its paragraph on Node.js)
    const readme = fs
      .readFileSync(path.join(REPO, "README.md"), "utf8")
      .split(/\n\n/)
      .map((p) => p.replace(/\s+/g, " "));
    const node = readme.find((p) => p.includes(`\`package.json\` declares \`${engines.node}\``)) ?? "(no paragraph declares package.json's engines)";
    expect(node).toMatch(/older Node\.js[^.]*EBADENGINE/);
    expect(node).toMatch(/\.ci\/run[^.]*Node\.js 24/);
  });

  /**
   * .ci/run with a stand-in npm (it records each call and, for `npm test` and `npm run`, the node
   * it finds first on PATH; `npm install` of node-<platform>-<arch> writes a stand-in node printing
   * `installs`), a machine's node that says it is `machine` (the real one underneath), and a
   * stand-in engine kit (its build only prints; .ci/e2e then runs its parts through the stand-in npm).
   * `npmCi`: a line of the stand-in npm before it goes on.
   */
  function ciRun(cache: string, installs: string, machine: string, npmCi = "") {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-ci-npm-"));
    temps.push(bin);
    const npm = [
      "#!/usr/bin/env bash",
      'echo "npm $*" >> "$CALLS"',
      npmCi,
      'if [ "$1" = test ] || [ "$1" = run ]; then echo "npm $1 on $(node --version) at $(command -v node)" >> "$CALLS"; fi',
      'if [ "$1" = install ]; then',
      '  while [ "$#" -gt 1 ]; do [ "$1" = --prefix ] && prefix="$2"; shift; done',
      '  dir="$prefix/node_modules/${1%@*}/bin"; mkdir -p "$dir"',
      '  printf "#!/bin/sh\\necho v%s\\n" "$INSTALLS" > "$dir/node"; chmod +x "$dir/node"',
      "fi",
    ];
    fs.writeFileSync(path.join(bin, "npm"), npm.join("\n") + "\n", { mode: 0o755 });
    fs.writeFileSync(path.join(bin, "node"), `#!/bin/sh\n[ "$1" = --version ] && exec echo "${machine}"\nexec "${process.execPath}" "$@"\n`, { mode: 0o755 });
    fs.writeFileSync(path.join(bin, "go"), "#!/bin/sh\n", { mode: 0o755 });
    const kit = path.join(bin, "kit");
    fs.mkdirSync(path.join(kit, "out", "bin"), { recursive: true });
    fs.writeFileSync(path.join(kit, "build.sh"), "#!/bin/sh\necho built\n", { mode: 0o755 });
    fs.writeFileSync(path.join(kit, "out", "bin", "pulumi"), "#!/bin/sh\n", { mode: 0o755 });
    const calls = path.join(bin, "calls");
    const outer = ciEnv();
    const env = {
      ...outer,
      PATH: `${bin}:${process.env.PATH}`,
      CALLS: calls,
      INSTALLS: installs,
      OPENKEEL_NODE_CACHE: cache,
      OPENKEEL_ENGINE_KIT: kit,
      OUT: path.join(kit, "out"),
      // not the clone's .e2e/, where the CI run that runs this suite builds its engine meanwhile
      OPENKEEL_CI_LOGS: path.join(bin, "logs"),
    };
    const r = spawnSync("bash", [".ci/run"], { cwd: REPO, encoding: "utf8", env });
    const lines = fs.existsSync(calls) ? fs.readFileSync(calls, "utf8").trim().split("\n") : [];
    const machineNode = path.join(bin, "node");
    const named = lines.map((l) => l.replace(` at ${machineNode}`, " at <machine>"));
    // the e2e's parts run in two lanes: their order is theirs
    return {
      code: r.status,
      stdout: r.stdout,
      stderr: r.stderr,
      calls: named.filter((l) => !l.startsWith("npm run")),
      e2e: named.filter((l) => l.startsWith("npm run")).sort(),
    };
  }

  /** The pinned LTS, a fresh cache for it, where .ci/run installs it and how. */
  async function lts() {
    const { CI_NODE_VERSION } = await import("../../../platform/versions");
    const platform = `${process.platform}-${process.arch}`;
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-node-cache-"));
    temps.push(cache);
    const prefix = path.join(cache, `${CI_NODE_VERSION}-${platform}`);
    const bin = path.join(prefix, "node_modules", `node-${platform}`, "bin");
    const install = `npm install --no-save --no-package-lock --no-audit --no-fund --prefix ${prefix} node-${platform}@${CI_NODE_VERSION}`;
    return { version: CI_NODE_VERSION, cache, node: `v${CI_NODE_VERSION} at ${bin}/node`, install };
  }

  /** Each part of .ci/e2e: its call, and the node its npm found. */
  function e2eOn(node: string): string[] {
    const e2e = fs.readFileSync(path.join(REPO, ".ci/e2e"), "utf8");
    const parts = [...e2e.matchAll(/^ {2}part \S+ (.*) \|\| rc=1$/gm)].map((m) => m[1]);
    expect(parts).toHaveLength(4);
    return parts.flatMap((p) => [`npm run e2e -- ${p}`, `npm run on ${node}`]).sort();
  }

  it(".ci/run on a Node.js the engines admit: npm test on it, then on the pinned LTS from the npm registry (installed once, outside the clone), then the e2e on the LTS", async () => {
    const l = await lts();
    const first = ciRun(l.cache, l.version, "v22.12.0");
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.calls).toEqual([
      "npm ci --no-audit --no-fund",
      "npm test",
      "npm test on v22.12.0 at <machine>",
      l.install,
      "npm test",
      `npm test on ${l.node}`,
    ]);
    expect(first.e2e).toEqual(e2eOn(l.node));
    expect(first.stdout).not.toMatch(/outside package\.json's engines/);
    // a second run finds the LTS in the cache: no install
    expect(ciRun(l.cache, l.version, "v22.12.0").calls.filter((c) => c.startsWith("npm install"))).toEqual([]);
  });

  it(".ci/run on Node.js 20, outside the engines: one loud line, npm test and the e2e on the LTS only", async () => {
    const l = await lts();
    const r = ciRun(l.cache, l.version, "v20.20.2");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.calls).toEqual(["npm ci --no-audit --no-fund", l.install, "npm test", `npm test on ${l.node}`]);
    expect(r.e2e).toEqual(e2eOn(l.node));
    expect(r.stdout.split("\n").filter((line) => line.includes("outside package.json's engines"))).toEqual([
      `!!!!!!!! Node.js v20.20.2 on this machine is outside package.json's engines (^22.12.0 || ^24.0.0; @pulumi/pulumi asks for Node.js 22 or newer, npm ci warned EBADENGINE): npm test and the e2e run on Node.js v${l.version} only !!!!!!!!`,
    ]);
  });

  it(".ci/run: a package that does not install the pinned version stops CI before the e2e, saying so", async () => {
    const l = await lts();
    const r = ciRun(l.cache, "24.0.0", "v22.12.0");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`node-${process.platform}-${process.arch}@${l.version} did not install Node.js v${l.version} in `);
    expect(r.calls.filter((c) => c === "npm test")).toHaveLength(1);
    expect(r.e2e).toEqual([]);
  });

  it(".ci/run: a step that fails without a word (here npm ci) is named, with its exit code and line, and CI stops", async () => {
    const l = await lts();
    const r = ciRun(l.cache, l.version, "v22.12.0", '[ "$1" = ci ] && exit 3');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^!!!!!!!! \.ci\/run stopped: `npm ci --no-audit --no-fund` exited 3 \(line \d+\) !!!!!!!!$/m);
    expect(r.calls).toEqual(["npm ci --no-audit --no-fund"]);
  });
});

describe("CI's end-to-end step (.ci/e2e)", () => {
  const e2e = fs.readFileSync(path.join(REPO, ".ci/e2e"), "utf8");
  /** .ci/e2e with a stand-in engine kit (its build only prints) and a stand-in npm that records each call; CI started `ago` seconds before. */
  function ciE2e(ago: number, extra: Record<string, string> = {}, npm = '#!/bin/sh\necho "npm $*" >> "$CALLS"\n') {
    const kit = fs.mkdtempSync(path.join(os.tmpdir(), "engine-kit-"));
    temps.push(kit);
    fs.writeFileSync(path.join(kit, "build.sh"), "#!/bin/sh\necho built\n", { mode: 0o755 });
    fs.mkdirSync(path.join(kit, "out", "bin"), { recursive: true });
    fs.writeFileSync(path.join(kit, "out", "bin", "pulumi"), "#!/bin/sh\n", { mode: 0o755 });
    const bin = path.join(kit, "stub-bin");
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, "npm"), npm, { mode: 0o755 });
    fs.writeFileSync(path.join(bin, "go"), "#!/bin/sh\n", { mode: 0o755 });
    const calls = path.join(kit, "calls");
    const outer = ciEnv();
    const env = {
      ...outer,
      PATH: `${bin}:${process.env.PATH}`,
      CALLS: calls,
      OPENKEEL_ENGINE_KIT: kit,
      OUT: path.join(kit, "out"),
      OPENKEEL_CI_LOGS: path.join(kit, "logs"),
      OPENKEEL_CI_STARTED: String(Math.floor(Date.now() / 1000) - ago),
      ...extra,
    };
    const r = spawnSync("bash", [".ci/e2e"], { cwd: REPO, encoding: "utf8", env });
    return { code: r.status, stdout: r.stdout, calls: fs.existsSync(calls) ? fs.readFileSync(calls, "utf8").trim().split("\n").sort() : [] };
  }

  /** The loud lines of skipped parts, as the parts printed them (the summary at the end repeats each once more: checked). */
  function skippedLines(stdout: string): string[] {
    const [parts, summary = ""] = stdout.split(/^== e2e, each part.*$/m);
    const skipped = parts.split("\n").filter((l) => l.includes("E2E PART SKIPPED"));
    expect(
      summary
        .split("\n")
        .filter((l) => l.includes("E2E PART SKIPPED"))
        .sort(),
    ).toEqual([...skipped].sort());
    return skipped;
  }

  const PARTS = [
    "npm run e2e -- --from-predecessors --no-policy-mutations --no-transitions --port-offset 1000 --stack prod-large",
    "npm run e2e -- --no-transitions --port-offset 1000 --stack prod-small",
    "npm run e2e -- --upgrade-from last-release --stack lab",
    "npm run e2e -- --upgrade-from last-release --stack prod-medium",
  ].sort();

  it("with the whole budget left (a warm engine) runs every part: all four stacks, the pin upgrade of prod-large, the last release's upgrade of prod-medium (D1–D8, transitions) and lab", () => {
    expect(e2e).toMatch(/"\$ENGINE_KIT\/build\.sh"/);
    expect(e2e).toMatch(/export PATH="\$ENGINE_OUT\/bin:\$PATH"/);
    const r = ciE2e(0);
    expect(r.code).toBe(0);
    expect(r.calls).toEqual(PARTS);
    expect(r.stdout).not.toMatch(/SKIPPED/);
    const stacks = [...new Set(PARTS.flatMap((p) => [...p.matchAll(/--stack ([a-z-]+)/g)].map((m) => m[1])))].sort();
    expect(stacks).toEqual([...SHIPPED_STACKS].sort());
  });

  it("under a lock (OPENKEEL_E2E_LOCK) a part checks what is left once it holds the lock: the wait counts", () => {
    const lock = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ci-lock-")), "lock");
    temps.push(path.dirname(lock));
    // another run holds the lock for 4 s; 16 min 2 s are left (2 min kept for the teardown): lab (16 min) fits before the wait, not after it
    spawnSync("bash", ["-c", `flock "${lock}" sleep 4 >/dev/null 2>&1 & sleep 0.3`]);
    const r = ciE2e(90 * 60 - 120 - (16 * 60 + 2), { OPENKEEL_E2E_LOCK: lock });
    expect(r.code).toBe(0);
    expect(r.calls).toEqual([]);
    const skipped = skippedLines(r.stdout);
    expect(skipped).toHaveLength(4);
    expect(skipped.find((l) => l.includes("lab |"))).toMatch(/it takes about 16 min, 15 min are left/);
  });

  it("after a cold engine build runs the parts that fit in what is left of the 90 minutes, one loud line for each it skips, and passes", () => {
    // 58 minutes gone: 30 left (2 kept for the teardown): neither prod-medium (58) nor the pin upgrade
    // (41) fits; after them, in their lanes, lab (16) and prod-small (25) do
    const r = ciE2e(58 * 60);
    expect(r.code).toBe(0);
    expect(r.calls).toEqual(PARTS.filter((p) => /stack prod-small|stack lab/.test(p)));
    const skipped = skippedLines(r.stdout);
    expect(skipped).toHaveLength(2);
    expect(skipped.find((l) => l.includes("pin-upgrade |"))).toMatch(/it takes about 41 min, (29|30) min are left of CI's 90 min/);
    expect(skipped.find((l) => l.includes("medium"))).toMatch(/npm run e2e -- --upgrade-from last-release --stack prod-medium/);
    // nothing left: every part skipped, still a pass
    const none = ciE2e(90 * 60);
    expect(none.code).toBe(0);
    expect(none.calls).toEqual([]);
    expect(skippedLines(none.stdout)).toHaveLength(4);
  });

  it("a failed part fails CI, and the console ends with each part's verdict and why the failed stack failed (CI keeps the tail; the lanes interleave)", () => {
    // a stand-in e2e: prod-large fails a step after many lines, the others pass
    const npm = [
      "#!/bin/sh",
      'echo "npm $*" >> "$CALLS"',
      'case "$*" in *prod-large*) i=0; while [ $i -lt 50 ]; do echo "step $i ok"; i=$((i+1)); done',
      "  printf 'e2e step times:\\ne2e: why prod-large failed\\n  step \"day 2\" failed:\\n    UNEXPECTED update T n\\ne2e: 900 s in all; FAIL\\n'; exit 1;;",
      '*) echo "e2e: 10 s in all; PASS";; esac',
      "",
    ].join("\n");
    const r = ciE2e(0, {}, npm);
    expect(r.code).toBe(1);
    const tail = r.stdout.trimEnd().split("\n");
    const from = tail.findIndex((l) => l.startsWith("== e2e, each part"));
    expect(from).toBeGreaterThan(0);
    expect(tail.slice(from + 1)).toEqual([
      "pin-upgrade | e2e: why prod-large failed",
      'pin-upgrade |   step "day 2" failed:',
      "pin-upgrade |     UNEXPECTED update T n",
      "pin-upgrade | e2e: 900 s in all; FAIL",
      "medium | e2e: 10 s in all; PASS",
      "small | e2e: 10 s in all; PASS",
      "lab | e2e: 10 s in all; PASS",
    ]);
  });

  /** .ci/e2e with HOME an empty folder and no OUT: the engine goes to $HOME/.cache/openkeel-engine, which does not exist yet. */
  function freshHome(argv: string[], extraBin: Record<string, string> = {}) {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "empty-home-"));
    const kit = fs.mkdtempSync(path.join(os.tmpdir(), "engine-kit-"));
    temps.push(home, kit);
    // build.sh makes $OUT/bin as the real one does (../shared/engine/build.sh)
    fs.writeFileSync(
      path.join(kit, "build.sh"),
      '#!/bin/sh\nmkdir -p "$OUT/bin" && : > "$OUT/bin/pulumi" && chmod +x "$OUT/bin/pulumi" && echo "built into $OUT"\n',
      {
        mode: 0o755,
      },
    );
    const bin = path.join(kit, "stub-bin");
    fs.mkdirSync(bin);
    const stubs = { npm: '#!/bin/sh\necho "npm $*" >> "$CALLS"\n', go: "#!/bin/sh\n", ...extraBin };
    for (const [name, text] of Object.entries(stubs)) fs.writeFileSync(path.join(bin, name), text, { mode: 0o755 });
    const outer = ciEnv("OUT", "XDG_CACHE_HOME");
    const env = {
      ...outer,
      HOME: home,
      PATH: `${bin}:${process.env.PATH}`,
      CALLS: path.join(kit, "calls"),
      OPENKEEL_ENGINE_KIT: kit,
      OPENKEEL_CI_LOGS: path.join(kit, "logs"),
    };
    const r = spawnSync("bash", [".ci/e2e", ...argv], { cwd: REPO, encoding: "utf8", env });
    const calls = path.join(kit, "calls");
    return {
      home,
      kit,
      code: r.status,
      stdout: r.stdout,
      stderr: r.stderr,
      calls: fs.existsSync(calls) ? fs.readFileSync(calls, "utf8").trim().split("\n").sort() : [],
    };
  }

  it("a fresh machine (HOME empty, no $HOME/.cache yet): measures the free space where the build will write, builds, and runs every part", () => {
    const build = freshHome(["build"]);
    expect(build.stderr).toBe("");
    expect(build.code).toBe(0);
    expect(fs.readFileSync(path.join(build.kit, "logs", "engine-build.log"), "utf8").trim()).toBe(`built into ${build.home}/.cache/openkeel-engine`);
    const all = freshHome([]);
    expect(all.stderr).toBe("");
    expect(all.code).toBe(0);
    expect(all.calls).toEqual(PARTS);
  });

  it("a command that stops it under set -e says which, with its exit code and line (here df, failing without a word)", () => {
    const r = freshHome(["build"], { df: "#!/bin/sh\nexit 1\n" });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^!!!!!!!! \.ci\/e2e stopped: `free_gb=\$\(df -P -B1G "\$where" \| awk 'NR==2 \{print \$4\}'\)` exited 1 \(line \d+\) !!!!!!!!$/m);
    expect(r.stderr.split("\n").filter((l) => l.includes("stopped:"))).toHaveLength(1);
  });

  it("every shell script of .ci/ and tools/ (the files, and the scripts tools/ hands to bash) says why it stops: set -E and an ERR trap", () => {
    const ci = fs.readdirSync(path.join(REPO, ".ci")).map((f) => path.join(".ci", f));
    const scripts = ci
      .filter((f) => fs.readFileSync(path.join(REPO, f), "utf8").startsWith("#!/usr/bin/env bash"))
      .map((f) => [f, fs.readFileSync(path.join(REPO, f), "utf8")]);
    // a script tools/ hands to bash is a template string whose lines begin with set -…e…
    const tools = fs
      .readdirSync(path.join(REPO, "tools"))
      .filter((f) => f.endsWith(".ts"))
      .map((f) => [`tools/${f}`, fs.readFileSync(path.join(REPO, "tools", f), "utf8")])
      .filter(([, text]) => /^set -[a-zA-Z]*e[a-zA-Z]*( |$)/m.test(text));
    expect(scripts.map(([f]) => f).sort()).toEqual([".ci/e2e", ".ci/run"]);
    expect(tools.map(([f]) => f)).toEqual(["tools/cni-sandbox.ts"]);
    for (const [file, text] of [...scripts, ...tools]) {
      expect(/^set -E[a-z]*( -o pipefail| pipefail)?$/m.test(text), `${file}: set -E (the ERR trap in functions and subshells too)`).toBe(true);
      expect(/^trap '[^\n]*\$BASH_COMMAND[^\n]*' ERR$/m.test(text), `${file}: an ERR trap naming the command`).toBe(true);
    }
  });

  it("build: only the engine, then exit (what .ci/run starts beside the tests)", () => {
    const kit = fs.mkdtempSync(path.join(os.tmpdir(), "engine-kit-"));
    temps.push(kit);
    fs.writeFileSync(path.join(kit, "build.sh"), "#!/bin/sh\necho built into $OUT\n", { mode: 0o755 });
    fs.mkdirSync(path.join(kit, "out", "bin"), { recursive: true });
    fs.writeFileSync(path.join(kit, "out", "bin", "pulumi"), "#!/bin/sh\n", { mode: 0o755 });
    const env = { ...ciEnv(), OPENKEEL_ENGINE_KIT: kit, OUT: path.join(kit, "out"), OPENKEEL_CI_LOGS: path.join(kit, "logs") };
    const r = spawnSync("bash", [".ci/e2e", "build"], { cwd: REPO, encoding: "utf8", env });
    expect(r.status).toBe(0);
    expect(fs.readFileSync(path.join(kit, "logs", "engine-build.log"), "utf8")).toMatch(/built into .*\/out/);
    expect(r.stdout).toMatch(/^== engine: \d+ s$/m);
    expect(r.stdout).not.toMatch(/npm run e2e|E2E NOT RUN/);
  });

  it.each([
    ["no engine kit", { OPENKEEL_ENGINE_KIT: "/nonexistent" }, /E2E NOT RUN: no engine kit at \/nonexistent/],
    ["no Go", { OPENKEEL_ENGINE_KIT: "KIT", PATH: "/usr/bin:/bin" }, /E2E NOT RUN: no Go toolchain/],
  ])("%s: one loud line, exit 0, nothing run", (_name, env, line) => {
    const kit = fs.mkdtempSync(path.join(os.tmpdir(), "engine-kit-"));
    fs.writeFileSync(path.join(kit, "build.sh"), "#!/bin/sh\necho SHOULD NOT RUN\nexit 1\n", { mode: 0o755 });
    const vars = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === "KIT" ? kit : v]));
    const r = spawnSync("bash", [".ci/e2e"], { cwd: REPO, encoding: "utf8", env: { ...ciEnv(), ...vars, OUT: path.join(kit, "out") } });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(line);
    expect(r.stdout.split("\n").filter((l) => l.includes("E2E NOT RUN"))).toHaveLength(1);
    expect(r.stdout).not.toMatch(/SHOULD NOT RUN/);
  });
});
