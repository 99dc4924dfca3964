// `npm run talos-config` as a function of its arguments: the CLI (scripts/talos-config.ts) and the
// tests run the same code, the tests in-process with the output captured (the machinery is a child
// process: tools/talos-validate, `config` mode).
//
// What it writes holds the cluster's keys (the Talos and Kubernetes CAs, the etcd CA, the admin
// client certificate): it goes to a folder outside the checkout, refused inside it after symlinks
// are resolved, the folder 0700 and every file 0600; nothing of it is printed. The secrets are
// generated once and reused by every later run into the same folder: a node's configuration made
// again is then the same cluster's.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { KUBERNETES_VERSION, TALOS_VERSION } from "../platform/versions";
import { readRenderedDir, renderPlan, type RenderedStack, type TalosMachine } from "../render/rendered";
import { args, EXIT_BAD_CONFIG, EXIT_CHECKS_FAILED, planStacks, UserError, type Io, type StackPlan } from "../cli/cli";
import { planWarnings, warningLines } from "../cli/warnings";
import { writeWhole } from "../cli/write";
import { genConfigInputs, requireTalosValidate } from "./talos-validate";
import { REPO_ROOT } from "./tools";

const TALOS_CONFIG_OPTIONS = {
  stack: { type: "string" },
  out: { type: "string" },
  "stacks-dir": { type: "string", default: "stacks" },
  rendered: { type: "string", default: "rendered" },
} as const;

/** Its usage (`--help`) is the CLI's header, also when the command runs in-process. */
const TALOS_CONFIG_SCRIPT = path.resolve(__dirname, "../scripts/talos-config.ts");

/** The files of the output folder. */
export const SECRETS_FILE = "secrets.yaml";
export const TALOSCONFIG_FILE = "talosconfig";
export const NODES_DIR = "nodes";
const PRIVATE_FILE = 0o600;
const PRIVATE_DIR = 0o700;

/** A path with its symlinks resolved, also when its last parts do not exist yet. */
function realPath(p: string): string {
  const abs = path.resolve(p);
  if (fs.existsSync(abs)) return fs.realpathSync(abs);
  const parent = path.dirname(abs);
  return parent === abs ? abs : path.join(realPath(parent), path.basename(abs));
}

/**
 * The output folder, absolute, or a refusal: inside the checkout (symlinks resolved), the keys
 * would be one `git add` away from the repository's history.
 */
function outsideCheckout(out: string, checkout = REPO_ROOT): string {
  const real = realPath(out);
  const root = realPath(checkout);
  if (real === root || real.startsWith(root + path.sep)) {
    const shown = real === path.resolve(out) ? out : `${out} (${real}, its symlinks resolved)`;
    throw new UserError(
      `--out ${shown}: is inside this checkout (${root}). The folder receives the cluster's secrets and each node's machine configuration, ` +
        "which hold its CA keys: they must never be committed. Fix: give a folder outside the checkout, e.g. --out ~/openkeel-talos/<stack>, " +
        "kept where the team keeps the cluster's other keys",
      EXIT_BAD_CONFIG,
    );
  }
  if (fs.existsSync(real) && !fs.statSync(real).isDirectory()) {
    throw new UserError(`--out ${out}: is a file, not a folder. Fix: give a folder (it is created when missing)`, EXIT_BAD_CONFIG);
  }
  return path.resolve(out);
}

/**
 * rendered/<stack>/talos/, once it is what a render of the stack file gives now: the machine
 * configs are made of the reviewed files, and those must be the stack's.
 */
function renderedTalos(s: StackPlan, renderedDir: string): RenderedStack {
  const dir = path.join(renderedDir, s.plan.stack);
  const fresh = renderPlan(s.plan).filter((f) => f.path.startsWith("talos/"));
  if (fresh.length === 0) {
    throw new UserError(
      `${s.config.file}: openkeel:environment: stack ${s.plan.stack} renders no Talos machines (its environment is not Talos). Fix: name a production stack`,
      EXIT_BAD_CONFIG,
    );
  }
  const onDisk = readRenderedDir(dir);
  const differs = fresh.filter((f) => onDisk.files.get(f.path) !== f.content).map((f) => f.path);
  const extra = [...(fs.existsSync(path.join(dir, "talos")) ? onDisk.files.keys() : [])].filter(
    (p) => p.startsWith("talos/") && !fresh.some((f) => f.path === p),
  );
  if (differs.length + extra.length > 0) {
    throw new UserError(
      `${path.join(dir, "talos")}: is not what ${s.config.file} renders now (${[...differs, ...extra].slice(0, 5).join(", ")}${differs.length + extra.length > 5 ? ", …" : ""}). ` +
        "Fix: npm run render, review the change and commit it; then run this again",
      EXIT_CHECKS_FAILED,
    );
  }
  return onDisk;
}

interface Machinery {
  secrets?: string;
  talosconfig: string;
  nodes: { node: string; machineType: string; patches: string[]; config?: string; problems: string[] }[];
}

/** The machinery's configs for every node of the render (the secrets file: reused; none: new ones). */
function machineryConfigs(stack: RenderedStack, name: string, secretsFile: string | undefined, talosEndpoints: string[]): Machinery {
  // the Kubernetes of machines.yaml: KUBERNETES_VERSION, as the render that was just checked has it
  const { clusterName, endpoint, kubernetesVersion } = genConfigInputs(stack, name);
  const argv = ["config", "-cluster-name", clusterName, "-endpoint", endpoint, "-talos-version", TALOS_VERSION, "-kubernetes-version", kubernetesVersion];
  if (secretsFile) argv.push("-secrets", secretsFile);
  if (talosEndpoints.length > 0) argv.push("-talos-endpoints", talosEndpoints.join(","));
  const r = spawnSync(requireTalosValidate(), [...argv, path.join(stack.where, "talos")], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, timeout: 120_000 });
  if (r.status === 2) throw new UserError(r.stderr.trim(), EXIT_BAD_CONFIG);
  if (r.status !== 0 && r.status !== 1) throw new Error(`talos-validate config exited ${r.status ?? r.signal}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Machinery;
}

/** What an earlier run left in the folder; refused when its machine configs lost their secrets. */
function earlierRun(out: string): { secrets?: string; talosconfig: boolean } {
  const secrets = path.join(out, SECRETS_FILE);
  const nodes = path.join(out, NODES_DIR);
  const configs = fs.existsSync(nodes) ? fs.readdirSync(nodes).filter((f) => f.endsWith(".yaml")) : [];
  if (!fs.existsSync(secrets) && configs.length > 0) {
    throw new UserError(
      `${out}: holds ${configs.length} machine config(s) in ${NODES_DIR}/ but no ${SECRETS_FILE}: they were made with secrets that are gone, and new ones would make another cluster. ` +
        `Fix: restore ${SECRETS_FILE} from where the cluster's keys are kept; for a cluster not installed yet, give an empty folder`,
      EXIT_BAD_CONFIG,
    );
  }
  return { ...(fs.existsSync(secrets) ? { secrets } : {}), talosconfig: fs.existsSync(path.join(out, TALOSCONFIG_FILE)) };
}

/** Write the secrets first (a config is never on disk without its secrets), the nodes, then talosconfig. */
function writeOut(out: string, m: Machinery, keepTalosconfig: boolean): string[] {
  fs.mkdirSync(path.join(out, NODES_DIR), { recursive: true, mode: PRIVATE_DIR });
  fs.chmodSync(out, PRIVATE_DIR);
  fs.chmodSync(path.join(out, NODES_DIR), PRIVATE_DIR);
  if (m.secrets) writeWhole(path.join(out, SECRETS_FILE), m.secrets, PRIVATE_FILE);
  const names = new Set(m.nodes.map((n) => `${n.node}.yaml`));
  for (const n of m.nodes) writeWhole(path.join(out, NODES_DIR, `${n.node}.yaml`), n.config!, PRIVATE_FILE);
  // a node no longer in the stack: its config would install a machine the stack does not have
  const stale = fs.readdirSync(path.join(out, NODES_DIR)).filter((f) => f.endsWith(".yaml") && !names.has(f));
  for (const f of stale) fs.rmSync(path.join(out, NODES_DIR, f));
  if (!keepTalosconfig) writeWhole(path.join(out, TALOSCONFIG_FILE), m.talosconfig, PRIVATE_FILE);
  return stale;
}

/**
 * The operator's next commands: apply-config per node (control plane first), then talosctl's own
 * configuration. `maintenance`: the machines' maintenance-mode addresses where they are known (the
 * facts of stacks/facts/<stack>/); a placeholder names the others.
 */
function nextSteps(
  out: string,
  machines: Record<string, TalosMachine>,
  addresses: Record<string, string | undefined>,
  maintenance: Record<string, string> = {},
): string[] {
  const order = Object.keys(machines).sort(
    (a, b) => Number(machines[b].machineType === "controlplane") - Number(machines[a].machineType === "controlplane") || (a < b ? -1 : a > b ? 1 : 0),
  );
  const controlPlanes = order.filter((n) => machines[n].machineType === "controlplane");
  return [
    "Next, each machine booted from its group's image, in maintenance mode (docs/operating.md, the first deployment):",
    ...order.map(
      (n) =>
        `  talosctl apply-config --insecure --nodes ${maintenance[n] ?? `<maintenance address of ${n}>`} --file ${path.join(out, NODES_DIR, `${n}.yaml`)}   # ${n}: ${machines[n].machineType}, comes up as ${addresses[n] ?? "its DHCP address"}`,
    ),
    "Then, once the machines have installed and come up on their addresses (docs/operating.md goes on from there):",
    `  export TALOSCONFIG=${path.join(out, TALOSCONFIG_FILE)}`,
    `  talosctl bootstrap --nodes ${addresses[controlPlanes[0]] ?? `<address of ${controlPlanes[0]}>`}`,
  ];
}

export function talosConfigCommand(argv: string[], io: Io): void {
  const opts = args(TALOS_CONFIG_OPTIONS, argv, TALOS_CONFIG_SCRIPT);
  if (!opts.stack || !opts.out) {
    throw new UserError(
      `${!opts.stack ? "--stack" : "--out"} is required. Fix: npm run talos-config -- --stack <stack> --out <folder outside the checkout>`,
      EXIT_BAD_CONFIG,
    );
  }
  const out = outsideCheckout(opts.out);
  const [s] = planStacks([opts.stack], opts["stacks-dir"]);
  for (const line of warningLines(planWarnings([s]))) io.err(`${line}\n`);
  const stack = renderedTalos(s, opts.rendered);
  const machines = stack.talosMachines();
  const addresses = Object.fromEntries(s.config.nodes.map((n) => [n.name, n.internalIP]));
  const earlier = earlierRun(out);
  const controlPlanes = Object.keys(machines)
    .filter((n) => machines[n].machineType === "controlplane")
    .sort()
    .flatMap((n) => addresses[n] ?? []);
  const m = machineryConfigs(stack, s.plan.stack, earlier.secrets, controlPlanes);
  const invalid = m.nodes.filter((n) => n.problems.length > 0);
  if (invalid.length > 0) {
    throw new UserError(
      [
        `${stack.where}/talos: ${invalid.length} node(s) fail talosctl validate --mode metal --strict (Talos ${TALOS_VERSION}); nothing written:`,
        ...invalid.flatMap((n) => [`  ${n.node} (${n.patches.join(", ")}):`, ...n.problems.map((p) => `    ${p}`)]),
        "Fix: correct the stack (or the code that renders it), npm run render, then run this again",
      ].join("\n"),
      EXIT_CHECKS_FAILED,
    );
  }
  const keepTalosconfig = earlier.talosconfig && !m.secrets;
  const stale = writeOut(out, m, keepTalosconfig);
  io.out(
    [
      `${s.plan.stack}: ${m.nodes.length} machine configs in ${path.join(out, NODES_DIR)}/, each valid for talosctl validate --mode metal --strict (Talos ${TALOS_VERSION}, Kubernetes ${KUBERNETES_VERSION})`,
      `  ${SECRETS_FILE}: ${m.secrets ? "generated (the cluster's CA keys: keep it with the team's other keys; every later run reuses it)" : "reused, from an earlier run"}`,
      `  ${TALOSCONFIG_FILE}: ${keepTalosconfig ? "kept, from an earlier run" : `written, endpoints ${controlPlanes.join(", ")}`}`,
      ...(stale.length > 0 ? [`  removed ${stale.map((f) => `${NODES_DIR}/${f}`).join(", ")}: no longer nodes of ${s.plan.stack}`] : []),
      ...nextSteps(out, machines, addresses),
    ].join("\n") + "\n",
  );
}
