// The design's § 2 matrix against what the shipped stacks really render: for each topology, each
// component reaches exactly the nodes of the roles the design text gives it. The expectations are
// transcribed from the design (§ 2.1–2.3, § 5.1 for role lists, § 5.6 for NodeHealthChecks), not
// from the code. Until the platform modules land, the platform phase is the design's own units.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { capture } from "../../cli/cli";
import { renderCommand } from "../../pipeline/render-command";
import type { LoadedConfig } from "../../config/schema";
import { phase } from "../../plan/plan";
import { placementReport, type PlacementReport } from "../../placement/report";
import { planComponents } from "../../placement/workloads";
import { resolveEnvironment, planStack } from "../../environments";
import { checkMatrix, designRows } from "../helpers/design-matrix";
import { environmentComponents } from "../../environments/registry";
import { longhorn } from "../../platform/longhorn";
import { withDesignUnits } from "../helpers/design-units";
import { mutatedConfig, SHIPPED_STACKS, shippedConfig, shippedRaw, tempStacks } from "../helpers/stacks";

function shippedReport(stack: string): { cfg: LoadedConfig; report: PlacementReport } {
  const cfg = shippedConfig(stack);
  const r = planStack(cfg);
  expect(r.problems.filter((c) => c.level === "error")).toEqual([]);
  let plan = r.plan!;
  if (phase(plan, "platform").units.length === 0) plan = withDesignUnits(plan, {}, "platform");
  return {
    cfg,
    report: placementReport(plan, r.topology, planComponents(plan, resolveEnvironment().readers), resolveEnvironment(plan.environment).placementChecks),
  };
}

describe.each(SHIPPED_STACKS)("§ 2 matrix on the shipped stack %s", (stack) => {
  const { cfg, report } = shippedReport(stack);

  it("every component has a § 2 row and reaches exactly the nodes of its roles", () => {
    expect(report.checks).toEqual([]);
    checkMatrix(cfg, report, expect);
  });

  it("covers the OpenKeel rows of the design", () => {
    const names = report.placements.map((p) => p.component.name);
    for (const must of ["openkeel-chart/mariadb", "openkeel-chart/rabbitmq", "openkeel-nova/computeAgent", "openkeel-neutron/chassis"]) {
      expect(names).toContain(must);
    }
    expect(names.includes("openkeel-ironic/conductor")).toBe(cfg.nodes.some((n) => n.roles.includes("provisioning")));
  });

  it("covers the platform rows the issue names (production: KubeVirt, CDI, Longhorn, Kube-OVN, Multus, SNR, NHC, operators)", () => {
    const names = report.placements.map((p) => p.component.name);
    const has = (re: RegExp) => names.some((n) => re.test(n));
    expect(has(/kube-multus-ds$/)).toBe(true);
    if (stack === "lab") return;
    for (const re of [
      /virt-api\+virt-controller$/,
      /virt-handler$/,
      /cdi-infra$/,
      /cdi-importer\+cloner\+upload$/,
      /longhorn-manager$/,
      /longhorn-csi-plugin\+instance-managers$/,
      /longhorn-default-disks$/,
      /kube-ovn\/ovn-central$/,
      /kube-ovn-cni\+ovs-ovn\+pinger$/,
      /self-node-remediation-agent$/,
      /control-plane\/remediates$/,
      /node-healthcheck-operator\/operator$/,
      /cert-manager\/cert-manager$/,
      /mariadb-operator\/mariadb-operator$/,
    ]) {
      expect(has(re), String(re)).toBe(true);
    }
  });
});

describe("a platform component's own § 2 rows", () => {
  it("hold its workloads: without Longhorn's rows, its workloads have none, and the matrix fails naming them", () => {
    const { cfg, report } = shippedReport("prod-small");
    const failures: string[] = [];
    const collect = (actual: unknown, message?: string) => ({
      toBeDefined: () => void (actual === undefined && failures.push(message!)),
      toEqual: () => undefined,
      toBeGreaterThan: () => undefined,
      toContain: () => undefined,
    });
    checkMatrix(cfg, report, collect, designRows(environmentComponents().filter((c) => c !== longhorn)));
    expect(failures).toContain("no § 2 row for longhorn/longhorn-manager");
    expect(
      failures.every((f) => /^no § 2 row for (longhorn|storage-classes\/longhorn-rwx)/.test(f)),
      failures.join("\n"),
    ).toBe(true);
  });
});

describe("the shipped stacks' configs, broken", () => {
  it("a compute node that is also a provisioning node: the tenants' DaemonSets are forbidden there", () => {
    const r = planStack(
      mutatedConfig("lab", (raw) => {
        raw.nodes[0].roles = ["controlPlane", "compute", "network", "storage", "provisioning"];
        raw.services = { ironic: { replicas: { conductor: 1 } } };
      }),
    );
    expect(r.plan).toBeUndefined();
    const forbidden = r.problems.filter((c) => c.code === "placement-forbidden").map((c) => c.message.split(" ")[0]);
    expect(forbidden).toContain("openkeel-nova/computeAgent");
  });

  it("a lab node without roles and no worker: kind untaints it, so everything lands there", () => {
    const r = planStack(mutatedConfig("lab", (raw) => (raw.nodes[0].roles = [])));
    expect(r.problems.filter((c) => c.level === "error")).toEqual([]);
    expect(r.placement!.nodes[0].taints).toEqual([]);
  });

  it("a lab with a worker keeps the control-plane taint of kind's control-plane node", () => {
    const r = planStack(
      mutatedConfig("lab", (raw) => {
        raw.nodes[0].roles = [];
        raw.nodes.push({ name: "openkeel-lab-worker", roles: [] });
      }),
    );
    const cp = r.placement!.nodes.find((n) => n.name === "openkeel-lab-control-plane")!;
    expect(cp.taints).toEqual([{ key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" }]);
  });
});

describe("decisions broken through a stack file's placement are refused by the placement checks", () => {
  const cases: [string, string, (raw: any) => void, string][] = [
    [
      "D1: a lab key in production",
      "prod-medium",
      (raw) => (raw.services = { ...raw.services, keystone: { placement: { api: { nodeSelector: { "node-role.openkeel.io/control-plane": "" } } } } }),
      "placement-no-node",
    ],
    [
      "D2/D3: chassis on network nodes only",
      "prod-medium",
      (raw) =>
        (raw.services = { ...raw.services, neutron: { values: { chassis: { nodeSelector: { "node-restriction.kubernetes.io/openkeel-network": "" } } } } }),
      "placement-daemonset-coverage",
    ],
    // the chassis tolerates every taint: without its selector it may run on every node
    [
      "D2: the chassis without its nodeSelector",
      "prod-medium",
      (raw) => (raw.services = { ...raw.services, neutron: { values: { chassis: null } } }),
      "placement-forbidden",
    ],
    // § 5.2 "What is implemented": these selectors win over the component's role
    [
      "D2: OVN central's own ovnCentral.nodeSelector (it wins over the role) on untainted hypervisors",
      "prod-medium",
      (raw) => {
        raw.taints = ["provisioning"]; // the provisioning taint stays: always (§ 1.4, D7)
        raw.services = {
          ...raw.services,
          neutron: {
            values: {
              ovnCentral: {
                nodeSelector: { "node-restriction.kubernetes.io/openkeel-control-plane": null, "node-restriction.kubernetes.io/openkeel-storage": "" },
              },
            },
          },
        };
      },
      "placement-forbidden",
    ],
    [
      "OVN central's own ovnCentral.nodeSelector, misspelt",
      "prod-medium",
      (raw) =>
        (raw.services = {
          ...raw.services,
          neutron: { values: { ovnCentral: { nodeSelector: { "node-restriction.kubernetes.io/openkeel-control-plan": "" } } } },
        }),
      "placement-no-node",
    ],
    [
      "Masakari's nodePlacement.engine.nodeSelector, misspelt",
      "prod-medium",
      (raw) =>
        (raw.services = {
          ...raw.services,
          masakari: { values: { nodePlacement: { engine: { nodeSelector: { "node-restriction.kubernetes.io/openkeel-control-plan": "" } } } } },
        }),
      "placement-no-node",
    ],
    [
      "D3: the BGP agent on network nodes only",
      "prod-medium",
      (raw) => {
        raw.bgp = true;
        raw.services = { ...raw.services, neutron: { placement: { bgpAgent: { role: "network" } } } };
      },
      "placement-daemonset-coverage",
    ],
    [
      "D7: the conductor on the control plane",
      "prod-large",
      (raw) => (raw.services.ironic.placement = { conductor: { role: "controlPlane" } }),
      "placement-forbidden",
    ],
    [
      "D7: the conductor without the provisioning toleration",
      "prod-large",
      (raw) => (raw.services.ironic.placement = { conductor: { role: "provisioning", tolerations: [] } }),
      "placement-no-node",
    ],
  ];
  it.each(cases)("%s", (_what, stack, mutate, code) => {
    const r = planStack(mutatedConfig(stack, mutate));
    expect(r.plan).toBeUndefined();
    expect(r.problems.filter((c) => c.level === "error").map((c) => c.code)).toContain(code);
  });
});

describe("npm run render with a broken selector in a stack file", () => {
  it("exit 1, naming the component and the nodes it cannot reach; nothing written", async () => {
    const raw = shippedRaw("prod-medium");
    const dir = tempStacks({
      typo: {
        ...raw,
        services: {
          ...(raw.services as object),
          nova: { placement: { computeAgent: { nodeSelector: { "node-restriction.kubernetes.io/openkeel-compte": "" } } } },
        },
      },
    });
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-render-")), "out");
    const r = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /Pulumi\.typo\.yaml: openkeel:services\.nova\.placement\.computeAgent: error \[placement-no-node\]: openkeel-nova\/computeAgent \(DaemonSet\) can run on no node: .*cmp-01, cmp-02, cmp-03 \(no label node-restriction\.kubernetes\.io\/openkeel-compte.*\)/,
    );
    expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+/);
    expect(fs.existsSync(out)).toBe(false);
  });
});
