// In the first preview of a stack, its generated secrets are unknown, and the policy SDK throws when a
// rule reads one (it then reports the policy as "can't run during preview", advisory: a D4 or D6
// violation would pass `pulumi preview`; found by the real engine, npm run e2e). The rules read around
// such a leaf and judge the rest. Props are wrapped the way the pack's server wraps what the engine
// hands it (@pulumi/policy's unknownCheckingProxy, with its sentinel for an unknown string).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { postRenderExecutable, postRenderRecord } from "../../components/post-render";
import { d1HardenedRoleLabels } from "../../policy/rules/d1";
import { d4MetadataAgent } from "../../policy/rules/d4";
import { d6DynamicReservation } from "../../policy/rules/d6";
import type { ResourceRule, ResourceView, StackRule } from "../../policy/rules/common";
import { STACK_RULES } from "../../policy/rules";
import type { PolicyEnvironment } from "../../policy/environment";
import { isSecretRef } from "../../plan/plan";
import { planOf, release } from "../helpers/plans";

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the SDK's proxy module declares no types (its .d.ts is empty): an import could not name them
const proxy = require("@pulumi/policy/proxy") as { unknownCheckingProxy<T>(v: T): T; unknownStringValue: string };

const ENV: PolicyEnvironment = { production: true, reason: "test" };

const POST_RENDER_ROOT = fs.mkdtempSync(path.join(os.tmpdir(), "policy-unknowns-"));
afterAll(() => fs.rmSync(POST_RENDER_ROOT, { recursive: true, force: true }));

/** A release as the engine hands it to the pack in a first preview: every secret unknown; its post-render record after it. */
function firstPreview(stack: string, name: string, mutate: (values: any) => void = () => {}): ResourceView[] {
  const u = release(planOf(stack), name);
  const unknownSecrets = (v: unknown): unknown =>
    isSecretRef(v)
      ? proxy.unknownStringValue
      : Array.isArray(v)
        ? v.map(unknownSecrets)
        : v !== null && typeof v === "object"
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unknownSecrets(x)]))
          : v;
  const values = unknownSecrets(structuredClone(u.values)) as Record<string, unknown>;
  mutate(values);
  const postrender = postRenderExecutable(u, POST_RENDER_ROOT);
  const props = proxy.unknownCheckingProxy({ name: u.release, namespace: u.namespace, chart: `${u.chart.repository}/${u.chart.chart}`, values, postrender });
  const record = postRenderRecord(u);
  return [
    { type: "kubernetes:helm.sh/v3:Release", name: u.name, urn: `urn:${u.name}`, props },
    ...(record ? [{ type: "kubernetes:core/v1:ConfigMap", name: record.metadata.name, urn: `urn:${record.metadata.name}`, props: record }] : []),
  ];
}

/** A rule's findings over what firstPreview hands it: a resource rule judges the release, a stack rule all of it. */
function judgeFirst(rule: ResourceRule | StackRule, resources: ResourceView[]) {
  return (STACK_RULES as (ResourceRule | StackRule)[]).includes(rule)
    ? (rule as StackRule).check(resources, ENV)
    : (rule as ResourceRule).check(resources[0], ENV);
}

describe("policies in the first preview of a stack (its generated secrets unknown)", () => {
  it("the SDK's proxy throws on the unknown secret, so a rule that reads it blindly cannot run", () => {
    const [r] = firstPreview("prod-medium", "openkeel-neutron");
    expect(() => JSON.stringify(r.props)).toThrow(/can't be known during preview/);
  });

  it.each([
    ["openkeel-neutron", d4MetadataAgent],
    ["openkeel-nova", d6DynamicReservation],
    ["openkeel-neutron", d1HardenedRoleLabels],
    ["openkeel-nova", d1HardenedRoleLabels],
  ])("%s: %s judges the release and finds nothing on the shipped stack", (name, rule) => {
    expect(judgeFirst(rule, firstPreview("prod-medium", name))).toEqual([]);
  });

  it("a violation next to an unknown secret is still found (D6 off, D4 agent off)", () => {
    const d6 = judgeFirst(
      d6DynamicReservation,
      firstPreview("prod-medium", "openkeel-nova", (v) => (v.computeAgent.dynamicReservation.enabled = false)),
    );
    expect(d6.map((f) => f.message)).toEqual([expect.stringMatching(/turns the dynamic reservation off/)]);
    const d4 = judgeFirst(
      d4MetadataAgent,
      firstPreview("prod-medium", "openkeel-neutron", (v) => (v.metadataAgent.enabled = false)),
    );
    expect(d4.map((f) => f.message)).toEqual([expect.stringMatching(/metadata agent is not enabled/)]);
  });
});
