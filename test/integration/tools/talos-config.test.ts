// npm run talos-config (issue 44 item 7): each node's full machine configuration made with Talos'
// own code at the pin (tools/talos-validate's `config` mode), into a folder outside the checkout;
// the keys never printed, never inside the repository, never lost by a second run.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { capture } from "../../../cli/cli";
import { tsCommand } from "../../../cli/ts-command";
import { KUBERNETES_VERSION, TALOS_VERSION } from "../../../platform/versions";
import { readRenderedDir } from "../../../render/rendered";
import { NODES_DIR, SECRETS_FILE, TALOSCONFIG_FILE, talosConfigCommand } from "../../../tools/talos-config-command";
import { requireTalosValidate } from "../../../tools/talos-validate";
import { REPO, shippedConfig } from "../../helpers/stacks";

const temps: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "talos-config-"));
  temps.push(d);
  return d;
};
afterAll(() => temps.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

const run = (argv: string[]) =>
  capture((a, io) => talosConfigCommand(a, io), ["--stacks-dir", path.join(REPO, "stacks"), "--rendered", path.join(REPO, "rendered"), ...argv]);
const MACHINES = readRenderedDir(path.join(REPO, "rendered", "prod-medium")).talosMachines();

/** Every string of a YAML text at least `min` long (the secrets' keys, certificates and tokens). */
function strings(text: string, min = 16): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string" && v.length >= min) out.push(v);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  parseAllDocuments(text).forEach((d) => walk(d.toJS()));
  return out;
}

const mode = (file: string) => fs.statSync(file).mode & 0o777;

describe("npm run talos-config: the keys stay outside the checkout", () => {
  it.each([
    ["a folder in it", (_t: string) => path.join(REPO, "_out")],
    ["the checkout itself", (_t: string) => REPO],
    [
      "a symlink into it",
      (t: string) => {
        fs.symlinkSync(path.join(REPO, "docs"), path.join(t, "link"));
        return path.join(t, "link", "keys");
      },
    ],
  ])("%s is refused, exit 2, with the fix; nothing written", async (_name, out) => {
    const dir = out(tmp());
    const before = fs.readdirSync(REPO).sort();
    const r = await run(["--stack", "prod-medium", "--out", dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^--out .*: is inside this checkout \(.*\)\. .*they must never be committed\. Fix: give a folder outside the checkout, e\.g\. --out ~\/openkeel-talos\/<stack>/,
    );
    if (dir.includes(`${path.sep}link${path.sep}`)) expect(r.stderr).toContain(`(${path.join(fs.realpathSync(REPO), "docs", "keys")}, its symlinks resolved)`);
    expect(fs.readdirSync(REPO).sort()).toEqual(before);
    expect(fs.existsSync(path.join(REPO, "docs", "keys"))).toBe(false);
  });

  it("the CLI hands its arguments to the command and exits with its code", () => {
    const r = spawnSync(...tsCommand(path.join(REPO, "scripts", "talos-config.ts"), ["--stack", "prod-medium", "--out", "_out"]), {
      cwd: REPO,
      encoding: "utf8",
    });
    expect([r.status, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toMatch(/^--out _out \(.*\/_out, its symlinks resolved\)|^--out _out: is inside this checkout/);
    expect(fs.existsSync(path.join(REPO, "_out"))).toBe(false);
  });

  it("whatever talosctl can write is ignored by git anywhere in the tree, the render's own files aside", () => {
    const written = [
      "secrets.yaml",
      "a/b/secrets.yaml",
      "talosconfig",
      "x/talosconfig",
      "controlplane.yaml",
      "worker.yaml",
      "init.yaml",
      "kubeconfig",
      "_out/cmp-01.yaml",
      "docs/_out/x.yaml",
    ];
    const kept = ["rendered/prod-large/talos/patches/controlplane.yaml", "rendered/prod-large/talos/schematics/controlplane.yaml", "stacks/Pulumi.lab.yaml"];
    const ignored = (p: string) => spawnSync("git", ["check-ignore", "-q", "--no-index", p], { cwd: REPO }).status === 0;
    expect(written.filter((p) => !ignored(p))).toEqual([]);
    expect(kept.filter(ignored)).toEqual([]);
  });
});

describe("npm run talos-config: every node's machine config, by Talos' own code", () => {
  const out = path.join(tmp(), "prod-medium");
  const first = run(["--stack", "prod-medium", "--out", out]);

  it("writes secrets.yaml, talosconfig and one config per node, the folder 0700 and every file 0600", async () => {
    const r = await first;
    expect(r.stderr.split("\n").filter((l) => l && !l.includes("warning ["))).toEqual([]);
    expect(r.code).toBe(0);
    expect(fs.readdirSync(out).sort()).toEqual([NODES_DIR, SECRETS_FILE, TALOSCONFIG_FILE]);
    expect(fs.readdirSync(path.join(out, NODES_DIR)).sort()).toEqual(
      Object.keys(MACHINES)
        .map((n) => `${n}.yaml`)
        .sort(),
    );
    expect([mode(out), mode(path.join(out, NODES_DIR))]).toEqual([0o700, 0o700]);
    for (const f of [SECRETS_FILE, TALOSCONFIG_FILE, ...Object.keys(MACHINES).map((n) => `${NODES_DIR}/${n}.yaml`)])
      expect(mode(path.join(out, f)), f).toBe(0o600);
  });

  it("each config is its machine type's, the stack's cluster and endpoint, the pinned Kubernetes, with the node's patches in it", async () => {
    await first;
    const cluster = shippedConfig("prod-medium").cluster!;
    for (const [node, m] of Object.entries(MACHINES)) {
      const docs = parseAllDocuments(fs.readFileSync(path.join(out, NODES_DIR, `${node}.yaml`), "utf8")).map((d) => d.toJS());
      const v1 = docs.find((d) => d.version === "v1alpha1");
      expect(v1.machine.type, node).toBe(m.machineType);
      expect(v1.cluster.controlPlane.endpoint, node).toBe(cluster.apiServer);
      expect(`admin@${v1.cluster.clusterName}`, node).toBe(cluster.context);
      expect(v1.machine.kubelet.image, node).toBe(`ghcr.io/siderolabs/kubelet:v${KUBERNETES_VERSION}`);
      if (m.machineType === "controlplane") expect(v1.cluster.apiServer.image, node).toBe(`registry.k8s.io/kube-apiserver:v${KUBERNETES_VERSION}`);
      // the group patch (the installer of the group's schematic) and the node's own (its hostname)
      expect(v1.machine.install.image, node).toBe(m.installerImage);
      expect(docs.find((d) => d.kind === "HostnameConfig")?.hostname, node).toBe(node);
    }
  });

  it("prints no secret, and each node's apply-config with its file and the talosconfig to use", async () => {
    const r = await first;
    const secrets = [SECRETS_FILE, TALOSCONFIG_FILE].flatMap((f) => strings(fs.readFileSync(path.join(out, f), "utf8")));
    expect(secrets.length).toBeGreaterThan(10);
    expect(secrets.filter((s) => (r.stdout + r.stderr).includes(s))).toEqual([]);
    for (const [node, m] of Object.entries(MACHINES)) {
      const ip = shippedConfig("prod-medium").nodes.find((n) => n.name === node)!.internalIP;
      expect(r.stdout).toContain(
        `talosctl apply-config --insecure --nodes <maintenance address of ${node}> --file ${path.join(out, NODES_DIR, `${node}.yaml`)}   # ${node}: ${m.machineType}, comes up as ${ip}`,
      );
    }
    expect(r.stdout).toContain(`export TALOSCONFIG=${path.join(out, TALOSCONFIG_FILE)}`);
    expect(r.stdout).toMatch(
      new RegExp(`each valid for talosctl validate --mode metal --strict \\(Talos ${TALOS_VERSION}, Kubernetes ${KUBERNETES_VERSION}\\)`),
    );
  });

  it("talosconfig names the control-plane nodes as its endpoints, in the context of the cluster's name", async () => {
    await first;
    const talosconfig = parseAllDocuments(fs.readFileSync(path.join(out, TALOSCONFIG_FILE), "utf8"))[0].toJS();
    expect(talosconfig.context).toBe("openkeel-prod-medium");
    expect(talosconfig.contexts["openkeel-prod-medium"].endpoints).toEqual(["10.30.0.11", "10.30.0.12", "10.30.0.13"]);
  });

  it("a second run reuses the secrets and keeps talosconfig: the same configs, byte for byte; a node gone from the stack loses its config", async () => {
    await first;
    const before = new Map(
      [SECRETS_FILE, TALOSCONFIG_FILE, ...Object.keys(MACHINES).map((n) => `${NODES_DIR}/${n}.yaml`)].map((f) => [
        f,
        fs.readFileSync(path.join(out, f), "utf8"),
      ]),
    );
    fs.writeFileSync(path.join(out, NODES_DIR, "gone-1.yaml"), "a node the stack no longer has\n");
    const r = await run(["--stack", "prod-medium", "--out", out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${SECRETS_FILE}: reused, from an earlier run`);
    expect(r.stdout).toContain(`${TALOSCONFIG_FILE}: kept, from an earlier run`);
    expect(r.stdout).toContain(`removed ${NODES_DIR}/gone-1.yaml: no longer nodes of prod-medium`);
    for (const [f, text] of before) expect(fs.readFileSync(path.join(out, f), "utf8"), f).toBe(text);
    expect(fs.existsSync(path.join(out, NODES_DIR, "gone-1.yaml"))).toBe(false);
  });

  it("configs whose secrets are gone are refused: new secrets would make another cluster", async () => {
    await first;
    const other = tmp();
    fs.cpSync(out, other, { recursive: true });
    fs.rmSync(path.join(other, SECRETS_FILE));
    const r = await run(["--stack", "prod-medium", "--out", other]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${other}: holds ${Object.keys(MACHINES).length} machine config(s) in nodes/ but no secrets.yaml`);
    expect(fs.existsSync(path.join(other, SECRETS_FILE))).toBe(false);
  });
});

describe("npm run talos-config: refusals before anything is written", () => {
  it("a render that is not the stack file's now: exit 1, npm run render first", async () => {
    const rendered = tmp();
    fs.cpSync(path.join(REPO, "rendered", "prod-small"), path.join(rendered, "prod-small"), { recursive: true });
    const patch = path.join(rendered, "prod-small", "talos", "nodes", "node-1.yaml");
    fs.appendFileSync(patch, "# edited by hand\n");
    const out = path.join(tmp(), "keys");
    const r = await capture((a, io) => talosConfigCommand(a, io), ["--stack", "prod-small", "--out", out, "--rendered", rendered]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${path.join(rendered, "prod-small", "talos")}: is not what stacks/Pulumi.prod-small.yaml renders now (talos/nodes/node-1.yaml). Fix: npm run render`,
    );
    expect(fs.existsSync(out)).toBe(false);
  });

  it("a stack without Talos (the lab), and missing options: exit 2", async () => {
    const out = path.join(tmp(), "keys");
    const lab = await run(["--stack", "lab", "--out", out]);
    expect([lab.code, lab.stderr]).toEqual([
      2,
      `${path.join(REPO, "stacks", "Pulumi.lab.yaml")}: openkeel:environment: stack lab renders no Talos machines (its environment is not Talos). Fix: name a production stack\n`,
    ]);
    expect((await run(["--stack", "prod-medium"])).stderr).toMatch(
      /^--out is required\. Fix: npm run talos-config -- --stack <stack> --out <folder outside the checkout>/,
    );
    expect(fs.existsSync(out)).toBe(false);
  });

  it("a node Talos refuses: the machinery names the node, the patch file and the problem, and gives no config", () => {
    const talos = path.join(tmp(), "talos");
    fs.cpSync(path.join(REPO, "rendered", "prod-small", "talos"), talos, { recursive: true });
    fs.appendFileSync(path.join(talos, "nodes", "node-2.yaml"), "---\napiVersion: v1alpha1\nkind: LinkConfig\nname: bond0\nmtu: 70000\n");
    const r = spawnSync(
      requireTalosValidate(),
      [
        "config",
        "-cluster-name",
        "c",
        "-endpoint",
        "https://10.20.0.11:6443",
        "-talos-version",
        TALOS_VERSION,
        "-kubernetes-version",
        KUBERNETES_VERSION,
        talos,
      ],
      { encoding: "utf8" },
    );
    expect(r.status).toBe(1);
    const nodes = JSON.parse(r.stdout).nodes as { node: string; config?: string; problems: string[] }[];
    const bad = nodes.find((n) => n.node === "node-2")!;
    expect(bad.config).toBeUndefined();
    expect(bad.problems.join("\n")).toMatch(/bond0/);
    expect(bad.problems.join("\n")).toContain("nodes/node-2.yaml");
    expect(nodes.filter((n) => n.node !== "node-2").every((n) => n.problems.length === 0 && n.config)).toBe(true);
  });
});
