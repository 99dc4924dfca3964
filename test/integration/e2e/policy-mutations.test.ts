// The e2e's D1–D8 mutations (e2e/harness/policy-mutations.ts, planned from each stack's render)
// against what each shipped stack's program registers under the runtime mocks: a mutation naming a
// resource the stack does not register stops its whole mutated stack (e2e/fixtures/e2e-mutation.ts)
// and fails every decision judged on it, which no test saw before `npm run e2e -- --stack prod-small`.
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import program from "../../../index";
import { planMutations, type MutationPlan } from "../../../e2e/harness/policy-mutations";
import { readRendered } from "../../../e2e/harness/rendered";
import { RELEASE } from "../../../e2e/harness/stack-run";
import { runProgram, type ProgramRun } from "../../helpers/pulumi";
import { pulumiConfigOf, REPO, SHIPPED_STACKS, shippedRaw } from "../../helpers/stacks";

const plan = (stack: string) => planMutations(readRendered(path.join(REPO, "rendered"), stack));

/** Every resource a plan's mutations name (a stack config mutation: its service's release) that the run does not register, as `D<n>: <type> <name>`. */
function unregistered(p: MutationPlan, run: ProgramRun): string[] {
  const registered = new Set(run.resources.map((r) => `${r.type} ${r.name}`));
  return p.planned.flatMap((m) =>
    [...(m.resources ?? []).map((o) => `${o.type} ${o.name}`), ...(m.config ? [`${RELEASE} ${m.target}`] : [])]
      .filter((n) => !registered.has(n))
      .map((n) => `${m.decision}: ${n}`),
  );
}

describe("e2e: the D1–D8 mutations name only resources the stack's program registers", () => {
  const runs = new Map<string, ProgramRun>();
  beforeAll(async () => {
    for (const s of SHIPPED_STACKS) runs.set(s, await runProgram(s, pulumiConfigOf(shippedRaw(s)), program));
  });

  it.each(SHIPPED_STACKS)("%s", (stack) => {
    expect(unregistered(plan(stack), runs.get(stack)!)).toEqual([]);
  });

  it("a stack without Ironic registers no Ironic release, so D7 goes unjudged there; the check trips on a plan that names it", () => {
    const small = runs.get("prod-small")!;
    // an OCI chart's input is `<repository>/<chart>`
    const charts = small.ofType(RELEASE).map((r) => String(r.inputs.chart).split("/").at(-1));
    expect(charts).not.toContain("openkeel-ironic");
    expect(charts).toContain("openkeel-keystone");
    expect(plan("prod-small").planned.map((m) => m.decision)).not.toContain("D7");
    // prod-medium's plan judges D7 on its Ironic release, which prod-small's program does not register
    expect(unregistered(plan("prod-medium"), small)).toEqual([`D7: ${RELEASE} openkeel-ironic`]);
  });
});
