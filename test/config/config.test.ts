// The config loader: both sources give the same Config; every class of bad input gets one clear
// problem naming the file, the key path, what is wrong and how to fix it.
import { describe, expect, it } from "vitest";
import { loadConfig, rawFromPulumiConfig } from "../../config/load";
import { resolveStack } from "../../environments";
import { formatProblem } from "../../config/problems";
import { closest, editDistance } from "../../config/suggest";
import * as fs from "node:fs";
import * as path from "node:path";
import { listStacks, rawFromStackYaml, readStack, readStackRaw, stackFilePath } from "../../config/stack-file";
import {
  configProblems,
  mutatedConfig,
  PRODUCTION_STACKS,
  problemsOf,
  pulumiConfigOf,
  SHIPPED_STACKS,
  shippedConfig,
  shippedRaw,
  STACKS_DIR,
  tempStacks,
} from "../helpers/stacks";
import { OPENKEEL_SERVICES } from "../../openkeel/services";
import { STACK_DECLARATIONS } from "../../environments/registry";
import { settingsOf } from "../../platform/component";
import { z } from "zod";

const FILE = "stacks/Pulumi.prod-medium.yaml";

describe("shipped stacks", () => {
  it("are the four topologies of § 6", () => {
    expect(SHIPPED_STACKS).toEqual(["lab", "prod-large", "prod-medium", "prod-small"]);
  });

  it.each(SHIPPED_STACKS)("%s: the Pulumi config source and the stack file give the same Config", (stack) => {
    const fromFile = shippedConfig(stack);
    const fromPulumi = loadConfig(
      rawFromPulumiConfig(pulumiConfigOf(shippedRaw(stack))),
      {
        stack,
        file: fromFile.file,
      },
      STACK_DECLARATIONS,
    );
    expect(fromPulumi).toEqual(fromFile);
  });

  it("take the label profile from the environment (D1)", () => {
    expect(resolveStack(shippedConfig("lab")).topology.profile).toBe("default");
    for (const s of PRODUCTION_STACKS) expect(resolveStack(shippedConfig(s)).topology.profile).toBe("hardened");
  });

  it("read a stack file as Pulumi rewrote it (top-level scalars as strings) like the original", () => {
    // `pulumi stack init` / `pulumi config set` keep top-level values as strings: taints: false becomes "false"
    const original = fs.readFileSync(stackFilePath("lab", STACKS_DIR), "utf8");
    const rewritten = original.replace(/^(\s+openkeel:(taints|bgp)): (true|false)$/gm, '$1: "$3"');
    expect(rewritten).not.toBe(original);
    const dir = tempStacks({ lab: rewritten });
    expect(readStack("lab", dir, STACK_DECLARATIONS)).toEqual({ ...shippedConfig("lab"), file: stackFilePath("lab", dir) });
  });

  it("ignore other namespaces' keys (provider config)", () => {
    const raw = rawFromPulumiConfig({ "kubernetes:context": "admin@prod", "openkeel:taints": "true" });
    expect(raw).toEqual({ taints: true });
  });
});

describe("bad config", () => {
  const cases: [string, (raw: any) => void, string, RegExp][] = [
    ["unknown top-level key", (r) => (r.taint = true), "openkeel:taint", /unknown key/],
    ["unknown node key", (r) => (r.nodes[0].role = "compute"), "openkeel:nodes[0].role", /unknown key/],
    ["unknown service", (r) => (r.services.nuetron = {}), "openkeel:services.nuetron", /unknown key/],
    ["wrong type", (r) => (r.taints = "yes"), "openkeel:taints", /must be|not one of|invalid/i],
    ["unknown role", (r) => (r.nodes[3].roles = ["hypervisor"]), "openkeel:nodes[3].roles[0]", /"hypervisor", not one of controlPlane/],
    ["unknown environment", (r) => (r.environment = "talos"), "openkeel:environment", /not one of kind-lab, talos-production/],
    ["missing inventory", (r) => delete r.nodes, "openkeel:nodes", /is required/],
    ["empty inventory", (r) => (r.nodes = []), "openkeel:nodes", /too small/],
    ["invalid IP", (r) => (r.nodes[1].internalIP = "10.30.0.300"), "openkeel:nodes[1].internalIP", /not an IPv4 address: each of its four numbers is 0 to 255/],
    ["missing IP in production", (r) => delete r.nodes[1].internalIP, "openkeel:nodes[1].internalIP", /required in production/],
    ["invalid node name", (r) => (r.nodes[0].name = "CP_1"), "openkeel:nodes[0].name", /not a valid node name/],
    ["invalid label key", (r) => (r.nodes[3].labels["bad key"] = "x"), 'openkeel:nodes[3].labels["bad key"]', /not a valid label key/],
    [
      "invalid label value",
      (r) => (r.nodes[3].labels["network.openkeel.io/bridge-mappings"] = "physnet1:br-ex"),
      'openkeel:nodes[3].labels["network.openkeel.io/bridge-mappings"]',
      /not a valid label value/,
    ],
    [
      "role label written by hand",
      (r) => (r.nodes[3].labels["node-restriction.kubernetes.io/openkeel-compute"] = ""),
      'openkeel:nodes[3].labels["node-restriction.kubernetes.io/openkeel-compute"]',
      /is a role label/,
    ],
    [
      "zone as a label",
      (r) => (r.nodes[3].labels["topology.kubernetes.io/zone"] = "a"),
      'openkeel:nodes[3].labels["topology.kubernetes.io/zone"]',
      /zone label/,
    ],
    ["production with lab keys (D1)", (r) => (r.labelProfile = "default"), "openkeel:labelProfile", /hardened label keys \(D1/],
    ["production with the lab topology", (r) => (r.topology = "lab"), "openkeel:topology", /for the kind-lab environment/],
    ["role listed twice", (r) => (r.nodes[3].roles = ["compute", "compute"]), "openkeel:nodes[3].roles[1]", /listed twice/],
    ["negative replicas", (r) => (r.services.ironic.replicas.conductor = -1), "openkeel:services.ironic.replicas.conductor", /too small/],
    [
      "role and roles both set",
      (r) => (r.services.nova = { placement: { api: { role: "controlPlane", roles: ["compute"] } } }),
      "openkeel:services.nova.placement.api.roles",
      /both set/,
    ],
  ];

  it.each(cases)("%s", (_title, mutate, path, message) => {
    const problems = configProblems("prod-medium", mutate);
    const p = problems.find((x) => x.path === path);
    expect(p, `problems: ${JSON.stringify(problems)}`).toBeDefined();
    expect(p!.file).toBe(FILE);
    expect(p!.message).toMatch(message);
    expect(p!.fix.length).toBeGreaterThan(5);
  });

  it("reports every problem, not only the first", () => {
    const problems = problemsOf(() =>
      mutatedConfig("prod-medium", (r) => {
        r.taint = true;
        r.nodes[0].internalIP = "nope";
        r.environment = "prod";
      }),
    );
    expect(problems.map((p) => p.path).sort()).toEqual(["openkeel:environment", "openkeel:nodes[0].internalIP", "openkeel:taint"]);
  });

  it("names the YAML line of a syntax error", () => {
    const problems = problemsOf(() => rawFromStackYaml("config:\n  openkeel:nodes: [a, b\n", FILE));
    expect(problems[0].file).toBe(FILE);
    expect(problems[0].path).toMatch(/^line \d+, column \d+$/);
    expect(problems[0].message).toMatch(/not valid YAML/);
  });

  it("one tab character gives one error, at its line, saying to indent with spaces", () => {
    // issue 21: the parser's errors after a tab all follow from it
    const text = fs.readFileSync(stackFilePath("prod-small"), "utf8").replace("  openkeel:topology: small", "\topenkeel:topology: small");
    expect(text).toContain("\topenkeel:topology");
    const problems = problemsOf(() => rawFromStackYaml(text, FILE));
    const line = text.split("\n").findIndex((l) => l.startsWith("\t")) + 1;
    expect(problems.map(formatProblem)).toEqual([
      `${FILE}: line ${line}, column 1: is not valid YAML (Tabs are not allowed as indentation). Fix: indent with spaces, not a tab`,
    ]);
  });

  it("rejects duplicate keys in the YAML", () => {
    const problems = problemsOf(() => rawFromStackYaml("config:\n  openkeel:taints: true\n  openkeel:taints: false\n", FILE));
    expect(problems[0].message).toMatch(/not valid YAML.*[Uu]nique|duplicate/i);
  });

  it("rejects a file without config:", () => {
    const problems = problemsOf(() => rawFromStackYaml("confg:\n  openkeel:taints: true\n", FILE));
    expect(problems.map((p) => p.path).sort()).toEqual(["confg", "config"]);
  });

  it("a relative stacks folder that is not there names where it looked (a command started from another folder)", () => {
    const problems = problemsOf(() => listStacks("stacks-nowhere"));
    expect(problems.map(formatProblem)).toEqual([
      `stacks-nowhere: no such folder: looked in ${path.resolve("stacks-nowhere")} (relative to ${process.cwd()}, where the command was started). Fix: run the command from the repository's root (npm run does), or pass --stacks-dir with the folder of the stack files`,
    ]);
    expect(problemsOf(() => readStackRaw("prod-medium", "stacks-nowhere")).map((p) => p.message)).toEqual([
      `no such folder: looked in ${path.resolve("stacks-nowhere")} (relative to ${process.cwd()}, where the command was started)`,
    ]);
  });

  it("names the known stacks when a stack has no file", () => {
    const problems = problemsOf(() => readStack("prod-tiny", STACKS_DIR, STACK_DECLARATIONS));
    expect(problems[0].message).toMatch(/no stack file/);
    expect(problems[0].fix).toMatch(/lab, prod-large, prod-medium, prod-small/);
  });
});

describe("problems an operator can act on", () => {
  const lines = (mutate: (r: any) => void) => problemsOf(() => mutatedConfig("prod-medium", mutate)).map(formatProblem);

  it("a problem inside a node names the node as well as its index", () => {
    // prod-medium's nodes[3] is cmp-01
    expect(lines((r) => (r.nodes[3].roles = ["hypervisor"]))).toEqual([
      `${FILE}: openkeel:nodes[3].roles[0]: node 'cmp-01': is string "hypervisor", not one of controlPlane, compute, network, storage, containers, provisioning. Fix: use one of the listed values`,
    ]);
    // issue 21: a number out of range is not a prefix problem
    expect(lines((r) => (r.nodes[6].internalIP = "10.30.1.256"))).toEqual([
      `${FILE}: openkeel:nodes[6].internalIP: node 'net-1': is not an IPv4 address: each of its four numbers is 0 to 255. Fix: correct the number out of range, e.g. 10.20.0.11`,
    ]);
    expect(lines((r) => (r.nodes[6].internalIP = "10.30.2.12/24"))).toEqual([
      `${FILE}: openkeel:nodes[6].internalIP: node 'net-1': is not an IPv4 or IPv6 address. Fix: write the node's address alone, without a prefix length, e.g. 10.20.0.11`,
    ]);
    expect(lines((r) => (r.nodes[6].internalIP = "net-1.example"))).toEqual([
      `${FILE}: openkeel:nodes[6].internalIP: node 'net-1': is not an IPv4 or IPv6 address. Fix: write the node's address, e.g. 10.20.0.11`,
    ]);
    // issue 21: a typo inside openkeel:taints names the bad role and suggests the right one
    expect(lines((r) => (r.taints = ["compute", "netwrk", "provisioning"]))).toEqual([
      `${FILE}: openkeel:taints: is a list: its entry "netwrk" is not a role (controlPlane, compute, network, storage, containers, provisioning). Fix: did you mean 'network'? write only roles, e.g. taints: [compute, network]`,
    ]);
    // YAML reads 1e309 as Infinity
    const infinite = rawFromStackYaml("config:\n  openkeel:x: 1e309\n", "s.yaml").x;
    expect(infinite).toBe(Infinity);
    expect(lines((r) => (r.services = { ironic: { replicas: { conductor: infinite } } }))).toEqual([
      `${FILE}: openkeel:services.ironic.replicas.conductor: is Infinity: not a finite number. Fix: write a number within range, e.g. 3`,
    ]);
    // the name itself: the index alone (the name is what is wrong)
    expect(lines((r) => (r.nodes[0].name = "CP_1"))[0]).toMatch(/openkeel:nodes\[0\]\.name: is string "CP_1": is not a valid node name/);
  });

  it("an unknown key or value suggests the closest valid one", () => {
    expect(lines((r) => (r.taint = ["compute"]))).toEqual([
      `${FILE}: openkeel:taint: unknown key. Fix: did you mean 'openkeel:taints'? stacks/README.md lists every key`,
    ]);
    expect(lines((r) => (r.nodes[3].internalIp = "10.30.1.11"))).toEqual([
      `${FILE}: openkeel:nodes[3].internalIp: node 'cmp-01': unknown key. Fix: did you mean 'internalIP'? stacks/README.md lists every key`,
    ]);
    expect(lines((r) => (r.nodes[3].roles = ["compute", "strorage"]))).toEqual([
      `${FILE}: openkeel:nodes[3].roles[1]: node 'cmp-01': is string "strorage", not one of controlPlane, compute, network, storage, containers, provisioning. Fix: use one of the listed values: did you mean 'storage'?`,
    ]);
    expect(lines((r) => (r.services.nuetron = {}))[0]).toMatch(/openkeel:services\.nuetron: unknown key\. Fix: did you mean 'neutron'\?/);
    // a service's name: the fix names every service of the registry
    expect(lines((r) => (r.services.octavia = {}))).toEqual([
      `${FILE}: openkeel:services.octavia: unknown key. Fix: remove it or correct its spelling; the OpenKeel services are ${OPENKEEL_SERVICES.map((s) => s.name).join(", ")}`,
    ]);
    expect(lines((r) => (r.talos.compute.reservedSystemCpus = "0-3"))[0]).toMatch(
      /openkeel:talos\.compute\.reservedSystemCpus: unknown key\. Fix: did you mean 'reservedSystemCPUs'\?/,
    );
    expect(lines((r) => (r.platform = { longhron: {} }))[0]).toMatch(/openkeel:platform\.longhron: unknown key\. Fix: did you mean 'longhorn'\?/);
    expect(lines((r) => (r.environment = "talos-prod"))[0]).toMatch(
      /openkeel:environment: .*\. Fix: use one of the listed values: did you mean 'talos-production'\?$/,
    );
    // nothing near: the generic fix, no guess
    expect(lines((r) => (r.nodes[3].flavour = "big"))[0]).toMatch(/unknown key\. Fix: remove it or correct its spelling/);
  });

  it("openkeel:platform holds the blocks the components declare to the loader, each read with its own schema", () => {
    const raw = () => ({ ...structuredClone(shippedRaw("prod-small")), platform: { example: { replicas: "two" } } });
    const source = { stack: "prod-small", file: "stacks/Pulumi.prod-small.yaml" };
    // without the declaration the key is unknown, like any other
    expect(problemsOf(() => loadConfig(raw(), source, STACK_DECLARATIONS)).map(formatProblem)[0]).toMatch(/openkeel:platform\.example: unknown key/);
    const example = { key: "example", schema: z.strictObject({ replicas: z.number().default(1) }).prefault({}) };
    const declared = { ...STACK_DECLARATIONS, platform: [...STACK_DECLARATIONS.platform, example] };
    expect(problemsOf(() => loadConfig(raw(), source, declared)).map(formatProblem)).toEqual([
      `stacks/Pulumi.prod-small.yaml: openkeel:platform.example.replicas: must be number, got string "two". Fix: write a number`,
    ]);
    const cfg = loadConfig({ ...structuredClone(shippedRaw("prod-small")) }, source, declared);
    expect(cfg.platform.example).toEqual({ replicas: 1 });
    expect(settingsOf(cfg.platform, example)).toEqual({ replicas: 1 });
    expect(cfg.platformCatalog.map((c) => c.key)).toEqual([...STACK_DECLARATIONS.platform.map((d) => d.key), "example"]);
  });

  it("a node state that is a service's act gets the fix its service declares (notStates), and nothing else does", () => {
    const raw = () => {
      const r = structuredClone(shippedRaw("prod-small"));
      (r.nodes as { state?: string }[])[0].state = "paused";
      return r;
    };
    const source = { stack: "prod-small", file: "stacks/Pulumi.prod-small.yaml" };
    const fix = () => problemsOf(() => loadConfig(raw(), source, declared)).map((p) => p.fix);
    let declared = STACK_DECLARATIONS;
    expect(fix()).toEqual(["use one of the listed values"]);
    const [first, ...rest] = STACK_DECLARATIONS.services;
    declared = { ...STACK_DECLARATIONS, services: [{ ...first, notStates: { paused: "pause it in the service instead" } }, ...rest] };
    expect(fix()).toEqual(["pause it in the service instead"]);
  });

  it("closest: case slips, abbreviations and a few edits; nothing for another word", () => {
    const roles = ["controlPlane", "compute", "network", "storage", "containers", "provisioning"];
    expect(closest("controlplane", roles)).toBe("controlPlane");
    expect(closest("compte", roles)).toBe("compute");
    expect(closest("stroage", roles)).toBe("storage");
    expect(closest("prov", roles)).toBe("provisioning");
    expect(closest("co", roles)).toBeUndefined();
    expect(closest("hypervisor", roles)).toBeUndefined();
    expect(closest("storage", roles)).toBeUndefined();
    expect(editDistance("taint", "taints")).toBe(1);
    expect(editDistance("stroage", "storage")).toBe(1);
    expect(editDistance("", "abc")).toBe(3);
  });
});

describe("bridge mappings (§ 3.2, D3): physnet:bridge[,physnet:bridge], each physnet and each bridge once", () => {
  const withMappings = (value: unknown) => (raw: any) => (raw.nodes[3].bridgeMappings = value);

  it("accepts several pairs", () => {
    expect(mutatedConfig("prod-medium", withMappings("physnet1:br-ex,physnet2:br-vlan")).nodes[3].bridgeMappings).toBe("physnet1:br-ex,physnet2:br-vlan");
  });

  it.each([
    ["physnet1:br-ex,physnet2:br-ex", "maps bridge 'br-ex' to two physnets"],
    ["physnet1:br-ex, physnet2:br-vlan", "is not a list of physnet:bridge pairs"],
    ["physnet1:br-external-provider", "is not a list of physnet:bridge pairs"],
    ["", "is not a list of physnet:bridge pairs"],
  ])("refuses %j", (value, message) => {
    const problems = configProblems("prod-medium", withMappings(value));
    expect(problems.map((p) => p.path)).toEqual(["openkeel:nodes[3].bridgeMappings"]);
    expect(problems[0].message).toContain(message);
  });
});

describe("Ironic's BMC networks: CIDRs without host bits", () => {
  const withNetworks = (value: unknown) => (raw: any) => (raw.services.ironic.bmcNetworks = value);

  it("accepts IPv4 and IPv6 networks", () => {
    const cfg = mutatedConfig("prod-medium", withNetworks(["10.50.0.0/24", "fd00:50::/64", "0.0.0.0/0"]));
    expect(cfg.services.ironic?.bmcNetworks).toEqual(["10.50.0.0/24", "fd00:50::/64", "0.0.0.0/0"]);
  });

  it.each([
    [["10.50.0.1/24"], "has host bits set"],
    [["fd00:50::1/64"], "has host bits set"],
    [["10.50.0.0/33"], "is not a network in CIDR notation"],
    [["10.50.0.0"], "is not a network in CIDR notation"],
    [["bmc-net"], "is not a network in CIDR notation"],
  ])("refuses %j", (value, message) => {
    const problems = configProblems("prod-medium", withNetworks(value));
    expect(problems.map((p) => p.path)).toEqual(["openkeel:services.ironic.bmcNetworks[0]"]);
    expect(problems[0].message).toContain(message);
  });

  it("refuses an empty list", () => {
    expect(configProblems("prod-medium", withNetworks([])).map((p) => p.path)).toEqual(["openkeel:services.ironic.bmcNetworks"]);
  });
});
