// Talos' own validation of the rendered node configuration: tools/talos-validate/ is a Go program
// on github.com/siderolabs/talos/pkg/machinery at TALOS_VERSION (its go.mod; a test keeps the two
// equal) that generates each node's machine config as `talosctl gen config` does, applies its
// patches as `talosctl machineconfig patch` does and validates the result as `talosctl validate
// --mode metal --strict` does (its header cites the code). `npm run tools` builds it into
// .tools/talos-validate with `go build -mod=readonly` (go.sum checked, modules from the proxy);
// the binary carries the digest of its sources, so an edit of them rebuilds it.
import { spawnSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { TALOS_VERSION } from "../platform/versions";
import { TALOS_MACHINES_FILE, type RenderedStack } from "../render/rendered";
import { findGo, goCandidates, REPO_ROOT, ToolError, toolBinary, TOOLS_DIR } from "./tools";

export const TALOS_VALIDATE = "talos-validate";
/** The wrapper module: go.mod, go.sum, main.go. */
export const TALOS_VALIDATE_SRC = path.join(REPO_ROOT, "tools", TALOS_VALIDATE);
export const MACHINERY_MODULE = "github.com/siderolabs/talos/pkg/machinery";

/** SHA-256 of the module's files (names and contents), what the binary must report. */
export function talosValidateDigest(src = TALOS_VALIDATE_SRC): string {
  const hash = crypto.createHash("sha256");
  for (const f of fs
    .readdirSync(src)
    .filter((n) => n === "go.mod" || n === "go.sum" || n.endsWith(".go"))
    .sort()) {
    hash
      .update(`${f}\0`)
      .update(fs.readFileSync(path.join(src, f)))
      .update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

/** The machinery version the wrapper's go.mod requires. */
export function goModMachineryVersion(src = TALOS_VALIDATE_SRC): string | undefined {
  const m = new RegExp(`^\\s*${MACHINERY_MODULE.replace(/\./g, "\\.")}\\s+(v\\S+)`, "m").exec(fs.readFileSync(path.join(src, "go.mod"), "utf8"));
  return m?.[1];
}

/** What `talos-validate -version` must print for a binary built from these sources at the pin. */
export function expectedVersionLine(src = TALOS_VALIDATE_SRC): string {
  return `talos-validate ${talosValidateDigest(src)} machinery ${TALOS_VERSION}`;
}

function installedVersionLine(binary: string): string | undefined {
  if (!fs.existsSync(binary)) return undefined;
  const r = spawnSync(binary, ["-version"], { encoding: "utf8", timeout: 10_000 });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

export interface TalosValidateInstall {
  binary: string;
  built: boolean;
  /** The build's wall time, when it built. */
  ms?: number;
}

export interface BuildOptions {
  toolsDir?: string | undefined;
  src?: string | undefined;
  /** The go command; null: as if Go were absent. */
  go?: string | null | undefined;
  log?: ((line: string) => void) | undefined;
}

/** .tools/talos-validate from the wrapper module, unless the binary there reports these sources. */
export function ensureTalosValidate(opts: BuildOptions = {}): TalosValidateInstall {
  const toolsDir = opts.toolsDir ?? TOOLS_DIR;
  const src = opts.src ?? TALOS_VALIDATE_SRC;
  const binary = toolBinary(TALOS_VALIDATE, toolsDir);
  const want = expectedVersionLine(src);
  if (installedVersionLine(binary) === want) return { binary, built: false };
  if (goModMachineryVersion(src) !== TALOS_VERSION) {
    throw new ToolError(
      `${path.relative(process.cwd(), path.join(src, "go.mod"))}: requires ${MACHINERY_MODULE} ${goModMachineryVersion(src) ?? "at no version"}, but TALOS_VERSION is ${TALOS_VERSION}. ` +
        `Fix: in ${path.relative(process.cwd(), src)}, run \`go get ${MACHINERY_MODULE}@${TALOS_VERSION} && go mod tidy\`.`,
    );
  }
  const go = opts.go === undefined ? findGo() : opts.go;
  if (!go) {
    throw new ToolError(
      `${TALOS_VALIDATE} (Talos ${TALOS_VERSION}'s validation of the rendered node configs) needs Go to be built; looked for ${goCandidates().join(", ")}. ` +
        "Fix: install Go 1.26 or newer (https://go.dev/dl/), then run `npm run tools`.",
    );
  }
  opts.log?.(`${TALOS_VALIDATE}: building from ${path.relative(REPO_ROOT, src)} (Talos machinery ${TALOS_VERSION})`);
  fs.mkdirSync(toolsDir, { recursive: true });
  const tmp = `${binary}.tmp-${process.pid}`;
  const started = Date.now();
  const r = spawnSync(
    go,
    ["build", "-mod=readonly", "-trimpath", "-buildvcs=false", "-ldflags", `-X main.sourceDigest=${talosValidateDigest(src)}`, "-o", tmp, "."],
    { cwd: src, encoding: "utf8" },
  );
  if (r.status !== 0) {
    fs.rmSync(tmp, { force: true });
    throw new ToolError(
      `${go} build of ${path.relative(process.cwd(), src)} failed (exit ${r.status}): ${(r.stderr || r.error?.message || "").trim()}\n` +
        "Fix: make the Go module proxy reachable (GOPROXY), then run `npm run tools`.",
    );
  }
  fs.renameSync(tmp, binary);
  const got = installedVersionLine(binary);
  if (got !== want) throw new ToolError(`${binary}: built, but it reports "${got}", not "${want}"`);
  return { binary, built: true, ms: Date.now() - started };
}

/** The installed binary at these sources, or a ToolError saying to run `npm run tools`. */
export function requireTalosValidate(toolsDir = TOOLS_DIR): string {
  const binary = toolBinary(TALOS_VALIDATE, toolsDir);
  const got = installedVersionLine(binary);
  if (got === expectedVersionLine()) return binary;
  const what = got === undefined ? "is not installed" : `reports "${got}"`;
  throw new ToolError(`${binary} ${what}, not "${expectedVersionLine()}". Fix: run \`npm run tools\`.`);
}

/** What `talosctl gen config <name> <endpoint> --kubernetes-version <version>` is given for a stack: its cluster binding, the Kubernetes its nodes are rendered for. */
export interface GenConfigInputs {
  clusterName: string;
  endpoint: string;
  kubernetesVersion: string;
}

export function genConfigInputs(stack: RenderedStack, name: string): GenConfigInputs {
  const { context, apiServer } = stack.index.cluster ?? {};
  if (!apiServer)
    throw new ToolError(`${stack.where}/index.yaml: no cluster.apiServer (openkeel:cluster). Fix: set it in the stack file, then \`npm run render\``);
  const kubernetesVersion = stack.talosKubernetesVersion();
  if (!kubernetesVersion)
    throw new ToolError(`${stack.where}/${TALOS_MACHINES_FILE}: no kubernetesVersion (rendered before it was pinned). Fix: run \`npm run render\``);
  // `talosctl kubeconfig` names its context admin@<cluster name>
  return { clusterName: context?.startsWith("admin@") ? context.slice("admin@".length) : `openkeel-${name}`, endpoint: apiServer, kubernetesVersion };
}

export interface NodeVerdict {
  node: string;
  machineType: string;
  patches: string[];
  /** Empty when the machinery finds the node's config valid. */
  problems: string[];
}

export interface TalosValidateRun {
  status: number | null;
  nodes: NodeVerdict[];
  summary: string;
  stdout: string;
  stderr: string;
}

/** `name (type: a.yaml, b.yaml): valid` or `…: N problem(s)`, each problem indented by two, its continuation by four. */
export function parseTalosValidate(stdout: string): { nodes: NodeVerdict[]; summary: string } {
  const nodes: NodeVerdict[] = [];
  let summary = "";
  for (const line of stdout.split("\n")) {
    const head = /^(\S+) \((\w+): ([^)]*)\): (valid|\d+ problem\(s\))$/.exec(line);
    const node = nodes[nodes.length - 1];
    if (head) nodes.push({ node: head[1], machineType: head[2], patches: head[3].split(", "), problems: [] });
    else if (line.startsWith("    ") && node?.problems.length) node.problems[node.problems.length - 1] += `\n${line.slice(4)}`;
    else if (line.startsWith("  ") && node) node.problems.push(line.slice(2));
    else if (line.trim()) summary = line;
  }
  return { nodes, summary };
}

/** Validate rendered/<stack>/talos/ with the machinery (`dir`: the stack's render folder). */
export function runTalosValidate(dir: string, inputs: GenConfigInputs, binary = requireTalosValidate()): TalosValidateRun {
  const args = [
    "-cluster-name",
    inputs.clusterName,
    "-endpoint",
    inputs.endpoint,
    "-kubernetes-version",
    inputs.kubernetesVersion,
    "-talos-version",
    TALOS_VERSION,
  ];
  const r = spawnSync(binary, [...args, path.join(dir, "talos")], {
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: r.status, ...parseTalosValidate(r.stdout ?? ""), stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
}
