// KUBERNETES_VERSION, pinned once (platform/versions.ts), held to everything else here that runs
// or describes Kubernetes: the e2e's control plane (the engine kit's kube-apiserver, read from the
// kit and from the binary cluster.sh starts, at test time), the lab's kind node image (the same
// minor: KUBERNETES_UPGRADE's skew, which the plan and the preview judge) and the schemas
// kubeconform judges by (made from this version's OpenAPI). The Talos release's range is judged on
// every rendered node's images: test/integration/tools/talos-machinery.test.ts.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { componentUpgrades, parseVersion, type PinExports } from "../../../platform/upgrades";
import * as VERSIONS from "../../../platform/versions";
import { KIND_NODE_IMAGE, KUBERNETES_VERSION } from "../../../platform/versions";
import { UPGRADE_RULES } from "../../../platform/upgrade-rules";
import { pinsOfSource } from "../../../review/committed-pins";
import { defaultClusterScript } from "../../../e2e/harness/driver";
import { kubeconformArgs, schemaLocations } from "../../../tools/kubeconform";
import { kubernetesSchemasRoot } from "../../../tools/kubernetes-schemas";
import { REPO } from "../../helpers/stacks";

const TEXT = fs.readFileSync(path.join(REPO, "platform/versions.ts"), "utf8");
const minor = (v: string) => {
  const p = parseVersion(v)!;
  return `${p.major}.${p.minor}`;
};

/** The engine kit .ci/e2e builds and the e2e's cluster.sh belongs to: $OPENKEEL_ENGINE_KIT, else ../shared/engine. */
const KIT = process.env.OPENKEEL_ENGINE_KIT ?? path.dirname(defaultClusterScript(REPO));

/** The kube-apiserver cluster.sh starts: $BIN, else $OUT/bin or $HOME/.cache/openkeel-engine/bin (its header), else none here. */
function clusterApiServer(env = process.env): string | undefined {
  const dir = env.BIN ?? path.join(env.OUT ?? path.join(os.homedir(), ".cache", "openkeel-engine"), "bin");
  const binary = path.join(dir, "kube-apiserver");
  return fs.existsSync(binary) ? binary : undefined;
}

describe("the e2e's control plane runs KUBERNETES_VERSION", () => {
  // the engine kit is beside the repository here and in .ci/run; a GitHub runner of the npm test job has none
  it.skipIf(!fs.existsSync(path.join(KIT, "build.sh")))("the kit builds kube-apiserver at KUBERNETES_VERSION (build.sh list)", () => {
    const r = spawnSync("bash", [path.join(KIT, "build.sh"), "list"], { encoding: "utf8", timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    const line = r.stdout.split("\n").find((l) => /^kube-apiserver\s/.test(l));
    expect(line, r.stdout).toBeDefined();
    expect(line!.split(/\s+/)[1]).toBe(`v${KUBERNETES_VERSION}`);
  });

  const binary = clusterApiServer();
  // built by the kit's build.sh (the engine build may still be running on a fresh machine: then the
  // e2e's cluster step holds the API server it starts to the pin, e2e/harness/setup.ts)
  it.skipIf(binary === undefined)("the kube-apiserver cluster.sh starts says it is KUBERNETES_VERSION", () => {
    const r = spawnSync(binary!, ["--version"], { encoding: "utf8", timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(`Kubernetes v${KUBERNETES_VERSION}`);
  });
});

describe("the lab's kind node image runs the same minor", () => {
  it("KIND_NODE_IMAGE's tag is KUBERNETES_VERSION's minor", () => {
    expect(minor(KIND_NODE_IMAGE.tag)).toBe(minor(KUBERNETES_VERSION));
  });

  it("a change that moves one and not the other is refused by the upgrade rules, with the fix", () => {
    const head: PinExports = { ...VERSIONS };
    const edited = TEXT.replace(`export const KUBERNETES_VERSION = "${KUBERNETES_VERSION}";`, 'export const KUBERNETES_VERSION = "1.37.0";');
    expect(edited).not.toBe(TEXT);
    const problems = componentUpgrades(head, pinsOfSource(edited, "t"), UPGRADE_RULES).flatMap((u) => u.problems);
    expect(problems).toEqual([
      expect.objectContaining({
        path: "KUBERNETES_VERSION",
        message: expect.stringMatching(
          new RegExp(`^Kubernetes 1\\.37\\.0 is more than 0 minor away from KIND_NODE_IMAGE ${KIND_NODE_IMAGE.tag.replace(/\./g, "\\.")}: the lab runs`),
        ),
        fix: "move KUBERNETES_VERSION and KIND_NODE_IMAGE in one change, 0 minor apart at most",
      }),
    ]);
  });

  it("a step of more than one minor is refused: talosctl upgrade-k8s goes one minor at a time", () => {
    const older = TEXT.replace(`export const KUBERNETES_VERSION = "${KUBERNETES_VERSION}";`, 'export const KUBERNETES_VERSION = "1.34.4";');
    const [u] = componentUpgrades(pinsOfSource(older, "base"), { ...VERSIONS }, UPGRADE_RULES).filter((x) => x.rule.component === "Kubernetes");
    expect(u.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/^Kubernetes 1\.34\.4 → 1\.36\.3 skips 1\.35: upstream supports one minor release at a time/),
    ]);
  });
});

describe("kubeconform judges by KUBERNETES_VERSION's schemas", () => {
  it("its version argument and the folder of its kinds' schemas are the pin's", () => {
    expect(kubeconformArgs("t", undefined).join(" ")).toContain(`-kubernetes-version ${KUBERNETES_VERSION}`);
    expect(schemaLocations(undefined)[0].startsWith(`${kubernetesSchemasRoot()}/`)).toBe(true);
    expect(kubernetesSchemasRoot()).toMatch(new RegExp(`kubernetes-v${KUBERNETES_VERSION.replace(/\./g, "\\.")}$`));
  });
});
