// The project installs its own tools: the pinned versions in .tools/, the version check that makes a
// second run a no-op, `go install` where Go is, the checksum-verified release archive where it is not.
import { spawnSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CNI_PLUGINS, HELM, KUBERNETES_VERSION, TOOLS, type ToolName, type ToolPin } from "../../../platform/versions";
import { buildInfoVersion, checkTool, ensureTool, goCandidates, ToolError, toolBinary, TOOLS_DIR } from "../../../tools/tools";
import { REPO } from "../../helpers/stacks";
import { tsCommand } from "../../../cli/ts-command";
import { installValidators } from "../../../tools/install";
import { kubeOvnSchemasDir } from "../../../tools/kube-ovn-crds";
import { kubernetesSchemasDir, strictFolder } from "../../../tools/kubernetes-schemas";
import { ensureTalosValidate, TALOS_VALIDATE } from "../../../tools/talos-validate";
import { cniDir, ensureCniPlugins } from "../../../tools/cni-plugins";
import { ensureHelm, HELM_BINARY, requireHelm } from "../../../tools/helm";

const KC = TOOLS.kubeconform;

const temps: string[] = [];
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-tools-"));
  temps.push(d);
  return d;
}
afterAll(() => temps.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** A stand-in binary: prints `says` for any flag; optionally carries Go build info for `module`. */
function fakeBinary(file: string, says: string, buildInfo?: { module: string; version: string }): string {
  const info = buildInfo ? `\nmod\t${buildInfo.module}\t${buildInfo.version}\th1:fake=\n` : "";
  fs.writeFileSync(file, `#!/bin/sh\necho '${says}'\nexit 0\n${info}`);
  fs.chmodSync(file, 0o755);
  return file;
}

/** A stand-in `go`: logs its arguments and "installs" a binary into $GOBIN reporting the requested version. */
function fakeGo(dir: string): { go: string; log: string } {
  const log = path.join(dir, "go.log");
  const go = path.join(dir, "go");
  fs.writeFileSync(
    go,
    [
      "#!/bin/sh",
      `echo "$@" >> '${log}'`,
      'target="$2"; pkg="${target%@*}"; ver="${target#*@}"; name="${pkg##*/}"',
      `printf '#!/bin/sh\\necho %s\\n' "$ver" > "$GOBIN/$name"`,
      'chmod +x "$GOBIN/$name"',
      "",
    ].join("\n"),
  );
  fs.chmodSync(go, 0o755);
  return { go, log };
}

function tarGz(dir: string, name: string, says: string): Buffer {
  const src = path.join(dir, "src");
  fs.mkdirSync(src, { recursive: true });
  fakeBinary(path.join(src, name), says);
  const out = path.join(dir, "archive.tar.gz");
  const r = spawnSync("tar", ["-czf", out, "-C", src, name]);
  expect(r.status).toBe(0);
  return fs.readFileSync(out);
}

const PLATFORM = `${process.platform}-${process.arch}`;

describe("pins (platform/versions.ts, TOOLS)", () => {
  it.each(Object.keys(TOOLS) as ToolName[])("%s: exact version, command in its module, release archives of that version", (name) => {
    const pin: ToolPin = TOOLS[name];
    expect(pin.version).toMatch(/^v\d+\.\d+\.\d+$/);
    expect(pin.command.startsWith(`${pin.module}/`)).toBe(true);
    expect(Object.keys(pin.releases).length).toBeGreaterThan(0);
    for (const r of Object.values(pin.releases)) {
      expect(r.url).toContain(`/releases/download/${pin.version}/`);
      expect(r.url).toMatch(/\.tar\.gz$/);
      expect(r.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
  });
});

describe("installed tools", () => {
  it.each(Object.keys(TOOLS) as ToolName[])("%s in .tools/ is the pinned version", (name) => {
    expect(checkTool(TOOLS[name], toolBinary(name))).toEqual({ state: "ok", version: TOOLS[name].version });
  });

  it("reads the version from a go-installed binary's build info (kubeconform -v says only 'development')", () => {
    expect(buildInfoVersion(toolBinary("kubeconform"), KC.module)).toBe(KC.version);
    expect(buildInfoVersion(toolBinary("kubeconform"), TOOLS.actionlint.module)).toBeUndefined();
  });

  it("`npm run tools` again is a quick no-op; --check reports each tool", () => {
    const r = spawnSync(...tsCommand(path.join(REPO, "scripts/tools.ts")), { cwd: REPO, encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).not.toMatch(/installing/);
    expect(r.stdout).toMatch(
      new RegExp(
        `kubeconform ${KC.version}, actionlint ${TOOLS.actionlint.version}, Kubernetes ${KUBERNETES_VERSION} schemas and Kube-OVN CRDs in \\.tools/, talos-validate \\(machinery v[\\d.]+\\), CNI plugins ${CNI_PLUGINS.version} \\(.*\\), helm ${HELM.version} `,
      ),
    );
    const c = spawnSync(...tsCommand(path.join(REPO, "scripts/tools.ts"), ["--check"]), { cwd: REPO, encoding: "utf8" });
    expect(c.status).toBe(0);
    expect(c.stdout).toContain(`kubeconform ${KC.version}: ok`);
    expect(c.stdout).toContain(`Kubernetes ${KUBERNETES_VERSION} schemas: ok`);
    expect(c.stdout).toMatch(/^talos-validate \(machinery v[\d.]+\): ok$/m);
    expect(c.stdout).toContain(`CNI plugins ${CNI_PLUGINS.version}: ok`);
    expect(c.stdout).toContain(`helm ${HELM.version}: ok`);
    expect(TOOLS_DIR).toBe(path.join(REPO, ".tools"));
    expect(fs.readFileSync(path.join(REPO, ".gitignore"), "utf8")).toMatch(/^\.tools\/$/m);
  });
});

describe("installValidators: what npm run tools, the suites' setup and npm run bench install", () => {
  it("into a tools folder with the tools but without Kube-OVN's CRDs (a fresh clone's bench once failed kubeconform on them) or Kubernetes' schemas: those too", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "validators-"));
    temps.push(dir);
    for (const name of [...(Object.keys(TOOLS) as ToolName[]), TALOS_VALIDATE, HELM_BINARY]) fs.copyFileSync(toolBinary(name), path.join(dir, name));
    fs.cpSync(cniDir(), cniDir(dir), { recursive: true });
    const { installed, kubernetesSchemasBuilt, crdsBuilt, talosValidate, cni, helm } = await installValidators({ toolsDir: dir, go: null });
    expect(installed.map((t) => [t.name, t.how])).toEqual((Object.keys(TOOLS) as ToolName[]).map((n) => [n, "present"]));
    expect(crdsBuilt).toBe(true);
    expect(fs.existsSync(path.join(kubeOvnSchemasDir(dir), "crds", "kubeovn.io"))).toBe(true);
    expect(kubernetesSchemasBuilt).toBe(true);
    expect(fs.existsSync(path.join(kubernetesSchemasDir(dir), "kubernetes", strictFolder(KUBERNETES_VERSION), "pod-v1.json"))).toBe(true);
    expect([talosValidate.built, cni.built, helm.built]).toEqual([false, [], false]);
    const again = await installValidators({ toolsDir: dir, go: null });
    expect([again.crdsBuilt, again.kubernetesSchemasBuilt]).toEqual([false, false]);
  });

  it("without Go, a missing talos-validate or CNI plugin is an error that says to install Go", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "validators-"));
    temps.push(dir);
    expect(() => ensureTalosValidate({ toolsDir: dir, go: null })).toThrow(/talos-validate .* needs Go to be built; .*Fix: install Go 1\.26 or newer/);
    expect(() => ensureCniPlugins({ toolsDir: dir, go: null })).toThrow(
      new RegExp(`the CNI plugins macvlan, ipvlan, host-local ${CNI_PLUGINS.version} need Go to be built; .*Fix: install Go 1\\.26 or newer`),
    );
    expect(() => ensureHelm({ toolsDir: dir, go: null })).toThrow(
      new RegExp(`helm ${HELM.version} .* needs Go to be built; .*Fix: install Go 1\\.26 or newer`),
    );
  });

  it("helm: `go install <command>@<pin>` outside any module, left alone once its build info records the pin; another version is refused", () => {
    const dir = tmp();
    const log = path.join(dir, "go.log");
    // a stand-in `go` that "builds" a binary whose build info records the version asked for
    const go = path.join(dir, "go");
    const script = ["#!/bin/sh", `echo "$@" >> '${log}'`, 'for a; do target="$a"; done; ver="${target#*@}"'];
    script.push(`printf '#!/bin/sh\\necho %s\\n\\nmod\\t${HELM.module}\\t%s\\th1:fake=\\n' "$ver" "$ver" > "$GOBIN/helm"`, 'chmod +x "$GOBIN/helm"', "");
    fs.writeFileSync(go, script.join("\n"));
    fs.chmodSync(go, 0o755);
    fakeBinary(path.join(dir, HELM_BINARY), "v3.19.0", { module: HELM.module, version: "v3.19.0" });
    expect(() => requireHelm(dir)).toThrow(`${path.join(dir, HELM_BINARY)}: helm is v3.19.0, the pin is ${HELM.version}. Fix: run \`npm run tools\`.`);
    expect(ensureHelm({ toolsDir: dir, go })).toMatchObject({ binary: path.join(dir, HELM_BINARY), built: true });
    expect(fs.readFileSync(log, "utf8").trim()).toBe(`install -trimpath ${HELM.command}@${HELM.version}`);
    expect(requireHelm(dir)).toBe(path.join(dir, HELM_BINARY));
    expect(ensureHelm({ toolsDir: dir, go: null })).toEqual({ binary: path.join(dir, HELM_BINARY), built: false });
  });
});

describe("version check", () => {
  it("missing, a release build at the pin, another version, a go build at another version", () => {
    const dir = tmp();
    expect(checkTool(KC, path.join(dir, "kubeconform"))).toEqual({ state: "missing" });
    expect(checkTool(KC, fakeBinary(path.join(dir, "a"), KC.version))).toEqual({ state: "ok", version: KC.version });
    expect(checkTool(KC, fakeBinary(path.join(dir, "b"), "v0.6.4"))).toEqual({ state: "outdated", found: "v0.6.4" });
    expect(checkTool(KC, fakeBinary(path.join(dir, "c"), "development", { module: KC.module, version: "v0.6.7" }))).toEqual({
      state: "outdated",
      found: "v0.6.7",
    });
    expect(checkTool(KC, fakeBinary(path.join(dir, "d"), "development", { module: KC.module, version: KC.version }))).toEqual({
      state: "ok",
      version: KC.version,
    });
  });
});

describe("ensureTool", () => {
  it("leaves a tool at its pin alone (no go, no download)", async () => {
    const dir = tmp();
    fakeBinary(path.join(dir, "kubeconform"), KC.version);
    const download = async () => {
      throw new Error("must not download");
    };
    await expect(ensureTool("kubeconform", KC, { toolsDir: dir, go: "/nonexistent/go", download })).resolves.toMatchObject({
      how: "present",
    });
  });

  it("replaces another version with `go install <command>@<version>` into the tools folder", async () => {
    const dir = tmp();
    fakeBinary(path.join(dir, "kubeconform"), "v0.6.4");
    const { go, log } = fakeGo(tmp());
    const lines: string[] = [];
    const r = await ensureTool("kubeconform", KC, { toolsDir: dir, go, log: (l) => lines.push(l) });
    expect(r).toMatchObject({ how: "go install", version: KC.version, binary: path.join(dir, "kubeconform") });
    expect(fs.readFileSync(log, "utf8").trim()).toBe(`install ${KC.command}@${KC.version}`);
    expect(lines).toEqual([`kubeconform: found v0.6.4, installing ${KC.version}`]);
    expect(checkTool(KC, path.join(dir, "kubeconform")).state).toBe("ok");
    expect(fs.readdirSync(dir)).toEqual(["kubeconform"]);
  });

  it("without Go, downloads the release archive and checks its SHA-256", async () => {
    const dir = tmp();
    const archive = tarGz(tmp(), "kubeconform", KC.version);
    const sha256 = crypto.createHash("sha256").update(archive).digest("hex");
    const pin: ToolPin = { ...KC, releases: { [PLATFORM]: { url: "https://example.invalid/kubeconform.tar.gz", sha256 } } };
    const urls: string[] = [];
    const r = await ensureTool("kubeconform", pin, {
      toolsDir: dir,
      go: null,
      download: async (url) => {
        urls.push(url);
        return archive;
      },
    });
    expect(r.how).toBe("release archive");
    expect(urls).toEqual(["https://example.invalid/kubeconform.tar.gz"]);
    expect(checkTool(KC, path.join(dir, "kubeconform")).state).toBe("ok");
  });

  it("refuses an archive whose checksum differs, and says why and how to fix it", async () => {
    const dir = tmp();
    const archive = tarGz(tmp(), "kubeconform", KC.version);
    const pin: ToolPin = { ...KC, releases: { [PLATFORM]: { url: "https://example.invalid/k.tar.gz", sha256: "0".repeat(64) } } };
    const err = await ensureTool("kubeconform", pin, { toolsDir: dir, go: null, download: async () => archive }).catch((e) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect(err.message).toMatch(/Go not found/);
    expect(err.message).toMatch(/checksum mismatch for https:\/\/example\.invalid\/k\.tar\.gz: expected 0{64}, got [0-9a-f]{64}/);
    expect(err.message).toMatch(/Fix: install Go/);
    expect(fs.existsSync(path.join(dir, "kubeconform"))).toBe(false);
  });

  it("falls back to the release archive when `go install` fails", async () => {
    const dir = tmp();
    const broken = path.join(tmp(), "go");
    fs.writeFileSync(broken, "#!/bin/sh\necho 'proxy unreachable' >&2\nexit 1\n");
    fs.chmodSync(broken, 0o755);
    const archive = tarGz(tmp(), "kubeconform", KC.version);
    const sha256 = crypto.createHash("sha256").update(archive).digest("hex");
    const pin: ToolPin = { ...KC, releases: { [PLATFORM]: { url: "https://example.invalid/k.tar.gz", sha256 } } };
    await expect(ensureTool("kubeconform", pin, { toolsDir: dir, go: broken, download: async () => archive })).resolves.toMatchObject({
      how: "release archive",
    });
  });

  it("looks for Go off PATH too (CI images often lack /usr/local/go/bin on PATH)", () => {
    expect(goCandidates({ GOROOT: "/opt/go" })).toEqual(["go", "/opt/go/bin/go", "/usr/local/go/bin/go", "/usr/lib/go/bin/go", "/opt/homebrew/bin/go"]);
  });
});
