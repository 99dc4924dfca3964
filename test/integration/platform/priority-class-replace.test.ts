// A PriorityClass whose value or preemptionPolicy changes (issue 37): the API server refuses to
// update either field, so the program replaces the class, deleting it first; the preview shows the
// replacement (test/integration/review/preview.test.ts), and `npm run plan` and `npm run render` warn against the
// stack's committed state, naming the units whose pods keep their old priority until re-created.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { capture } from "../../../cli/cli";
import program from "../../../index";
import { planCommand } from "../../../pipeline/plan-command";
import { renderCommand } from "../../../pipeline/render-command";
import { classUsers, immutableChanges, PRIORITY_CLASSES, priorityClassReplacements } from "../../../platform/priority-classes";
import { planOf } from "../../helpers/plans";
import { runProgram } from "../../helpers/pulumi";
import { git, tempFolders } from "../../helpers/repos";
import { pulumiConfigOf, REPO, shippedRaw } from "../../helpers/stacks";

const tmp = tempFolders();
const VM_CLASS = "rendered/prod-medium/objects/02-crds-operators/priority-classes/priorityclass-openkeel-vm.yaml";
const vm = (over: Record<string, unknown> = {}) => ({
  apiVersion: "scheduling.k8s.io/v1",
  kind: "PriorityClass",
  metadata: { name: PRIORITY_CLASSES.vm },
  value: 500_000,
  preemptionPolicy: "Never",
  description: "virt-launcher pods (design § 2)",
  ...over,
});

describe("what pulumi up does with a PriorityClass", () => {
  it("the program replaces each class on a change of value or preemptionPolicy, deleting it first; nothing else gets either option", async () => {
    const run = await runProgram("prod-medium", pulumiConfigOf(shippedRaw("prod-medium")), program);
    const classes = run.ofType("kubernetes:scheduling.k8s.io/v1:PriorityClass");
    expect(classes).toHaveLength(3);
    for (const c of classes) expect([c.replaceOnChanges, c.deleteBeforeReplace], c.name).toEqual([["value", "preemptionPolicy"], true]);
    const others = run.resources.filter((r) => r.type !== "kubernetes:scheduling.k8s.io/v1:PriorityClass" && (r.replaceOnChanges || r.deleteBeforeReplace));
    expect(others.map((r) => r.name)).toEqual([]);
  });

  it("only value and preemptionPolicy replace a class; a description is an update", () => {
    expect(immutableChanges(vm(), vm({ description: "other" }))).toEqual([]);
    expect(immutableChanges(vm(), vm({ value: 400_000, preemptionPolicy: undefined }))).toEqual([
      { field: "value", before: 500_000, after: 400_000 },
      { field: "preemptionPolicy", before: "Never", after: undefined },
    ]);
  });

  it("the warning names the class, the change, what it means for running pods, and the units to restart", () => {
    const plan = planOf("prod-medium");
    const deployed = [vm({ value: 400_000 })];
    const [w, ...rest] = priorityClassReplacements(plan, deployed);
    expect(rest).toEqual([]);
    expect(w).toMatchObject({ level: "warning", code: "priority-class-replace" });
    expect(w.message).toBe(
      "PriorityClass openkeel-vm: value 400000 → 500000, which the API server does not update in place, so pulumi up deletes the class and creates it again; running pods keep the priority they were admitted with until they are re-created, and a pod created in between is refused until its controller retries",
    );
    expect(w.fix).toBe(
      `after pulumi up, re-create the pods that run with openkeel-vm (kubectl get pods -A -o jsonpath='{range .items[?(@.spec.priorityClassName=="openkeel-vm")]}{.metadata.namespace}/{.metadata.name}{"\\n"}{end}'): kubectl rollout restart of their Deployments, StatefulSets and DaemonSets, a live migration of VMs; or keep value as it is`,
    );
    expect(priorityClassReplacements(plan, [vm()])).toEqual([]);
  });

  it("the units named are those that set the class on their pods, not every OpenKeel release given the class map", () => {
    const plan = planOf("prod-medium");
    const control = classUsers(plan, PRIORITY_CLASSES.control);
    expect(control).toEqual(expect.arrayContaining(["cert-manager", "openkeel-chart"]));
    expect(control).not.toContain("openkeel-keystone");
    const [w] = priorityClassReplacements(plan, [{ ...vm(), metadata: { name: PRIORITY_CLASSES.control }, value: 800_000, preemptionPolicy: undefined }]);
    expect(w.fix).toContain(`; the units that set it: ${control.join(", ")}): kubectl rollout restart`);
  });
});

/** A repository with prod-medium, the pins of this checkout and a committed render whose openkeel-vm has `value`. */
function committedRepo(value: number): { repo: string; stacks: string } {
  const repo = tmp("openkeel-classes-");
  for (const f of ["stacks/Pulumi.prod-medium.yaml", "platform/versions.ts"]) {
    fs.mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
    fs.copyFileSync(path.join(REPO, f), path.join(repo, f));
  }
  fs.cpSync(path.join(REPO, "rendered/prod-medium"), path.join(repo, "rendered/prod-medium"), { recursive: true });
  const file = path.join(repo, VM_CLASS);
  fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("value: 500000", `value: ${value}`));
  git(repo, "init", "-q", "-b", "main");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "committed state");
  return { repo, stacks: path.join(repo, "stacks") };
}

describe("npm run plan and npm run render against the committed render (the verdict's transition checks)", () => {
  // the verdict's warning (review/verdict.ts), which says what it was judged against
  const WARNING =
    /warning \[priority-class-replace\]: PriorityClass openkeel-vm: value 400000 → 500000, .*\(against HEAD \([0-9a-f]{12}\): no deployed\/prod-medium ref, so the committed state\)\..* Fix: after pulumi up, re-create the pods that run with openkeel-vm /m;

  it("a class whose value changed since the committed state: a warning with the fix; the render is written", async () => {
    const { repo, stacks } = committedRepo(400_000);
    const render = await capture(renderCommand, ["--stacks-dir", stacks, "--out", path.join(repo, "rendered")]);
    expect(render.code, render.stderr).toBe(0);
    expect(render.stdout).toMatch(WARNING);
    // with the standing ones (ovs-two-stacks, machine-facts-missing)
    expect(render.stdout).toMatch(/^rendered 1 stack\(s\), 3 warning\(s\)$/m);
    expect(fs.readFileSync(path.join(repo, VM_CLASS), "utf8")).toContain("value: 500000");
    const plan = await capture(planCommand, ["--stacks-dir", stacks]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(WARNING);
  });

  it("compared with the last deployed commit when there is one, as the upgrade check is; the preview's renders skip it", async () => {
    const { repo, stacks } = committedRepo(500_000);
    git(repo, "branch", "deployed/prod-medium");
    const file = path.join(repo, VM_CLASS);
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("value: 500000", "value: 400000"));
    git(repo, "commit", "-qam", "HEAD's render has another value than the deployed one");
    const out = tmp("openkeel-classes-out-");
    const render = await capture(renderCommand, ["--stacks-dir", stacks, "--out", out]);
    expect(render.code, render.stderr).toBe(0);
    expect(render.stdout).not.toContain("priority-class-replace");
    git(repo, "branch", "-f", "deployed/prod-medium", "HEAD");
    const again = await capture(renderCommand, ["--stacks-dir", stacks, "--out", out]);
    expect(again.stdout).toMatch(/warning \[priority-class-replace\]: .*\(against deployed\/prod-medium, the last deployed commit \([0-9a-f]{12}\)\)/);
    const skipped = await capture(renderCommand, ["--stacks-dir", stacks, "--out", out, "--skip-transition-checks"]);
    expect(skipped.stdout).not.toContain("priority-class-replace");
  });
});
