// YAML anchors in stack files (issue 14, item 19): inventories share blocks with aliases
// (`labels: *hypervisor`), so a large inventory written that way loads; what is refused is a
// document whose aliases expand it far beyond what it writes (billion laughs), or without end.
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { rawFromStackYaml } from "../../config/stack-file";
import { loadConfig } from "../../config/load";
import { problemsOf } from "../helpers/stacks";
import { STACK_DECLARATIONS } from "../../environments/registry";

const FILE = "stacks/Pulumi.big.yaml";

/** A production stack of `n` hypervisors whose labels and roles are one anchored block each. */
function anchoredInventory(n: number): string {
  const nodes = [
    ...[1, 2, 3].map((i) => `    - {name: cp-${i}, kubernetesControlPlane: true, internalIP: 10.50.0.${i}, roles: &cp [controlPlane, network, storage]}`),
    ...Array.from({ length: n }, (_, i) => {
      const first = i === 0;
      return [
        `    - name: cmp-${i + 1}`,
        `      internalIP: 10.50.${1 + Math.floor(i / 200)}.${(i % 200) + 1}`,
        `      roles: ${first ? "&hv [compute]" : "*hv"}`,
        `      labels: ${first ? "&hypervisor" : "*hypervisor"}`,
        ...(first ? ["        network.openkeel.io/external-nic: bond1", "        example.org/rack: r1", "        example.org/class: gen5"] : []),
      ].join("\n");
    }),
  ];
  return [
    "config:",
    "  openkeel:environment: talos-production",
    "  openkeel:cluster: {context: admin@aliases, apiServer: 'https://10.0.0.1:6443'}",
    "  openkeel:topology: large",
    "  openkeel:nodes:",
    ...nodes,
    "  openkeel:talos:",
    "    watchdogModule: iTCO_wdt",
    "    compute: {reservedSystemCPUs: '0-3', systemReserved: {memory: 8Gi}}",
    "    longhornDisk: {diskSelector: '!system_disk', minSize: 500GB}",
    "",
  ].join("\n");
}

describe("YAML anchors in stack files", () => {
  it("loads a 200-node inventory whose nodes share their labels and roles through aliases", () => {
    const raw = rawFromStackYaml(anchoredInventory(200), FILE);
    const cfg = loadConfig(raw, { stack: "big", file: FILE }, STACK_DECLARATIONS);
    expect(cfg.nodes).toHaveLength(203);
    expect(cfg.nodes[202].labels).toEqual({ "network.openkeel.io/external-nic": "bond1", "example.org/rack": "r1", "example.org/class": "gen5" });
    expect(cfg.nodes[202].roles).toEqual(["compute"]);
  });

  it("still refuses a billion-laughs document, naming the expansion", () => {
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x, x]",
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
      "config:",
      "  openkeel:bomb: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]",
    ].join("\n");
    const [p] = problemsOf(() => rawFromStackYaml(bomb, FILE));
    expect(p.file).toBe(FILE);
    expect(p.message).toMatch(/aliases expand \d+ written values to 1\d{5}: a "billion laughs" document/);
    expect(p.fix).toMatch(/write the values out/);
  });

  it("refuses an alias inside its own anchor, which expands without end", () => {
    const [p] = problemsOf(() => rawFromStackYaml("config:\n  openkeel:nodes: &n [*n]\n", FILE));
    expect(p.message).toMatch(/to infinitely many/);
  });

  it("an alias names the latest anchor of its name before it, and one before its anchor is refused with its line", () => {
    const raw = rawFromStackYaml("config:\n  openkeel:a: &x 1\n  openkeel:b: *x\n  openkeel:c: &x 2\n  openkeel:d: *x\n", FILE);
    expect(raw).toEqual({ a: 1, b: 1, c: 2, d: 2 });
    const [p] = problemsOf(() => rawFromStackYaml("config:\n  openkeel:b: *y\n  openkeel:c: &y 2\n", FILE));
    expect(p.path).toBe("line 2, column 15");
    expect(p.message).toMatch(/alias \*y has no anchor &y before it/);
  });

  it("gives the values yaml itself gives: aliases of scalars, lists and maps, nested, redefined, as keys", () => {
    const text = [
      "config:",
      "  openkeel:a: &s one",
      "  openkeel:b: &l [*s, two, &m {k: *s}]",
      "  openkeel:c: {x: *l, y: *m, *s : key}",
      "  openkeel:d: &s again",
      "  openkeel:e: [*s, *l, &l [three], *l]",
      "  openkeel:f: *m",
      "",
    ].join("\n");
    const raw = rawFromStackYaml(text, FILE);
    const own = parse(text) as { config: Record<string, unknown> };
    expect(raw).toEqual(Object.fromEntries(Object.entries(own.config).map(([k, v]) => [k.slice("openkeel:".length), v])));
    expect(raw.e).toEqual(["again", ["one", "two", { k: "one" }], ["three"], ["three"]]);
  });
});
