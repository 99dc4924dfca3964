// The stack judged against its machines' facts (nodes/facts-checks.ts): each check tripped with
// the machine's own answers (test/fixtures/talos-facts/, in Talos' exact output shape), and a stack
// whose machines fit passes.
import { describe, expect, it } from "vitest";
import type { Check } from "../../config/problems";
import type { LoadedConfig } from "../../config/schema";
import { planStack } from "../../environments";
import { fixtureFacts } from "../helpers/talos-facts";
import { mutatedConfig } from "../helpers/stacks";

/** prod-medium with cmp-01 (node 3) as the Intel hypervisor of the fixtures, changed by `mutate`. */
function medium(mutate: (raw: any) => void = () => {}): LoadedConfig {
  const cfg = mutatedConfig("prod-medium", (r) => {
    r.nodes[3].machine = "hv-1";
    mutate(r);
  });
  return { ...cfg, facts: { "hv-1": fixtureFacts("hypervisor-intel", "hv-1") } };
}

/** prod-large with sto-1 (node 21) as the AMD storage machine of the fixtures. */
function large(mutate: (raw: any) => void = () => {}): LoadedConfig {
  const cfg = mutatedConfig("prod-large", (r) => {
    r.nodes[21].machine = "st-1";
    mutate(r);
  });
  return { ...cfg, facts: { "st-1": fixtureFacts("storage-amd", "st-1") } };
}

const checks = (cfg: LoadedConfig, prefix: RegExp): Check[] =>
  planStack(cfg).problems.filter((p): p is Check => typeof p.code === "string" && prefix.test(p.code) && p.level !== undefined);

describe("machine facts: a stack whose machine fits", () => {
  it("passes, and the warning names only the nodes that have no facts", () => {
    const cfg = medium();
    expect(checks(cfg, /^(machine|install|volume)-/).filter((c) => c.level === "error")).toEqual([]);
    const [warning] = checks(cfg, /^machine-facts-missing$/);
    expect(warning.level).toBe("warning");
    expect(warning.message).toMatch(/^8 node\(s\) name no machine with hardware facts \(cp-1, cp-2, cp-3, cmp-02,/);
    expect(warning.message).not.toContain("cmp-01");
  });
});

describe("machine facts: what trips them", () => {
  it("an install disk that can take the disk Longhorn's selector takes", () => {
    const [c] = checks(
      medium((r) => (r.nodes[3].installDisk = { serial: "S64HNE0T812345" })),
      /^install-disk$/,
    );
    expect(c).toMatchObject({ level: "error", path: "openkeel:nodes[3].installDisk" });
    expect(c.message).toMatch(
      /^selects nvme1n1 \(3\.8 TB, nvme, SAMSUNG .*\) on machine 'hv-1' \(node 'cmp-01'\), a disk the longhorn volume's selector \(openkeel:talos\.longhornDisk\.diskSelector\) may take too: installing there wipes the volume/,
    );
  });

  it("an install disk that can take one of Swift's capacity disks", () => {
    const found = checks(
      large((r) => (r.nodes[21].installDisk = { serial: "ZL2A0001" })),
      /^install-disk$/,
    );
    expect(found).toEqual([
      expect.objectContaining({
        path: "openkeel:nodes[21].installDisk",
        message: expect.stringMatching(
          /^selects sdb \(16 TB, sas, rotational, .*\) on machine 'st-1' \(node 'sto-1'\), a disk the longhorn-capacity volume's selector \(openkeel:talos\.capacityDisk\.diskSelector\)/,
        ),
      }),
    ]);
  });

  it("an install disk that matches two disks, or none", () => {
    const two = checks(
      medium((r) => (r.talos.installDisk = { type: "nvme" })),
      /^install-disk$/,
    );
    expect(two[0].message).toMatch(
      /^matches 2 disks of machine 'hv-1' \(node 'cmp-01'\): it has nvme0n1 .*; Talos would install on nvme0n1, the first it lists/,
    );
    expect(two[0].path).toBe("openkeel:talos.installDisk");
    const none = checks(
      medium((r) => (r.talos.installDisk = { type: "hdd" })),
      /^install-disk$/,
    );
    expect(none[0].message).toMatch(/^matches none of the disks of machine 'hv-1'/);
  });

  it("a Longhorn disk selector that finds no disk large enough", () => {
    const [c] = checks(
      medium((r) => (r.talos.longhornDisk.minSize = "8TB")),
      /^volume-disk$/,
    );
    expect(c).toMatchObject({
      path: "openkeel:talos.longhornDisk.diskSelector",
      message: expect.stringMatching(/^selects no disk of machine 'hv-1' \(node 'cmp-01'\) with 8TB free/),
    });
  });

  it("bond members and OVS NICs the machine lacks, each at its key path", () => {
    const nics = checks(large(), /^machine-nic$/);
    expect(nics.map((c) => c.path)).toEqual(["openkeel:hostNetworks.storage.bonds[0].members[0]", "openkeel:hostNetworks.storage.bonds[0].members[1]"]);
    expect(nics[0].message).toMatch(
      /^names NIC 'enp1s0f0', which machine 'st-1' \(node 'sto-1', .*storage-amd\.yaml\) does not have: its NICs are eno1np0 \(3c:ec:ef:12:34:56, bnxt_en\), eno2np1/,
    );
    const ovs = checks(
      medium((r) => (r.hostNetworks.hypervisor.ovs[0].members = ["enp2s0f0", "enp3s0f0"])),
      /^machine-nic$/,
    );
    expect(ovs.map((c) => c.path)).toEqual(["openkeel:hostNetworks.hypervisor.ovs[0].members[1]"]);
  });

  it("Intel's watchdog driver on an AMD machine", () => {
    const [c] = checks(large(), /^machine-watchdog$/);
    expect(c).toMatchObject({ path: "openkeel:talos.watchdogModule", fix: "use sp5100_tco on AMD, or ipmi_watchdog through the BMC" });
    expect(c.message).toMatch(/^is iTCO_wdt, Intel's chipset watchdog, and machine 'st-1' \(node 'sto-1'\) has Advanced Micro Devices, Inc\. CPUs/);
    expect(
      checks(
        large((r) => (r.talos.watchdogModule = "sp5100_tco")),
        /^machine-watchdog$/,
      ),
    ).toEqual([]);
  });

  it("a machine without facts, and one machine for two nodes", () => {
    const missing = checks(
      medium((r) => (r.nodes[4].machine = "hv-9")),
      /^machine-facts$/,
    );
    expect(missing).toEqual([
      expect.objectContaining({
        path: "openkeel:nodes[4].machine",
        message: expect.stringMatching(/^node 'cmp-02' is machine 'hv-9', which has no facts file .*; the stack's machines are hv-1/),
      }),
    ]);
    const twice = checks(
      medium((r) => (r.nodes[4].machine = "hv-1")),
      /^machine-facts$/,
    );
    expect(twice[0].message).toBe("node 'cmp-02' is machine 'hv-1', which node 'cmp-01' already is");
  });
});

describe("without facts: an install disk selector that can take a volume's disk on some machine", () => {
  it("is refused, once per selector, naming its nodes and a disk both take", () => {
    const found = checks(
      mutatedConfig("prod-medium", (r) => (r.talos.installDisk = { type: "nvme" })),
      /^install-disk$/,
    );
    expect(found).toEqual([expect.objectContaining({ level: "error", path: "openkeel:talos.installDisk" })]);
    expect(found[0].message).toMatch(
      /^can select a disk the longhorn volume's selector \(openkeel:talos\.longhornDisk\.diskSelector\) may take too, on cp-1, cp-2, cp-3, cmp-01, cmp-02, cmp-03: a non-rotational nvme disk of \d+ bytes meets both/,
    );
    // Swift's capacity disks: rotational; an install disk by serial alone could be one of them
    const swift = checks(
      mutatedConfig("prod-large", (r) => (r.nodes[21].installDisk = { serial: "ZL2A*" })),
      /^install-disk$/,
    );
    expect(swift.map((c) => [c.path, /longhorn-capacity volume/.test(c.message)])).toEqual([
      ["openkeel:nodes[21].installDisk", false],
      ["openkeel:nodes[21].installDisk", true],
    ]);
  });

  it("passes a selector the volumes' sizes or types keep apart, and leaves a node with facts to its facts", () => {
    for (const stack of ["prod-small", "prod-medium", "prod-large"])
      expect(
        checks(
          mutatedConfig(stack, () => {}),
          /^install-disk$/,
        ),
        stack,
      ).toEqual([]);
    // by size: a boot disk below Longhorn's minSize
    expect(
      checks(
        mutatedConfig("prod-medium", (r) => (r.talos.installDisk = { type: "nvme", size: "< 1TB" })),
        /^install-disk$/,
      ),
    ).toEqual([]);
    // cmp-01's own serial would collide on some machine, but its facts say which disk it is
    expect(
      checks(
        medium((r) => (r.nodes[3].installDisk = { serial: "PHBT123400AB480A" })),
        /^install-disk$/,
      ),
    ).toEqual([]);
  });
});
