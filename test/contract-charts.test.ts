// Issue 22, item 2: the placement keys each e2e contract chart reads, against design § 5.2 "What
// is implemented". A key the chart reads that the table does not list is either a named deviation
// below (with its consequence, docs/design-decisions.md) or a failure; a key the table lists that the
// chart does not read is a failure too. The keys come from the templates (helm is not installed
// here): `openkeel.workload` of a component reads `placement.<key>` (unless it says `noPlacement` or
// passes its own `placementValue`), and every `.Values.<path>` a template names that ends in
// `placement`, `nodeSelector` or `tolerations`, or lies under `nodePlacement`, with `$var := …`
// resolved.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const CHARTS = path.resolve(__dirname, "e2e/charts");

/** § 5.2 "What is implemented": the placement keys each chart reads. */
const DESIGN_TABLE: Record<string, string[]> = {
  "openkeel-chart": ["infrastructure.mariadb.placement", "infrastructure.rabbitmq.placement"],
  ...Object.fromEntries(
    ["keystone", "placement", "glance", "neutron-fwaas", "ovn-octavia-provider", "skyline"].map((c) => [`openkeel-${c}`, ["placement.api"]]),
  ),
  "openkeel-barbican": ["placement.api", "placement.worker"],
  "openkeel-cinder": ["placement.api", "placement.workers"],
  "openkeel-masakari": [
    "placement.api",
    "placement.engine",
    "nodePlacement.api.nodeSelector",
    "nodePlacement.api.tolerations",
    "nodePlacement.engine.nodeSelector",
    "nodePlacement.engine.tolerations",
  ],
  "openkeel-neutron": ["placement.api", "placement.ovnCentral", "ovnCentral.nodeSelector", "chassis.nodeSelector"],
  "openkeel-neutron-vpnaas": ["placement.api", "agent.nodeSelector"],
  "openkeel-nova": ["placement.api", "placement.conductor", "placement.consoleProxy", "placement.ironicAgent", "placement.computeAgent"],
  "openkeel-ironic": ["placement.api", "placement.conductor"],
};

/**
 * What the contract charts read beyond the table: the design's § 5.1 layout for components the
 * table does not list. Each is a deviation of the contract charts from § 5.2, and so of what the
 * e2e proves: the real charts may place these components by nothing (consequence given).
 */
const DEVIATIONS: Record<string, string> = {
  "openkeel-chart ingress.placement":
    "the public ingress (D8) is placed by roles [controlPlane, network] only if the chart reads it; otherwise it lands on any untainted node",
  "openkeel-neutron placement.worker": "unplaced, the Neutron backend worker may land on any untainted node (§ 2.2: control plane)",
  "openkeel-neutron placement.metadataAgent": "unplaced, the metadata agent (D4) tolerates no compute taint: it misses tainted hypervisors",
  "openkeel-neutron placement.bgpAgent": "unplaced, ovn-bgp-agent misses tainted network and compute nodes (D3)",
  "openkeel-nova placement.scheduler": "unplaced, the Nova scheduler may land on any untainted node (§ 2.2: control plane)",
  "openkeel-swift placement.proxy": "unplaced, the Swift proxy may land on any untainted node",
  "openkeel-swift placement.storage":
    "unplaced, Swift storage reaches large's tainted storage nodes only through the helper: without it, no storage node at all",
  "openkeel-heat placement.api": "unplaced: any untainted node",
  "openkeel-heat placement.apiCfn": "unplaced: any untainted node",
  "openkeel-heat placement.engine": "unplaced: any untainted node",
  "openkeel-designate placement.api": "unplaced: any untainted node",
  "openkeel-designate placement.central": "unplaced: any untainted node",
  "openkeel-designate placement.sink": "unplaced: any untainted node",
  "openkeel-designate placement.externalDns": "unplaced: any untainted node",
  "openkeel-manila placement.api": "unplaced: any untainted node",
  "openkeel-manila placement.scheduler": "unplaced: any untainted node",
  "openkeel-manila placement.share": "unplaced: any untainted node",
  "openkeel-ec2-api placement.api": "unplaced: any untainted node",
  "openkeel-zun placement.api": "unplaced: any untainted node",
  "openkeel-zun placement.computeAgent": "unplaced, the Zun agent tolerates no containers taint: it misses tainted containers nodes",
};

/** The placement keys a chart's templates read. */
export function placementKeysRead(files: Record<string, string>): string[] {
  const keys = new Set<string>();
  for (const [file, raw] of Object.entries(files)) {
    if (file.endsWith("_openkeel.tpl")) continue;
    // `$x := .Values.a` and `$y := $x.b`: each variable as the .Values path it stands for
    const vars = new Map<string, string>();
    let text = raw;
    for (const m of raw.matchAll(/\$([A-Za-z]+) := (\.Values(?:\.[A-Za-z]+)*|\$[A-Za-z]+(?:\.[A-Za-z]+)*)\s*-?}}/g)) {
      vars.set(
        m[1],
        m[2].replace(/^\$([A-Za-z]+)/, (_, v: string) => vars.get(v) ?? `$${v}`),
      );
    }
    for (const [v, p] of [...vars].sort((a, b) => b[0].length - a[0].length)) text = text.replaceAll(new RegExp(`\\$${v}\\b(?! :=)`, "g"), p);
    for (const m of text.matchAll(/include "openkeel\.workload" \(dict ([^\n]*)/g)) {
      const args = m[1];
      const key = /"key" "([A-Za-z]+)"/.exec(args)?.[1];
      if (key && !/"noPlacement" true/.test(args) && !/"placementValue"/.test(args)) keys.add(`placement.${key}`);
    }
    // `(get (.Values.a | default dict) "k" | default dict).b` reads a.k.b
    text = text.replace(/\(get \(\.Values((?:\.[A-Za-z]+)+) \| default dict\) "([A-Za-z]+)" \| default dict\)\.([A-Za-z]+)/g, ".Values$1.$2.$3");
    for (const m of text.matchAll(/\.Values((?:\.[A-Za-z]+)+)/g)) {
      const p = m[1].slice(1);
      // the map of every component's placement (`get .Values.placement "<key>"`): the components' own keys count
      if (p === "placement") continue;
      if (/(^|\.)(placement|nodeSelector|tolerations)$/.test(p) || /(^|\.)nodePlacement\./.test(p)) keys.add(p);
    }
  }
  return [...keys].sort();
}

function chartFiles(chart: string): Record<string, string> {
  const dir = path.join(CHARTS, chart, "templates");
  return Object.fromEntries(fs.readdirSync(dir).map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8")]));
}

describe("item 2: the contract charts read what § 5.2 lists, and every other key is a named deviation", () => {
  const charts = fs.readdirSync(CHARTS).filter((c) => c !== "_shared");

  it.each(charts)("%s", (chart) => {
    const read = placementKeysRead(chartFiles(chart));
    const table = DESIGN_TABLE[chart] ?? [];
    expect(
      table.filter((k) => !read.includes(k)),
      "§ 5.2 lists it, the chart does not read it",
    ).toEqual([]);
    const beyond = read.filter((k) => !table.includes(k)).map((k) => `${chart} ${k}`);
    expect(
      beyond.filter((k) => DEVIATIONS[k] === undefined),
      "read beyond § 5.2 and not a named deviation",
    ).toEqual([]);
  });

  it("every named deviation is still read (a deviation that is gone is removed from the list)", () => {
    const all = new Set(charts.flatMap((c) => placementKeysRead(chartFiles(c)).map((k) => `${c} ${k}`)));
    expect(Object.keys(DEVIATIONS).filter((d) => !all.has(d))).toEqual([]);
  });

  it("openkeel-chart reads the members' role only: no anti-affinity or priority of its own (post-render patches supply them)", () => {
    const text = chartFiles("openkeel-chart")["infrastructure.yaml"];
    const members = text.split("---- public ingress")[0];
    expect(placementKeysRead({ "infrastructure.yaml": text })).toEqual([
      "infrastructure.mariadb.placement",
      "infrastructure.rabbitmq.placement",
      "ingress.placement",
    ]);
    expect(members).not.toMatch(/priorityClassName|antiAffinityEnabled|"priority"/);
    // a template that reads a key of its own beyond the table is found
    expect(placementKeysRead({ "x.yaml": "{{- $g := .Values.infrastructure.mariadb -}}\n{{ toYaml $g.topologySpread.tolerations }}" })).toEqual([
      "infrastructure.mariadb.topologySpread.tolerations",
    ]);
  });
});
