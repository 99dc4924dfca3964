// Issue 22, item 2: the placement keys each e2e contract chart reads, against design § 5.2 "What
// is implemented", in two steps: a service chart reads exactly what its service's descriptor says
// (openkeel/services/: so a new service takes its module and its chart, issue 40), and the
// descriptors of the design's services say exactly what the table lists. A key the chart reads that
// the table does not list is a failure, and so is a key the table lists that the chart does not
// read: the components the table does not list render with
// no placement, and the release's post-render patches place them (openkeel/unlisted.ts; what each
// would be without its patch: docs/design-decisions.md). The keys come from the templates (helm is not installed
// here): `openkeel.workload` of a component reads `placement.<key>` (unless it says `noPlacement` or
// passes its own `placementValue`), and every `.Values.<path>` a template names that ends in
// `placement`, `nodeSelector` or `tolerations`, or lies under `nodePlacement`, with `$var := …`
// resolved.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { isSelfPlaced } from "../../openkeel/components";
import { INFRASTRUCTURE_CHART } from "../../openkeel/names";
import { chartService } from "../../openkeel/registry";
import { isUnlisted, unlistedComponents } from "../../openkeel/unlisted";

const CHARTS = path.resolve(__dirname, "../../e2e/charts");

/**
 * § 5.2 "What is implemented": the placement keys each chart reads. The table's other charts read
 * none: § 5.2 lists none of their components (UNPLACED_BY_DESIGN).
 */
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
const UNPLACED_BY_DESIGN = ["openkeel-swift", "openkeel-heat", "openkeel-designate", "openkeel-manila", "openkeel-zun", "openkeel-ec2-api"];

/**
 * The placement keys a service's chart reads, as its descriptor says (openkeel/services/): the
 * helper's `placement.<key>` of a component § 5.2 lists, the nodeSelector and tolerations its
 * chart reads besides, and the own nodeSelector of a component the helper does not place.
 */
function descriptorReads(chart: string): string[] {
  const service = chartService(chart);
  if (!service) throw new Error(`${chart}: no service of the registry has this chart`);
  return Object.entries(service.components)
    .flatMap(([key, c]) => {
      if (isSelfPlaced(c)) return [`${key}.nodeSelector`];
      if (c.unlisted) return [];
      return [`placement.${key}`, ...[c.winningNodeSelector, c.addedTolerations].flatMap((p) => (p ? [p.join(".")] : []))];
    })
    .sort();
}

/** What a chart must read: the infrastructure chart's row of § 5.2, a service chart's descriptor. */
const expectedReads = (chart: string) => (chart === INFRASTRUCTURE_CHART ? DESIGN_TABLE[chart] : descriptorReads(chart));

/** The placement keys a chart's templates read. */
export function placementKeysRead(files: Record<string, string>): string[] {
  const keys = new Set<string>();
  for (const raw of Object.values(files)) {
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

describe("item 2: the contract charts read exactly what § 5.2 lists", () => {
  const charts = fs.readdirSync(CHARTS).filter((c) => c !== "_shared");

  it.each(charts)("%s: what its service's descriptor says it reads (the infrastructure chart: § 5.2's row)", (chart) => {
    const read = placementKeysRead(chartFiles(chart));
    const expected = expectedReads(chart);
    expect(
      expected.filter((k) => !read.includes(k)),
      "its descriptor says so, the chart does not read it",
    ).toEqual([]);
    expect(
      read.filter((k) => !expected.includes(k)),
      "read beyond its descriptor",
    ).toEqual([]);
  });

  it("the descriptors of the design's services say what § 5.2 lists, and no more", () => {
    const design = [...Object.keys(DESIGN_TABLE).filter((c) => c !== INFRASTRUCTURE_CHART), ...UNPLACED_BY_DESIGN];
    expect(
      design.filter((chart) => !charts.includes(chart)),
      "a chart of § 5.2 without its contract chart",
    ).toEqual([]);
    for (const chart of design) expect(descriptorReads(chart), chart).toEqual([...(DESIGN_TABLE[chart] ?? [])].sort());
  });

  it("a chart that reads a key beyond the table fails: the check is not vacuous", () => {
    // today's main: Nova's scheduler through the helper (placement.scheduler), the ingress from ingress.placement
    const nova = chartFiles("openkeel-nova")["openkeel-nova.yaml"].replace('"key" "scheduler" "noPlacement" true', '"key" "scheduler"');
    expect(placementKeysRead({ "openkeel-nova.yaml": nova }).filter((k) => !expectedReads("openkeel-nova").includes(k))).toEqual(["placement.scheduler"]);
    const infra = chartFiles("openkeel-chart")["infrastructure.yaml"].replace('"noPlacement" true', '"placementValue" .Values.ingress.placement');
    expect(placementKeysRead({ "infrastructure.yaml": infra }).filter((k) => !DESIGN_TABLE["openkeel-chart"].includes(k))).toEqual(["ingress.placement"]);
  });

  it("openkeel-chart reads the members' role only: no anti-affinity or priority of its own (post-render patches supply them)", () => {
    const text = chartFiles("openkeel-chart")["infrastructure.yaml"];
    const members = text.split("---- public ingress")[0];
    expect(placementKeysRead({ "infrastructure.yaml": text })).toEqual(["infrastructure.mariadb.placement", "infrastructure.rabbitmq.placement"]);
    expect(members).not.toMatch(/priorityClassName|antiAffinityEnabled|"priority"/);
    // a template that reads a key of its own beyond the table is found
    expect(placementKeysRead({ "x.yaml": "{{- $g := .Values.infrastructure.mariadb -}}\n{{ toYaml $g.topologySpread.tolerations }}" })).toEqual([
      "infrastructure.mariadb.topologySpread.tolerations",
    ]);
  });
});

/** Each `openkeel.workload` a chart's templates render: its key and the arguments it passes. */
function workloads(chart: string): { key: string; args: string }[] {
  return Object.values(chartFiles(chart)).flatMap((text) =>
    [...text.matchAll(/include "openkeel\.workload" \(dict ([^\n]*)/g)].map((m) => ({ key: /"key" "([A-Za-z]+)"/.exec(m[1])![1], args: m[1] })),
  );
}

describe("item 2: the components § 5.2 does not list render with no placement, and the program patches exactly those", () => {
  const charts = fs.readdirSync(CHARTS).filter((c) => c !== "_shared");
  /** The chart's own selector keys place these (§ 5.2's "Not placed by role" column): the chassis and the VPNaaS agent. */
  const selfPlaced = (args: string) => /"ownNodeSelector"/.test(args) && /"tolerateAll" true/.test(args);

  it.each(charts)("%s: an unlisted component passes no placement, no default role and no priority to the helper", (chart) => {
    const unlisted = workloads(chart).filter((w) => /"noPlacement" true/.test(w.args) && !selfPlaced(w.args));
    for (const w of unlisted) expect(w.args, `${chart} ${w.key}`).not.toMatch(/"defaultRoles"|"priority"|"placementValue"|"ownNodeSelector"|"ownTolerations"/);
    // the program's list (the descriptors' `unlisted`, and the ingress) is what the chart renders unplaced
    expect(unlisted.map((w) => w.key).sort(), chart).toEqual(unlistedComponents(chart).sort());
  });

  it("every component a chart renders is either listed (its placement read) or unlisted (or placed by its own keys)", () => {
    for (const chart of charts) {
      const table = expectedReads(chart);
      for (const w of workloads(chart)) {
        const listed = table.includes(`placement.${w.key}`) || (chart === "openkeel-chart" && table.includes(`infrastructure.${w.key}.placement`));
        expect(listed || isUnlisted(chart, w.key) || selfPlaced(w.args), `${chart} ${w.key}`).toBe(true);
        expect(listed && isUnlisted(chart, w.key), `${chart} ${w.key}: listed and unlisted`).toBe(false);
      }
    }
  });
});
