// Upgrades as reviewed changes (issue 24, items 1 and 2): every pin of platform/versions.ts has one
// upgrade rule beside it; a step the rule does not support is refused with the fix, by `npm run plan`
// and `npm run render` against the committed state (the deployed/<stack> branch, else HEAD, or
// --base) and by the preview between two commits; a supported bump previews as an upgrade.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { capture } from "../../../cli/cli";
import { planCommand } from "../../../pipeline/plan-command";
import { renderCommand } from "../../../pipeline/render-command";
import {
  allLeaves,
  componentUpgrades,
  isUpgradeRule,
  parseVersion,
  pinProblems,
  releaseNotes,
  ruleLeaves,
  type PinExports,
  type UpgradeRule,
} from "../../../platform/upgrades";
import * as VERSIONS from "../../../platform/versions";
import * as RULE_EXPORTS from "../../../platform/upgrade-rules";
import { committedState, pinsOfSource } from "../../../review/committed-pins";
import { hasErrors, previewStack } from "../../../review/preview";
import type { StackPreview } from "../../../review/preview-model";
import { previewCommand } from "../../../review/preview-command";
import { stackMarkdown } from "../../../review/preview-markdown";
import { readTree } from "../../../cli/write";
import { tsCommand } from "../../../cli/ts-command";
import { cloneWorkingTree, git, replaceOnce, tempFolders } from "../../helpers/repos";
import { REPO } from "../../helpers/stacks";

const HEAD: PinExports = { ...VERSIONS };
const RULES = RULE_EXPORTS.UPGRADE_RULES;
const TEXT = fs.readFileSync(path.join(REPO, "platform/versions.ts"), "utf8");
const rule = (component: string) => RULES.find((r) => r.component === component)!;

/** Temporary folders, removed after the file's tests. */
const tmp = tempFolders();

/** versions.ts with one pin's text replaced (the way a change edits it). */
function edited(from: string, to: string, text = TEXT): string {
  expect(text.split(from).length, `${from} once in versions.ts`).toBe(2);
  return text.replace(from, to);
}
const LONGHORN = 'chart: "longhorn", version: "1.12.1"';
const longhornAt = (v: string) => edited(LONGHORN, `chart: "longhorn", version: "${v}"`);

describe("the upgrade rules of platform/versions.ts", () => {
  it("every pin has exactly one rule, and every rule names pins that exist", () => {
    const leaves = [...allLeaves(HEAD).keys()];
    const owners = new Map(leaves.map((l) => [l, RULES.filter((r) => ruleLeaves(r, HEAD).some((x) => x.path === l)).map((r) => r.component)]));
    expect([...owners].filter(([, o]) => o.length !== 1)).toEqual([]);
    for (const r of RULES) for (const p of r.pins) expect(ruleLeaves({ ...r, pins: [p] }, HEAD).length, `${r.component}: ${p}`).toBeGreaterThan(0);
  });

  it("UPGRADE_RULES lists every rule platform/upgrade-rules.ts declares, once; platform/versions.ts declares none", () => {
    expect(Object.keys(HEAD).filter((k) => isUpgradeRule(HEAD[k]))).toEqual([]);
    const declared = Object.entries(RULE_EXPORTS).filter(([, v]) => isUpgradeRule(v));
    expect(declared.map(([, v]) => v).sort((a, b) => ((a as UpgradeRule).component < (b as UpgradeRule).component ? -1 : 1))).toEqual(
      [...RULES].sort((a, b) => (a.component < b.component ? -1 : 1)),
    );
    expect(new Set(RULES.map((r) => r.component)).size).toBe(RULES.length);
  });

  it("each deployed component's rule cites its source and, where the pin is a release, its release notes", () => {
    for (const r of RULES.filter((x) => x.deployed !== false)) {
      expect(r.source.length, r.component).toBeGreaterThan(20);
      const isRelease = ruleLeaves(r, HEAD).some((l) => parseVersion(l.version));
      if (isRelease && r.component !== "OpenKeel charts") expect(r.notes, r.component).toBeDefined();
    }
  });

  it("the pins hold their own rules today: equal versions where released together, kubectl within one minor of the lab's Kubernetes", () => {
    expect(componentUpgrades(HEAD, HEAD, RULES)).toEqual([]);
    // the same pins with the mariadb-operator charts apart, and kubectl two minors ahead
    const skewed = pinsOfSource(
      edited('tag: "v1.36.1" };', 'tag: "v1.38.0" };', edited('chart: "mariadb-operator", version: "26.6.0"', 'chart: "mariadb-operator", version: "26.7.0"')),
      "t",
    );
    const problems = componentUpgrades(HEAD, skewed, RULES).flatMap((u) => u.problems.map((p) => p.message));
    expect(problems).toEqual([
      expect.stringMatching(
        /^mariadb-operator: MARIADB_OPERATOR_CHART 26\.7\.0, MARIADB_OPERATOR_CRDS_CHART 26\.6\.0 differ, and upstream releases them together/,
      ),
      expect.stringMatching(
        /^kubectl \(the InstallPlan approver's image\) v1\.38\.0 is more than 1 minor away from KIND_NODE_IMAGE v1\.36\.1: kubectl is supported within one minor/,
      ),
    ]);
  });
});

describe("a step between two pins", () => {
  const judge = (base: string, head: string) => componentUpgrades(pinsOfSource(base, "base"), pinsOfSource(head, "head"), RULES);

  it("Longhorn 1.10 → 1.12 skips 1.11: refused with the fix, naming the source", () => {
    const [u] = judge(longhornAt("1.10.3"), TEXT);
    expect(u.rule.component).toBe("Longhorn");
    expect(u.problems).toEqual([
      expect.objectContaining({
        level: "error",
        code: "upgrade-step",
        file: "platform/versions.ts",
        path: "LONGHORN_CHART",
        message: expect.stringMatching(/^Longhorn 1\.10\.3 → 1\.12\.1 skips 1\.11: upstream supports one minor release at a time \(longhorn\/website@5182ed2 /),
        fix: "upgrade to 1.11.x first (LONGHORN_CHART in platform/versions.ts), deploy it, then to 1.12.1",
      }),
    ]);
  });

  it("one minor, or a patch, is an upgrade; a downgrade is refused", () => {
    expect(judge(longhornAt("1.11.4"), TEXT)[0].problems).toEqual([]);
    expect(judge(TEXT, longhornAt("1.12.2"))[0]).toMatchObject({
      direction: "upgrade",
      problems: [],
      moves: [{ path: "LONGHORN_CHART", from: "1.12.1", to: "1.12.2" }],
    });
    expect(judge(longhornAt("1.12.2"), TEXT)[0].problems[0]).toMatchObject({
      message: expect.stringContaining("is a downgrade"),
      fix: expect.stringContaining("keep 1.12.2"),
    });
  });

  it("KubeVirt v1.9.0 → v1.10.0 is supported, v1.9.0 → v1.11.0 is not; a major step needs a documented path", () => {
    const kubevirt = (v: string) => edited('KUBEVIRT_VERSION = "v1.9.0"', `KUBEVIRT_VERSION = "${v}"`);
    expect(judge(TEXT, kubevirt("v1.10.0"))[0].problems).toEqual([]);
    expect(judge(TEXT, kubevirt("v1.11.0"))[0].problems[0].fix).toBe(
      "upgrade to 1.10.x first (KUBEVIRT_OPERATOR in platform/versions.ts), deploy it, then to v1.11.0",
    );
    expect(judge(TEXT, kubevirt("v2.0.0"))[0].problems[0].message).toContain("changes the major version, and the rule names no supported path to 2.0");
  });

  it("MariaDB stays in its series (a series move is a planned migration); RabbitMQ's documented 4.0 → 4.2 passes", () => {
    const mariadb = judge(TEXT, edited('tag: "11.4.13"', 'tag: "11.8.3"'))[0];
    expect(mariadb.problems[0]).toMatchObject({
      path: "MARIADB_IMAGE",
      message: expect.stringContaining("leaves the 11.4 series, which is a planned migration"),
    });
    expect(mariadb.problems[0].fix).toContain('add { from: "11.4", to: "11.8" } to its paths');
    expect(judge(TEXT, edited('tag: "11.4.13"', 'tag: "11.4.14"'))[0].problems).toEqual([]);
    const rabbit = (v: string) => edited('tag: "4.1.8-management"', `tag: "${v}-management"`);
    expect(judge(rabbit("4.0.9"), rabbit("4.2.1"))[0].problems).toEqual([]);
    expect(judge(rabbit("3.12.1"), rabbit("4.2.1"))[0].problems[0].message).toContain("changes the major version");
  });

  it("a tool may go either way; a pin of many files moving alike is judged once", () => {
    expect(judge(edited('CI_NODE_VERSION = "24.21.0"', 'CI_NODE_VERSION = "24.20.0"'), TEXT)[0]).toMatchObject({
      rule: { component: "Node.js of CI" },
      problems: [],
    });
    const snap = judge(TEXT, edited('EXTERNAL_SNAPSHOTTER_VERSION = "v8.6.0"', 'EXTERNAL_SNAPSHOTTER_VERSION = "v9.0.0"'))[0];
    expect(snap.moves).toHaveLength(7);
    expect(snap.problems).toEqual([]);
  });

  it("the release notes of the versions a step passes: each minor's first release, the target, the compare view", () => {
    expect(releaseNotes(rule("KubeVirt").notes, "v1.9.2", "v1.11.1").map((n) => n.url)).toEqual([
      "https://github.com/kubevirt/kubevirt/releases/tag/v1.10.0",
      "https://github.com/kubevirt/kubevirt/releases/tag/v1.11.0",
      "https://github.com/kubevirt/kubevirt/releases/tag/v1.11.1",
      "https://github.com/kubevirt/kubevirt/compare/v1.9.2...v1.11.1",
    ]);
    expect(releaseNotes(rule("Longhorn").notes, "1.12.1", "1.12.2").map((n) => n.label)).toEqual(["1.12.2", "v1.12.1…v1.12.2"]);
  });

  it("a commit's versions.ts is read alone: a run-time import is refused, naming the file", () => {
    expect(() => pinsOfSource(`import { x } from "./other";\nexport const A = x;\n`, "platform/versions.ts at abc")).toThrow(
      "platform/versions.ts at abc imports ./other at run time; the upgrade check reads it alone",
    );
  });
});

describe("a malformed pin (issue 38): the editor's mistake, named by file and key, with the fix; never a trace", () => {
  const series = (key: string) =>
    `platform/versions.ts: ${key}: "1.13" is not an exact release version (x.y.z, with an optional leading v and -suffix, as 1.12.1, v1.16.2, 4.1.8-management). Fix: pin one release of that series, its full version as upstream tags it (1.13.<patch>)`;

  it("every pin of this checkout is written as a pin", () => {
    expect(pinProblems(HEAD)).toEqual([]);
  });

  it("a version string, a chart's version, an image's tag, a manifest's URL and a commit, each judged by its shape", () => {
    const bad: PinExports = {
      ...HEAD,
      KIND_VERSION: "v0.32",
      LONGHORN_CHART: { ...VERSIONS.LONGHORN_CHART, version: "~1.12" },
      KUBECTL_IMAGE: { ...VERSIONS.KUBECTL_IMAGE, tag: "latest" },
      OLM_CRDS: { ...VERSIONS.OLM_CRDS, version: "v0.39.0" },
      CRDS_CATALOG_COMMIT: "3b33851",
    };
    expect(pinProblems(bad).map((p) => `${String(p.path)}: ${p.message}. Fix: ${p.fix}`)).toEqual([
      'CRDS_CATALOG_COMMIT: "3b33851" is not a full commit hash (40 lowercase hex digits). Fix: pin the whole hash of the commit (git rev-parse <ref>)',
      'KIND_VERSION: "v0.32" is not an exact release version (x.y.z, with an optional leading v and -suffix, as 1.12.1, v1.16.2, 4.1.8-management). Fix: pin one release of that series, its full version as upstream tags it (v0.32.<patch>)',
      'KUBECTL_IMAGE.tag: "latest" is not an exact release version (x.y.z, with an optional leading v and -suffix, as 1.12.1, v1.16.2, 4.1.8-management). Fix: pin the full version of one release, as upstream tags it (never a range, a series or a floating tag such as latest)',
      'LONGHORN_CHART.version: "~1.12" is not an exact release version (x.y.z, with an optional leading v and -suffix, as 1.12.1, v1.16.2, 4.1.8-management). Fix: pin the full version of one release, as upstream tags it (never a range, a series or a floating tag such as latest)',
      `OLM_CRDS.url: "${VERSIONS.OLM_CRDS.url}" does not carry the version v0.39.0 it pins. Fix: write the URL with the version it pins (\${...} of the version's constant)`,
    ]);
    // a host or a repository is no version
    expect(pinProblems({ ...HEAD, TALOS_IMAGE_FACTORY: "factory.example.org" })).toEqual([]);
  });

  it('TALOS_VERSION = "1.13" and Longhorn\'s chart at "1.13": plan and render exit 2 with one line per pin, said once for every stack, nothing written', async () => {
    const repo = cloneWorkingTree(tmp("openkeel-pin-"));
    replaceOnce(repo, "platform/versions.ts", 'export const TALOS_VERSION = "v1.13.9";', 'export const TALOS_VERSION = "1.13";');
    replaceOnce(repo, "platform/versions.ts", LONGHORN, 'chart: "longhorn", version: "1.13"');
    const out = path.join(repo, "out");
    const cli = (script: string, argv: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(...tsCommand(path.join(repo, "scripts", script), argv), { cwd: repo, env: { ...process.env, OPENKEEL_PROGRESS: "0" } });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        child.on("close", (code) => resolve({ code, stdout, stderr }));
      });
    const [plan, render] = await Promise.all([cli("plan.ts", ["--stack", "prod-medium"]), cli("render.ts", ["--out", out])]);
    const expected = `${[series("LONGHORN_CHART.version"), series("TALOS_CONFIG_SCHEMA.version"), series("TALOS_VERSION")].join("\n")}\n`;
    for (const r of [plan, render]) expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 2, stdout: "", stderr: expected });
    expect(fs.existsSync(out)).toBe(false);
  });
});

/** A repository holding the prod-medium stack and a platform/versions.ts, committed. */
function committedRepo(versions: string): { repo: string; stacks: string } {
  const repo = tmp("openkeel-upgrade-");
  fs.mkdirSync(path.join(repo, "stacks"));
  fs.mkdirSync(path.join(repo, "platform"));
  fs.copyFileSync(path.join(REPO, "stacks/Pulumi.prod-medium.yaml"), path.join(repo, "stacks/Pulumi.prod-medium.yaml"));
  fs.writeFileSync(path.join(repo, "platform/versions.ts"), versions);
  git(repo, "init", "-q", "-b", "main");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "committed state");
  return { repo, stacks: path.join(repo, "stacks") };
}

describe("npm run plan and npm run render against the committed state", () => {
  it("a skipped minor since HEAD stops the render (nothing written) and the plan, with the fix", async () => {
    const { repo, stacks } = committedRepo(longhornAt("1.10.3"));
    const out = path.join(repo, "rendered");
    const r = await capture(renderCommand, ["--stacks-dir", stacks, "--out", out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^prod-medium, against HEAD \([0-9a-f]{12}\): no deployed\/prod-medium ref, so the committed state: platform\/versions\.ts: LONGHORN_CHART: error \[upgrade-step\]: Longhorn 1\.10\.3 → 1\.12\.1 skips 1\.11: .*\. Fix: upgrade to 1\.11\.x first/m,
    );
    expect(fs.existsSync(out)).toBe(false);
    const plan = await capture(planCommand, ["--stacks-dir", stacks]);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain("Fix: upgrade to 1.11.x first (LONGHORN_CHART in platform/versions.ts), deploy it, then to 1.12.1");
  });

  it("the last deployed commit wins over HEAD: deployed/<stack>, else origin/deployed/<stack>", async () => {
    const { repo, stacks } = committedRepo(longhornAt("1.11.2"));
    git(repo, "branch", "deployed/prod-medium");
    fs.writeFileSync(path.join(repo, "platform/versions.ts"), longhornAt("1.10.3"));
    git(repo, "commit", "-qam", "HEAD would skip a minor");
    const out = tmp("openkeel-upgrade-out-");
    const r = await capture(renderCommand, ["--stacks-dir", stacks, "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ {2}upgrades against deployed\/prod-medium, the last deployed commit \([0-9a-f]{12}\): Longhorn 1\.11\.2 → 1\.12\.1$/m);
    const deployed = git(repo, "rev-parse", "deployed/prod-medium").trim();
    git(repo, "branch", "-D", "deployed/prod-medium");
    git(repo, "update-ref", "refs/remotes/origin/deployed/prod-medium", deployed);
    expect(committedState(repo, "prod-medium")?.where).toMatch(/^origin\/deployed\/prod-medium, the last deployed commit/);
    const plan = await capture(planCommand, ["--stacks-dir", stacks]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/^ {2}upgrades: Longhorn 1\.11\.2 → 1\.12\.1 \(against origin\/deployed\/prod-medium, the last deployed commit/m);
  });

  it("--base names the committed state (the PR workflow's base branch); an unknown ref is a usage error", async () => {
    const { repo, stacks } = committedRepo(longhornAt("1.11.2"));
    const first = git(repo, "rev-parse", "HEAD").trim();
    fs.writeFileSync(path.join(repo, "platform/versions.ts"), TEXT);
    git(repo, "commit", "-qam", "now");
    const against = await capture(planCommand, ["--stacks-dir", stacks, "--base", `${first}~0`]);
    expect(against.code, against.stderr).toBe(0);
    expect(against.stdout).toContain(`upgrades: Longhorn 1.11.2 → 1.12.1 (against --base ${first}~0 (${first.slice(0, 12)}))`);
    const none = await capture(planCommand, ["--stacks-dir", stacks, "--base", "no-such-ref"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--base no-such-ref: no such commit in");
  });

  it("a stack that does not install a component is not held to its rule", async () => {
    // the lab installs no Longhorn without realBackends: its committed Longhorn may be anything
    const { repo } = committedRepo(longhornAt("1.9.0"));
    fs.copyFileSync(path.join(REPO, "stacks/Pulumi.lab.yaml"), path.join(repo, "stacks/Pulumi.lab.yaml"));
    const r = await capture(planCommand, ["--stacks-dir", path.join(repo, "stacks"), "--stack", "lab"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ {2}upgrades: none \(against HEAD/m);
  });
});

describe("the preview of a pin bump", () => {
  /** The committed prod-medium render as the base, and as the head with Longhorn's chart and KubeVirt's manifest moved. */
  function trees(longhorn: string, kubevirt: string) {
    const base = readTree(path.join(REPO, "rendered/prod-medium"));
    const head = new Map(base);
    head.set(
      "index.yaml",
      base
        .get("index.yaml")!
        .replace(
          "          chart: longhorn\n          repository: https://charts.longhorn.io\n          version: 1.12.1",
          `          chart: longhorn\n          repository: https://charts.longhorn.io\n          version: ${longhorn}`,
        )
        .replaceAll("kubevirt/releases/download/v1.9.0/", `kubevirt/releases/download/${kubevirt}/`),
    );
    const pins = {
      base: HEAD,
      head: pinsOfSource(edited('KUBEVIRT_VERSION = "v1.9.0"', `KUBEVIRT_VERSION = "${kubevirt}"`, longhornAt(longhorn)), "head"),
      rules: RULES,
    };
    return { base, head, pins };
  }

  it("reads as an upgrade: from → to, notes, CRDs, phase order, what rolls on which nodes, what comes first", () => {
    const t = trees("1.12.2", "v1.10.0");
    const p = previewStack("prod-medium", t.base, t.head, undefined, t.pins);
    expect(hasErrors([p])).toBe(false);
    expect(p.upgrades.map((u) => [u.component, u.moves[0].from, u.moves[0].to])).toEqual([
      ["Longhorn", "1.12.1", "1.12.2"],
      ["KubeVirt", "v1.9.0", "v1.10.0"],
    ]);
    const [longhorn, kubevirt] = p.upgrades;
    expect(longhorn.rolls[0]).toBe("DaemonSet `longhorn/longhorn-manager`: node by node on 7 node(s): cp-1, cp-2, cp-3, cmp-01, cmp-02, cmp-03, prov-1");
    expect(longhorn.phases).toEqual([{ phase: "platform", units: ["longhorn"] }]);
    expect(kubevirt.rolls).toContain("DaemonSet `kubevirt/kubevirt/virt-handler`: node by node on 3 node(s): cmp-01, cmp-02, cmp-03");
    expect(kubevirt.notes.map((n) => n.url)).toEqual([
      "https://github.com/kubevirt/kubevirt/releases/tag/v1.10.0",
      "https://github.com/kubevirt/kubevirt/compare/v1.9.0...v1.10.0",
    ]);
    const md = stackMarkdown(p);
    expect(md).toContain("### Upgrades");
    expect(md).toContain("**Longhorn** 1.12.1 → 1.12.2");
    expect(md).toContain("- CRDs: in the release manifest: applied with it");
    expect(md).toContain("- by hand, after `pulumi up`:\n  - after the chart (the Longhorn manager), upgrade the engine of every volume");
  });

  it("a skipped minor is an error of the stack, with the fix", () => {
    const t = trees("1.12.1", "v1.11.0");
    const p: StackPreview = previewStack("prod-medium", t.base, t.head, undefined, t.pins);
    expect(hasErrors([p])).toBe(true);
    expect(p.findings[0]).toMatchObject({
      code: "upgrade-step",
      fix: "upgrade to 1.10.x first (KUBEVIRT_OPERATOR in platform/versions.ts), deploy it, then to v1.11.0",
    });
  });
});

describe("npm run preview between two commits: pin bumps", () => {
  let repo: string;
  let result: { code: number; stdout: string; stderr: string };
  beforeAll(async () => {
    repo = cloneWorkingTree(tmp("openkeel-upgrade-preview-"));
    replaceOnce(repo, "platform/versions.ts", LONGHORN, 'chart: "longhorn", version: "1.12.2"');
    replaceOnce(repo, "platform/versions.ts", 'KUBEVIRT_VERSION = "v1.9.0"', 'KUBEVIRT_VERSION = "v1.11.0"');
    result = await capture((a, io) => previewCommand(a, io, repo), ["--base", "HEAD", "--out", path.join(repo, ".preview"), "--stack", "prod-medium"]);
  }, 240_000);

  it("Longhorn's patch reads as an upgrade; KubeVirt's skipped minor is refused with the fix (exit 1), in a report, not a failed render", () => {
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("the change has errors");
    const md = fs.readFileSync(path.join(repo, ".preview/prod-medium.md"), "utf8");
    expect(md).toContain("Changes: upgrade of 2 component(s), update 2.");
    expect(md).toContain("**Longhorn** 1.12.1 → 1.12.2");
    expect(md).toContain("[1.12.2](https://github.com/longhorn/longhorn/releases/tag/v1.12.2)");
    expect(md).toContain("- **upgrade-step**: KUBEVIRT_OPERATOR (platform/versions.ts): KubeVirt v1.9.0 → v1.11.0 skips 1.10");
    expect(md).toContain("Fix: upgrade to 1.10.x first (KUBEVIRT_OPERATOR in platform/versions.ts), deploy it, then to v1.11.0.");
    expect(md).toContain("| update | HelmRelease longhorn | longhorn 🔒 | chart.version |");
  });
});
