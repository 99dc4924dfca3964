// The pin-upgrade mode's pieces that need no engine (npm run e2e -- --from-predecessors): which
// predecessor each pin has in the mirror folder, and the copy's platform/versions.ts.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { compareVersions, predecessorMoves, predecessorOf, withPredecessors } from "../../e2e/harness/predecessor";
import { readRendered } from "../../e2e/harness/rendered";

const RENDERED = path.resolve(__dirname, "../../rendered");
const MIRROR = process.env.OPENKEEL_MIRROR ?? path.resolve(__dirname, "../../../shared/mirror");
const VERSIONS = fs.readFileSync(path.resolve(__dirname, "../../platform/versions.ts"), "utf8");

describe("pin upgrade: predecessors", () => {
  it("orders versions by their numbers (a leading v and a suffix aside) and picks the highest below the pin", () => {
    expect(compareVersions("v1.15.24", "v1.16.2")).toBeLessThan(0);
    expect(compareVersions("26.3.0", "26.6.0")).toBeLessThan(0);
    expect(compareVersions("v4.2.4-thick", "v4.3.0-thick")).toBeLessThan(0);
    expect(predecessorOf("v1.16.2", ["v1.16.2", "v1.15.24", "v1.15.3", "v1.17.0", "latest"])).toBe("v1.15.24");
    expect(predecessorOf("1.0.0", ["1.0.0", "2.0.0"])).toBeUndefined();
  });

  it("moves each pin's literal in platform/versions.ts (where a host fact was read, readAt, is platform/host-facts.ts's or its component's module's, not moved), and names a literal it cannot find", () => {
    expect(VERSIONS).not.toMatch(/readAt:/);
    const moves = [
      { kind: "chart" as const, what: "kube-ovn", from: "v1.16.2", to: "v1.15.24" },
      { kind: "image" as const, what: "ghcr.io/k8snetworkplumbingwg/multus-cni", from: "v4.3.0-thick", to: "v4.2.4-thick" },
    ];
    const { text, problems } = withPredecessors(VERSIONS, moves);
    expect(problems).toEqual([]);
    expect(text).toContain('chart: "kube-ovn", version: "v1.15.24"');
    expect(text).toContain('tag: "v4.2.4-thick"');
    expect(text.split("\n").length).toBe(VERSIONS.split("\n").length);
    expect(withPredecessors(VERSIONS, [{ kind: "chart", what: "x", from: "9.9.9", to: "9.9.8" }]).problems).toEqual([
      'platform/versions.ts has no literal "9.9.9" to move to "9.9.8"',
    ]);
    expect(
      withPredecessors(VERSIONS, [
        { kind: "chart", what: "a", from: "26.6.0", to: "26.3.0" },
        { kind: "chart", what: "b", from: "26.6.0", to: "26.5.0" },
      ]).problems,
    ).toEqual(['"26.6.0" is pinned by several artifacts whose predecessors differ (26.3.0, 26.5.0): one literal cannot move to both']);
  });

  it.skipIf(!fs.existsSync(MIRROR))("finds in the mirror folder the predecessor of every pin its README lists, MetalLB v0.16.0 among them", () => {
    const { moves, none } = predecessorMoves(readRendered(RENDERED, "prod-medium"), MIRROR);
    expect(none).toEqual([]);
    const short = moves.map((m) => `${m.kind} ${m.kind === "manifest" ? path.posix.basename(new URL(m.what).pathname) : m.what} ${m.from} → ${m.to}`);
    expect(short).toEqual(
      expect.arrayContaining([
        "chart kube-ovn v1.16.2 → v1.15.24",
        "chart longhorn 1.12.1 → 1.11.3",
        "chart cert-manager v1.21.1 → v1.20.3",
        "manifest cert-manager.crds.yaml v1.21.1 → v1.20.3",
        "chart mariadb-operator 26.6.0 → 26.3.0",
        "chart mariadb-operator-crds 26.6.0 → 26.3.0",
        "chart node-feature-discovery 0.18.3 → 0.18.2",
        "manifest kubevirt-operator.yaml v1.9.0 → v1.8.4",
        "manifest cdi-operator.yaml v1.66.0 → v1.65.0",
        "manifest metallb-native.yaml v0.16.1 → v0.16.0",
        "manifest cluster-operator.yml v2.22.3 → v2.22.2",
        "manifest messaging-topology-operator-with-certmanager.yaml v1.19.2 → v1.19.1",
        "manifest snapshot.storage.k8s.io_volumesnapshots.yaml v8.6.0 → v8.5.0",
        "manifest olm.yaml v0.38.0 → v0.37.0",
        "manifest crds.yaml v0.38.0 → v0.37.0",
        "image ghcr.io/k8snetworkplumbingwg/multus-cni v4.3.0-thick → v4.2.4-thick",
      ]),
    );
    expect(withPredecessors(VERSIONS, moves).problems).toEqual([]);
  });
});
