// A machine's hardware facts, as Talos itself reports them from maintenance mode: the output of
// `talosctl get <type> --insecure --nodes <address> -o yaml` for its system information,
// processors, disks and links, one file per machine under stacks/facts/<stack>/<machine>.yaml
// (`npm run facts` writes it, nodes/facts-checks.ts judges the stack against it). The file keeps
// Talos' own documents (cmd/talosctl/cmd/talos/output/yaml.go at v1.13.9: `node: `, empty in
// maintenance mode, then the resource's metadata and spec), so a reviewer reads what the machine
// said, not our summary; its header says which address answered. This module is their one reader
// and writer.
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import { z } from "zod";
import type { Problem } from "./problems";

/** The Talos resources a facts file holds, in the order `npm run facts` asks for them: `talosctl get <alias>`. */
export const FACT_RESOURCES = [
  { alias: "systeminformation", type: "SystemInformations.hardware.talos.dev" },
  { alias: "cpus", type: "Processors.hardware.talos.dev" },
  { alias: "disks", type: "Disks.block.talos.dev" },
  { alias: "links", type: "LinkStatuses.net.talos.dev" },
] as const;

export const FACTS_DIR = "facts";

/** stacks/facts/<stack>/ */
export const factsDir = (stack: string, stacksDir: string) => path.join(stacksDir, FACTS_DIR, stack);
export const factsFile = (stack: string, machine: string, stacksDir: string) => path.join(factsDir(stack, stacksDir), `${machine}.yaml`);

/** A disk as Talos' Disk resource describes it (block.DiskSpec, pkg/machinery/resources/block/disk.go). */
export interface DiskFact {
  id: string;
  dev_path: string;
  size: bigint;
  pretty_size: string;
  io_size: bigint;
  sector_size: bigint;
  readonly: boolean;
  cdrom: boolean;
  model: string;
  serial: string;
  modalias: string;
  wwid: string;
  uuid: string;
  bus_path: string;
  sub_system: string;
  transport: string;
  rotational: boolean;
  secondary_disks: string[];
  symlinks: string[];
}

/** A link as Talos' LinkStatus describes it (network.LinkStatusSpec): the fields the checks read. */
export interface LinkFact {
  name: string;
  /** `ether` for an Ethernet NIC; `kind` is empty for a physical one (a bond, VLAN, … has its kind). */
  type: string;
  kind: string;
  permanentAddr: string;
  driver: string;
  busPath: string;
}

export interface MachineFacts {
  machine: string;
  file: string;
  /** The address it answered on in maintenance mode (the header's `# address:`). */
  address: string;
  system: { manufacturer: string; productName: string; serialNumber: string; uuid: string };
  cpus: { manufacturer: string; productName: string }[];
  disks: DiskFact[];
  links: LinkFact[];
}

const uint = z.union([z.number().int().min(0), z.bigint()]).transform((n) => BigInt(n));
const str = z.string().default("");
const diskSpec = z.looseObject({
  dev_path: z.string(),
  size: uint,
  pretty_size: str,
  io_size: uint.default(0n),
  sector_size: uint.default(512n),
  readonly: z.boolean().default(false),
  cdrom: z.boolean().default(false),
  model: str,
  serial: str,
  modalias: str,
  wwid: str,
  uuid: str,
  bus_path: str,
  sub_system: str,
  transport: str,
  rotational: z.boolean().default(false),
  secondary_disks: z.array(z.string()).default([]),
  symlinks: z.array(z.string()).default([]),
});
const linkSpec = z.looseObject({ type: z.string(), kind: str, permanentAddr: str, driver: str, busPath: str });
const cpuSpec = z.looseObject({ manufacturer: str, productName: str });
const systemSpec = z.looseObject({ manufacturer: str, productName: str, serialnumber: str, uuid: str });

const documentSchema = z.looseObject({
  // talosctl --insecure prints an empty node (no `nodes` metadata in maintenance mode)
  node: z.string().nullable().optional(),
  metadata: z.looseObject({ type: z.enum(FACT_RESOURCES.map((r) => r.type) as [string, ...string[]]), id: z.string().min(1) }),
  spec: z.unknown(),
});

type Doc = z.infer<typeof documentSchema>;

const FIX = "capture the machine again: npm run facts -- --stack <stack> --address <its maintenance address> (docs/operating.md)";

/** Read a facts file's text; problems name the file, the document and the key. */
export function parseMachineFacts(text: string, file: string, machine: string): MachineFacts | Problem[] {
  const problems: Problem[] = [];
  const docs: Doc[] = [];
  parseAllDocuments(text).forEach((d, i) => {
    if (d.errors.length > 0) {
      problems.push({ file, path: `documents[${i}]`, message: `is not YAML: ${d.errors[0].message.split("\n")[0]}`, fix: FIX });
      return;
    }
    const raw = d.toJS() as unknown;
    if (raw === null || raw === undefined) return;
    const r = documentSchema.safeParse(raw);
    if (!r.success)
      problems.push(
        ...r.error.issues.map((x) => ({
          file,
          path: `documents[${i}].${x.path.join(".")}`,
          message: `is not what talosctl get prints: ${x.message}`,
          fix: FIX,
        })),
      );
    else docs.push(r.data);
  });
  if (problems.length > 0) return problems;
  const of = <T extends z.ZodType>(type: string, schema: T) =>
    docs.flatMap((d, i) => {
      if (d.metadata.type !== type) return [];
      const r = schema.safeParse(d.spec);
      if (r.success) return [{ id: d.metadata.id, spec: r.data as z.infer<T> }];
      problems.push(
        ...r.error.issues.map((x) => ({
          file,
          path: `documents[${i}].spec.${x.path.join(".")}`,
          message: `is not what talosctl get prints: ${x.message}`,
          fix: FIX,
        })),
      );
      return [];
    });
  const system = of(FACT_RESOURCES[0].type, systemSpec)[0]?.spec;
  const cpus = of(FACT_RESOURCES[1].type, cpuSpec).map((c) => ({ manufacturer: c.spec.manufacturer, productName: c.spec.productName }));
  const disks = of(FACT_RESOURCES[2].type, diskSpec).map(({ id, spec }) => ({ ...spec, id }) as DiskFact);
  const links = of(FACT_RESOURCES[3].type, linkSpec).map(({ id, spec }) => ({
    name: id,
    type: spec.type,
    kind: spec.kind,
    permanentAddr: spec.permanentAddr,
    driver: spec.driver,
    busPath: spec.busPath,
  }));
  for (const r of FACT_RESOURCES) {
    if (!docs.some((d) => d.metadata.type === r.type)) problems.push({ file, path: "", message: `holds no ${r.type} (talosctl get ${r.alias})`, fix: FIX });
  }
  const address = ADDRESS_LINE.exec(text)?.[1];
  if (address === undefined) problems.push({ file, path: "", message: "has no `# address:` line saying which address answered", fix: FIX });
  if (problems.length > 0 || !system || address === undefined) return problems;
  return {
    machine,
    file,
    address,
    system: { manufacturer: system.manufacturer, productName: system.productName, serialNumber: system.serialnumber, uuid: system.uuid },
    cpus,
    disks,
    links,
  };
}

/** Every machine's facts of a stack (none when it has no facts folder), or the problems of its files. */
export function readStackFacts(stack: string, stacksDir: string): { facts: Record<string, MachineFacts>; problems: Problem[] } {
  const dir = factsDir(stack, stacksDir);
  const facts: Record<string, MachineFacts> = {};
  const problems: Problem[] = [];
  if (!fs.existsSync(dir)) return { facts, problems };
  for (const name of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()) {
    const machine = name.slice(0, -".yaml".length);
    const file = path.join(dir, name);
    const r = parseMachineFacts(fs.readFileSync(file, "utf8"), file, machine);
    if (Array.isArray(r)) problems.push(...r);
    else facts[machine] = r;
  }
  return { facts, problems };
}

/** The header line of the address that answered. */
const ADDRESS_LINE = /^# address: (\S+)$/m;

/** A facts file: what made it and which address answered, then Talos' own output of each resource, as printed. */
export function machineFactsText(machine: string, talosVersion: string, address: string, outputs: readonly { alias: string; yaml: string }[]): string {
  const head = [
    `# Hardware facts of machine ${machine}, as Talos ${talosVersion} reports them in maintenance mode:`,
    `# ${outputs.map((o) => `talosctl get ${o.alias}`).join(", ")} (--insecure -o yaml). Written by npm run facts; do not edit.`,
    `# address: ${address}`,
  ];
  return `${head.join("\n")}\n${outputs.map((o) => o.yaml.trimEnd()).join("\n---\n")}\n`;
}
