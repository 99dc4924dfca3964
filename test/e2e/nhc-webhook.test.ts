// The admission stand-in answers NHC's webhook as upstream does (e2e/harness/nhc-webhook.ts, for step
// 11f): a refusal as controller-runtime v0.22.5's Denied (allowed false, 403 Forbidden, the error as
// the message), which the API server hands back as "admission webhook … denied the request: …".
import { describe, expect, it } from "vitest";
import { AdmissionStandIn } from "../../e2e/harness/admission";
import { registerNhcWebhookRule } from "../../e2e/harness/nhc-webhook";
import { NHC_WEBHOOK } from "../../e2e/standins/olm";

const nhc = (selector: unknown, remediating: boolean) => ({
  apiVersion: "remediation.medik8s.io/v1alpha1",
  kind: "NodeHealthCheck",
  metadata: { name: "openkeel-storage" },
  spec: { selector, remediationTemplate: { kind: "SelfNodeRemediationTemplate", name: "openkeel-out-of-service" } },
  status: remediating ? { unhealthyNodes: [{ name: "cmp-03", remediations: [{ resource: { name: "cmp-03" }, started: "2026-12-06T00:00:00Z" }] }] } : {},
});

describe("the admission stand-in's NHC webhook", () => {
  const admission = new AdmissionStandIn();
  registerNhcWebhookRule(admission);
  const decide = admission.handlersByWebhook.get(NHC_WEBHOOK)!;
  const review = (operation: string, old: unknown, object: unknown) => ({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: { uid: "u-1", operation, name: "openkeel-storage", oldObject: old, object },
  });
  const before = { matchExpressions: [{ key: "a", operator: "Exists" }] };
  const after = {
    matchExpressions: [
      { key: "a", operator: "Exists" },
      { key: "topology.kubernetes.io/zone", operator: "NotIn", values: ["zone-a"] },
    ],
  };

  it("refuses a selector update while the check remediates, as controller-runtime's Denied", async () => {
    const { body, what } = await decide(review("UPDATE", nhc(before, true), nhc(after, true)));
    expect(body.response).toEqual({
      uid: "u-1",
      allowed: false,
      status: { code: 403, reason: "Forbidden", message: "selector update prohibited due to running remediation" },
    });
    expect(what).toBe("UPDATE NodeHealthCheck openkeel-storage: DENIED (403): selector update prohibited due to running remediation");
  });

  it("admits it once no remediation is in flight, and a deletion then too", async () => {
    expect((await decide(review("UPDATE", nhc(before, false), nhc(after, false)))).body.response).toMatchObject({ allowed: true });
    expect((await decide(review("DELETE", nhc(before, false), null))).body.response).toMatchObject({ allowed: true });
    expect((await decide(review("DELETE", nhc(before, true), null))).body.response).toMatchObject({ allowed: false });
  });
});
