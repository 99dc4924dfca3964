// `pulumi destroy` (README step 12): protected resources stay, with `--exclude-protected` too;
// after `pulumi state unprotect --all` the engine forgets them and leaves them in the cluster
// (retainOnDelete).
import { protectedStillThere } from "./cluster-checks";
import { pulumi, summaryLine } from "./pulumi";
import type { RenderedStack } from "./rendered";
import { errorLines, recordRun, stateResources, type StackRun } from "./stack-run";

const DESTROY_TIMEOUT_MS = 20 * 60_000;

/** `pulumi destroy --yes`: refused for the protected resources, which stay in the cluster. */
async function destroyStep(r: StackRun, last: RenderedStack): Promise<void> {
  await r.step("pulumi destroy --yes", async (s) => {
    const res = await pulumi(["destroy", "--yes"], r.project, r.p!, r.log("destroy"), { timeoutMs: DESTROY_TIMEOUT_MS });
    s.log = res.log;
    s.summary = `exit ${res.code}; ${summaryLine(res.stdout)}`;
    s.detail.push(
      `engine: ${
        errorLines(res.stdout + res.stderr)
          .slice(0, 15)
          .join("\n") || "(no error lines)"
      }`,
    );
    const still = await protectedStillThere(r, last, "after-destroy");
    s.detail.push(...still.detail);
    r.report.check("pulumi destroy leaves every protected resource in place", still.ok, still.detail);
    const left = stateResources(await pulumi(["stack", "export"], r.project, r.p!, r.log("destroy")));
    const prot = left.filter((x) => x.protect).length;
    s.detail.push(`state after destroy: ${left.length} resources, ${prot} protected, ${left.filter((x) => x.retainOnDelete).length} retainOnDelete`);
  });
}

/** `pulumi destroy --yes --exclude-protected`: everything else goes, the protected objects and the Nodes stay. */
async function destroyExcludeProtectedStep(r: StackRun, last: RenderedStack): Promise<void> {
  await r.step("pulumi destroy --yes --exclude-protected", async (s) => {
    const res = await pulumi(["destroy", "--yes", "--exclude-protected"], r.project, r.p!, r.log("destroy-exclude-protected"), {
      timeoutMs: DESTROY_TIMEOUT_MS,
    });
    recordRun(s, res, false);
    const still = await protectedStillThere(r, last, "after-destroy-exclude");
    s.detail.push(...still.detail);
    r.report.check("pulumi destroy --exclude-protected leaves every protected resource in place", still.ok, still.detail);
    const nodes = await r.kube!.list("/api/v1/nodes");
    s.detail.push(`Nodes after destroy: ${nodes.length} (NodePatch deletes relinquish labels; Nodes are never deleted)`);
  });
}

/** `pulumi state unprotect --all`, then `pulumi destroy --yes`: the state forgets the protected resources, the cluster keeps them. */
async function destroyRetainStep(r: StackRun, last: RenderedStack): Promise<void> {
  await r.step("pulumi state unprotect --all, then pulumi destroy --yes (retainOnDelete)", async (s) => {
    const un = await pulumi(["state", "unprotect", "--all", "--yes"], r.project, r.p!, r.log("destroy-retain"));
    if (un.code !== 0) throw new Error(`pulumi state unprotect --all exited ${un.code}: ${un.stderr.slice(-500)}`);
    const res = await pulumi(["destroy", "--yes"], r.project, r.p!, r.log("destroy-retain"), { timeoutMs: DESTROY_TIMEOUT_MS });
    recordRun(s, res);
    const still = await protectedStillThere(r, last, "after-destroy-retain");
    s.detail.push(...still.detail);
    const left = stateResources(await pulumi(["stack", "export"], r.project, r.p!, r.log("destroy-retain")));
    s.detail.push(`state after destroy: ${left.length} resources`);
    r.report.check(
      "after pulumi state unprotect, pulumi destroy forgets protected resources and leaves them in the cluster (retainOnDelete)",
      still.ok && res.code === 0,
      still.detail,
    );
  });
}

/** README step 12, over `last`: the render the cluster holds. */
export async function destroySteps(r: StackRun, last: RenderedStack): Promise<void> {
  await destroyStep(r, last);
  if (/exclude-protected|protected/i.test(r.logText("destroy"))) {
    await destroyExcludeProtectedStep(r, last);
    await destroyRetainStep(r, last);
  }
}
