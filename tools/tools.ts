// The command-line tools the offline pipeline runs (kubeconform, actionlint), installed by the project
// itself into .tools/ at the versions pinned in platform/versions.ts. `go install` where Go is present
// (it builds from the module proxy, checked against sum.golang.org); otherwise the release archive,
// checked against the pinned SHA-256. Checking an installed tool reads its Go build info, so a second
// run costs milliseconds.
import { spawnSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { TOOLS, type ToolName, type ToolPin } from "../platform/versions";
import { EXIT_BAD_CONFIG, UserError } from "../cli/errors";

export const REPO_ROOT = path.resolve(__dirname, "..");
export const TOOLS_DIR = path.join(REPO_ROOT, ".tools");

/** A tool that is missing or at another version: the message says how to fix it (exit 2). */
export class ToolError extends UserError {
  constructor(message: string) {
    super(message, EXIT_BAD_CONFIG);
    this.name = "ToolError";
  }
}

export function toolBinary(name: string, toolsDir = TOOLS_DIR): string {
  return path.join(toolsDir, process.platform === "win32" ? `${name}.exe` : name);
}

/**
 * Where Go may be: PATH first, then where its installers put it. CI images and non-login shells
 * often leave /usr/local/go/bin off PATH.
 */
export function goCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const out = ["go"];
  if (env.GOROOT) out.push(path.join(env.GOROOT, "bin", "go"));
  out.push("/usr/local/go/bin/go", "/usr/lib/go/bin/go", "/opt/homebrew/bin/go");
  return [...new Set(out)];
}

export function findGo(candidates = goCandidates()): string | undefined {
  for (const c of candidates) {
    const r = spawnSync(c, ["version"], { encoding: "utf8" });
    if (r.status === 0 && /^go version go\d/.test(r.stdout)) return c;
  }
  return undefined;
}

/**
 * The version of `module` recorded in a Go binary's build info (`\nmod\t<module>\t<version>\t…`).
 * `go install module/cmd@vX` records vX there; kubeconform's own `-v` then says "development".
 */
export function buildInfoVersion(binary: string, module: string): string | undefined {
  const text = fs.readFileSync(binary).toString("latin1");
  const marker = `\nmod\t${module}\t`;
  const at = text.indexOf(marker);
  if (at < 0) return undefined;
  const m = /^[^\t\n]+/.exec(text.slice(at + marker.length, at + marker.length + 128));
  return m?.[0];
}

/** What the binary prints for its version flag (release builds print their tag). */
function reportedVersion(binary: string, flag: string): string | undefined {
  const r = spawnSync(binary, [flag], { encoding: "utf8", timeout: 10_000 });
  const m = /\bv?(\d+\.\d+\.\d+[^\s]*)/.exec(`${r.stdout ?? ""}\n${r.stderr ?? ""}`);
  return m ? `v${m[1]}` : undefined;
}

export type ToolState = { state: "ok"; version: string } | { state: "missing" } | { state: "outdated"; found: string };

export function checkTool(pin: ToolPin, binary: string): ToolState {
  if (!fs.existsSync(binary)) return { state: "missing" };
  const fromBuildInfo = buildInfoVersion(binary, pin.module);
  if (fromBuildInfo === pin.version) return { state: "ok", version: pin.version };
  const reported = reportedVersion(binary, pin.versionFlag);
  if (reported === pin.version) return { state: "ok", version: pin.version };
  return { state: "outdated", found: fromBuildInfo ?? reported ?? "an unknown version" };
}

export interface InstallOptions {
  toolsDir?: string;
  /** The go command; null: behave as if Go were absent (undefined: look for it). */
  go?: string | null;
  /** Fetches a release archive (tests replace the network). */
  download?: (url: string) => Promise<Buffer>;
  /** `<process.platform>-<process.arch>`, the key of the release archives. */
  platform?: string;
  log?: ((line: string) => void) | undefined;
}

export interface Installed {
  name: string;
  binary: string;
  version: string;
  how: "present" | "go install" | "release archive";
}

async function fetchArchive(url: string): Promise<Buffer> {
  const res = await fetch(url, { redirect: "follow" });
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

function installWithGo(name: string, pin: ToolPin, go: string, toolsDir: string): void {
  const tmp = fs.mkdtempSync(path.join(toolsDir, `.${name}-`));
  try {
    const r = spawnSync(go, ["install", `${pin.command}@${pin.version}`], {
      cwd: tmp,
      env: { ...process.env, GOBIN: tmp },
      encoding: "utf8",
    });
    if (r.status !== 0) {
      throw new Error(`${go} install ${pin.command}@${pin.version} failed (exit ${r.status}): ${(r.stderr || r.error?.message || "").trim()}`);
    }
    fs.renameSync(toolBinary(name, tmp), toolBinary(name, toolsDir));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function installFromRelease(name: string, pin: ToolPin, platform: string, toolsDir: string, download: (url: string) => Promise<Buffer>): Promise<void> {
  const release = pin.releases[platform];
  if (!release) {
    throw new Error(`no release archive pinned for ${platform} (pinned: ${Object.keys(pin.releases).join(", ")})`);
  }
  const archive = await download(release.url);
  const sha256 = crypto.createHash("sha256").update(archive).digest("hex");
  if (sha256 !== release.sha256) {
    throw new Error(`checksum mismatch for ${release.url}: expected ${release.sha256}, got ${sha256}`);
  }
  const tmp = fs.mkdtempSync(path.join(toolsDir, `.${name}-`));
  try {
    const file = path.join(tmp, "archive.tar.gz");
    fs.writeFileSync(file, archive);
    const r = spawnSync("tar", ["-xzf", file, "-C", tmp, name], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`tar could not extract ${name} from ${release.url}: ${(r.stderr || r.error?.message || "").trim()}`);
    fs.chmodSync(path.join(tmp, name), 0o755);
    fs.renameSync(path.join(tmp, name), toolBinary(name, toolsDir));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Make sure `.tools/<name>` is the pinned version: nothing to do when it is, else install it. */
export async function ensureTool(name: string, pin: ToolPin, opts: InstallOptions = {}): Promise<Installed> {
  const toolsDir = opts.toolsDir ?? TOOLS_DIR;
  const log = opts.log ?? (() => {});
  const binary = toolBinary(name, toolsDir);
  const before = checkTool(pin, binary);
  if (before.state === "ok") return { name, binary, version: pin.version, how: "present" };

  log(before.state === "missing" ? `${name}: not installed, installing ${pin.version}` : `${name}: found ${before.found}, installing ${pin.version}`);
  fs.mkdirSync(toolsDir, { recursive: true });
  const failures: string[] = [];
  const go = opts.go === undefined ? findGo() : opts.go;
  const verify = (how: Installed["how"]): Installed | undefined => {
    const after = checkTool(pin, binary);
    if (after.state === "ok") return { name, binary, version: pin.version, how };
    failures.push(`${how} produced ${after.state === "outdated" ? after.found : "no binary"}, not ${pin.version}`);
    return undefined;
  };
  if (go) {
    try {
      installWithGo(name, pin, go, toolsDir);
      const done = verify("go install");
      if (done) return done;
    } catch (e) {
      failures.push((e as Error).message);
    }
  } else {
    failures.push(`Go not found (looked for ${goCandidates().join(", ")})`);
  }
  try {
    await installFromRelease(name, pin, opts.platform ?? `${process.platform}-${process.arch}`, toolsDir, opts.download ?? fetchArchive);
    const done = verify("release archive");
    if (done) return done;
  } catch (e) {
    failures.push(`release archive: ${(e as Error).message}`);
  }
  throw new ToolError(
    `${name} ${pin.version} could not be installed into ${path.relative(process.cwd(), toolsDir) || "."}/:\n` +
      failures.map((f) => `  - ${f}`).join("\n") +
      `\nFix: install Go (https://go.dev/dl/) or make ${Object.values(pin.releases)[0]?.url ?? "the release archive"} reachable, then run \`npm run tools\`.`,
  );
}

/** Every pinned tool, installed if needed. */
export async function ensureTools(opts: InstallOptions = {}): Promise<Installed[]> {
  const out: Installed[] = [];
  for (const name of Object.keys(TOOLS) as ToolName[]) out.push(await ensureTool(name, TOOLS[name], opts));
  return out;
}

/** The path of an installed tool at its pinned version, or a ToolError saying to run `npm run tools`. */
export function requireTool(name: ToolName, toolsDir = TOOLS_DIR): string {
  const binary = toolBinary(name, toolsDir);
  const state = checkTool(TOOLS[name], binary);
  if (state.state === "ok") return binary;
  const what = state.state === "missing" ? "is not installed" : `is ${state.found}`;
  throw new ToolError(`${binary}: ${name} ${what}, the pin is ${TOOLS[name].version}. Fix: run \`npm run tools\`.`);
}

/** Where `go mod download -json` put the module: its Dir and go.sum hash. */
export type ModuleDownload = (module: string, version: string) => { dir: string; sum: string };

/**
 * A module through the Go module proxy, checked against sum.golang.org (`go mod download -json`);
 * `what` names it in the error: what the module is fetched for.
 */
export function goModDownload(module: string, version: string, what: string): { dir: string; sum: string } {
  const failures: string[] = [];
  // outside any module: the download must not touch a go.mod of the working directory
  fs.mkdirSync(TOOLS_DIR, { recursive: true });
  for (const go of goCandidates()) {
    const r = spawnSync(go, ["mod", "download", "-json", `${module}@${version}`], { encoding: "utf8", cwd: TOOLS_DIR });
    if (r.error) continue;
    let out: { Dir?: string; Sum?: string; Error?: string } = {};
    try {
      out = JSON.parse(r.stdout) as typeof out;
    } catch {
      /* no JSON: the error is on stderr */
    }
    if (r.status === 0 && out.Dir && out.Sum) return { dir: out.Dir, sum: out.Sum };
    failures.push(`${go} mod download ${module}@${version}: ${(out.Error || r.stderr || `exit ${r.status}`).trim()}`);
  }
  throw new ToolError(
    `${what} (${module}@${version}) could not be fetched:\n${failures.map((f) => `  - ${f}`).join("\n") || `  - Go not found (looked for ${goCandidates().join(", ")})`}\n` +
      "Fix: install Go (https://go.dev/dl/) with the module proxy reachable (GOPROXY), then run `npm run tools`.",
  );
}
