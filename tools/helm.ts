// Helm at HELM (platform/versions.ts) in .tools/helm, for the test that renders the platform charts
// (tools/chart-placement.ts). `go install <command>@<version>` (the module proxy, checked against
// sum.golang.org); a binary whose build info records the pin is left alone. Built without Helm's
// Makefile ldflags, it knows no Kubernetes version of its own (Capabilities default to v1.20, which
// every pinned chart's kubeVersion refuses): helmTemplate always passes --kube-version.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { HELM } from "../platform/versions";
import { buildInfoVersion, findGo, goCandidates, ToolError, toolBinary, TOOLS_DIR } from "./tools";

export const HELM_BINARY = "helm";

export interface HelmInstall {
  binary: string;
  built: boolean;
  ms?: number;
}

const atPin = (binary: string) => fs.existsSync(binary) && buildInfoVersion(binary, HELM.module) === HELM.version;

/** .tools/helm at the pin: installed with `go install` when missing or at another version. */
export function ensureHelm(
  opts: { toolsDir?: string | undefined; go?: string | null | undefined; log?: ((line: string) => void) | undefined } = {},
): HelmInstall {
  const toolsDir = opts.toolsDir ?? TOOLS_DIR;
  const binary = toolBinary(HELM_BINARY, toolsDir);
  if (atPin(binary)) return { binary, built: false };
  const go = opts.go === undefined ? findGo() : opts.go;
  const target = `${HELM.command}@${HELM.version}`;
  if (!go) {
    throw new ToolError(
      `helm ${HELM.version} (the chart placement test renders every platform chart with it) needs Go to be built; looked for ${goCandidates().join(", ")}. ` +
        "Fix: install Go 1.26 or newer (https://go.dev/dl/), then run `npm run tools`.",
    );
  }
  opts.log?.(`helm: installing ${HELM.version}`);
  fs.mkdirSync(toolsDir, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(toolsDir, ".helm-"));
  const started = Date.now();
  try {
    // outside any module: `go install pkg@version` builds the module as released
    const r = spawnSync(go, ["install", "-trimpath", target], { cwd: tmp, env: { ...process.env, GOBIN: tmp }, encoding: "utf8" });
    if (r.status !== 0) {
      throw new ToolError(
        `${go} install ${target} failed (exit ${r.status}): ${(r.stderr || r.error?.message || "").trim()}\n` +
          "Fix: make the Go module proxy reachable (GOPROXY), then run `npm run tools`.",
      );
    }
    fs.renameSync(toolBinary(HELM_BINARY, tmp), binary);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  if (!atPin(binary)) throw new ToolError(`${binary}: still not helm ${HELM.version} after go install`);
  return { binary, built: true, ms: Date.now() - started };
}

/** The installed binary at the pin, or a ToolError saying to run `npm run tools`. */
export function requireHelm(toolsDir = TOOLS_DIR): string {
  const binary = toolBinary(HELM_BINARY, toolsDir);
  if (atPin(binary)) return binary;
  const found = fs.existsSync(binary) ? (buildInfoVersion(binary, HELM.module) ?? "an unknown version") : undefined;
  throw new ToolError(`${binary}: helm ${found ? `is ${found}` : "is not installed"}, the pin is ${HELM.version}. Fix: run \`npm run tools\`.`);
}

export interface TemplateInput {
  release: string;
  namespace: string;
  /** A chart archive (.tgz) or folder. */
  chart: string;
  valuesFile: string;
  /** Capabilities.KubeVersion: the clusters' Kubernetes. */
  kubeVersion: string;
  /** An executable Helm runs over the release's manifests (`--post-renderer`). */
  postRenderer?: string;
  /** The chart's crds/ too (`--include-crds`): what `helm install` applies before the templates. */
  includeCrds?: boolean;
}

/** `helm template`: the release's manifests (post-rendered) and then its hooks, as Helm prints them. */
export function helmTemplate(input: TemplateInput, binary = requireHelm()): string {
  const args = ["template", input.release, input.chart, "--namespace", input.namespace, "--values", input.valuesFile, "--kube-version", input.kubeVersion];
  if (input.postRenderer) args.push("--post-renderer", input.postRenderer);
  if (input.includeCrds) args.push("--include-crds");
  return runHelm(binary, args, 120_000);
}

/**
 * `helm pull --repo <repository> <chart> --version <version>` into `dest`, a folder of its own (Helm
 * names the archive after its URL): the archive's path.
 */
export function helmPull(ref: { repository: string; chart: string; version: string }, dest: string, binary = requireHelm()): string {
  fs.mkdirSync(dest, { recursive: true });
  const args = ["pull", ref.chart, "--repo", ref.repository, "--version", ref.version, "--destination", dest];
  runHelm(binary, args, 300_000);
  const archives = fs.readdirSync(dest).filter((f) => f.endsWith(".tgz"));
  if (archives.length !== 1) throw new Error(`helm ${args.join(" ")}: ${archives.length} archives in ${dest}, not one`);
  return path.join(dest, archives[0]);
}

/** Helm with its configuration, cache and data in a fresh folder: nothing of the user's repositories or plugins reaches it. */
function runHelm(binary: string, args: string[], timeout: number): string {
  const home = fs.mkdtempSync(path.join(process.env.TMPDIR ?? os.tmpdir(), "helm-home-"));
  try {
    const env = {
      ...process.env,
      HELM_CACHE_HOME: path.join(home, "cache"),
      HELM_CONFIG_HOME: path.join(home, "config"),
      HELM_DATA_HOME: path.join(home, "data"),
    };
    const r = spawnSync(binary, args, { encoding: "utf8", env, maxBuffer: 256 * 1024 * 1024, timeout });
    if (r.status !== 0) throw new Error(`helm ${args.join(" ")} failed (exit ${r.status}): ${(r.stderr || r.error?.message || "").trim()}`);
    return r.stdout;
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}
