// A rule's Fix is followed by operators as written: the key it names must be one the catalog
// writes, so that a stack setting it passes the values contract and satisfies the rule.
import { describe, expect, it } from "vitest";
import { isError } from "../../config/problems";
import { planStack } from "../../environments";
import { RELEASE_TYPE, type ResourceView } from "../../policy/rules/common";
import { d6DynamicReservation } from "../../policy/rules/d6";
import { release, shippedPlan } from "../helpers/plans";
import { mutatedConfig } from "../helpers/stacks";

const ENV = { production: true, reason: "test" };

/** The nova release as the pack sees it (its inputs), with the values given. */
function novaView(values: Record<string, unknown>): ResourceView {
  return { type: RELEASE_TYPE, name: "openkeel-nova", urn: "urn:openkeel-nova", props: { chart: "openkeel-nova", values } };
}

describe("D6's fix", () => {
  it("names the switch the catalog writes: set in a stack's values, the contract accepts it and the rule holds", () => {
    const shipped = release(shippedPlan("prod-medium").plan!, "openkeel-nova").values as Record<string, any>;
    const { dynamicReservation: _, ...agent } = shipped.computeAgent;
    const [finding] = d6DynamicReservation.check(novaView({ ...shipped, computeAgent: agent }), ENV);
    const key = /^set (\S+): true\b/.exec(finding.fix)?.[1];
    expect(key, finding.fix).toBeDefined();

    // the key path as the stack writes it under openkeel:services.nova.values
    const path = key!.split(".");
    const cfg = mutatedConfig("prod-medium", (raw) => {
      const leaf = path.slice(0, -1).reduce((at: any, k) => (at[k] ??= {}), (raw.services.nova ??= {}).values ?? (raw.services.nova.values = {}));
      leaf[path[path.length - 1]] = true;
    });
    const result = planStack(cfg);
    expect(result.problems.filter(isError)).toEqual([]);
    const values = release(result.plan!, "openkeel-nova").values;
    expect(d6DynamicReservation.check(novaView(values), ENV)).toEqual([]);
  });
});
