// `npm run facts` as a function of its arguments: asks a machine in maintenance mode what it has,
// with Talos' own API (talosctl get <type> --insecure -o yaml), and writes the answer as the
// machine's facts file of the stack (config/facts.ts: stacks/facts/<stack>/<machine>.yaml), only
// once the answer reads as facts. The CLI (scripts/facts.ts) and the tests run the same code.
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { args, UserError, type Io } from "../cli/cli";
import { writeWhole } from "../cli/write";
import { FACT_RESOURCES, factsFile, machineFactsText, parseMachineFacts } from "../config/facts";
import { formatProblem } from "../config/problems";
import { listStacks } from "../config/stack-file";
import { TALOS_VERSION } from "../platform/versions";
import { requireTalosctl } from "./talosctl";
import { ToolError } from "./tools";

const FACTS_OPTIONS = {
  stack: { type: "string" },
  address: { type: "string" },
  machine: { type: "string" },
  talosctl: { type: "string" },
  "stacks-dir": { type: "string", default: "stacks" },
} as const;

const FACTS_SCRIPT = path.resolve(__dirname, "../scripts/facts.ts");
const MACHINE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** `talosctl get <alias> --insecure --nodes <address> -o yaml`: its output, or why it failed. */
function talosctlGet(talosctl: string, alias: string, address: string, env: NodeJS.ProcessEnv): string {
  const r = spawnSync(talosctl, ["get", alias, "--insecure", "--nodes", address, "-o", "yaml"], { encoding: "utf8", timeout: 60_000, env });
  if (r.status !== 0) {
    throw new UserError(
      `talosctl get ${alias} --insecure --nodes ${address} failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.error?.message || "").trim()}. Fix: boot the machine from its Talos image (it waits in maintenance mode), and give the address its console shows`,
      1,
    );
  }
  return r.stdout;
}

/** A machine's name from its facts: the serial number, made a file name. */
function defaultName(serial: string): string | undefined {
  const name = serial.replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "");
  return MACHINE_NAME.test(name) ? name : undefined;
}

export function factsCommand(argv: string[], io: Io, env: NodeJS.ProcessEnv = process.env): number {
  const opts = args(FACTS_OPTIONS, argv, FACTS_SCRIPT);
  const stacksDir = opts["stacks-dir"];
  if (!opts.stack || !opts.address)
    throw new UserError(
      "--stack and --address are required. Fix: npm run facts -- --stack prod-medium --address <the maintenance address the machine's console shows>",
      2,
    );
  if (!listStacks(stacksDir).includes(opts.stack))
    throw new UserError(`--stack ${opts.stack}: no stack file ${stacksDir}/Pulumi.${opts.stack}.yaml. Fix: use one of ${listStacks(stacksDir).join(", ")}`, 2);
  if (opts.machine !== undefined && !MACHINE_NAME.test(opts.machine))
    throw new UserError(`--machine ${opts.machine}: not a machine name (letters, digits, '.', '_', '-'; at most 63). Fix: e.g. --machine r760-7XK2Q53`, 2);
  let talosctl: string;
  try {
    talosctl = requireTalosctl(opts.talosctl, env);
  } catch (e) {
    if (e instanceof ToolError) throw new UserError(e.message, 1);
    throw e;
  }
  const outputs = FACT_RESOURCES.map((r) => ({ alias: r.alias, yaml: talosctlGet(talosctl, r.alias, opts.address!, env) }));
  const draft = machineFactsText(opts.machine ?? "unnamed", TALOS_VERSION, opts.address, outputs);
  const read = parseMachineFacts(draft, `the answer of ${opts.address}`, opts.machine ?? "unnamed");
  if (Array.isArray(read)) throw new UserError(`${read.map(formatProblem).join("\n")}\nnothing written`, 1);
  const machine = opts.machine ?? defaultName(read.system.serialNumber);
  if (machine === undefined)
    throw new UserError(
      `the machine at ${opts.address} reports no usable serial number ('${read.system.serialNumber}'). Fix: name it with --machine <name>`,
      2,
    );
  const file = factsFile(opts.stack, machine, stacksDir);
  writeWhole(file, machineFactsText(machine, TALOS_VERSION, opts.address, outputs));
  const nics = read.links.filter((l) => l.type === "ether" && l.kind === "").map((l) => l.name);
  io.out(
    `${file}: machine ${machine} (${read.system.manufacturer} ${read.system.productName}, serial ${read.system.serialNumber}) at ${read.address}: ${read.disks.length} disk(s) (${read.disks.map((d) => d.id).join(", ")}), NICs ${nics.join(", ")}, CPU ${read.cpus[0]?.manufacturer ?? "unknown"}\n`,
  );
  io.out(`next: set machine: ${machine} on its node in ${stacksDir}/Pulumi.${opts.stack}.yaml, then npm run plan -- --stack ${opts.stack}\n`);
  return 0;
}
