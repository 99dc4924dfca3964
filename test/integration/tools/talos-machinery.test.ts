// Talos' own code judges every rendered node: tools/talos-validate (the machinery at
// TALOS_VERSION) generates each node's config as `talosctl gen config` does, applies its patches in
// the order of talos/machines.yaml as `talosctl machineconfig patch` does, and validates it as
// `talosctl validate --mode metal --strict` does. The JSON schema (test/nodes/talos-schema.test.ts) sees
// one document at a time; this sees the merged config, the cross-document rules and the decoder.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { KUBERNETES_VERSION, TALOS_VERSION } from "../../../platform/versions";
import { readRenderedDir, TALOS_MACHINES_FILE } from "../../../render/rendered";
import {
  ensureTalosValidate,
  genConfigInputs,
  goModMachineryVersion,
  MACHINERY_MODULE,
  parseTalosValidate,
  requireTalosValidate,
  runTalosValidate,
  TALOS_VALIDATE,
  TALOS_VALIDATE_SRC,
} from "../../../tools/talos-validate";
import { toolBinary } from "../../../tools/tools";
import { PRODUCTION_STACKS, REPO } from "../../helpers/stacks";

const RENDERED = path.join(REPO, "rendered");
const temps: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "talos-validate-"));
  temps.push(d);
  return d;
};
afterAll(() => temps.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** The rendered stacks with Talos nodes: read from rendered/, so the lab (kind) has none by construction. */
const TALOS_STACKS = fs
  .readdirSync(RENDERED)
  .filter((s) => Object.keys(readRenderedDir(path.join(RENDERED, s)).talosMachines()).length > 0)
  .sort();

const inputsOf = (stack: string) => genConfigInputs(readRenderedDir(path.join(RENDERED, stack)), stack);

describe("the validator is the machinery of the pinned Talos", () => {
  it("tools/talos-validate/go.mod requires the machinery at TALOS_VERSION, and go.sum holds its hash", () => {
    expect(goModMachineryVersion()).toBe(TALOS_VERSION);
    expect(fs.readFileSync(path.join(TALOS_VALIDATE_SRC, "go.sum"), "utf8")).toContain(`${MACHINERY_MODULE} ${TALOS_VERSION} h1:`);
  });

  it("the installed binary reports these sources and that machinery, and refuses another Talos version", () => {
    const binary = requireTalosValidate();
    const r = spawnSync(
      binary,
      [
        "-cluster-name",
        "c",
        "-endpoint",
        "https://10.0.0.1:6443",
        "-kubernetes-version",
        KUBERNETES_VERSION,
        "-talos-version",
        "v1.12.0",
        path.join(RENDERED, "prod-small", "talos"),
      ],
      {
        encoding: "utf8",
      },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`talos-validate is built with machinery ${TALOS_VERSION}, asked for Talos v1.12.0. Fix: run \`npm run tools\`.\n`);
  });

  it("a binary built from other sources is rebuilt: an edited main.go is noticed without building", () => {
    const src = tmp();
    for (const f of fs.readdirSync(TALOS_VALIDATE_SRC)) fs.copyFileSync(path.join(TALOS_VALIDATE_SRC, f), path.join(src, f));
    const toolsDir = tmp();
    fs.copyFileSync(toolBinary(TALOS_VALIDATE), toolBinary(TALOS_VALIDATE, toolsDir));
    expect(ensureTalosValidate({ src, toolsDir, go: null })).toEqual({ binary: toolBinary(TALOS_VALIDATE, toolsDir), built: false });
    fs.appendFileSync(path.join(src, "main.go"), "\n// an edit\n");
    expect(() => ensureTalosValidate({ src, toolsDir, go: null })).toThrow(/talos-validate .* needs Go to be built; .*Fix: install Go/);
    const goMod = path.join(src, "go.mod");
    fs.writeFileSync(goMod, fs.readFileSync(goMod, "utf8").replace(`${MACHINERY_MODULE} ${TALOS_VERSION}`, `${MACHINERY_MODULE} v1.12.6`));
    expect(() => ensureTalosValidate({ src, toolsDir, go: null })).toThrow(
      new RegExp(`requires ${MACHINERY_MODULE} v1\\.12\\.6, but TALOS_VERSION is ${TALOS_VERSION}\\. Fix: .*go get ${MACHINERY_MODULE}@${TALOS_VERSION}`),
    );
  });
});

describe("every rendered Talos node is valid for the machinery (metal mode, strict)", () => {
  it("the stacks with Talos nodes are the production stacks", () => {
    expect(TALOS_STACKS).toEqual([...PRODUCTION_STACKS].sort());
  });

  it.each(TALOS_STACKS)("%s", (stack) => {
    const machines = readRenderedDir(path.join(RENDERED, stack)).talosMachines();
    const run = runTalosValidate(path.join(RENDERED, stack), inputsOf(stack));
    expect(run.stderr).toBe("");
    expect(run.nodes.filter((n) => n.problems.length > 0)).toEqual([]);
    expect(run.status).toBe(0);
    expect(run.nodes.map((n) => [n.node, n.machineType, n.patches])).toEqual(
      Object.entries(machines)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, m]) => [name, m.machineType, m.patches]),
    );
    expect(run.summary).toBe(`${run.nodes.length} node(s), ${run.nodes.length} valid, 0 invalid (Talos machinery ${TALOS_VERSION}, metal mode, strict)`);
  });

  it("gen config gets the stack's cluster binding (the name of its admin@ context, its API server) and the Kubernetes version of machines.yaml", () => {
    expect(inputsOf("prod-medium")).toEqual({
      clusterName: "openkeel-prod-medium",
      endpoint: "https://10.30.0.11:6443",
      kubernetesVersion: KUBERNETES_VERSION,
    });
    const dir = tmp();
    fs.cpSync(path.join(RENDERED, "prod-medium"), dir, { recursive: true });
    const file = path.join(dir, TALOS_MACHINES_FILE);
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(/^kubernetesVersion: .*\n/m, ""));
    expect(() => genConfigInputs(readRenderedDir(dir), "prod-medium")).toThrow(
      /talos\/machines\.yaml: no kubernetesVersion \(rendered before it was pinned\)\. Fix: run `npm run render`/,
    );
  });
});

/** rendered/prod-medium/talos/ copied, with `extra` patch files applied after a node's own. */
function brokenCopy(extra: Record<string, Record<string, string>>): string {
  const dir = tmp();
  fs.cpSync(path.join(RENDERED, "prod-medium", "talos"), path.join(dir, "talos"), { recursive: true });
  const file = path.join(dir, TALOS_MACHINES_FILE);
  const doc = parse(fs.readFileSync(file, "utf8")) as { machines: Record<string, { patches: string[] }> };
  for (const [node, files] of Object.entries(extra)) {
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.join(dir, "talos", "broken"), { recursive: true });
      fs.writeFileSync(path.join(dir, "talos", "broken", name), text);
      doc.machines[node].patches.push(`broken/${name}`);
    }
  }
  fs.writeFileSync(file, stringify(doc));
  return dir;
}

describe("it catches what Talos refuses, per node and file", () => {
  it("a VLANConfig without vlanID, extraConfig of the wrong type, an unknown key, a bad subnet; the other nodes stay valid", () => {
    const dir = brokenCopy({
      "net-1": { "vlan.yaml": "apiVersion: v1alpha1\nkind: VLANConfig\nname: broken0.7\nparent: broken0\n" },
      "cmp-01": { "kubelet.yaml": "machine:\n  kubelet:\n    extraConfig: cpuManagerPolicy=static\n" },
      "cmp-02": { "typo.yaml": "machine:\n  kubelet:\n    extraConfg:\n      cpuManagerPolicy: static\n" },
      "cp-1": { "subnet.yaml": "machine:\n  kubelet:\n    nodeIP:\n      validSubnets: [10.30.0.300/32]\n" },
    });
    const before = fs.readdirSync(dir, { recursive: true }).sort();
    const run = runTalosValidate(dir, inputsOf("prod-medium"));
    expect(run.status).toBe(1);
    const problems = Object.fromEntries(run.nodes.filter((n) => n.problems.length).map((n) => [n.node, n.problems]));
    expect(problems).toEqual({
      "net-1": ["VLANConfig/broken0.7: vlanID must be specified and between 1 and 4094 [broken/vlan.yaml]"],
      "cmp-01": [
        expect.stringMatching(
          /^broken\/kubelet\.yaml: error decoding document \/v1alpha1\/ .*\n.*cannot construct !!str `cpuMana\.\.\.` into v1alpha1\.Unstructured/,
        ),
      ],
      "cmp-02": [
        expect.stringMatching(
          /^broken\/typo\.yaml: error decoding document \/v1alpha1\/ \(line 1\): unknown keys found during decoding:\n.*\n.*\n.*extraConfg:/,
        ),
      ],
      "cp-1": [expect.stringMatching(/^v1alpha1\.Config: kubelet nodeIP subnet is not valid: "10\.30\.0\.300\/32" \[.*broken\/subnet\.yaml\]$/)],
    });
    expect(run.summary).toBe(`${run.nodes.length} node(s), ${run.nodes.length - 4} valid, 4 invalid (Talos machinery ${TALOS_VERSION}, metal mode, strict)`);
    // the secrets stayed in memory: nothing printed, nothing written
    expect(run.stdout + run.stderr).not.toMatch(/PRIVATE KEY|CERTIFICATE|token:/);
    expect(fs.readdirSync(dir, { recursive: true }).sort()).toEqual(before);
  });

  it("a Kubernetes image Talos v1.13 does not run, as the machine refuses it at apply-config: the kubelet's of a worker, the API server's of the control plane", () => {
    const dir = brokenCopy({
      "cmp-01": { "kubelet-image.yaml": "machine:\n  kubelet:\n    image: ghcr.io/siderolabs/kubelet:v1.37.0\n" },
      "cp-1": { "apiserver-image.yaml": "cluster:\n  apiServer:\n    image: registry.k8s.io/kube-apiserver:v1.30.4\n" },
    });
    const run = runTalosValidate(dir, inputsOf("prod-medium"));
    expect(run.status).toBe(1);
    const problems = Object.fromEntries(run.nodes.filter((n) => n.problems.length).map((n) => [n.node, n.problems]));
    const talos = TALOS_VERSION.slice(1);
    expect(problems).toEqual({
      "cmp-01": [
        expect.stringMatching(
          new RegExp(
            `^v1alpha1\\.Config: kubelet image is not valid: version of Kubernetes 1\\.37\\.0 is too new to be used with Talos ${talos} \\[.*broken/kubelet-image\\.yaml\\]$`,
          ),
        ),
      ],
      "cp-1": [
        expect.stringMatching(
          new RegExp(
            `^v1alpha1\\.Config: kube-apiserver image is not valid: version of Kubernetes 1\\.30\\.4 is too old to be used with Talos ${talos} \\[.*broken/apiserver-image\\.yaml\\]$`,
          ),
        ),
      ],
    });
  });

  it("a folder without machines.yaml: exit 2, the file and the fix", () => {
    const run = runTalosValidate(tmp(), inputsOf("prod-medium"));
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/talos\/machines\.yaml: cannot be read \(.*no such file or directory\)\. Fix: run `npm run render`/);
  });

  it("reads its own report: nodes, their problems and a problem's continuation lines", () => {
    expect(parseTalosValidate("a (worker: p.yaml, n.yaml): valid\nb (controlplane: p.yaml): 1 problem(s)\n  x: bad\n    line 2\nsummary\n")).toEqual({
      nodes: [
        { node: "a", machineType: "worker", patches: ["p.yaml", "n.yaml"], problems: [] },
        { node: "b", machineType: "controlplane", patches: ["p.yaml"], problems: ["x: bad\nline 2"] },
      ],
      summary: "summary",
    });
  });
});
