// openkeel:mirror: every chart and every upstream manifest comes from the mirror, in the Plan, in
// the render and in what the Pulumi program registers; a mirror URL with credentials is refused.
import { describe, expect, it } from "vitest";
import program from "../../../index";
import { allUnits } from "../../../plan/plan";
import { renderPlan } from "../../../render/rendered";
import { planOf } from "../../helpers/plans";
import { runProgram } from "../../helpers/pulumi";
import { configProblems, mutatedConfig, pulumiConfigOf, shippedRaw } from "../../helpers/stacks";

const MIRROR = "http://127.0.0.1:8080/openkeel";
const mirrored = (stack: string) => mutatedConfig(stack, (r) => (r.mirror = { url: MIRROR }));

describe("openkeel:mirror", () => {
  it.each(["lab", "prod-medium"])("%s: every chart and every remote manifest from the mirror", (stack) => {
    const original = planOf(stack);
    const plan = planOf(mirrored(stack));
    const units = allUnits(plan);
    expect(units.map((u) => u.name)).toEqual(allUnits(original).map((u) => u.name));
    for (const [i, u] of units.entries()) {
      const before = allUnits(original)[i];
      if (u.kind === "HelmRelease" && before.kind === "HelmRelease") {
        expect(u.chart).toEqual({ ...before.chart, repository: `${MIRROR}/charts` });
      } else if (u.kind === "RemoteManifest" && before.kind === "RemoteManifest") {
        expect(u.urls).toEqual(before.urls.map((url) => `${MIRROR}/files/${url.replace(/^https:\/\//, "")}`));
        expect(u.version).toBe(before.version);
      } else expect(u).toEqual(before);
    }
    expect(units.some((u) => u.kind === "RemoteManifest") || stack === "lab").toBe(true);
    // nothing in the render points anywhere else (but the cluster's own API server, no artifact)
    const index = renderPlan(plan).find((f) => f.path === "index.yaml")!.content;
    const artifacts = (index.match(/(https?|oci):\/\/[^\s"']+/g) ?? []).filter((url) => url !== plan.cluster.apiServer);
    expect(artifacts.length).toBeGreaterThan(0);
    for (const url of artifacts) expect(url.startsWith(MIRROR)).toBe(true);
  });

  it("the program fetches from the mirror: Helm repository options and manifest URLs", async () => {
    const raw = { ...shippedRaw("prod-medium"), mirror: { url: MIRROR } };
    const run = await runProgram("prod-medium", pulumiConfigOf(raw), program);
    const releases = run.ofType("kubernetes:helm.sh/v3:Release");
    expect(releases.length).toBeGreaterThan(10);
    for (const r of releases) {
      expect(r.inputs.repositoryOpts, r.name).toEqual({ repo: `${MIRROR}/charts` });
      expect(r.inputs.chart, r.name).not.toMatch(/^oci:/);
    }
    for (const f of run.ofType("kubernetes:yaml/v2:ConfigFile")) expect(f.inputs.file.startsWith(`${MIRROR}/files/`)).toBe(true);
    const groups = run.ofType("kubernetes:yaml/v2:ConfigGroup");
    expect(groups.length).toBeGreaterThan(0);
    for (const g of groups) for (const f of g.inputs.files) expect(f.startsWith(`${MIRROR}/files/`)).toBe(true);
  });

  it("refuses credentials in the URL without echoing them, and a URL that is not a base", () => {
    const secret = configProblems("prod-small", (r) => (r.mirror = { url: "https://admin:s3cr3t@mirror.example.org" }));
    expect(secret).toHaveLength(1);
    expect(secret[0].path).toBe("openkeel:mirror.url");
    expect(secret[0].message).toMatch(/a URL with a user name or password/);
    expect(JSON.stringify(secret)).not.toContain("s3cr3t");
    for (const url of ["https://mirror.example.org/", "ftp://mirror.example.org", "https://mirror.example.org/x?y=1"]) {
      expect(
        configProblems("prod-small", (r) => (r.mirror = { url }))
          .map((p) => p.message)
          .join(),
        url,
      ).toMatch(/not a mirror base URL/);
    }
  });
});
