// The CNI reference plugins at CNI_PLUGINS (platform/versions.ts) in .tools/cni/, for the check
// that runs each rendered attachment's plugin for real (tools/cni-sandbox.ts). `go install` of
// each plugin's package at the pinned version (the module proxy, checked against sum.golang.org);
// a binary whose build info records the pin is left alone.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { CNI_PLUGINS } from "../platform/versions";
import { buildInfoVersion, findGo, goCandidates, ToolError, TOOLS_DIR } from "./tools";

export type CniPlugin = keyof typeof CNI_PLUGINS.plugins;
export const CNI_PLUGIN_NAMES = Object.keys(CNI_PLUGINS.plugins) as CniPlugin[];

export function cniDir(toolsDir = TOOLS_DIR): string {
  return path.join(toolsDir, "cni");
}

/** The plugins missing from the folder or at another version. */
export function staleCniPlugins(dir = cniDir()): CniPlugin[] {
  return CNI_PLUGIN_NAMES.filter((p) => {
    const file = path.join(dir, p);
    return !fs.existsSync(file) || buildInfoVersion(file, CNI_PLUGINS.module) !== CNI_PLUGINS.version;
  });
}

export interface CniInstall {
  dir: string;
  built: CniPlugin[];
  ms?: number;
}

/** .tools/cni/ with every plugin at the pin: the stale ones installed, in one `go install`. */
export function ensureCniPlugins(
  opts: { toolsDir?: string | undefined; go?: string | null | undefined; log?: ((line: string) => void) | undefined } = {},
): CniInstall {
  const dir = cniDir(opts.toolsDir);
  const stale = staleCniPlugins(dir);
  if (stale.length === 0) return { dir, built: [] };
  const go = opts.go === undefined ? findGo() : opts.go;
  const targets = stale.map((p) => `${CNI_PLUGINS.module}/${CNI_PLUGINS.plugins[p]}@${CNI_PLUGINS.version}`);
  if (!go) {
    throw new ToolError(
      `the CNI plugins ${stale.join(", ")} ${CNI_PLUGINS.version} need Go to be built; looked for ${goCandidates().join(", ")}. ` +
        "Fix: install Go 1.26 or newer (https://go.dev/dl/), then run `npm run tools`.",
    );
  }
  opts.log?.(`CNI plugins: installing ${stale.join(", ")} ${CNI_PLUGINS.version}`);
  fs.mkdirSync(dir, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(dir, ".install-"));
  const started = Date.now();
  try {
    // outside any module: `go install pkg@version` builds the module as released
    const r = spawnSync(go, ["install", "-trimpath", ...targets], { cwd: tmp, env: { ...process.env, GOBIN: tmp }, encoding: "utf8" });
    if (r.status !== 0) {
      throw new ToolError(
        `${go} install ${targets.join(" ")} failed (exit ${r.status}): ${(r.stderr || r.error?.message || "").trim()}\n` +
          "Fix: make the Go module proxy reachable (GOPROXY), then run `npm run tools`.",
      );
    }
    for (const p of stale) fs.renameSync(path.join(tmp, p), path.join(dir, p));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const still = staleCniPlugins(dir);
  if (still.length > 0) throw new ToolError(`${dir}: ${still.join(", ")} still not at ${CNI_PLUGINS.version} after go install`);
  return { dir, built: stale, ms: Date.now() - started };
}

/** The plugin folder, or a ToolError saying to run `npm run tools`. */
export function requireCniPlugins(toolsDir = TOOLS_DIR): string {
  const dir = cniDir(toolsDir);
  const stale = staleCniPlugins(dir);
  if (stale.length > 0) throw new ToolError(`${dir}: ${stale.join(", ")} not installed at ${CNI_PLUGINS.version}. Fix: run \`npm run tools\`.`);
  return dir;
}
