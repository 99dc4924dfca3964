// Which of a machine's disks Talos takes for what, judged as Talos judges it at the pin:
// - the install disk: machine.install.diskSelector, turned into a CEL expression and matched
//   against every disk, the first match taken (siderolabs/talos@v1.13.9
//   pkg/machinery/config/types/v1alpha1/v1alpha1_provider.go:1323-1490 DiskMatchExpression;
//   pkg/machinery/config/types/block/blockhelpers/blockhelpers.go:22-48 MatchDisks;
//   internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_sequencer_tasks.go:1517-1538);
// - a user volume (Longhorn's disk, Swift's capacity disk): its provisioning.diskSelector.match
//   over the disk and whether it is the system disk (pkg/machinery/cel/celenv/celenv.go:35-60
//   DiskLocator; internal/app/machined/pkg/controllers/block/internal/volumes/volumes.go:64-83),
//   on a disk large enough for its minSize (volumes/disk.go:54-62).
// The install selector is evaluated here as the conjunction Talos builds; a volume's expression
// with a CEL evaluator (@bufbuild/cel). test/integration/nodes/disk-oracle.test.ts holds both to
// Talos' own code (tools/talos-validate match-disks) on the same disks.
import { celFunc, CelScalar, celUint, run, type CelInput } from "@bufbuild/cel";
import { parseByteSize, parseSizeMatcher, type InstallDiskSelector } from "../config/talos";
import type { DiskFact } from "../config/facts";

/** github.com/ryanuber/go-glob Glob, which Talos' `glob` CEL function calls: `*` is the only wildcard. */
export function glob(pattern: string, subject: string): boolean {
  if (pattern === "*") return true;
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === subject;
  const [first, ...rest] = parts;
  const last = rest.pop()!;
  if (!subject.startsWith(first)) return false;
  let at = first.length;
  for (const part of rest) {
    const i = subject.indexOf(part, at);
    if (i < 0) return false;
    at = i + part.length;
  }
  return subject.length - last.length >= at && subject.endsWith(last);
}

const compare = {
  ">=": (a: bigint, b: bigint) => a >= b,
  "<=": (a: bigint, b: bigint) => a <= b,
  ">": (a: bigint, b: bigint) => a > b,
  "<": (a: bigint, b: bigint) => a < b,
  "==": (a: bigint, b: bigint) => a === b,
};

/** Whether Talos' DiskMatchExpression of the selector is true of the disk (the conjunction, term by term). */
export function installSelectorMatches(sel: InstallDiskSelector, disk: DiskFact): boolean {
  if (sel.size !== undefined) {
    const m = parseSizeMatcher(sel.size);
    // the schema refuses a size Talos cannot parse
    if (!m) throw new Error(`install disk size '${sel.size}' passed the schema but does not parse`);
    if (!compare[m.op](disk.size, m.bytes)) return false;
  }
  const globs: [string | undefined, string][] = [
    [sel.uuid, disk.uuid],
    [sel.wwid, disk.wwid],
    [sel.model, disk.model],
    [sel.serial, disk.serial],
    [sel.modalias, disk.modalias],
    [sel.busPath, disk.bus_path],
  ];
  if (globs.some(([pattern, value]) => pattern !== undefined && !glob(pattern, value))) return false;
  // not a device-mapper or other virtual device: Talos adds `disk.transport != ""`
  if (disk.transport === "") return false;
  if (sel.type === "nvme" && disk.transport !== "nvme") return false;
  if (sel.type === "sd" && disk.transport !== "mmc") return false;
  if (sel.type === "hdd" && !disk.rotational) return false;
  if (sel.type === "ssd" && disk.rotational) return false;
  return !disk.readonly && !disk.cdrom;
}

/** The disks Talos would install on, in its order (the first is taken). */
export function installCandidates(sel: InstallDiskSelector, disks: readonly DiskFact[]): DiskFact[] {
  return [...disks].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).filter((d) => installSelectorMatches(sel, d));
}

/** The unit constants of Talos' CEL environments (celenv.go:245-266). */
const UNITS = Object.fromEntries(
  (
    [
      ["KiB", 1024n],
      ["MiB", 1024n ** 2n],
      ["GiB", 1024n ** 3n],
      ["TiB", 1024n ** 4n],
      ["PiB", 1024n ** 5n],
      ["EiB", 1024n ** 6n],
      ["kB", 1000n],
      ["MB", 1000n ** 2n],
      ["GB", 1000n ** 3n],
      ["TB", 1000n ** 4n],
      ["PB", 1000n ** 5n],
      ["EB", 1000n ** 6n],
    ] as const
  ).map(([unit, n]) => [unit, celUint(n)]),
);

const GLOB = celFunc("glob", [CelScalar.STRING, CelScalar.STRING], CelScalar.BOOL, (pattern: string, subject: string) => glob(pattern, subject));

/** The disk as the CEL environment sees it: every field of the DiskSpec message, unsigned ones as uint. */
function celDisk(d: DiskFact): ReadonlyMap<string, CelInput> {
  return new Map<string, CelInput>([
    ["dev_path", d.dev_path],
    ["size", celUint(d.size)],
    ["pretty_size", d.pretty_size],
    ["io_size", celUint(d.io_size)],
    ["sector_size", celUint(d.sector_size)],
    ["readonly", d.readonly],
    ["cdrom", d.cdrom],
    ["model", d.model],
    ["serial", d.serial],
    ["modalias", d.modalias],
    ["wwid", d.wwid],
    ["uuid", d.uuid],
    ["bus_path", d.bus_path],
    ["sub_system", d.sub_system],
    ["transport", d.transport],
    ["rotational", d.rotational],
    ["secondary_disks", [...d.secondary_disks]],
    ["symlinks", [...d.symlinks]],
  ]);
}

/** Whether a volume's disk selector is true of the disk; a selector Talos cannot evaluate throws (the validator reports it). */
export function volumeSelectorMatches(expression: string, disk: DiskFact, systemDisk: boolean): boolean {
  const result = run(expression, { disk: celDisk(disk), system_disk: systemDisk, ...UNITS }, { funcs: [GLOB] });
  if (typeof result !== "boolean") throw new Error(`the disk selector '${expression}' is not a boolean expression`);
  return result;
}

/** A partition volume fits a disk with its minSize and the GPT's 67 sectors (volumes/disk.go:54-62). */
export function volumeFits(minSize: string, disk: DiskFact): boolean {
  const min = parseByteSize(minSize);
  if (min === undefined) throw new Error(`volume minSize '${minSize}' passed the schema but does not parse`);
  return disk.size >= min + disk.sector_size * 67n;
}
