// What NHC's webhook refuses while a NodeHealthCheck remediates (issue 45 item 4;
// platform/medik8s-webhook.ts, node-healthcheck-operator v0.12.0
// internal/webhook/v1alpha1/nodehealthcheck_webhook.go 76-103, 211-232): the rule the e2e's admission
// stand-in enforces and the preview's finding names.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { heldChangeFinding, heldFields, nhcAdmission, nhcRemediating } from "../../platform/medik8s-webhook";
import { diff } from "../../render/diff";
import { REPO } from "../helpers/stacks";

const RENDERED = path.join(REPO, "rendered/prod-medium/objects/04-platform-config/medik8s-remediation/nodehealthcheck-openkeel-storage.yaml");
const check = () => parse(fs.readFileSync(RENDERED, "utf8")) as any;
const remediating = (o: any) => ({
  ...o,
  status: {
    phase: "Remediating",
    unhealthyNodes: [
      { name: "cmp-03", remediations: [{ resource: { kind: "SelfNodeRemediation", namespace: "medik8s", name: "cmp-03" }, started: "2026-12-06T00:00:00Z" }] },
    ],
  },
});

describe("NHC's webhook while a check remediates (nhcAdmission)", () => {
  it("a node with a remediation is a remediation in flight; an unhealthy node without one (a storm) is not", () => {
    expect(nhcRemediating(remediating(check()))).toBe(true);
    expect(nhcRemediating({ status: { unhealthyNodes: [{ name: "cmp-03" }] } })).toBe(false);
    expect(nhcRemediating(check())).toBe(false);
  });

  it("refuses a deletion, a selector change (a term added, or reordered) and a template change, in upstream's words", () => {
    const old = remediating(check());
    expect(nhcAdmission("DELETE", old, null)).toBe("deletion prohibited due to running remediation");
    const zoned = structuredClone(old);
    zoned.spec.selector.matchExpressions.push({ key: "topology.kubernetes.io/zone", operator: "NotIn", values: ["zone-a"] });
    expect(nhcAdmission("UPDATE", old, zoned)).toBe("selector update prohibited due to running remediation");
    const reordered = structuredClone(old);
    reordered.spec.selector.matchExpressions.reverse();
    expect(nhcAdmission("UPDATE", old, reordered)).toBe("selector update prohibited due to running remediation");
    const template = structuredClone(old);
    template.spec.remediationTemplate.name = "another";
    expect(nhcAdmission("UPDATE", old, template)).toBe("remediation template update prohibited due to running remediation");
  });

  it("admits a change of maxUnhealthy or of the conditions, anything while no remediation is in flight, and every create", () => {
    const old = remediating(check());
    const threshold = structuredClone(old);
    threshold.spec.maxUnhealthy = "50%";
    threshold.spec.unhealthyConditions[0].duration = "600s";
    expect(nhcAdmission("UPDATE", old, threshold)).toBeUndefined();
    const idle = check();
    const zoned = structuredClone(idle);
    zoned.spec.selector.matchExpressions.pop();
    expect(nhcAdmission("UPDATE", idle, zoned)).toBeUndefined();
    expect(nhcAdmission("DELETE", idle, null)).toBeUndefined();
    expect(nhcAdmission("CREATE", null, old)).toBeUndefined();
  });
});

describe("the finding of a change that meets it (heldChangeFinding)", () => {
  it("names the held fields a diff touches, and nothing for other changes", () => {
    const a = check();
    const b = structuredClone(a);
    b.spec.selector.matchExpressions[0].operator = "DoesNotExist";
    b.spec.maxUnhealthy = 2;
    expect(heldFields(diff(a, b))).toEqual(["selector"]);
    const c = structuredClone(a);
    c.spec.maxUnhealthy = 2;
    expect(heldFields(diff(a, c))).toEqual([]);
  });

  it("one warning for all the checks, with the runbook's query and section; none without a held change", () => {
    expect(heldChangeFinding([])).toEqual([]);
    const [f] = heldChangeFinding([
      { name: "openkeel-storage-zone-a", change: "deleted" },
      { name: "openkeel-storage", change: ["selector"] },
    ]);
    expect(f.level).toBe("warning");
    expect(f.code).toBe("nhc-held-change");
    expect(f.message).toMatch(
      /^NodeHealthCheck openkeel-storage-zone-a is deleted; openkeel-storage \(selector\): NHC's webhook refuses that while the check remediates a node/,
    );
    expect(f.fix).toContain("kubectl get nodehealthchecks -o jsonpath=");
    expect(f.fix).toContain('docs/node-lifecycle.md, "Changing the health checks"');
    // the section the fix names exists
    expect(fs.readFileSync(path.join(REPO, "docs/node-lifecycle.md"), "utf8")).toContain("### Changing the health checks");
  });
});
