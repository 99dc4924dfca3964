// The facts and the disk judgements held to Talos' own code (tools/talos-validate, the machinery at
// TALOS_VERSION):
// - the facts fixtures are exactly what Talos' resource types print as `talosctl get -o yaml`
//   (facts-example regenerates them byte for byte from their inputs);
// - which disks the install selector and the volumes' CEL selectors take, as nodes/disk-selectors.ts
//   judges it, is what InstallConfig.DiskMatchExpression + blockhelpers.MatchDisks and
//   celenv.DiskLocator answer (match-disks), on every fixture machine, for the shipped stacks'
//   selectors and a set of selectors of every form Talos documents.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { InstallDiskSelector } from "../../../config/talos";
import { installCandidates, volumeSelectorMatches } from "../../../nodes/disk-selectors";
import { longhornDisks } from "../../../platform/longhorn-talos";
import { requireTalosValidate } from "../../../tools/talos-validate";
import { FACT_MACHINES, FACTS_FIXTURES, factsFileFromStream, fixtureFacts } from "../../helpers/talos-facts";
import { PRODUCTION_STACKS, shippedConfig } from "../../helpers/stacks";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "talos-facts-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function tool(args: string[]): string {
  const r = spawnSync(requireTalosValidate(), args, { encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) throw new Error(`talos-validate ${args.join(" ")}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

describe("the facts fixtures are Talos' own output", () => {
  it.each(FACT_MACHINES)("%s: talos-validate facts-example prints exactly the fixture", (m) => {
    const stream = tool(["facts-example", path.join(FACTS_FIXTURES, `${m}.machine.yaml`)]);
    expect(factsFileFromStream(m, stream)).toBe(fs.readFileSync(path.join(FACTS_FIXTURES, `${m}.yaml`), "utf8"));
  });

  it("a spec field Talos' types do not have is refused", () => {
    const bad = path.join(dir, "bad.machine.yaml");
    fs.writeFileSync(bad, "node: 10.0.0.1\nsystem: {serialnumber: X}\ndisks:\n  - id: sda\n    spec: {dev_path: /dev/sda, size: 1, kind: ssd}\n");
    const r = spawnSync(requireTalosValidate(), ["facts-example", bad], { encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/disks\[sda\]: yaml: construct errors:\s+line 1: field kind not found in type block\.DiskSpec/);
  });
});

/** Install selectors of every form Talos' InstallDiskSelector takes, and volume selectors of the forms its docs show. */
const INSTALLS: InstallDiskSelector[] = [
  { type: "ssd", size: "<= 512GB" },
  { type: "nvme" },
  { type: "hdd" },
  { size: ">= 1TB" },
  { type: "sd" },
  { size: "480103981056" },
  { size: "< 480GB" },
  { model: "Dell BOSS*" },
  { serial: "ZL2A000*", type: "hdd" },
  { wwid: "eui.0025385b21405a7c" },
  { busPath: "/pci0000:00/*" },
  { busPath: "/pci0000:40/0000:40:08.1/*" },
  { model: "*MICRON*" },
];
const VOLUMES = [
  "disk.transport == 'nvme' && !system_disk",
  "disk.rotational && !system_disk",
  "disk.size >= 1u * TB && !system_disk",
  "disk.size > 500u * GB && disk.transport == 'sas'",
  "glob('ST16000*', disk.model)",
  "disk.model.startsWith('SAMSUNG') || disk.serial == 'ZL2A0004'",
  "!disk.rotational && disk.dev_path != '/dev/sda'",
  "system_disk",
];

describe("which disks Talos takes: nodes/disk-selectors.ts against the machinery", () => {
  const shippedVolumes = PRODUCTION_STACKS.flatMap((s) => {
    const t = longhornDisks(shippedConfig(s).talos!);
    return [t.longhornDisk?.diskSelector, t.capacityDisk?.diskSelector].filter((x): x is string => x !== undefined);
  });
  const shippedInstalls = PRODUCTION_STACKS.map((s) => shippedConfig(s).talos!.installDisk!).map(({ name: _n, ...sel }) => sel);

  it.each(FACT_MACHINES)("%s: the same install disks and the same volume matches, system disk or not", (m) => {
    const facts = fixtureFacts(m);
    const factsPath = path.join(FACTS_FIXTURES, `${m}.yaml`);
    const volumes = [...new Set([...shippedVolumes, ...VOLUMES])];
    const installs = [...shippedInstalls, ...INSTALLS];
    const query = path.join(dir, `${m}-query.yaml`);
    fs.writeFileSync(query, stringify({ installs, volumes }));
    const talos = JSON.parse(tool(["match-disks", factsPath, query])) as {
      installs: { disks: string[]; error?: string }[];
      volumes: { expression: string; error?: string; matches: Record<string, [boolean, boolean]> }[];
    };
    installs.forEach((sel, i) => {
      expect(talos.installs[i].error, JSON.stringify(sel)).toBeUndefined();
      expect(
        installCandidates(sel, facts.disks).map((d) => d.id),
        JSON.stringify(sel),
      ).toEqual(talos.installs[i].disks);
    });
    for (const v of talos.volumes) {
      expect(v.error, v.expression).toBeUndefined();
      for (const d of facts.disks) {
        expect([volumeSelectorMatches(v.expression, d, false), volumeSelectorMatches(v.expression, d, true)], `${v.expression} on ${d.id}`).toEqual(
          v.matches[d.id],
        );
      }
    }
  });

  it("the install selectors and volumes above take something on the machines and leave something: the comparison is not vacuous", () => {
    const disks = FACT_MACHINES.flatMap((m) => fixtureFacts(m).disks);
    for (const sel of INSTALLS.slice(0, 4)) expect(installCandidates(sel, disks).length, JSON.stringify(sel)).toBeGreaterThan(0);
    for (const v of VOLUMES.slice(0, 6)) {
      const taken = disks.filter((d) => volumeSelectorMatches(v, d, false)).length;
      expect(taken, v).toBeGreaterThan(0);
      expect(taken, v).toBeLessThan(disks.length);
    }
  });
});
