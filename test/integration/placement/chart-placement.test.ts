// Issue 37, item 2: the placement model against the real platform charts, offline. For every stack
// and every platform Helm release, `helm template` of the chart at its pin with the committed values,
// Helm running the release's post-renderer; every workload of the output, hooks included, equal to
// the model component its chart's table maps it to (nodes, kind, replicas), and, issue 45, holding
// every guarantee the model states of its pods: required anti-affinity and spread over its own pods,
// PodDisruptionBudgets, tolerations, priority class (tools/chart-placement.ts). A chart whose
// templates move a workload, drop a guarantee, or render a workload nobody mapped, fails here with
// the workload and what differs named.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import type { PlacementData } from "../../../placement/data";
import type { ChartWorkloads } from "../../../placement/workloads";
import type { PostRenderPatch } from "../../../plan/post-render";
import { KUBE_OVN_CHART, LONGHORN_CHART, NODE_FEATURE_DISCOVERY_CHART } from "../../../platform/versions";
import {
  chartArchive,
  chartCases,
  chartSource,
  chartTables,
  checkChartCase,
  compareChart,
  releaseInputs,
  stackGuarantees,
  type ChartCase,
} from "../../../tools/chart-placement";
import { defaultMirrorDir } from "../../../e2e/harness/driver";
import { REPO } from "../../helpers/stacks";

const MIRROR = defaultMirrorDir(REPO);
const TABLES = chartTables();
const CASES = chartCases();
const caseOf = (stack: string, unit: string) => CASES.find((c) => c.stack === stack && c.unit.name === unit)!;
const tmp = () => fs.mkdtempSync(path.join(process.env.TMPDIR ?? os.tmpdir(), "chart-placement-"));

/**
 * The archive of a copy of a pinned chart from the mirror, its templates changed by `edit` (folder →
 * nothing): what a chart bump that drops a guarantee renders. Made in a temporary folder, never kept.
 */
function modifiedChart(c: ChartCase, edit: (root: string) => void): string {
  const dir = tmp();
  const run = (args: string[]) => {
    const r = spawnSync("tar", args, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`tar ${args.join(" ")}: ${r.stderr}`);
  };
  run(["-xzf", chartArchive(c.unit.chart, MIRROR), "-C", dir]);
  edit(path.join(dir, c.unit.chart.chart));
  const archive = path.join(dir, `${c.unit.chart.chart}-${c.unit.chart.version}.tgz`);
  run(["-czf", archive, "-C", dir, c.unit.chart.chart]);
  return archive;
}

/** A template of a chart folder with `from` replaced by `to` (which must be there once). */
function editTemplate(root: string, file: string, from: string, to: string) {
  const text = fs.readFileSync(path.join(root, "templates", file), "utf8");
  expect(text.split(from)).toHaveLength(2);
  fs.writeFileSync(path.join(root, "templates", file), text.replace(from, to));
}

/** A case checked with values of its own: the committed ones, changed by `edit`. */
function withValues(c: ChartCase, edit: (values: Record<string, unknown>) => void, patches?: PostRenderPatch[]) {
  const inputs = releaseInputs(c);
  const values = parse(fs.readFileSync(inputs.valuesFile, "utf8")) as Record<string, unknown>;
  edit(values);
  const valuesFile = path.join(tmp(), "values.yaml");
  fs.writeFileSync(valuesFile, stringify(values));
  return checkChartCase(c, TABLES, { mirrorDir: MIRROR, inputs: { valuesFile, patches: patches ?? inputs.patches } });
}

describe("the platform charts at their pins, rendered by Helm with each stack's values and post-renderer, equal the placement model", () => {
  it("covers the four stacks: the lab's charts, and Kube-OVN and Longhorn in production", () => {
    const charts = (stack: string) => CASES.filter((c) => c.stack === stack).map((c) => c.unit.chart.chart);
    const operators = ["cert-manager", "mariadb-operator-crds", "mariadb-operator", "node-feature-discovery"];
    expect(charts("lab")).toEqual(operators);
    for (const stack of ["prod-small", "prod-medium", "prod-large"]) expect(charts(stack).sort()).toEqual([...operators, "kube-ovn", "longhorn"].sort());
  });

  it.each(CASES.map((c) => [`${c.stack}: ${c.unit.chart.chart} ${c.unit.chart.version}`, c] as const))("%s", (_name, c) => {
    const { problems, workloads } = checkChartCase(c, TABLES, { mirrorDir: MIRROR });
    expect(problems).toEqual([]);
    // every workload of its table was rendered and compared (Kube-OVN's upgrade hooks by opening their gate)
    expect(workloads.map((w) => `${w.kind} ${w.name}`).sort()).toEqual(Object.keys(TABLES.get(c.unit.chart.chart)!.rendered).sort());
  });
});

describe("a chart whose placement differs from the model fails, naming the workload", () => {
  const nfd = caseOf("prod-medium", "node-feature-discovery");

  it("values whose tolerations are dropped: NFD's worker DaemonSet, with the nodes it loses and why, and the tolerations", () => {
    const { problems } = withValues(nfd, (v) => delete (v.worker as Record<string, unknown>).tolerations);
    expect(problems).toHaveLength(2);
    expect(problems[1]).toMatch(
      /^prod-medium: node-feature-discovery 0\.18\.3 \(release node-feature-discovery\): DaemonSet node-feature-discovery-worker \(model node-feature-discovery\/nfd-worker\): tolerations without the model's .*node-role\.openkeel\.io\/compute Exists NoSchedule; /,
    );
    expect(problems[0]).toBe(
      "prod-medium: node-feature-discovery 0.18.3 (release node-feature-discovery): DaemonSet node-feature-discovery-worker (model node-feature-discovery/nfd-worker): " +
        "runs on cp-1, cp-2, cp-3, the model on cp-1, cp-2, cp-3, cmp-01, cmp-02, cmp-03, net-1, net-2, prov-1; not on " +
        ["cmp-01", "cmp-02", "cmp-03"].map((n) => `${n}: taint node-role.openkeel.io/compute:NoSchedule not tolerated`).join("; ") +
        "; net-1: taint node-role.openkeel.io/network:NoSchedule not tolerated; net-2: taint node-role.openkeel.io/network:NoSchedule not tolerated" +
        "; prov-1: taint node-role.openkeel.io/provisioning:NoSchedule not tolerated",
    );
  });

  it("a priority class or replicas the chart renders otherwise: named", () => {
    const { problems } = withValues(nfd, (v) => {
      v.priorityClassName = "openkeel-infra-critical";
      (v.master as Record<string, unknown>).replicaCount = 2;
    });
    expect(problems).toEqual([
      "prod-medium: node-feature-discovery 0.18.3 (release node-feature-discovery): DaemonSet node-feature-discovery-worker (model node-feature-discovery/nfd-worker): priority class openkeel-infra-critical, the model's openkeel-control",
      "prod-medium: node-feature-discovery 0.18.3 (release node-feature-discovery): Deployment node-feature-discovery-master (model node-feature-discovery/nfd-master): priority class openkeel-infra-critical, the model's openkeel-control",
      "prod-medium: node-feature-discovery 0.18.3 (release node-feature-discovery): Deployment node-feature-discovery-master (model node-feature-discovery/nfd-master): 2 replica(s), the model's 1",
      "prod-medium: node-feature-discovery 0.18.3 (release node-feature-discovery): Deployment node-feature-discovery-gc (model node-feature-discovery/nfd-gc): priority class openkeel-infra-critical, the model's openkeel-control",
    ]);
  });

  it("values that give NFD's master a budget and a zone anti-affinity the model does not state: both named", () => {
    const own = { matchLabels: { "app.kubernetes.io/name": "node-feature-discovery", role: "master" } };
    const { problems } = withValues(nfd, (v) => {
      const master = v.master as Record<string, unknown>;
      master.podDisruptionBudget = { enable: true, minAvailable: 1 };
      master.affinity = {
        podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: own, topologyKey: "topology.kubernetes.io/zone" }] },
      };
    });
    const master =
      "prod-medium: node-feature-discovery 0.18.3 (release node-feature-discovery): Deployment node-feature-discovery-master (model node-feature-discovery/nfd-master): ";
    expect(problems).toEqual([
      `${master}required anti-affinity over its own pods: on topology.kubernetes.io/zone, the model's none`,
      `${master}PodDisruptionBudget over its pods: minAvailable: 1, the model's none`,
    ]);
  });

  it("values that spread cert-manager's controller: the DoNotSchedule constraint named, the ScheduleAnyway one (a preference) not", () => {
    const own = { matchLabels: { "app.kubernetes.io/name": "cert-manager", "app.kubernetes.io/component": "controller" } };
    const spread = (topologyKey: string, whenUnsatisfiable: string) => ({ maxSkew: 1, topologyKey, whenUnsatisfiable, labelSelector: own });
    const { problems } = withValues(caseOf("prod-medium", "cert-manager"), (v) => {
      v.topologySpreadConstraints = [spread("kubernetes.io/hostname", "DoNotSchedule"), spread("topology.kubernetes.io/zone", "ScheduleAnyway")];
    });
    expect(problems).toEqual([
      "prod-medium: cert-manager v1.21.1 (release cert-manager): Deployment cert-manager (model cert-manager/cert-manager): DoNotSchedule spread over its own pods: on kubernetes.io/hostname (maxSkew 1), the model's none",
    ]);
  });

  it("a workload no table maps (NFD's topology updater, as a chart bump could add one): named, with where to map it", () => {
    const { problems } = withValues(nfd, (v) => (v.topologyUpdater = { enable: true }));
    expect(problems).toEqual([
      "prod-medium: node-feature-discovery 0.18.3 (release node-feature-discovery): renders DaemonSet node-feature-discovery-topology-updater, which no component of the model stands for; map it in the chart's table (charts of its module in platform/) and model it in the release's reader",
    ]);
  });

  it("Kube-OVN without its post-render patch: kube-ovn-controller runs off the control plane, named", () => {
    const { problems } = withValues(caseOf("prod-medium", "kube-ovn"), () => {}, []);
    expect(problems).toEqual([
      expect.stringMatching(
        /^prod-medium: kube-ovn v1\.16\.2 \(release kube-ovn\): Deployment kube-ovn-controller \(model kube-ovn\/kube-ovn-controller\): runs on cp-1, cp-2, cp-3, cmp-01, .*, the model on cp-1, cp-2, cp-3; also on cmp-01, /,
      ),
    ]);
  });

  it("Helm hands the post-renderer no hook: a patch aimed at Kube-OVN's post-delete hook finds no target", () => {
    const c = caseOf("prod-medium", "kube-ovn");
    const patches: PostRenderPatch[] = [
      ...releaseInputs(c).patches,
      { target: { kind: "Job", name: "kube-ovn-post-delete-hook" }, why: "a test", patch: { spec: { template: { spec: { nodeSelector: { a: "b" } } } } } },
    ];
    expect(() => withValues(c, () => {}, patches)).toThrow(/no Job kube-ovn-post-delete-hook in its manifests \(the patch has no target: a test\)/);
  });
});

describe("a chart whose templates drop a guarantee the model states fails, naming the workload and the guarantee", () => {
  const kubeOvn = caseOf("prod-medium", "kube-ovn");
  const where = "prod-medium: kube-ovn v1.16.2 (release kube-ovn)";

  it("Kube-OVN's ovn-central without its required anti-affinity (two RAFT members could share a node): named", () => {
    const chart = modifiedChart(kubeOvn, (root) =>
      editTemplate(
        root,
        "central-deploy.yaml",
        "        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            - labelSelector:\n                matchLabels:\n                  app: ovn-central\n              topologyKey: kubernetes.io/hostname\n",
        "",
      ),
    );
    const { problems } = checkChartCase(kubeOvn, TABLES, { mirrorDir: MIRROR, chart });
    expect(problems).toEqual([
      `${where}: Deployment ovn-central (model kube-ovn/ovn-central): required anti-affinity over its own pods: none, the model's on kubernetes.io/hostname`,
    ]);
  });

  it("a monitor whose anti-affinity selects other pods, a central that no longer tolerates NoExecute (its nodes unchanged): both named", () => {
    const chart = modifiedChart(kubeOvn, (root) => {
      editTemplate(
        root,
        "monitor-deploy.yaml",
        "                  app: kube-ovn-monitor\n              topologyKey",
        "                  app: ovn-central\n              topologyKey",
      );
      editTemplate(root, "central-deploy.yaml", "        - effect: NoExecute\n          operator: Exists\n", "");
    });
    const { problems } = checkChartCase(kubeOvn, TABLES, { mirrorDir: MIRROR, chart });
    expect(problems).toEqual([
      `${where}: Deployment ovn-central (model kube-ovn/ovn-central): tolerations without the model's (every key) Exists NoExecute`,
      `${where}: Deployment kube-ovn-monitor (model kube-ovn/kube-ovn-monitor): required anti-affinity over its own pods: none, the model's on kubernetes.io/hostname ` +
        `(its terms on kubernetes.io/hostname select {"matchLabels":{"app":"ovn-central"}}, not its own pods (labels {"app":"kube-ovn-monitor","component":"network","type":"infra"}))`,
    ]);
  });
});

describe("compareChart: the table and the model, both ways", () => {
  const c = caseOf("prod-small", "longhorn");
  const { workloads } = checkChartCase(c, TABLES, { mirrorDir: MIRROR });
  const table = TABLES.get(LONGHORN_CHART.chart)!;
  const model = c.render.placement!;
  const where = "prod-small: longhorn";
  const run = (t: ChartWorkloads, m: Pick<PlacementData, "nodes" | "components"> = model) =>
    compareChart({ where, unit: "longhorn", table: t, workloads, model: m, guarantees: stackGuarantees("prod-small") });

  it("agrees as committed", () => expect(run(table)).toEqual([]));

  it("a model component no workload stands for, unless listed as not rendered; one so listed that the chart renders", () => {
    const { "Deployment longhorn-ui": _ui, ...rendered } = table.rendered;
    expect(run({ ...table, rendered })).toEqual([
      "prod-small: longhorn: renders Deployment longhorn-ui, which no component of the model stands for; map it in the chart's table (charts of its module in platform/) and model it in the release's reader",
      "prod-small: longhorn: the model's longhorn/longhorn-ui stands for no workload the chart renders; map the workload, or list it under notRendered with why",
    ]);
    const { "csi-attacher": _csi, ...notRendered } = table.notRendered!;
    expect(run({ ...table, notRendered })).toEqual([
      "prod-small: longhorn: the model's longhorn/csi-attacher stands for no workload the chart renders; map the workload, or list it under notRendered with why",
    ]);
    expect(run({ ...table, notRendered: { ...table.notRendered, "longhorn-ui": "a test" } })).toEqual([
      "prod-small: longhorn: longhorn/longhorn-ui is listed as not rendered (a test), but the chart renders a workload it stands for",
    ]);
  });

  it("a model that states a budget, a spread, an anti-affinity or a toleration the chart does not render: each named", () => {
    const stated = new Map(stackGuarantees("prod-small"));
    const ui = stated.get("longhorn/longhorn-ui")!;
    stated.set("longhorn/longhorn-ui", {
      ...ui,
      apart: ["kubernetes.io/hostname"],
      spread: [{ topologyKey: "topology.kubernetes.io/zone", maxSkew: 1 }],
      budgets: [{ maxUnavailable: 1 }],
      tolerations: [...ui.tolerations, { key: "CriticalAddonsOnly", operator: "Exists" }],
    });
    const ui2 = "prod-small: longhorn: Deployment longhorn-ui (model longhorn/longhorn-ui): ";
    expect(compareChart({ where, unit: "longhorn", table, workloads, model, guarantees: stated })).toEqual([
      `${ui2}required anti-affinity over its own pods: none, the model's on kubernetes.io/hostname`,
      `${ui2}DoNotSchedule spread over its own pods: none, the model's on topology.kubernetes.io/zone (maxSkew 1)`,
      `${ui2}PodDisruptionBudget over its pods: none, the model's maxUnavailable: 1`,
      `${ui2}tolerations without the model's CriticalAddonsOnly Exists (every effect)`,
    ]);
  });

  it("a model whose priority class, replicas or kind differ, or that lacks the component", () => {
    const edit = (name: string, change: object) => ({ ...model, components: model.components.map((m) => (m.name === name ? { ...m, ...change } : m)) });
    expect(run(table, edit("longhorn/longhorn-pre-upgrade", { priorityClass: "longhorn-critical" }))).toEqual([
      "prod-small: longhorn: Job longhorn-pre-upgrade (hook pre-upgrade) (model longhorn/longhorn-pre-upgrade): priority class (none), the model's longhorn-critical",
    ]);
    expect(run(table, edit("longhorn/longhorn-ui", { replicas: 3, kind: "StatefulSet" }))).toEqual([
      "prod-small: longhorn: Deployment longhorn-ui (model longhorn/longhorn-ui): kind Deployment, the model's StatefulSet",
      "prod-small: longhorn: Deployment longhorn-ui (model longhorn/longhorn-ui): 2 replica(s), the model's 3",
    ]);
    expect(run(table, { ...model, components: model.components.filter((m) => m.name !== "longhorn/longhorn-ui") })).toEqual([
      "prod-small: longhorn: Deployment longhorn-ui maps to longhorn/longhorn-ui, which the model does not have",
    ]);
  });
});

describe("where the charts come from", () => {
  it("with a mirror folder: the archive its repository's index.yaml names, its digest checked", () => {
    for (const pin of [LONGHORN_CHART, KUBE_OVN_CHART, NODE_FEATURE_DISCOVERY_CHART]) {
      const source = chartSource(pin, MIRROR);
      expect(source.from).toBe("mirror");
      expect(chartArchive(pin, MIRROR, () => expect.unreachable("no pull where a mirror is"))).toBe(source.from === "mirror" && source.archive);
    }
    expect(chartSource(KUBE_OVN_CHART, MIRROR)).toMatchObject({ archive: path.join(MIRROR, "files/kubeovn.github.io/kube-ovn/kube-ovn-v1.16.2.tgz") });
  });

  it("a mirror folder without the pin, or with an archive whose digest differs: the file, what is wrong, the fix", () => {
    expect(() => chartSource({ ...KUBE_OVN_CHART, version: "v9.9.9" }, MIRROR)).toThrow(
      `${path.join(MIRROR, "files/kubeovn.github.io/kube-ovn/index.yaml")}: no kube-ovn v9.9.9 with a URL and a digest (the mirror folder holds every pinned chart with its repository's index.yaml; add it there, or point OPENKEEL_MIRROR at one that does)`,
    );
    const mirror = tmp();
    const repo = path.join(mirror, "files/kubeovn.github.io/kube-ovn");
    fs.mkdirSync(repo, { recursive: true });
    fs.copyFileSync(path.join(MIRROR, "files/kubeovn.github.io/kube-ovn/index.yaml"), path.join(repo, "index.yaml"));
    fs.writeFileSync(path.join(repo, "kube-ovn-v1.16.2.tgz"), "not the chart");
    expect(() => chartArchive(KUBE_OVN_CHART, mirror)).toThrow(/kube-ovn-v1\.16\.2\.tgz: sha256 [0-9a-f]{64}, but its repository's index says 41256995/);
  });

  it("without a mirror folder (a GitHub runner): `helm pull` of the pin from its repository into the cache, once (not run here: no internet)", () => {
    const cache = tmp();
    const pulls: unknown[] = [];
    const pull = (ref: { repository: string; chart: string; version: string }, dest: string) => {
      pulls.push([ref, dest]);
      fs.mkdirSync(dest, { recursive: true });
      fs.writeFileSync(path.join(dest, "longhorn-1.12.1.tgz"), "");
      return path.join(dest, "longhorn-1.12.1.tgz");
    };
    const absent = path.join(cache, "no-mirror");
    expect(chartSource(LONGHORN_CHART, absent, cache)).toEqual({ from: "repository", cacheDir: path.join(cache, "longhorn-1.12.1") });
    expect(chartArchive(LONGHORN_CHART, absent, pull, cache)).toBe(path.join(cache, "longhorn-1.12.1", "longhorn-1.12.1.tgz"));
    expect(chartArchive(LONGHORN_CHART, undefined, pull, cache)).toBe(path.join(cache, "longhorn-1.12.1", "longhorn-1.12.1.tgz"));
    expect(pulls).toEqual([[LONGHORN_CHART, path.join(cache, "longhorn-1.12.1")]]);
  });
});
