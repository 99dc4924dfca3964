// One verdict (issue 38): `npm run plan`, `npm run render`, `npm run preview` and the deploy gate
// (deploy.yml's own step, run as the workflow runs it against a remote that holds deployed/<stack>)
// judge each stack's transition with the same checks against the same reference, what is deployed.
// One repository holds one stack per check, each changed in the working tree from what is deployed;
// every entry point must find, per stack, exactly the findings the check gives, and the same ones.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, stringify } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { NEED_CODES } from "../../../placement/host";
import { capture } from "../../../cli/cli";
import { planCommand } from "../../../pipeline/plan-command";
import { renderCommand } from "../../../pipeline/render-command";
import { previewCommand } from "../../../review/preview-command";
import { protectedUrns, removalsCommand } from "../../../review/removals-command";
import { drainSequenceChecks } from "../../../lifecycle/guards";
import { resolveStack } from "../../../environments";
import { planOf } from "../../helpers/plans";
import { PROJECT_KEY } from "../../helpers/lifecycle";
import { cloneWorkingTree, GIT_ENV, git, tempFolders } from "../../helpers/repos";
import { REPO, shippedConfig, shippedRaw } from "../../helpers/stacks";

const tmp = tempFolders();
const deployYml = parse(fs.readFileSync(path.join(REPO, ".github/workflows/deploy.yml"), "utf8"));
type Step = { name?: string; run?: string; env?: Record<string, string> };
const step = (job: string, name: RegExp): Step => (deployYml.jobs[job].steps as Step[]).find((s) => name.test(s.name ?? ""))!;

const node = (raw: any, name: string) => raw.nodes.find((n: any) => n.name === name);
const medium = () => structuredClone(shippedRaw("prod-medium")) as any;
/** prod-medium with a fourth compute+storage node, cmp-04 (added and deployed before, as the checks ask). */
const withCmp04 = (raw: any) => {
  raw.nodes.splice(6, 0, { ...structuredClone(node(raw, "cmp-03")), name: "cmp-04", internalIP: "10.30.1.14" });
  return raw;
};
const yaml = (raw: Record<string, unknown>) => stringify({ config: PROJECT_KEY(raw) });

/**
 * Per stack: what is deployed, what the change makes of it, and the findings (`level code`) every
 * entry point must give — one stack per check of a transition.
 */
const SCENARIOS: Record<string, { deployed: any; change: (raw: any) => void; expect: string[] }> = {
  // a node removed while it is active where it is deployed
  "v-removal": { deployed: withCmp04(medium()), change: (r) => (r.nodes = r.nodes.filter((n: any) => n.name !== "cmp-04")), expect: ["error node-removal"] },
  // cp-1 comes back with the deploy that drains cp-2: two quorum members down at once
  "v-drain": {
    deployed: (() => {
      const r = medium();
      node(r, "cp-1").state = "maintenance";
      return r;
    })(),
    change: (r) => {
      delete node(r, "cp-1").state;
      node(r, "cp-2").state = "maintenance";
    },
    // cp-2 drained: one more control-plane loss meanwhile is worse than in what is deployed (issue 39)
    expect: ["error drain-sequence", "warning failure-domain"],
  },
  // a unit that owns data turned off, without the marker; and with it
  "v-protected": { deployed: medium(), change: (r) => (r.services.glance = { enabled: false }), expect: ["error protected-delete", "warning service-removed"] },
  "v-allowed": {
    deployed: medium(),
    change: (r) => {
      r.services.glance = { enabled: false };
      r.allowRemoval = ["openkeel-glance"];
    },
    expect: ["warning removal-allowed", "warning service-removed"],
  },
  // Swift's members following the storage nodes, not set by the stack; and set, moved deliberately
  "v-implicit": {
    deployed: (() => {
      const r = medium();
      delete r.services.swift;
      return r;
    })(),
    change: withCmp04,
    expect: ["error swift-members-implicit"],
  },
  "v-ring": {
    deployed: withCmp04(medium()),
    change: (r) => (r.services.swift.replicas.storage = 4),
    expect: ["warning swift-ring"],
  },
  // a zone under two of the three storage nodes: openkeel-storage's selector changes, which NHC's webhook refuses while it remediates
  "v-nhc": {
    deployed: medium(),
    change: (r) => {
      const zones: Record<string, string> = { "cp-1": "zone-a", "cmp-01": "zone-a", "cmp-02": "zone-a", "net-1": "zone-a", "prov-1": "zone-a" };
      for (const n of r.nodes) n.zone = zones[n.name] ?? (["cp-3"].includes(n.name) ? "zone-c" : "zone-b");
    },
    expect: ["warning nhc-held-change", "warning swift-ring"],
  },
  // the stack bound to another cluster
  "v-binding": { deployed: medium(), change: (r) => (r.cluster.apiServer = "https://10.30.0.12:6443"), expect: ["warning cluster-binding"] },
};
const STACKS = Object.keys(SCENARIOS).sort();

/**
 * The findings of a stack in a plan or render run's output: the error lines (`<stack>, against …`)
 * or the warnings judged `(against …)`, alone or grouped (`warning [code] in <stack>: …`, then one
 * indented line per warning: cli/warnings.ts).
 */
function findingsIn(stack: string, out: string): string[] {
  const found = new Set<string>();
  const lines = out.split("\n");
  lines.forEach((line, i) => {
    const error = new RegExp(`^${stack}, against .*?: (error|warning) \\[([a-z-]+)\\]`).exec(line);
    if (error) found.add(`${error[1]} ${error[2]}`);
    const warning = new RegExp(`Pulumi\\.${stack}\\.yaml: (?:[^ ]+: )?warning \\[([a-z-]+)\\]: .*\\(against `).exec(line);
    if (warning) found.add(`warning ${warning[1]}`);
    const grouped = new RegExp(`^warning \\[([a-z-]+)\\] in ${stack}:`).exec(line);
    if (grouped && /^ {2}.*Pulumi\.[^ ]+\.yaml: .*\(against /.test(lines[i + 1] ?? "")) found.add(`warning ${grouped[1]}`);
  });
  return [...found].sort();
}

let repo: string;
const remote = () => path.join(path.dirname(repo), "remote.git");

beforeAll(async () => {
  repo = cloneWorkingTree(tmp("openkeel-verdict-"));
  // only the scenario stacks: what is deployed, rendered and committed
  for (const f of fs.readdirSync(path.join(repo, "stacks"))) if (f.endsWith(".yaml")) fs.rmSync(path.join(repo, "stacks", f));
  fs.rmSync(path.join(repo, "rendered"), { recursive: true, force: true });
  for (const [stack, s] of Object.entries(SCENARIOS)) fs.writeFileSync(path.join(repo, "stacks", `Pulumi.${stack}.yaml`), yaml(s.deployed));
  const first = await capture(renderCommand, ["--stacks-dir", path.join(repo, "stacks"), "--out", path.join(repo, "rendered")]);
  expect(first.code, first.stderr).toBe(0);
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "deployed");
  const deployed = git(repo, "rev-parse", "HEAD").trim();
  // the remote holds deployed/<stack>, as deploy.yml leaves it; the clone has it as a checkout of everything would
  git(path.dirname(repo), "clone", "-q", "--bare", repo, remote());
  for (const stack of STACKS) {
    git(remote(), "branch", `deployed/${stack}`, deployed);
    git(repo, "update-ref", `refs/remotes/origin/deployed/${stack}`, deployed);
  }
  // the change, in the working tree
  for (const [stack, s] of Object.entries(SCENARIOS)) {
    const raw = structuredClone(s.deployed);
    s.change(raw);
    fs.writeFileSync(path.join(repo, "stacks", `Pulumi.${stack}.yaml`), yaml(raw));
  }
}, 240_000);

/** deploy.yml's gate step of the production job, run as the workflow runs it: its script, its env, a remote holding deployed/<stack>. */
function gate(stack: string) {
  const s = step("production", /^The gate, against what is deployed/);
  const url = "https://x-access-token:token@github.com/openkeel/gitops.git";
  const env = {
    ...GIT_ENV,
    ...s.env,
    STACK: stack,
    GITHUB_TOKEN: "token",
    GITHUB_REPOSITORY: "openkeel/gitops",
    OPENKEEL_PROGRESS: "0",
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: `url.${remote()}.insteadOf`,
    GIT_CONFIG_VALUE_0: url,
  };
  const r = spawnSync("bash", ["-e", "-c", s.run!], { cwd: repo, env, encoding: "utf8" });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
}

describe("one verdict: plan, render, preview and the deploy gate, against what is deployed", () => {
  const verdicts = new Map<string, Record<string, string[]>>();

  beforeAll(async () => {
    const preview = await capture((a, io) => previewCommand(a, io, repo), ["--base", "HEAD", "--out", path.join(repo, ".preview")]);
    expect([0, 1], preview.stderr).toContain(preview.code);
    const report = JSON.parse(fs.readFileSync(path.join(repo, ".preview", "report.json"), "utf8")) as {
      stacks: { stack: string; judged: string; findings: { level: string; code: string }[] }[];
    };
    for (const stack of STACKS) {
      const argv = ["--stacks-dir", path.join(repo, "stacks"), "--stack", stack];
      const plan = await capture(planCommand, argv);
      const render = await capture(renderCommand, [...argv, "--out", tmp("openkeel-verdict-out-")]);
      const g = gate(stack);
      const p = report.stacks.find((x) => x.stack === stack)!;
      expect(p.judged, stack).toMatch(new RegExp(`^origin/deployed/${stack}, the last deployed commit`));
      verdicts.set(stack, {
        plan: findingsIn(stack, plan.stdout + plan.stderr),
        render: findingsIn(stack, render.stdout + render.stderr),
        preview: [...new Set(p.findings.map((f) => `${f.level} ${f.code}`))].sort(),
        gate: findingsIn(stack, g.out),
      });
      const errors = SCENARIOS[stack].expect.some((e) => e.startsWith("error"));
      for (const [what, code] of [
        ["plan", plan.code],
        ["render", render.code],
        ["gate", g.code],
      ] as const) {
        expect(code, `${stack}: ${what}`).toBe(errors ? 1 : 0);
      }
    }
  }, 600_000);

  it.each(STACKS)("%s: every entry point finds exactly what the check gives", (stack) => {
    const v = verdicts.get(stack)!;
    const want = [...SCENARIOS[stack].expect].sort();
    expect(v).toEqual({ plan: want, render: want, preview: want, gate: want });
  });

  it("every message names what it judged against: the plan and the gate say deployed/<stack>", async () => {
    const plan = await capture(planCommand, ["--stacks-dir", path.join(repo, "stacks"), "--stack", "v-ring"]);
    expect(plan.stdout).toMatch(
      /^ {2}transition against origin\/deployed\/v-ring, the last deployed commit \([0-9a-f]{12}\): passed, 1 warning\(s\) \(below\)$/m,
    );
    expect(gate("v-removal").out).toMatch(
      /^v-removal, against origin\/deployed\/v-removal, the last deployed commit \([0-9a-f]{12}\): .*error \[node-removal\]: node 'cmp-04' .* while it is active in origin\/deployed\/v-removal \(/m,
    );
  });
});

/** A git repository of stack `s` (prod-medium with cmp-04), rendered and committed, with a bare remote beside it. */
async function smallRepo() {
  const dir = tmp("openkeel-deploys-");
  const repo2 = path.join(dir, "repo");
  fs.mkdirSync(path.join(repo2, "stacks"), { recursive: true });
  const commit = async (raw: any, message: string) => {
    fs.writeFileSync(path.join(repo2, "stacks", "Pulumi.s.yaml"), yaml(raw));
    const r = await capture(renderCommand, ["--stacks-dir", path.join(repo2, "stacks"), "--out", path.join(repo2, "rendered")]);
    expect(r.code, r.stderr).toBe(0);
    git(repo2, "add", "-A");
    git(repo2, "commit", "-qm", message);
    return git(repo2, "rev-parse", "HEAD").trim();
  };
  git(dir, "init", "-q", "-b", "main", repo2);
  const bare = path.join(dir, "remote.git");
  const env = (extra: Record<string, string> = {}) => ({
    ...GIT_ENV,
    GITHUB_TOKEN: "token",
    GITHUB_REPOSITORY: "openkeel/gitops",
    OPENKEEL_PROGRESS: "0",
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: `url.${bare}.insteadOf`,
    GIT_CONFIG_VALUE_0: "https://x-access-token:token@github.com/openkeel/gitops.git",
    ...extra,
  });
  const runStep = (s: Step, extra: Record<string, string>) => {
    const r = spawnSync("bash", ["-e", "-c", s.run!], { cwd: repo2, env: env(extra), encoding: "utf8" });
    return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
  };
  return { repo: repo2, bare, commit, runStep, plan: () => capture(planCommand, ["--stacks-dir", path.join(repo2, "stacks")]) };
}

describe("deploys that cannot skip a step", () => {
  it("a removal whose retirement is merged but not deployed is refused, naming the commit to deploy first; deployed, it passes", async () => {
    const r = await smallRepo();
    const deployed = await r.commit(withCmp04(medium()), "add cmp-04");
    git(r.repo, "branch", "deployed/s", deployed);
    const retiring = withCmp04(medium());
    node(retiring, "cmp-04").state = "retiring";
    const retired = await r.commit(retiring, "retire cmp-04");
    fs.writeFileSync(path.join(r.repo, "stacks", "Pulumi.s.yaml"), yaml(medium()));
    const refused = await r.plan();
    expect(refused.code).toBe(1);
    const at = `commit ${retired.slice(0, 12)} (retire cmp-04)`;
    expect(refused.stderr).toContain(
      `s, against deployed/s, the last deployed commit (${deployed.slice(0, 12)}): ${path.join(r.repo, "stacks", "Pulumi.s.yaml")}: openkeel:nodes: error [node-removal]: node 'cmp-04' holds`,
    );
    expect(refused.stderr).toContain(
      `would be removed while it is active in deployed/s (${deployed.slice(0, 12)}): its retirement is merged (${at}) but not deployed.`,
    );
    expect(refused.stderr).toContain(
      `Fix: deploy ${at} first, on its own (the deploy workflow's "Run workflow" with that commit), and let the retirement finish`,
    );
    // the retirement deployed: the removal is what the gate lets through
    git(r.repo, "branch", "-f", "deployed/s", retired);
    const passed = await r.plan();
    expect(passed.code, passed.stderr).toBe(0);
    expect(passed.stdout).toMatch(/^ {2}transition against deployed\/s, the last deployed commit \([0-9a-f]{12}\): passed/m);
  });

  it("a commit that does not contain what is deployed is refused (deploy-order); the mark step never moves deployed/<stack> back", async () => {
    const r = await smallRepo();
    const first = await r.commit(medium(), "first");
    git(r.bare.replace(/remote\.git$/, ""), "init", "-q", "--bare", r.bare);
    const mark = step("production", /^Mark .* deployed at this commit/);
    const second = await r.commit(withCmp04(medium()), "add cmp-04");
    expect(r.runStep(mark, { STACK: "s" }).code).toBe(0);
    expect(git(r.bare, "rev-parse", "refs/heads/deployed/s").trim()).toBe(second);
    // an older commit (a re-run of an older deploy): the gate refuses it, and so would the push
    git(r.repo, "checkout", "-q", first);
    git(r.repo, "update-ref", "refs/remotes/origin/deployed/s", second);
    const refused = await r.plan();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `error [deploy-order]: HEAD does not contain origin/deployed/s (${second.slice(0, 12)}), the last deployed commit: deploying it would take back what that commit deployed`,
    );
    const back = r.runStep(mark, { STACK: "s" });
    expect(back.code).not.toBe(0);
    expect(back.out).toMatch(/rejected|non-fast-forward/);
    expect(git(r.bare, "rev-parse", "refs/heads/deployed/s").trim()).toBe(second);
  });

  it("a commit given by hand must be on main: the verify job's check refuses another", async () => {
    const r = await smallRepo();
    const onMain = await r.commit(medium(), "on main");
    git(r.repo, "update-ref", "refs/remotes/origin/main", onMain);
    git(r.repo, "checkout", "-q", "-b", "topic");
    const topic = await r.commit(withCmp04(medium()), "not merged");
    const check = (deployYml.jobs.verify.steps as Step[]).find((s) => s.name === "The commit is on main")!;
    expect(r.runStep(check, { DEPLOY_COMMIT: onMain }).code).toBe(0);
    const refused = r.runStep(check, { DEPLOY_COMMIT: topic });
    expect(refused.code).toBe(1);
    expect(refused.out).toContain(`::error title=deploy::${topic} is not a commit of main: only what is merged is deployed`);
  });
});

describe("openkeel:allowRemoval, honoured by the deploy", () => {
  it("the unprotect step unprotects, in the stack's state, the protected resources of the units the stack lets go, and nothing else", async () => {
    const r = await smallRepo();
    const raw = medium();
    raw.allowRemoval = ["openkeel-glance"];
    raw.services.glance = { enabled: false };
    fs.writeFileSync(path.join(r.repo, "stacks", "Pulumi.s.yaml"), yaml(raw));
    fs.writeFileSync(path.join(r.repo, "package.json"), fs.readFileSync(path.join(REPO, "package.json")));
    fs.symlinkSync(path.join(REPO, "node_modules"), path.join(r.repo, "node_modules"));
    for (const d of ["cli", "config", "review", "scripts"]) fs.symlinkSync(path.join(REPO, d), path.join(r.repo, d));
    // a pulumi that serves a state export and records what it is asked
    const bin = tmp("openkeel-fake-pulumi-");
    const calls = path.join(bin, "calls");
    const urn = (type: string, name: string) => `urn:pulumi:s::openkeel::${type}::${name}`;
    const glance = urn("openkeel:openkeel:Release", "openkeel-glance");
    const state = {
      version: 3,
      deployment: {
        resources: [
          { urn: glance, custom: false },
          { urn: urn("openkeel:openkeel:Release$kubernetes:helm.sh/v3:Release", "openkeel-glance"), custom: true, parent: glance, protect: true },
          { urn: urn("openkeel:openkeel:Release", "openkeel-swift"), custom: false },
          {
            urn: urn("openkeel:openkeel:Release$kubernetes:helm.sh/v3:Release", "openkeel-swift"),
            custom: true,
            parent: urn("openkeel:openkeel:Release", "openkeel-swift"),
            protect: true,
          },
        ],
      },
    };
    fs.writeFileSync(path.join(bin, "fixture.json"), JSON.stringify(state));
    fs.writeFileSync(
      path.join(bin, "pulumi"),
      `#!/bin/sh\necho "$*" >> ${calls}\nif [ "$1 $2" = "stack export" ]; then cp ${path.join(bin, "fixture.json")} "$6"; fi\n`,
      { mode: 0o755 },
    );
    const unprotect = step("production", /^Unprotect what openkeel:allowRemoval lets go/);
    const run = r.runStep(unprotect, { STACK: "s", PULUMI_STACK: "acme/s", RUNNER_TEMP: bin, PATH: `${bin}:${process.env.PATH}` });
    expect(run.code, run.out).toBe(0);
    expect(fs.readFileSync(calls, "utf8").trim().split("\n")).toEqual([
      `stack export --stack acme/s --file ${path.join(bin, "state.json")}`,
      `state unprotect --stack acme/s --yes ${urn("openkeel:openkeel:Release$kubernetes:helm.sh/v3:Release", "openkeel-glance")}`,
    ]);
    // a stack that lets nothing go never touches the state
    fs.writeFileSync(path.join(r.repo, "stacks", "Pulumi.s.yaml"), yaml(medium()));
    fs.rmSync(calls);
    expect(r.runStep(unprotect, { STACK: "s", PULUMI_STACK: "acme/s", RUNNER_TEMP: bin, PATH: `${bin}:${process.env.PATH}` }).code).toBe(0);
    expect(fs.existsSync(calls)).toBe(false);
  });
});

describe("docs/operating.md lists every check and the entry points that run it", () => {
  /** Every check code the code can give: its literals (`code: "…"`, `error("…", …)`, `*_CODE = "…"`) and the host contract's, by need. */
  function codesInCode(): Set<string> {
    const dirs = ["config", "topology", "plan", "placement", "render", "lifecycle", "platform", "openkeel", "nodes", "environments", "review"];
    const kebab = "([a-z][a-z0-9]*(?:-[a-z0-9]+)+)";
    const patterns = [
      new RegExp(`\\b(?:code|check):\\s*"${kebab}"`, "g"),
      new RegExp(`\\b(?:error|warning|warn)\\(\\s*"${kebab}"`, "g"),
      new RegExp(`\\bblame\\([^"]*?"${kebab}"`, "g"),
      new RegExp(`\\b[A-Z_]*(?:_CODE|TWO_STACKS)\\s*=\\s*"${kebab}"`, "g"),
    ];
    const codes = new Set<string>();
    for (const dir of dirs) {
      for (const f of fs.readdirSync(path.join(REPO, dir), { recursive: true }) as string[]) {
        if (!f.endsWith(".ts")) continue;
        const text = fs.readFileSync(path.join(REPO, dir, f), "utf8");
        for (const re of patterns) for (const m of text.matchAll(re)) codes.add(m[1]);
      }
    }
    // the host contract's codes, one per kind of need, are a table of placement/host.ts
    for (const code of Object.values(NEED_CODES)) codes.add(code);
    return codes;
  }

  it("every code is in the table, and every row says plan, render, preview and the deploy gate run it", () => {
    const doc = fs.readFileSync(path.join(REPO, "docs/operating.md"), "utf8");
    const section = doc.slice(doc.indexOf("## One verdict: every check and where it runs"), doc.indexOf("## What `rendered/<stack>/` holds"));
    const rows = section.split("\n").filter((l) => l.startsWith("| `") || l.startsWith("| ("));
    expect(section).toContain("| check | level | what it holds | owner | plan | render | preview | deploy gate |");
    for (const row of rows) expect(row.trimEnd().endsWith("| ✓ | ✓ | ✓ | ✓ |"), row).toBe(true);
    const listed = new Set(rows.flatMap((r) => [...r.split("|")[1].matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1])));
    const codes = codesInCode();
    expect(codes.size).toBeGreaterThan(60);
    expect([...codes].filter((c) => !listed.has(c)).sort()).toEqual([]);
    expect([...listed].filter((c) => !codes.has(c)).sort()).toEqual([]);
  });
});

describe("drain-sequence: a drain while another node comes back with the same deploy", () => {
  const nodes = (states: Record<string, string>) =>
    planOf("prod-medium").nodes.map((n) => ({ ...n, state: (states[n.name] ?? "active") as "active" | "maintenance" | "retiring" }));
  const constraints = resolveStack(shippedConfig("prod-medium")).constraints;
  const facts = planOf("prod-medium").feasibility;
  const judge = (before: Record<string, string>, after: Record<string, string>) =>
    drainSequenceChecks(nodes(before), nodes(after), "deployed/s (1a2b3c4d5e6f)", constraints, facts);

  it("a second quorum member drained while the first comes back: refused, naming both and the order", () => {
    const found = judge({ "cp-1": "maintenance" }, { "cp-2": "maintenance" });
    expect(found.map((c) => c.code)).toEqual(["drain-sequence", "drain-sequence"]);
    expect(found[0].message).toMatch(
      /^'cp-2' would start draining while 'cp-1' \(maintenance in deployed\/s \(1a2b3c4d5e6f\)\) is still down: it comes back only with this deploy\. nodes 'cp-1', 'cp-2' hold the OpenKeel control plane/,
    );
    expect(found[0].fix).toBe("bring 'cp-1' back first, in its own change, merged and deployed (and its work finished); then drain 'cp-2'");
  });

  it("nodes that hold nothing in common, a drain kept from before, or a node that only comes back: no finding", () => {
    expect(judge({ "cmp-01": "maintenance" }, { "cp-2": "maintenance" })).toEqual([]);
    expect(judge({ "cp-1": "maintenance" }, { "cp-1": "maintenance" })).toEqual([]);
    expect(judge({ "cp-1": "maintenance" }, {})).toEqual([]);
    expect(judge({}, { "cp-2": "maintenance" })).toEqual([]);
  });
});

describe("npm run removals", () => {
  const urn = (type: string, name: string) => `urn:pulumi:s::openkeel::${type}::${name}`;
  const glance = urn("openkeel:openkeel:Release", "openkeel-glance");
  const classes = urn("openkeel:platform:StorageClasses", "storage-classes");
  const resources = [
    { urn: glance, custom: false },
    { urn: urn("openkeel:openkeel:Release$kubernetes:helm.sh/v3:Release", "openkeel-glance"), custom: true, parent: glance, protect: true },
    { urn: classes, custom: false },
    { urn: urn("openkeel:platform:StorageClasses$kubernetes:storage.k8s.io/v1:StorageClass", "longhorn-vm"), custom: true, parent: classes, protect: true },
    // a child of a child (a ConfigFile's objects), and an unprotected one
    { urn: urn("x$kubernetes:yaml/v2:ConfigFile", "crds"), custom: true, parent: classes, protect: true },
    { urn: urn("x$kubernetes:yaml/v2:ConfigFile$y", "crd-a"), custom: true, parent: urn("x$kubernetes:yaml/v2:ConfigFile", "crds"), protect: true },
    { urn: urn("x", "plain"), custom: true, parent: classes },
  ];

  it("lists the protected resources under the units named, at any depth, and nothing of the others", () => {
    expect(protectedUrns(resources, ["storage-classes"])).toEqual([resources[3].urn, resources[4].urn, resources[5].urn]);
    expect(protectedUrns(resources, ["openkeel-glance"])).toEqual([resources[1].urn]);
    expect(protectedUrns(resources, [])).toEqual([]);
  });

  it("reads the stack's marker and a state export; refuses what is no export, with the fix", async () => {
    const dir = tmp("openkeel-removals-");
    const raw = medium();
    raw.allowRemoval = ["openkeel-glance"];
    fs.writeFileSync(path.join(dir, "Pulumi.s.yaml"), yaml(raw));
    const units = await capture(removalsCommand, ["--stack", "s", "--stacks-dir", dir]);
    expect(units).toEqual({ code: 0, stdout: "openkeel-glance\n", stderr: "" });
    const state = path.join(dir, "state.json");
    fs.writeFileSync(state, JSON.stringify({ version: 3, deployment: { resources } }));
    expect((await capture(removalsCommand, ["--stack", "s", "--stacks-dir", dir, "--state", state])).stdout).toBe(`${resources[1].urn}\n`);
    fs.writeFileSync(state, JSON.stringify({ resources }));
    const bad = await capture(removalsCommand, ["--stack", "s", "--stacks-dir", dir, "--state", state]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/: not a Pulumi state export .*\. Fix: pass the file `pulumi stack export --file <file>` wrote\n$/);
    expect((await capture(removalsCommand, ["--stacks-dir", dir])).stderr).toBe("--stack <name> is required.\n");
  });
});
