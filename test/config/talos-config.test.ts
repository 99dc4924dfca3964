// openkeel:talos: required in production, refused in the lab, and every bad value gets one problem
// with the file, the key path, what is wrong and how to fix it.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../config/load";
import { formatProblem } from "../../config/problems";
import { isCpuList, talosBlockIssues, talosKeysOf, WATCHDOG_MODULES, type TalosDeclaration } from "../../config/talos";
import { STACK_DECLARATIONS } from "../../environments/registry";
import { watchdogModuleOf } from "../../platform/medik8s-talos";
import { longhornDisks } from "../../platform/longhorn-talos";
import { configProblems, mutatedConfig, PRODUCTION_STACKS, problemsOf as thrownProblems, shippedConfig, shippedRaw } from "../helpers/stacks";

const problemsOf = configProblems;

describe("openkeel:talos", () => {
  it("is set, with a Talos watchdog module, in every production stack", () => {
    for (const stack of PRODUCTION_STACKS) {
      const talos = shippedConfig(stack).talos!;
      expect((WATCHDOG_MODULES as readonly string[]).includes(watchdogModuleOf(talos))).toBe(true);
      expect(talos.compute).toBeDefined();
      expect(longhornDisks(talos).longhornDisk).toBeDefined();
    }
    expect(shippedConfig("lab").talos).toBeUndefined();
  });

  it("fills the kubelet's own defaults into systemReserved (Talos replaces its whole default map)", () => {
    const reserved = mutatedConfig("prod-medium", (r) => (r.talos.compute.systemReserved = { memory: "9Gi" })).talos!.compute!.systemReserved;
    expect(reserved).toEqual({ memory: "9Gi", "ephemeral-storage": "256Mi", pid: 100 });
  });

  it("accepts CPU lists as the kubelet writes them", () => {
    for (const ok of ["0", "0-3", "0,1,32,33", "0-1,32-33"]) expect(isCpuList(ok), ok).toBe(true);
    for (const bad of ["", "3-0", "0-", "a", "0 1", "0;1"]) expect(isCpuList(bad), bad).toBe(false);
  });

  const cases: [string, string, (raw: any) => void, string, RegExp, RegExp][] = [
    ["missing in production", "prod-medium", (r) => delete r.talos, "openkeel:talos", /is required in production/, /add openkeel:talos/],
    [
      "set on the lab",
      "lab",
      (r) => (r.talos = { watchdogModule: "i6300esb" }),
      "openkeel:talos",
      /kind-lab environment has none/,
      /remove openkeel:talos from the lab stack/,
    ],
    [
      "softdog",
      "prod-medium",
      (r) => (r.talos.watchdogModule = "softdog"),
      "openkeel:talos.watchdogModule",
      /does not have \(CONFIG_SOFT_WATCHDOG/,
      /iTCO_wdt/,
    ],
    ["unknown watchdog", "prod-medium", (r) => (r.talos.watchdogModule = "itco_wdt"), "openkeel:talos.watchdogModule", /not a watchdog module/, /iTCO_wdt/],
    ["missing watchdog", "prod-medium", (r) => delete r.talos.watchdogModule, "openkeel:talos.watchdogModule", /is required/, /add it/],
    ["unknown key", "prod-medium", (r) => (r.talos.watchdog = "iTCO_wdt"), "openkeel:talos.watchdog", /unknown key/, /stacks\/README\.md/],
    [
      "compute missing with compute nodes",
      "prod-large",
      (r) => delete r.talos.compute,
      "openkeel:talos.compute",
      /is required: compute nodes/,
      /reservedSystemCPUs/,
    ],
    [
      "longhornDisk missing with storage nodes",
      "prod-small",
      (r) => delete r.talos.longhornDisk,
      "openkeel:talos.longhornDisk",
      /storage nodes keep Longhorn replicas/,
      /diskSelector/,
    ],
    [
      "bad CPU list",
      "prod-medium",
      (r) => (r.talos.compute.reservedSystemCPUs = "0-3;8"),
      "openkeel:talos.compute.reservedSystemCPUs",
      /not a CPU list/,
      /0-3/,
    ],
    [
      "systemReserved.cpu",
      "prod-medium",
      (r) => (r.talos.compute.systemReserved.cpu = "2"),
      "openkeel:talos.compute.systemReserved.cpu",
      /overwritten by the kubelet/,
      /size reservedSystemCPUs/,
    ],
    [
      "bad memory quantity",
      "prod-medium",
      (r) => (r.talos.compute.systemReserved.memory = "8GB"),
      "openkeel:talos.compute.systemReserved.memory",
      /not a Kubernetes quantity/,
      /8Gi/,
    ],
    [
      "bad page size",
      "prod-medium",
      (r) => (r.talos.compute.hugepages.pageSize = "1G"),
      "openkeel:talos.compute.hugepages.pageSize",
      /not one of 1Gi, 2Mi/,
      /listed values/,
    ],
    [
      "hugepages as an extra kernel argument",
      "prod-medium",
      (r) => (r.talos.compute.extraKernelArgs = ["hugepages=16"]),
      "openkeel:talos.compute.extraKernelArgs[0]",
      /compute\.hugepages already writes/,
      /compute\.hugepages/,
    ],
    [
      "kernel argument with a space",
      "prod-medium",
      (r) => (r.talos.compute.extraKernelArgs = ["intel_iommu=on iommu=pt"]),
      "openkeel:talos.compute.extraKernelArgs[0]",
      /not a kernel argument/,
      /one argument per list entry/,
    ],
    ["bad disk size", "prod-medium", (r) => (r.talos.longhornDisk.minSize = "lots"), "openkeel:talos.longhornDisk.minSize", /not a size/, /500GB/],
    [
      "bad disk maximum",
      "prod-medium",
      (r) => (r.talos.longhornDisk.maxSize = "120%"),
      "openkeel:talos.longhornDisk.maxSize",
      /not a size or a percentage/,
      /80%/,
    ],
    [
      "overlong kernel argument",
      "prod-medium",
      (r) => (r.talos.compute.extraKernelArgs = [`x=${"a".repeat(70)}`]),
      "openkeel:talos.compute.extraKernelArgs[0]",
      /at most 64 characters/,
      /one argument per list entry/,
    ],
    [
      "no install disk in production, for a node without its own",
      "prod-medium",
      (r) => delete r.talos.installDisk,
      "openkeel:talos.installDisk",
      /is required: cp-1, cp-2, .*installs on \/dev\/sda/,
      /installDisk: \{type: nvme/,
    ],
    [
      "an install disk by name",
      "prod-medium",
      (r) => (r.talos.installDisk = { name: "nvme0n1" }),
      "openkeel:talos.installDisk.name",
      /Talos v1\.13\.9 refuses/,
      /serial, wwid/,
    ],
    [
      "an install disk that selects nothing in particular",
      "prod-medium",
      (r) => (r.nodes[0].installDisk = {}),
      "openkeel:nodes[0].installDisk",
      /selects nothing in particular/,
      /its serial or wwid/,
    ],
    [
      "a size condition Talos cannot parse",
      "prod-medium",
      (r) => (r.talos.installDisk.size = "=> 1TB"),
      "openkeel:talos.installDisk.size",
      /not a size condition/,
      /'<= 1TB'/,
    ],
    [
      "no nameservers in production",
      "prod-medium",
      (r) => delete r.talos.nameservers,
      "openkeel:talos.nameservers",
      /1\.1\.1\.1 and 8\.8\.8\.8/,
      /your resolvers' addresses/,
    ],
    [
      "a nameserver by name",
      "prod-medium",
      (r) => (r.talos.nameservers = ["dns.example.net"]),
      "openkeel:talos.nameservers[0]",
      /not an IP address/,
      /10\.30\.0\.2/,
    ],
    [
      "no time servers in production",
      "prod-large",
      (r) => delete r.talos.timeServers,
      "openkeel:talos.timeServers",
      /time\.cloudflare\.com/,
      /your NTP servers/,
    ],
    [
      "no registry mirrors in production",
      "prod-small",
      (r) => delete r.talos.registries,
      "openkeel:talos.registries",
      /factory\.talos\.dev, ghcr\.io, registry\.k8s\.io/,
      /mirrors: \{'\*'/,
    ],
    [
      "mirrors that leave a registry the nodes pull from",
      "prod-medium",
      (r) => (r.talos.registries.mirrors = { "ghcr.io": { endpoints: ["https://harbor.example.net/v2/proxy-ghcr.io"], overridePath: true } }),
      "openkeel:talos.registries.mirrors",
      /mirrors no factory\.talos\.dev, registry\.k8s\.io, docker\.io, quay\.io/,
      /one for '\*'/,
    ],
    [
      "missing disk selector",
      "prod-medium",
      (r) => delete r.talos.longhornDisk.diskSelector,
      "openkeel:talos.longhornDisk.diskSelector",
      /is required/,
      /add it/,
    ],
  ];

  it.each(cases)("%s", (_title, stack, mutate, path, message, fix) => {
    const problems = problemsOf(stack, mutate);
    const p = problems.find((x) => x.path === path);
    expect(p, `problems: ${JSON.stringify(problems)}`).toBeDefined();
    expect(p!.file).toBe(`stacks/Pulumi.${stack}.yaml`);
    expect(p!.message).toMatch(message);
    expect(p!.fix).toMatch(fix);
  });
});

describe("a component's keys of openkeel:talos", () => {
  const keys = { exampleDisk: z.strictObject({ minSize: z.string() }).optional() };
  const example = {
    keys,
    required: [{ key: "exampleDisk", what: "the example disk" }],
    issues: (talos, has) =>
      has("storage") && talosKeysOf(talos, { keys }).exampleDisk === undefined
        ? [{ path: ["talos", "exampleDisk"], message: "is required: storage nodes. Fix: add exampleDisk" }]
        : [],
  } satisfies TalosDeclaration;
  const source = { stack: "prod-small", file: "stacks/Pulumi.prod-small.yaml" };
  const raw = (exampleDisk: unknown) => {
    const r = structuredClone(shippedRaw("prod-small")) as { talos: Record<string, unknown> };
    return { ...r, talos: { ...r.talos, exampleDisk } };
  };
  const declared = { ...STACK_DECLARATIONS, talos: [...STACK_DECLARATIONS.talos, example] };

  it("are read with the schema its module declares to the loader, and unknown without it", () => {
    expect(thrownProblems(() => loadConfig(raw({ minSize: "1TB" }), source, STACK_DECLARATIONS)).map(formatProblem)[0]).toMatch(
      /^stacks\/Pulumi\.prod-small\.yaml: openkeel:talos\.exampleDisk: unknown key/,
    );
    expect(thrownProblems(() => loadConfig(raw({ minSize: 1 }), source, declared)).map(formatProblem)).toEqual([
      "stacks/Pulumi.prod-small.yaml: openkeel:talos.exampleDisk.minSize: must be string, got number 1. Fix: write a string, quoted if it could read as a number",
    ]);
    const cfg = loadConfig(raw({ minSize: "1TB" }), source, declared);
    expect(talosKeysOf(cfg.talos!, example)).toEqual({ exampleDisk: { minSize: "1TB" } });
  });

  it("carry their rules against the nodes' roles and their part of a missing block's fix", () => {
    const cfg = loadConfig(structuredClone(shippedRaw("prod-small")), source, declared);
    const paths = (declarations: readonly TalosDeclaration[]) => talosBlockIssues(cfg, declarations).map((i) => i.path.join("."));
    expect(paths([])).toEqual([]);
    expect(paths([example])).toEqual(["talos.exampleDisk"]);
    expect(talosBlockIssues({ nodes: [] }, [example])[0].message).toBe(
      "is required in production: the Talos patches need the compute nodes' host reservation and the example disk. Fix: add openkeel:talos (compute, exampleDisk); stacks/README.md describes it",
    );
  });
});
