// The wait of a patch of an object another controller creates (platform/context.ts
// patchThatWaitsFor, issue 45 item 6): the condition holds only on an object that carries this
// patch as it is now. The provider's await may judge the informer's copy from before the patch
// (pulumi-kubernetes provider/v4 pkg/await/condition/observer.go): a copy from before an earlier
// version of the same patch carries our field manager too, and must not satisfy the wait.
import { describe, expect, it } from "vitest";
import type { K8sObject } from "../../plan/plan";
import { PATCH_CONTENT_ANNOTATION, patchThatWaitsFor } from "../../platform/context";

const CSV: K8sObject = {
  apiVersion: "operators.coreos.com/v1alpha1",
  kind: "ClusterServiceVersion",
  metadata: { name: "node-healthcheck-operator.v0.12.0", namespace: "medik8s" },
};
const SUCCEEDED = "jsonpath={.status.phase}=Succeeded";

type Live = { metadata: { annotations?: Record<string, string> }; status?: { phase?: string; reason?: string } };

/**
 * The two jsonpath forms the patches use, as kubectl wait reads them (`{.a.b}=value`,
 * `{.metadata.annotations['key']}=value`): an independent reader of the conditions, the test's
 * oracle, all of which must hold on one object (pkg/metadata/overrides.go ReadyCondition).
 */
function holds(waitFor: string, live: Live): boolean {
  return (JSON.parse(waitFor) as string[]).every((c) => {
    const m = /^jsonpath=\{([^}]+)\}=(.*)$/.exec(c);
    if (!m) throw new Error(`not a jsonpath condition: ${c}`);
    const path = m[1].match(/\.[A-Za-z]+|\['[^']+'\]/g)!.map((p) => (p.startsWith(".") ? p.slice(1) : p.slice(2, -2)));
    const value = path.reduce<unknown>((v, k) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined), live);
    return value === m[2];
  });
}

/** The object as the API server holds it once a patch is applied (its annotations added, field manager included). */
const applied = (patch: K8sObject, status: NonNullable<Live["status"]>): Live => ({
  metadata: { annotations: { ...patch.metadata.annotations, "pulumi.com/patchFieldManager": "openkeel-platform" } },
  status,
});

describe("a patch that waits (patchThatWaitsFor)", () => {
  it("is a patch, and waits for its condition on the object that carries it", () => {
    const p = patchThatWaitsFor(CSV, SUCCEEDED, 900);
    expect(p.metadata.annotations).toMatchObject({ "openkeel.io/apply-as": "patch", "pulumi.com/timeoutSeconds": "900" });
    expect(p.metadata.annotations?.[PATCH_CONTENT_ANNOTATION]).toMatch(/^[0-9a-f]{16}$/);
    const waitFor = p.metadata.annotations!["pulumi.com/waitFor"];
    expect(holds(waitFor, applied(p, { phase: "Succeeded" }))).toBe(true);
    expect(holds(waitFor, applied(p, { phase: "Installing" }))).toBe(false);
    // the informer's copy from before any patch: Succeeded, without our annotations
    expect(holds(waitFor, { metadata: {}, status: { phase: "Succeeded" } })).toBe(false);
  });

  it("a copy from before a later change of the same patch does not satisfy it, though it carries our field manager", () => {
    const before = patchThatWaitsFor(CSV, SUCCEEDED, 900);
    const stale = applied(before, { phase: "Succeeded" });
    const changes: [string, K8sObject][] = [
      ["the condition", patchThatWaitsFor(CSV, "jsonpath={.status.reason}=InstallSucceeded", 900)],
      ["the timeout", patchThatWaitsFor(CSV, SUCCEEDED, 1200)],
      ["the object's own content", patchThatWaitsFor({ ...CSV, metadata: { ...CSV.metadata, labels: { "openkeel.io/x": "y" } } }, SUCCEEDED, 900)],
    ];
    for (const [what, after] of changes) {
      expect(after.metadata.annotations?.[PATCH_CONTENT_ANNOTATION], what).not.toBe(before.metadata.annotations?.[PATCH_CONTENT_ANNOTATION]);
      expect(holds(after.metadata.annotations!["pulumi.com/waitFor"], stale), what).toBe(false);
      expect(holds(after.metadata.annotations!["pulumi.com/waitFor"], applied(after, { phase: "Succeeded", reason: "InstallSucceeded" })), what).toBe(true);
    }
  });

  it("the same content gives the same digest, whatever the order of its keys (a render is deterministic)", () => {
    const a = patchThatWaitsFor({ ...CSV, metadata: { name: CSV.metadata.name, namespace: "medik8s", labels: { a: "1", b: "2" } } }, SUCCEEDED, 900);
    const b = patchThatWaitsFor(
      { kind: CSV.kind, apiVersion: CSV.apiVersion, metadata: { labels: { b: "2", a: "1" }, namespace: "medik8s", name: CSV.metadata.name } },
      SUCCEEDED,
      900,
    );
    expect(a.metadata.annotations?.[PATCH_CONTENT_ANNOTATION]).toBe(b.metadata.annotations?.[PATCH_CONTENT_ANNOTATION]);
  });
});
