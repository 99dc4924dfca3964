// The judgements of the e2e's day-2 transitions (harness/transitions-judge.ts), each tripped.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { NODE_STATE_LABEL } from "../../config/lifecycle";
import { dayTwoTransitions } from "../../e2e/harness/day2-transitions";
import { readDocs, type RenderedStack } from "../../e2e/harness/rendered";
import { StackRun, type E2EOptions } from "../../e2e/harness/stack-run";
import {
  drainLeft,
  drainProblems,
  instanceManagerPdbVerdict,
  labelSelectorQuery,
  nhcProblems,
  podsToEvict,
  protectedLost,
  rolloutProblems,
  type LabelSelector,
} from "../../e2e/harness/transitions-judge";

const REPO = path.resolve(__dirname, "../..");
const RENDERED = path.join(REPO, "rendered");

describe("a NodeHealthCheck's selector as the API server's labelSelector query", () => {
  it("every operator, values sorted (the rendered control-plane check)", () => {
    const nhc = readDocs(path.join(RENDERED, "prod-medium/objects/04-platform-config/medik8s-remediation/nodehealthcheck-openkeel-control-plane.yaml"))[0] as {
      spec: { selector: LabelSelector };
    };
    expect(labelSelectorQuery(nhc.spec.selector)).toBe(
      `node-restriction.kubernetes.io/openkeel-control-plane,!openkeel.io/ha-segment,${NODE_STATE_LABEL} notin (maintenance,retiring)`,
    );
    expect(labelSelectorQuery({ matchLabels: { a: "1" }, matchExpressions: [{ key: "z", operator: "In", values: ["y", "x"] }] })).toBe("a=1,z in (x,y)");
  });

  it("an operator the API server does not know is an error, not a selector that selects everything", () => {
    expect(() => labelSelectorQuery({ matchExpressions: [{ key: "a", operator: "Gt", values: ["1"] }] })).toThrow(/Gt of a is not one of/);
  });
});

describe("the NodeHealthChecks' coverage", () => {
  const nodes = [
    { name: "cp-1", unwatched: false },
    { name: "cmp-01", unwatched: false },
  ];
  it("agreeing with the report, each node by exactly one: no problem", () => {
    expect(
      nhcProblems(
        [
          { name: "cp", expected: ["cp-1"], selected: ["cp-1"] },
          { name: "storage", expected: ["cmp-01"], selected: ["cmp-01"] },
        ],
        nodes,
      ),
    ).toEqual([]);
  });
  it("the API server selecting other nodes than the report says, a node in two checks, a node in none", () => {
    const p = nhcProblems(
      [
        { name: "cp", expected: ["cp-1"], selected: ["cp-1", "cmp-01"] },
        { name: "storage", expected: ["cmp-01"], selected: ["cmp-01"] },
      ],
      [...nodes, { name: "net-1", unwatched: false }],
    );
    expect(p).toEqual([
      "NodeHealthCheck cp: the API server selects cmp-01, cp-1; the report says cp-1",
      "cmp-01 is watched by 2 NodeHealthChecks (cp, storage); § 5.6 wants exactly one",
      "net-1 is watched by 0 NodeHealthChecks (none); § 5.6 wants exactly one",
    ]);
  });
  it("a node alone in its group is watched by none; selected, it is a problem", () => {
    expect(
      nhcProblems([{ name: "storage", expected: ["cmp-01"], selected: ["cmp-01"] }], [...nodes.slice(1), { name: "prov-1", unwatched: false, alone: true }]),
    ).toEqual([]);
    expect(nhcProblems([{ name: "p", expected: ["prov-1"], selected: ["prov-1"] }], [{ name: "prov-1", unwatched: false, alone: true }])).toEqual([
      "prov-1 is alone in its group, yet p select(s) it",
    ]);
  });
  it("a node whose state leaves the health checks is watched by none; selected, it is a problem", () => {
    expect(nhcProblems([{ name: "cp", expected: [], selected: [] }], [{ name: "cp-1", unwatched: true }])).toEqual([]);
    expect(nhcProblems([{ name: "cp", expected: ["cp-1"], selected: ["cp-1"] }], [{ name: "cp-1", unwatched: true }])).toEqual([
      "cp-1 is in a state that leaves the health checks, yet cp select(s) it",
    ]);
  });
});

describe("the instance-manager PDB stand-in follows Longhorn's canDeleteInstanceManagerPDB", () => {
  const strictLocal = { volume: "galera-0 (longhorn-local)", stopped: true, protectedElsewhere: false };
  it("allow-if-replica-is-stopped: a stopped strict-local replica lets the PDB go once its volume is detached", () => {
    expect(instanceManagerPdbVerdict("allow-if-replica-is-stopped", { cordoned: true, attachedVolumes: [], replicas: [strictLocal] }).deletable).toBe(true);
  });
  it("kept while a volume is attached (every policy), and on a node not cordoned", () => {
    expect(instanceManagerPdbVerdict("always-allow", { cordoned: true, attachedVolumes: ["galera-0"], replicas: [] })).toEqual({
      deletable: false,
      why: "some volumes are still attached: galera-0",
    });
    expect(instanceManagerPdbVerdict("always-allow", { cordoned: false, attachedVolumes: [], replicas: [] }).deletable).toBe(false);
  });
  it("the default policy keeps it for good on the last replica of a strict-local volume: the drain would never finish", () => {
    expect(instanceManagerPdbVerdict("block-if-contains-last-replica", { cordoned: true, attachedVolumes: [], replicas: [strictLocal] })).toEqual({
      deletable: false,
      why: "replica of galera-0 (longhorn-local) has no pdb on another node (block-if-contains-last-replica)",
    });
    expect(instanceManagerPdbVerdict("block-for-eviction", { cordoned: true, attachedVolumes: [], replicas: [strictLocal] }).deletable).toBe(false);
  });
  it("a running replica counts under allow-if-replica-is-stopped: deletable only with a protected copy elsewhere", () => {
    const running = { ...strictLocal, stopped: false };
    expect(instanceManagerPdbVerdict("allow-if-replica-is-stopped", { cordoned: true, attachedVolumes: [], replicas: [running] }).deletable).toBe(false);
    expect(
      instanceManagerPdbVerdict("allow-if-replica-is-stopped", { cordoned: true, attachedVolumes: [], replicas: [{ ...running, protectedElsewhere: true }] })
        .deletable,
    ).toBe(true);
  });
});

describe("a drain's verdict", () => {
  const pod = (id: string, o: Partial<{ uid: string; daemonSet: boolean; mirror: boolean; terminating: boolean }> = {}) => ({
    id,
    uid: id,
    daemonSet: false,
    mirror: false,
    terminating: false,
    ...o,
  });
  it("DaemonSet and mirror pods stay; every other pod must go", () => {
    expect(podsToEvict([pod("a/ds", { daemonSet: true }), pod("a/m", { mirror: true }), pod("a/x")]).map((p) => p.id)).toEqual(["a/x"]);
  });
  it("waits for the pods it listed at the start only: a replacement that lands on the node again is reported, not waited for", () => {
    const listed = [pod("a/x"), pod("a/ovn-central-1")];
    expect(drainLeft(listed, [pod("a/x", { terminating: true }), pod("a/ovn-central-2"), pod("a/ds", { daemonSet: true })])).toEqual({
      left: [pod("a/x", { terminating: true })],
      arrived: [pod("a/ovn-central-2")],
    });
    expect(drainLeft(listed, [pod("a/ovn-central-1", { uid: "new" })]).left).toEqual([]);
  });
  it("done when nothing is left; out of time with the pods left and the PDB that refused each", () => {
    expect(drainProblems("cp-1", [], new Map(), 12, 180)).toEqual([]);
    const [p] = drainProblems("cp-1", [pod("longhorn-system/im"), pod("a/y", { terminating: true })], new Map([["longhorn-system/im", "pdb im"]]), 181, 180);
    expect(p).toBe("the drain of cp-1 did not finish within 180 s (181 s): 2 pod(s) left: longhorn-system/im (eviction refused: pdb im); a/y (terminating)");
  });
});

describe("a rollout's verdict on the disabled hypervisor", () => {
  const replaced = { daemonSet: "ns/agent", belongs: true, before: "u1", after: { uid: "u2", revision: "r2", phase: "Running" }, updatedRevision: "r2" };
  it("a new pod of the new revision, Running: no problem", () => {
    expect(rolloutProblems("cmp-01", "t:NoSchedule", [replaced])).toEqual([]);
  });
  it("no pod after the rollout, the old pod kept, an old revision, not Running, a pod where the report keeps it off", () => {
    expect(
      rolloutProblems("cmp-01", "t:NoSchedule", [
        { ...replaced, after: undefined },
        { ...replaced, after: { ...replaced.after, uid: "u1" } },
        { ...replaced, after: { ...replaced.after, revision: "r1" } },
        { ...replaced, after: { ...replaced.after, phase: "Pending" } },
        { ...replaced, belongs: false },
      ]),
    ).toEqual([
      "ns/agent: no pod on cmp-01 after the rollout (does it tolerate t:NoSchedule?)",
      "ns/agent: its pod on cmp-01 was not replaced by the rollout",
      "ns/agent: its pod on cmp-01 is of revision r1, not the rollout's r2",
      "ns/agent: its new pod on cmp-01 is Pending",
      "ns/agent: a pod on cmp-01, which placement.json keeps it off",
    ]);
  });
});

describe("protected resources across a removal", () => {
  it("a protected URN the state after lacks is lost; unprotected ones may go", () => {
    const before = [
      { urn: "urn:a", protect: true },
      { urn: "urn:b", protect: false },
      { urn: "urn:c", protect: true },
    ];
    expect(protectedLost(before, [{ urn: "urn:a" }, { urn: "urn:c" }])).toEqual([]);
    expect(protectedLost(before, [{ urn: "urn:a" }])).toEqual(["urn:c"]);
  });
});

describe("--no-transitions", () => {
  const options = (transitions: boolean): E2EOptions => ({
    repoRoot: REPO,
    stacks: ["prod-medium"],
    keep: false,
    clusterScript: "/nonexistent/cluster.sh",
    schemasDir: "/nonexistent/schemas",
    outRoot: fs.mkdtempSync(path.join(os.tmpdir(), "e2e-out-")),
    interrupt: false,
    policyMutations: false,
    transitions,
    log: () => undefined,
  });
  const rendered = (nodes: string[]) =>
    ({ index: { environment: "talos-production", nodes: nodes.map((name) => ({ name, roles: [] })) } }) as unknown as RenderedStack;

  it("skips the transitions, saying why; without it a production stack without a compute node fails the step", async () => {
    for (const [transitions, expected] of [
      [false, { ok: true, skipped: true, detail: ["--no-transitions"] }],
      [true, { ok: false, detail: ["the stack has no compute node or no controlPlane node to put into maintenance"] }],
    ] as const) {
      const o = options(transitions);
      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "e2e-tmp-"));
      const r = new StackRun("prod-medium", o, tmp);
      const day2 = rendered(["a", "b"]);
      expect(await dayTwoTransitions(r, rendered(["a"]), day2)).toBe(day2);
      expect(r.report.steps).toEqual([{ name: "day 2: node transitions", seconds: 0, ...expected }]);
      for (const dir of [o.outRoot, tmp]) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
