// Issue 46: the readiness delays of the e2e's kwok nodes (e2e/harness/readiness.ts): the Stage kwok
// reads, and what it relies on in the engine kit's cluster.sh and its kwok stages.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { defaultClusterScript } from "../../e2e/harness/driver";
import { kwokConfigFile, READINESS_DELAYS, readinessStage, STARTED_ANNOTATION, writeReadinessDelays } from "../../e2e/harness/readiness";

describe("the readiness delays' kwok Stage", () => {
  const stage = parse(readinessStage()) as any;

  it("holds a Pending pod that does not carry the annotation for 10 to 40 s, then writes the annotation", () => {
    expect(stage).toMatchObject({ apiVersion: "kwok.x-k8s.io/v1alpha1", kind: "Stage", spec: { resourceRef: { apiGroup: "v1", kind: "Pod" }, weight: 1 } });
    expect(READINESS_DELAYS).toEqual({ minSeconds: 10, maxSeconds: 40 });
    expect(stage.spec.delay).toEqual({ durationMilliseconds: 10_000, jitterDurationMilliseconds: 40_000 });
    expect(stage.spec.selector.matchExpressions).toContainEqual({ key: `.metadata.annotations["${STARTED_ANNOTATION}"]`, operator: "DoesNotExist" });
    expect(stage.spec.selector.matchExpressions).toContainEqual({ key: ".status.phase", operator: "In", values: ["Pending"] });
    const patch = stage.spec.next.patches[0];
    expect(patch.type).toBe("merge");
    expect(parse(patch.template.replace("{{ Now | Quote }}", '"2026-12-06T00:00:00Z"'))).toEqual({
      metadata: { annotations: { [STARTED_ANNOTATION]: "2026-12-06T00:00:00Z" } },
    });
    expect(readinessStage({ minSeconds: 1, maxSeconds: 2 })).toContain("jitterDurationMilliseconds: 2000");
  });

  it("is written where kwok of a cluster.sh workdir reads its own configuration", () => {
    const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? os.tmpdir(), "readiness-"));
    writeReadinessDelays(dir);
    expect(kwokConfigFile(dir)).toBe(path.join(dir, "kwok-home", ".kwok", "kwok.yaml"));
    expect(fs.readFileSync(kwokConfigFile(dir), "utf8")).toBe(readinessStage());
  });

  const clusterScript = defaultClusterScript(path.resolve(__dirname, "../.."));
  // the engine kit beside the repository (absent on a GitHub runner)
  it.skipIf(!fs.existsSync(clusterScript))(
    "cluster.sh starts kwok with HOME=<workdir>/kwok-home, and its own pod-ready stage (weight 0) matches the pods this one holds: kwok picks the one of weight 1",
    () => {
      const script = fs.readFileSync(clusterScript, "utf8");
      expect(script).toMatch(/HOME=\$W\/kwok-home start kwok/);
      const stages = parseAllDocuments(fs.readFileSync(path.join(path.dirname(clusterScript), "kwok", "stages.yaml"), "utf8")).map((d) => d.toJS() as any);
      const ready = stages.find((s) => s.metadata.name === "pod-ready");
      expect(ready.spec.weight ?? 0).toBe(0);
      expect(ready.spec.weightFrom).toBeUndefined();
      expect(ready.spec.selector.matchExpressions).toContainEqual({ key: ".status.phase", operator: "In", values: ["Pending"] });
      expect(stages.some((s) => s.metadata.name === stage.metadata.name)).toBe(false);
    },
  );
});
