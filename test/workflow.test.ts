// The pull-request workflow: linted by the pinned actionlint, actions pinned to commits, every
// pipeline step present, one pulumi preview per shipped stack and only with credentials; CI
// (.ci/run) runs the README's test command, which installs the tools first.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REPO, SHIPPED_STACKS } from "./helpers/stacks";

const TSX = path.join(REPO, "node_modules", ".bin", "tsx");
const WORKFLOW = path.join(REPO, ".github/workflows/pull-request.yml");
const temps: string[] = [];
afterAll(() => temps.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function lint(argv: string[] = []) {
  const r = spawnSync(TSX, [path.join(REPO, "scripts/lint-workflows.ts"), ...argv], { cwd: REPO, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const wf = parse(fs.readFileSync(WORKFLOW, "utf8"));
const steps = (job: string) => wf.jobs[job].steps as { name?: string; id?: string; if?: string; uses?: string; run?: string; with?: Record<string, unknown> }[];

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

describe(".github/workflows/pull-request.yml", () => {
  it("pins every action to a commit, with its tag beside it", () => {
    const text = fs.readFileSync(WORKFLOW, "utf8");
    const uses = [...text.matchAll(/^\s*(?:- )?uses: (\S+)(.*)$/gm)];
    expect(uses.length).toBeGreaterThan(5);
    for (const [, ref, comment] of uses) {
      expect(ref, ref).toMatch(/^[\w.-]+\/[\w.-]+(\/[\w./-]+)?@[0-9a-f]{40}$/);
      expect(comment, ref).toMatch(/^ # v\d+\.\d+\.\d+$/);
    }
  });

  it("runs on pull requests: install, tools, actionlint, drift, validate, tests, policy, preview and its comment", () => {
    expect(Object.keys(wf.on)).toEqual(["pull_request"]);
    const runs = steps("checks").map((s) => s.run ?? "").join("\n");
    for (const cmd of ["npm ci", "npm run tools", "npm run lint:workflows", "npm run drift", "npm run validate", "npm test", "npm run --silent policy", "npm run preview -- --base HEAD^1"]) {
      expect(runs, cmd).toContain(cmd);
    }
    const comment = steps("checks").find((s) => s.uses?.startsWith("marocchino/sticky-pull-request-comment@"));
    expect(comment?.with).toEqual({ header: "openkeel-preview", path: "repo/.preview/comment.md" });
    expect(wf.jobs.checks.permissions).toEqual({ contents: "read", "pull-requests": "write" });
    expect(wf.permissions).toEqual({ contents: "read" });
  });

  it("previews every shipped stack with pulumi/actions and the policy pack, only when credentials are configured", () => {
    const job = wf.jobs["pulumi-preview"];
    expect(job.strategy.matrix.include.map((m: { stack: string }) => m.stack).sort()).toEqual([...SHIPPED_STACKS].sort());
    const pulumi = steps("pulumi-preview").find((s) => s.uses?.startsWith("pulumi/actions@"))!;
    expect(pulumi.with).toMatchObject({ command: "preview", policyPacks: "policy", "comment-on-pr": true });
    expect(pulumi.if).toBe("steps.credentials.outputs.configured == 'true'");
    const credentials = steps("pulumi-preview").find((s) => s.id === "credentials")!;
    expect(credentials.run).toContain("::notice title=pulumi preview skipped");
    for (const s of steps("pulumi-preview").slice(1)) expect(s.if, s.name ?? s.uses).toBe("steps.credentials.outputs.configured == 'true'");
  });

  it("uses the Pulumi CLI of the SDK in package.json", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8"));
    expect(wf.env.PULUMI_VERSION).toBe(pkg.dependencies["@pulumi/pulumi"]);
  });
});

describe("CI entry and npm test", () => {
  it(".ci/run runs the README's test command; npm test installs the tools and type-checks first", () => {
    const ci = fs.readFileSync(path.join(REPO, ".ci/run"), "utf8");
    expect(ci).toMatch(/^npm test$/m);
    const readme = fs.readFileSync(path.join(REPO, "README.md"), "utf8");
    expect(readme).toMatch(/^npm test\s/m);
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8"));
    // the type check covers the policy pack, which the offline policy run only transpiles
    // (incremental: a rerun checks what changed only; its state lives in node_modules/.cache)
    expect(pkg.scripts.pretest).toBe("tsx scripts/tools.ts && tsc --noEmit -p . --incremental --tsBuildInfoFile node_modules/.cache/tsc/tsbuildinfo");
  });
});
