// No rename breaks a deployed stack (issue 24, item 3): the Pulumi resource graph (URNs, as the
// engine makes them) of an earlier commit's program and of this one, each run under the mocks with
// its own code, compared as the engine resolves aliases. From the last release, and from the commit
// before issue 12 merged the units olm-crds and olm (components/renames.ts), every protected resource
// is taken over; the same program without that alias loses them, and the check says so.
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { capture } from "../../../cli/cli";
import { exportCommit } from "../../../review/renders";
import { compareUrnGraphs, urnGraph, urnGraphsOf, type Registration, type UrnGraph } from "../../../review/urn-graph";
import { lastRelease, urnsCommand } from "../../../review/urns-command";
import { cloneWorkingTree, replaceOnce, tempFolders } from "../../helpers/repos";
import { REPO } from "../../helpers/stacks";

/** The last commit with the units olm-crds and olm (the parent of 64876b9, which merged them). */
const BEFORE_OLM_MERGE = "4a82e03c5efb546216576807c3618467d11dc18e";

/** Temporary folders, removed after the file's tests. */
const tmp = tempFolders();

/** A commit's program, exported (git archive) with this checkout's node_modules. */
function checkoutOf(commit: string): string {
  const dir = path.join(tmp("openkeel-urns-"), "checkout");
  exportCommit(REPO, commit, dir);
  return dir;
}

describe("the URN graph as the engine resolves aliases (hand-made registrations)", () => {
  const stackUrn = "urn:pulumi:s::openkeel::pulumi:pulumi:Stack::openkeel-s";
  const reg = (r: Partial<Registration> & Pick<Registration, "type" | "name" | "urn">): Registration => ({
    parent: stackUrn,
    protect: false,
    custom: true,
    ...r,
  });
  const component = (type: string, name: string) => reg({ type, name, urn: `mock::${name}`, custom: false });
  const release = (parent: string, name: string, protect: boolean, extra: Partial<Registration> = {}) =>
    reg({
      type: "kubernetes:helm.sh/v3:Release",
      name,
      urn: `mock::${parent}/${name}`,
      parent: `mock::${parent}`,
      protect,
      names: { name, namespace: "ns" },
      ...extra,
    });
  const graph = (...rs: Registration[]): UrnGraph =>
    urnGraph("s", "openkeel", [reg({ type: "pulumi:pulumi:Stack", name: "openkeel-s", urn: stackUrn, custom: false }), ...rs]);
  const before = graph(component("openkeel:platform:Old", "old"), release("old", "old", true));

  it("URNs carry the parent's type chain, never the stack's", () => {
    expect(before.nodes.map((n) => n.urn)).toEqual([
      "urn:pulumi:s::openkeel::openkeel:platform:Old::old",
      "urn:pulumi:s::openkeel::openkeel:platform:Old$kubernetes:helm.sh/v3:Release::old",
    ]);
  });

  it("a unit renamed without an alias moves its protected release: an error naming both URNs and the fix", () => {
    const after = graph(component("openkeel:platform:New", "new"), release("new", "new", true, { names: { name: "old", namespace: "ns" } }));
    const c = compareUrnGraphs(before, after);
    expect(c.findings).toEqual([
      expect.objectContaining({
        level: "error",
        what: "moved",
        old: "urn:pulumi:s::openkeel::openkeel:platform:Old$kubernetes:helm.sh/v3:Release::old",
        new: "urn:pulumi:s::openkeel::openkeel:platform:New$kubernetes:helm.sh/v3:Release::new",
        fix: expect.stringContaining("components/renames.ts"),
      }),
    ]);
  });

  it("the component's alias carries its children along, their name prefix replaced (the engine's inherited alias)", () => {
    const after = graph(
      { ...component("openkeel:platform:New", "new"), aliases: [{ name: "old", type: "openkeel:platform:Old", parentUrn: stackUrn }] },
      release("new", "new", true, { names: { name: "old", namespace: "ns" } }),
    );
    const c = compareUrnGraphs(before, after);
    expect(c.findings).toEqual([]);
    expect(c.aliased.map((a) => a.new)).toEqual([
      "urn:pulumi:s::openkeel::openkeel:platform:New::new",
      "urn:pulumi:s::openkeel::openkeel:platform:New$kubernetes:helm.sh/v3:Release::new",
    ]);
  });

  describe("a Helm release (issue 37: Helm refuses a second release beside the objects the first owns)", () => {
    const CHART = "https://charts.example.invalid/c";
    const rel = (parent: string, name: string, releaseName: string, extra: Partial<Registration> = {}) =>
      release(parent, name, false, { names: { name: releaseName, namespace: "ns", chart: CHART }, ...extra });
    const deployed = graph(component("openkeel:platform:Old", "old"), rel("old", "old", "old"));
    const aliased = { ...component("openkeel:platform:New", "new"), aliases: [{ name: "old", type: "openkeel:platform:Old", parentUrn: stackUrn }] };

    it("renamed with its unit and no alias, unprotected: an error naming both releases, the chart, and the fix (an alias, the release's name kept)", () => {
      const c = compareUrnGraphs(deployed, graph(component("openkeel:platform:New", "new"), rel("new", "new", "new")));
      expect(c.findings).toEqual([
        expect.objectContaining({
          level: "error",
          what: "moved",
          old: "urn:pulumi:s::openkeel::openkeel:platform:Old$kubernetes:helm.sh/v3:Release::old",
          new: "urn:pulumi:s::openkeel::openkeel:platform:New$kubernetes:helm.sh/v3:Release::new",
          protect: false,
        }),
      ]);
      const [f] = c.findings;
      expect(f.message).toBe(
        `helm release ns/old (chart ${CHART}) at urn:pulumi:s::openkeel::openkeel:platform:Old$kubernetes:helm.sh/v3:Release::old is taken over by no resource, and urn:pulumi:s::openkeel::openkeel:platform:New$kubernetes:helm.sh/v3:Release::new installs helm release ns/new of the same chart without an alias: pulumi up installs helm release ns/new as a second release of that chart (Helm refuses it where both would hold the same object, and what the chart names after the release runs twice) and then uninstalls ns/old with what it owns`,
      );
      expect(f.fix).toBe(
        'alias its unit in components/renames.ts (UNIT_RENAMES: the new unit\'s name and component: { type: "openkeel:platform:Old", name: "old" }), and keep the Helm release\'s name old (helmReleaseUnit\'s `release` option, plan/plan.ts): an alias alone keeps the state, and the provider then replaces a release whose name changes',
      );
    });

    it("the same release name at a new URN without an alias: an error, Helm refusing the second install", () => {
      const [f] = compareUrnGraphs(deployed, graph(component("openkeel:platform:New", "new"), rel("new", "new", "old"))).findings;
      expect(f).toMatchObject({ level: "error", what: "moved" });
      expect(f.message).toContain("helm release ns/old moves from");
      expect(f.message).toContain("which Helm refuses (a release of that name is deployed)");
    });

    it("aliased, but the release renamed: an error even unprotected (the provider replaces it); aliased with the name kept: nothing", () => {
      const [f, ...rest] = compareUrnGraphs(deployed, graph(aliased, rel("new", "new", "new"))).findings;
      expect(rest).toEqual([]);
      expect(f).toMatchObject({ level: "error", what: "replaced", protect: false });
      expect(f.message).toContain(
        "the provider replaces a release whose name changes, so pulumi up installs helm release ns/new as a second release of that chart",
      );
      expect(f.fix).toBe("keep the Helm release's name old (helmReleaseUnit's `release` option, plan/plan.ts); the alias in components/renames.ts stays");
      expect(compareUrnGraphs(deployed, graph(aliased, rel("new", "new", "old"))).findings).toEqual([]);
    });

    it("a release moved to another namespace on purpose stays a replacement like any other: a warning, unprotected", () => {
      const moved = rel("old", "old", "old", { names: { name: "old", namespace: "other", chart: CHART } });
      expect(compareUrnGraphs(deployed, graph(component("openkeel:platform:Old", "old"), moved)).findings.map((f) => [f.level, f.what])).toEqual([
        ["warning", "replaced"],
      ]);
    });

    it("a release of another chart is no successor: an unprotected release gone is no finding", () => {
      const other = rel("new", "new", "new", { names: { name: "new", namespace: "ns", chart: "https://charts.example.invalid/other" } });
      expect(compareUrnGraphs(deployed, graph(component("openkeel:platform:New", "new"), other)).findings).toEqual([]);
    });
  });

  it("a protected resource gone, or taken over while managing another object, is an error; an unprotected one gone is no finding", () => {
    expect(compareUrnGraphs(before, graph()).findings.map((f) => [f.what, f.old])).toEqual([
      ["deleted", "urn:pulumi:s::openkeel::openkeel:platform:Old$kubernetes:helm.sh/v3:Release::old"],
    ]);
    const renamedRelease = graph(component("openkeel:platform:Old", "old"), release("old", "old", true, { names: { name: "other", namespace: "ns" } }));
    expect(compareUrnGraphs(before, renamedRelease).findings).toEqual([expect.objectContaining({ level: "error", what: "replaced" })]);
    const unprotected = graph(component("openkeel:platform:Old", "old"), release("old", "old", false));
    expect(compareUrnGraphs(unprotected, graph()).findings).toEqual([]);
  });
});

/**
 * This program with cert-manager's unit renamed to cert-manager-release (its Helm release with it),
 * as a change would do it without more; with `kept`, also aliased in components/renames.ts and its
 * release's name kept.
 */
function renamedCertManager(kept: boolean): string {
  const repo = cloneWorkingTree(tmp("openkeel-urns-renamed-"));
  const file = "platform/cert-manager.ts";
  replaceOnce(repo, file, 'helmReleaseUnit("cert-manager", ', 'helmReleaseUnit("cert-manager-release", ');
  if (kept) {
    replaceOnce(repo, file, "CERT_MANAGER_CHART, values, {", 'CERT_MANAGER_CHART, values, {\n    release: "cert-manager",');
    replaceOnce(
      repo,
      "components/renames.ts",
      "export const UNIT_RENAMES: readonly UnitRename[] = [",
      'export const UNIT_RENAMES: readonly UnitRename[] = [\n  { unit: "cert-manager-release", why: "a test", component: { type: "openkeel:platform:CertManager", name: "cert-manager" } },',
    );
  }
  return repo;
}

/** Each program's graphs, made once: this checkout's, the last release's, those around the olm merge, and a renamed release's. */
const graphs = {} as { now: UrnGraph[]; release: UrnGraph[]; beforeMerge: UrnGraph; withoutAlias: UrnGraph; renamed: UrnGraph; renamedKept: UrnGraph };
beforeAll(async () => {
  // the same program with the rename history emptied: what this change would be without the alias
  const mutated = cloneWorkingTree(tmp("openkeel-urns-mutated-"));
  const renames = path.join(mutated, "components/renames.ts");
  const text = fs.readFileSync(renames, "utf8");
  const start = text.indexOf("export const UNIT_RENAMES: readonly UnitRename[] = [");
  const end = text.indexOf("];\n", start);
  fs.writeFileSync(renames, `${text.slice(0, start)}export const UNIT_RENAMES: readonly UnitRename[] = [${text.slice(end)}`);
  const [now, release, [beforeMerge], [withoutAlias], [renamed], [renamedKept]] = await Promise.all([
    urnGraphsOf(REPO),
    urnGraphsOf(checkoutOf(lastRelease(REPO).commit)),
    urnGraphsOf(checkoutOf(BEFORE_OLM_MERGE), ["prod-medium"]),
    urnGraphsOf(mutated, ["prod-medium"]),
    urnGraphsOf(renamedCertManager(false), ["lab"]),
    urnGraphsOf(renamedCertManager(true), ["lab"]),
  ]);
  Object.assign(graphs, { now, release, beforeMerge, withoutAlias, renamed, renamedKept });
}, 300_000);

describe("from the last release", () => {
  it("the last release is .ci/last-release's commit while no tag v<version> exists", () => {
    expect(lastRelease(REPO)).toMatchObject({ ref: "d7db5234b172a98b3feb9daa78de463fb1d5febf", where: ".ci/last-release (d7db5234b172)" });
  });

  it("every stack's resources keep their URNs: no error, no warning", () => {
    expect(graphs.now.map((g) => g.stack)).toEqual(["lab", "prod-large", "prod-medium", "prod-small"]);
    for (const g of graphs.now) {
      const old = graphs.release.find((r) => r.stack === g.stack)!;
      expect(old.nodes.length, g.stack).toBeGreaterThan(50);
      expect(compareUrnGraphs(old, g).findings, g.stack).toEqual([]);
    }
  });

  it("npm run urns compares the working tree with a base: exit 0 and a line per stack; an unknown ref is a usage error", async () => {
    const r = await capture((a, io) => urnsCommand(a, io, REPO), ["--stack", "lab", "--base", lastRelease(REPO).commit]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^lab: \d+ → \d+ resource\(s\), 0 taken over by an alias, 0 error\(s\), 0 warning\(s\)$/m);
    expect(r.stdout).toMatch(/^URNs of 1 stack\(s\) against --base d7db5234b172a98b3feb9daa78de463fb1d5febf \(d7db5234b172\): 0 error\(s\)$/m);
    const bad = await capture((a, io) => urnsCommand(a, io, REPO), ["--base", "no-such-ref"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--base no-such-ref: no such commit");
  }, 300_000);
});

describe("a stack deployed before issue 12 merged olm-crds into olm", () => {
  const now = () => graphs.now.find((g) => g.stack === "prod-medium")!;

  it("before: two units, olm-crds protected with crds.yaml, olm with olm.yaml", () => {
    const olm = graphs.beforeMerge.nodes.filter((n) => /::olm(-crds)?(:|$)/.test(n.urn)).map((n) => [n.urn.split("::").slice(2).join("::"), n.protect]);
    expect(olm).toEqual([
      ["openkeel:platform:OlmCrds::olm-crds", false],
      ["openkeel:platform:OlmCrds$kubernetes:yaml/v2:ConfigFile::olm-crds", true],
      [
        "openkeel:platform:OlmCrds$kubernetes:yaml/v2:ConfigFile$kubernetes:yaml/v2:FileObjects::olm-crds:objects of github.com/operator-framework/operator-lifecycle-manager/releases/download/<version>/crds.yaml",
        true,
      ],
      ["openkeel:platform:Olm::olm", false],
      ["openkeel:platform:Olm$kubernetes:yaml/v2:ConfigFile::olm", false],
      [
        "openkeel:platform:Olm$kubernetes:yaml/v2:ConfigFile$kubernetes:yaml/v2:FileObjects::olm:objects of github.com/operator-framework/operator-lifecycle-manager/releases/download/<version>/olm.yaml",
        false,
      ],
    ]);
  });

  it("with the alias: the group takes over olm-crds' ConfigFile, crds.yaml's objects follow by inheritance and olm.yaml's by the transform; nothing protected is lost", () => {
    const c = compareUrnGraphs(graphs.beforeMerge, now());
    expect(c.findings.filter((f) => f.level === "error")).toEqual([]);
    const short = (u: string) => u.split("::").slice(3).join("::");
    expect(c.aliased.filter((a) => /olm/.test(a.new)).map((a) => [short(a.old), short(a.new)])).toEqual([
      ["olm-crds", "olm"],
      [
        "olm-crds:objects of github.com/operator-framework/operator-lifecycle-manager/releases/download/<version>/crds.yaml",
        "olm:objects of github.com/operator-framework/operator-lifecycle-manager/releases/download/<version>/crds.yaml",
      ],
      [
        "olm:objects of github.com/operator-framework/operator-lifecycle-manager/releases/download/<version>/olm.yaml",
        "olm:objects of github.com/operator-framework/operator-lifecycle-manager/releases/download/<version>/olm.yaml",
      ],
    ]);
  });

  it("without the alias (the test removes it): the protected ConfigFile and crds.yaml's objects are lost, olm.yaml's objects move: errors", () => {
    const errors = compareUrnGraphs(graphs.beforeMerge, graphs.withoutAlias).findings.filter((f) => f.level === "error");
    expect(errors.map((f) => [f.what, f.old.split("::").slice(3).join("::"), f.protect])).toEqual([
      ["deleted", "olm-crds", true],
      ["moved", "olm-crds:objects of github.com/operator-framework/operator-lifecycle-manager/releases/download/<version>/crds.yaml", true],
      ["moved", "olm:objects of github.com/operator-framework/operator-lifecycle-manager/releases/download/<version>/olm.yaml", false],
    ]);
    expect(errors[2].message).toContain("and then deletes the old one, and with it the object");
  });
});

describe("a Helm release whose unit is renamed (issue 37)", () => {
  const lab = () => graphs.now.find((g) => g.stack === "lab")!;

  it("without an alias: refused, naming the release, its chart and the fix; cert-manager is no protected unit, so nothing else said so", () => {
    const c = compareUrnGraphs(lab(), graphs.renamed);
    expect(c.findings.map((f) => [f.level, f.what, f.old.split("::").slice(2).join("::"), f.new?.split("::").slice(2).join("::")])).toEqual([
      [
        "error",
        "moved",
        "openkeel:platform:CertManager$kubernetes:helm.sh/v3:Release::cert-manager",
        "openkeel:platform:CertManager$kubernetes:helm.sh/v3:Release::cert-manager-release",
      ],
    ]);
    expect(c.findings[0].message).toContain("helm release cert-manager/cert-manager (chart https://charts.jetstack.io/cert-manager) at ");
    expect(c.findings[0].message).toContain("installs helm release cert-manager/cert-manager-release of the same chart without an alias");
    expect(c.findings[0].fix).toContain(
      'components/renames.ts (UNIT_RENAMES: the new unit\'s name and component: { type: "openkeel:platform:CertManager", name: "cert-manager" })',
    );
    expect(c.findings[0].fix).toContain("keep the Helm release's name cert-manager");
  });

  it("aliased in components/renames.ts with the release's name kept: taken over, no finding", () => {
    const c = compareUrnGraphs(lab(), graphs.renamedKept);
    expect(c.findings).toEqual([]);
    expect(c.aliased.map((a) => a.new.split("::").slice(2).join("::"))).toEqual([
      "openkeel:platform:CertManager::cert-manager-release",
      "openkeel:platform:CertManager$kubernetes:helm.sh/v3:Release::cert-manager-release",
    ]);
  });
});
