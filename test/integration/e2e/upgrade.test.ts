// The pure parts of the e2e's upgrade run (`npm run e2e -- --upgrade-from <ref>`, harness/upgrade.ts),
// without an engine: which commit a ref names, the judgement of the upgrade preview's steps, and
// the mirror serving what both programs' renders ask for.
import * as fs from "node:fs";
import * as path from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { EXIT_BAD_CONFIG, UserError } from "../../../cli/cli";
import { AdmissionStandIn } from "../../../e2e/harness/admission";
import { CONTRACT_CHARTS_DIR, Mirror } from "../../../e2e/harness/mirror";
import type { RenderedStack } from "../../../e2e/harness/rendered";
import { LAST_RELEASE, protectedChanges, resolveUpgradeFrom } from "../../../e2e/harness/upgrade";
import { git, tempFolders } from "../../helpers/repos";

const tmp = tempFolders();

/** A repository of two commits; .ci/last-release names the first. */
function repoWithRelease(): { repo: string; first: string; second: string } {
  const repo = tmp("openkeel-upgrade-ref-");
  git(repo, "init", "-q", "-b", "main");
  fs.writeFileSync(path.join(repo, "a.txt"), "1\n");
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "one");
  const first = git(repo, "rev-parse", "HEAD").trim();
  fs.mkdirSync(path.join(repo, ".ci"));
  fs.writeFileSync(path.join(repo, ".ci", "last-release"), `# the last release\n${first}\n`);
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "two");
  return { repo, first, second: git(repo, "rev-parse", "HEAD").trim() };
}

/** The UserError `fn` throws (fails the test when it throws nothing or something else). */
function userError(fn: () => unknown): UserError {
  try {
    fn();
  } catch (e) {
    if (e instanceof UserError) return e;
    throw e;
  }
  throw new Error("no UserError thrown");
}

describe("e2e --upgrade-from: the ref", () => {
  it("last-release is the commit .ci/last-release names while no tag v<version> does", () => {
    const { repo, first } = repoWithRelease();
    expect(resolveUpgradeFrom(repo, LAST_RELEASE)).toMatchObject({ commit: first, where: expect.stringContaining(".ci/last-release") });
  });

  it("a tag v<version> supersedes the file, the newest by version", () => {
    const { repo, first, second } = repoWithRelease();
    git(repo, "tag", "v1.9.0", first);
    git(repo, "tag", "v1.10.0", second);
    expect(resolveUpgradeFrom(repo, LAST_RELEASE)).toMatchObject({ ref: "v1.10.0", commit: second });
  });

  it("any other ref is resolved as git does", () => {
    const { repo, first } = repoWithRelease();
    expect(resolveUpgradeFrom(repo, "HEAD~1").commit).toBe(first);
  });

  it("an unknown ref is a clear error, exit 2", () => {
    const { repo } = repoWithRelease();
    const e = userError(() => resolveUpgradeFrom(repo, "no-such-ref"));
    expect(e.exitCode).toBe(EXIT_BAD_CONFIG);
    expect(e.message).toMatch(/--upgrade-from no-such-ref: no such commit .* Fix: /);
  });

  it("last-release without a file or tag is a clear error, exit 2", () => {
    const { repo } = repoWithRelease();
    fs.writeFileSync(path.join(repo, ".ci", "last-release"), "# none yet\n0123456789abcdef0123456789abcdef01234567\n");
    const e = userError(() => resolveUpgradeFrom(repo, LAST_RELEASE));
    expect(e.exitCode).toBe(EXIT_BAD_CONFIG);
    expect(e.message).toMatch(/\.ci\/last-release names 0123456789ab.*does not hold/);
  });
});

describe("e2e --upgrade-from: the upgrade preview's judgement", () => {
  const urn = (name: string) => `urn:pulumi:lab::openkeel::openkeel:platform:Unit$kubernetes:helm.sh/v3:Release::${name}`;
  const state = [
    { urn: urn("openkeel-infra"), protect: true },
    { urn: urn("longhorn"), protect: true },
    { urn: urn("multus"), protect: false },
  ];

  it("trips on a replace or a delete of a protected resource", () => {
    const steps = [
      { op: "replace", urn: urn("openkeel-infra") },
      { op: "delete", urn: urn("longhorn") },
    ];
    expect(protectedChanges(steps, state)).toEqual([`replace of protected ${urn("openkeel-infra")}`, `delete of protected ${urn("longhorn")}`]);
  });

  it("trips on the two halves of a replace as the JSON may list them", () => {
    expect(protectedChanges([{ op: "create-replacement", urn: urn("longhorn") }], state)).toHaveLength(1);
    expect(protectedChanges([{ op: "delete-replaced", urn: urn("longhorn") }], state)).toHaveLength(1);
  });

  it("lets updates of protected resources and deletes of unprotected ones pass", () => {
    const steps = [
      { op: "update", urn: urn("openkeel-infra") },
      { op: "same", urn: urn("longhorn") },
      { op: "delete", urn: urn("multus") },
      { op: "create", urn: urn("cert-manager-crds") },
    ];
    expect(protectedChanges(steps, state)).toEqual([]);
  });
});

describe("e2e --upgrade-from: the mirror serves both renders", () => {
  /** A render that asks for one chart and one remote manifest (the mirror reads only the units). */
  function renderAsking(chart: { chart: string; version: string }, url: string): RenderedStack {
    const units = [
      { kind: "HelmRelease", name: chart.chart, chart: { repository: "https://charts.example.invalid", ...chart } },
      { kind: "RemoteManifest", name: `${chart.chart}-manifest`, urls: [url] },
    ];
    return { units } as unknown as RenderedStack;
  }

  const SCHEMAS = process.env.OPENKEEL_SCHEMAS ?? path.resolve(__dirname, "../../../../shared/schemas");

  it.skipIf(!fs.existsSync(SCHEMAS))("the union of the old and the current program's charts and files, each fetched over HTTP", async () => {
    const m = new Mirror(SCHEMAS, undefined);
    const oldUrl = "https://github.com/kubevirt/kubevirt/releases/download/v1.8.0/kubevirt-operator.yaml";
    const newUrl = "https://github.com/kubevirt/kubevirt/releases/download/v1.9.0/kubevirt-operator.yaml";
    m.addStack(renderAsking({ chart: "openkeel-nova", version: "0.9.0" }, oldUrl));
    m.addStack(renderAsking({ chart: "openkeel-nova", version: "1.0.0" }, newUrl));
    expect(m.problems).toEqual([]);
    await m.start();
    try {
      const index = await (await fetch(`${m.url}/charts/index.yaml`)).text();
      expect(index).toMatch(/version: 0\.9\.0/);
      expect(index).toMatch(/version: 1\.0\.0/);
      for (const p of ["/charts/openkeel-nova-0.9.0.tgz", "/charts/openkeel-nova-1.0.0.tgz", `/files/${oldUrl.slice(8)}`, `/files/${newUrl.slice(8)}`])
        expect((await fetch(`${m.url}${p}`)).status, p).toBe(200);
    } finally {
      await m.close();
    }
  });

  const MIRROR = process.env.OPENKEEL_MIRROR ?? path.resolve(__dirname, "../../../../shared/mirror");
  const RABBITMQ = "https://github.com/rabbitmq/cluster-operator/releases/download/v2.22.3/cluster-operator.yml";

  it.skipIf(!fs.existsSync(SCHEMAS) || !fs.existsSync(MIRROR))(
    "an old program released on stand-ins gets those until the upgrade, then the real file the current program asks for",
    async () => {
      // the real file has webhooks, which the mirror points at the admission stand-in
      const m = new Mirror(SCHEMAS, MIRROR, new AdmissionStandIn());
      m.addStack(renderAsking({ chart: "openkeel-nova", version: "1.0.0" }, RABBITMQ));
      m.addReleasedStack(renderAsking({ chart: "openkeel-nova", version: "0.9.0" }, RABBITMQ), { chartsDir: "/nonexistent", standInManifests: true });
      expect(m.problems).toEqual([]);
      await m.start();
      try {
        const served = async () => (await fetch(`${m.url}/files/${RABBITMQ.slice(8)}`)).text();
        expect(await served()).toContain("stand-in for cluster-operator.yml");
        expect((await fetch(`${m.url}/charts/openkeel-nova-0.9.0.tgz`)).status).toBe(200);
        m.upgrade();
        const real = m.servedUpstream(RABBITMQ);
        expect(real).toContain("name: rabbitmq-cluster-operator");
        expect(await served()).toBe(real);
      } finally {
        await m.close();
      }
    },
  );

  it.skipIf(!fs.existsSync(SCHEMAS))("an old program's own contract chart at the same version until the upgrade, then the current one", async () => {
    const oldCharts = tmp("openkeel-old-charts-");
    fs.cpSync(path.join(CONTRACT_CHARTS_DIR, "_shared"), path.join(oldCharts, "_shared"), { recursive: true });
    fs.cpSync(path.join(CONTRACT_CHARTS_DIR, "openkeel-nova"), path.join(oldCharts, "openkeel-nova"), { recursive: true });
    fs.writeFileSync(path.join(oldCharts, "openkeel-nova", "templates", "old-contract.yaml"), "# the old ref's contract\n");
    const m = new Mirror(SCHEMAS, undefined);
    const url = "https://github.com/kubevirt/kubevirt/releases/download/v1.9.0/kubevirt-operator.yaml";
    m.addStack(renderAsking({ chart: "openkeel-nova", version: "1.0.0" }, url));
    m.addReleasedStack(renderAsking({ chart: "openkeel-nova", version: "1.0.0" }, url), { chartsDir: oldCharts, standInManifests: false });
    expect(m.problems).toEqual([]);
    await m.start();
    try {
      const chart = async () => gunzipSync(Buffer.from(await (await fetch(`${m.url}/charts/openkeel-nova-1.0.0.tgz`)).arrayBuffer())).toString("latin1");
      expect(await chart()).toContain("old-contract.yaml");
      m.upgrade();
      expect(await chart()).not.toContain("old-contract.yaml");
    } finally {
      await m.close();
    }
  });
});
