// The e2e's own pieces that need no engine: they run in `npm test` (fast), so that a broken mirror,
// stand-in or node registration shows before anyone runs `npm run e2e`.
import { E2E_COMPONENT_LABEL, E2E_RELEASE_LABEL, galeraStatefulSet, rabbitmqStatefulSet } from "./standins/operators";
import * as fs from "node:fs";
import * as path from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { CONTRACT_CHARTS_DIR, Mirror } from "./harness/mirror";
import { K8S_CONTROL_PLANE, nodeSpecs } from "./harness/nodes";
import { policyViolations, summaryLine } from "./harness/pulumi";
import { readPlacement, readRendered } from "./harness/rendered";
import { tgz } from "./harness/tar";
import { compareLeaves } from "./harness/placement-check";
import { structural } from "./standins/crds";

const RENDERED = path.resolve(__dirname, "../../rendered");
const SCHEMAS = process.env.OPENKEEL_SCHEMAS ?? path.resolve(__dirname, "../../../shared/schemas");

/** Entry names of a .tgz written by tgz(). */
function entries(buf: Buffer): string[] {
  const tar = gunzipSync(buf);
  const names: string[] = [];
  for (let off = 0; off + 512 <= tar.length;) {
    const h = tar.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    const name = h.subarray(0, 100).toString("utf8").replace(/\0.*$/s, "");
    const prefix = h.subarray(345, 500).toString("utf8").replace(/\0.*$/s, "");
    const size = parseInt(h.subarray(124, 136).toString("ascii").replace(/\0.*$/s, "").trim(), 8);
    names.push(prefix ? `${prefix}/${name}` : name);
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return names;
}

describe("e2e: chart packaging and mirror", () => {
  it("writes a ustar archive Helm can read", () => {
    const long = `chart/${"d".repeat(90)}/${"f".repeat(60)}.yaml`;
    expect(
      entries(
        tgz([
          ["chart/Chart.yaml", "name: chart\n"],
          [long, "x"],
        ]),
      ),
    ).toEqual(["chart/Chart.yaml", long]);
  });

  it("every contract chart carries the shared § 5.2 helper unchanged", () => {
    const shared = fs.readFileSync(path.join(CONTRACT_CHARTS_DIR, "_shared", "_openkeel.tpl"), "utf8");
    const charts = fs.readdirSync(CONTRACT_CHARTS_DIR).filter((d) => d.startsWith("openkeel-"));
    expect(charts.length).toBeGreaterThanOrEqual(20);
    for (const c of charts) expect(fs.readFileSync(path.join(CONTRACT_CHARTS_DIR, c, "templates", "_openkeel.tpl"), "utf8"), c).toBe(shared);
  });

  it.skipIf(!fs.existsSync(SCHEMAS))("serves every chart and manifest the shipped stacks ask for, at their versions", () => {
    const m = new Mirror(SCHEMAS);
    for (const s of ["lab", "prod-small", "prod-medium", "prod-large"]) m.addStack(readRendered(RENDERED, s));
    expect(m.problems).toEqual([]);
    expect(m.artifacts.map((a) => a.id)).toContain("openkeel-nova-1.0.0");
    expect(m.artifacts.map((a) => a.id)).toContain("longhorn-1.12.1");
  });
});

describe("e2e: stand-in CRD schemas", () => {
  it("turns the catalog's strict JSON schema back into a structural schema", () => {
    const out = structural({
      type: "object",
      additionalProperties: false,
      properties: {
        size: { anyOf: [{ type: "integer" }, { type: "string" }] },
        name: { type: ["string", "null"] },
        properties: { type: "string" },
        additionalProperties: false,
        labels: { type: "object", additionalProperties: { type: "string" } },
      },
    }) as any;
    expect(out.additionalProperties).toBeUndefined();
    expect(out.properties.size["x-kubernetes-int-or-string"]).toBe(true);
    expect(out.properties.name).toEqual({ type: "string", nullable: true });
    expect(Object.keys(out.properties).sort()).toEqual(["labels", "name", "properties", "size"]);
    expect(out.properties.labels.additionalProperties).toEqual({ type: "string" });
  });
});

describe("e2e: Nodes as they register themselves", () => {
  it("prod-medium (Talos): no role label, worker taints from registerWithTaints, control planes schedulable", () => {
    const specs = nodeSpecs(readRendered(RENDERED, "prod-medium"));
    expect(specs.map((s) => s.name).sort()).toEqual(["cmp-01", "cmp-02", "cmp-03", "cp-1", "cp-2", "cp-3", "net-1", "net-2", "prov-1"]);
    for (const s of specs) {
      expect(
        Object.keys(s.labels).filter((k) => k.includes("openkeel-") || k.startsWith("node-role.openkeel.io/")),
        s.name,
      ).toEqual([]);
      expect(s.labels["kubernetes.io/hostname"]).toBe(s.name);
    }
    const by = Object.fromEntries(specs.map((s) => [s.name, s]));
    expect(by["cp-1"].labels[K8S_CONTROL_PLANE]).toBe("");
    expect(by["cp-1"].taints).toEqual([]);
    expect(by["cmp-01"].taints).toEqual([{ key: "node-role.openkeel.io/compute", effect: "NoSchedule" }]);
    expect(by["cmp-01"].labels["network.openkeel.io/external-nic"]).toBe("bond1");
    expect(by["prov-1"].internalIP).toBe("10.30.3.11");
  });

  it("prod-large: zones from nodeLabels, the Kubernetes-only control plane keeps its taint", () => {
    const specs = nodeSpecs(readRendered(RENDERED, "prod-large"));
    const cmp = specs.find((s) => s.name === "cmp-a-01")!;
    expect(cmp.labels["topology.kubernetes.io/zone"]).toBe("zone-a");
    const k8sOnly = specs.filter((s) => s.labels[K8S_CONTROL_PLANE] === "" && s.taints.some((t) => t.key === K8S_CONTROL_PLANE));
    expect(k8sOnly.length).toBe(3);
  });

  it("lab (kind): the lone control plane is untainted and carries kind's labels", () => {
    const [cp] = nodeSpecs(readRendered(RENDERED, "lab"));
    expect(cp.name).toBe("openkeel-lab-control-plane");
    expect(cp.taints).toEqual([]);
    expect(cp.labels[K8S_CONTROL_PLANE]).toBe("");
  });
});

describe("e2e: reading the engine and the render", () => {
  it("parses the CLI's policy lines (severity included) and its summary", () => {
    const text = [
      "Policies:",
      "        - [mandatory] [severity: high]  d2-parallel-ovn  (kubernetes:helm.sh/v3:Release: openkeel-neutron)",
      "        - [advisory]  d4-metadata-secret  (pulumi:pulumi:Stack: openkeel-prod)",
      "Resources:",
      "    + 3 created",
      "    10 unchanged",
      "",
      "Duration: 5s",
    ].join("\n");
    expect(policyViolations(text)).toEqual([
      { level: "mandatory", policy: "d2-parallel-ovn", resourceType: "kubernetes:helm.sh/v3:Release", resourceName: "openkeel-neutron" },
      { level: "advisory", policy: "d4-metadata-secret", resourceType: "pulumi:pulumi:Stack", resourceName: "openkeel-prod" },
    ]);
    expect(summaryLine(text)).toBe("+ 3 created, 10 unchanged, Duration: 5s");
  });

  it("reads the placement data (placement.json) through the rendered model", () => {
    const p = readPlacement(readRendered(RENDERED, "prod-medium"));
    expect(p.nodes).toHaveLength(9);
    const chassis = p.components.find((c) => c.name === "openkeel-neutron/chassis")!;
    expect(chassis.eligible).toEqual(["cmp-01", "cmp-02", "cmp-03", "net-1", "net-2"]);
  });

  it("finds fields the API server pruned or changed", () => {
    expect(compareLeaves({ spec: { a: 1, b: { c: "x" }, q: "1" } }, { spec: { a: 1, b: {}, q: 1, extra: true } })).toEqual([
      "spec.b.c: missing in the cluster (pruned?)",
    ]);
  });
});

describe("stand-in operators: the StatefulSets mariadb-operator and the RabbitMQ operator build from their CRs", () => {
  const cr = (kind: string, spec: Record<string, unknown>) => ({
    kind,
    metadata: { name: `openkeel-chart-${kind === "MariaDB" ? "mariadb" : "rabbitmq"}`, namespace: "openkeel" },
    spec,
  });
  const podSpec = (sts: Record<string, unknown>) => (sts.spec as { template: { spec: Record<string, unknown> } }).template.spec;

  it("Galera: antiAffinityEnabled is the host term only when the rest of affinity is empty; priority and terms as written", () => {
    expect(podSpec(galeraStatefulSet(cr("MariaDB", { affinity: { antiAffinityEnabled: true } }))).affinity).toEqual({
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          {
            labelSelector: { matchExpressions: [{ key: "app.kubernetes.io/instance", operator: "In", values: ["openkeel-chart-mariadb"] }] },
            topologyKey: "kubernetes.io/hostname",
          },
        ],
      },
    });
    const node = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } };
    expect(podSpec(galeraStatefulSet(cr("MariaDB", { affinity: { antiAffinityEnabled: true, ...node } }))).affinity).toEqual(node);
    const sts = galeraStatefulSet(cr("MariaDB", { replicas: 3, priorityClassName: "openkeel-infra-critical", nodeSelector: { a: "" } }));
    expect(podSpec(sts)).toMatchObject({ priorityClassName: "openkeel-infra-critical", nodeSelector: { a: "" } });
    const labels = (sts.metadata as { labels: Record<string, string> }).labels;
    expect([labels[E2E_RELEASE_LABEL], labels[E2E_COMPONENT_LABEL]]).toEqual(["openkeel-chart", "mariadb"]);
  });

  it("RabbitMQ: affinity and tolerations as they are, the default zone spread, override.statefulSet merged over them", () => {
    const sts = rabbitmqStatefulSet(
      cr("RabbitmqCluster", {
        tolerations: [{ key: "t" }],
        override: { statefulSet: { spec: { template: { spec: { containers: [], nodeSelector: { a: "" }, priorityClassName: "p" } } } } },
      }),
    );
    expect(podSpec(sts)).toMatchObject({ tolerations: [{ key: "t" }], nodeSelector: { a: "" }, priorityClassName: "p" });
    expect((podSpec(sts).topologySpreadConstraints as { whenUnsatisfiable: string }[])[0].whenUnsatisfiable).toBe("ScheduleAnyway");
  });
});
