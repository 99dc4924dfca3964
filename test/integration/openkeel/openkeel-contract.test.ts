// The values contract: every key this repository emits into OpenKeel values is known; a misspelt
// or misplaced key, from the code or from a stack's raw overrides, fails the plan with one line
// naming the stack file, the stack key, the release/service and the values key path.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { capture } from "../../../cli/cli";
import { renderCommand } from "../../../pipeline/render-command";
import * as pulumi from "@pulumi/pulumi";
import program from "../../../index";
import { releaseService } from "../../../openkeel/registry";
import { masakari } from "../../../openkeel/services/masakari";
import { neutron } from "../../../openkeel/services/neutron";
import { checkValues, serviceContract } from "../../../openkeel/contract";
import { infrastructureContract, infrastructureValues } from "../../../openkeel/infrastructure";
import { phase, type HelmReleaseUnit } from "../../../plan/plan";
import { planStack } from "../../../environments";
import { contextOf, valueProblems } from "../../helpers/plans";
import { programError } from "../../helpers/pulumi";
import { mutatedConfig, pulumiConfigOf, REPO, SHIPPED_STACKS, shippedConfig, shippedRaw, tempStacks } from "../../helpers/stacks";

/** The problems planning a mutated shipped stack reports, one formatted line each. */
function problems(stack: string, mutate: (raw: any) => void): string[] {
  return valueProblems(mutatedConfig(stack, mutate));
}

/** Set `openkeel:services.<service>` of a stack, keeping its other services. */
const service = (name: string, body: unknown) => (raw: any) => (raw.services = { ...(raw.services ?? {}), [name]: body });

describe("what this repository emits", () => {
  it.each(SHIPPED_STACKS)("%s: every release passes its contract", (stack) => {
    const cfg = shippedConfig(stack);
    const plan = planStack(cfg).plan!;
    for (const u of phase(plan, "openkeel").units.filter((x): x is HelmReleaseUnit => x.kind === "HelmRelease")) {
      expect(checkValues(serviceContract(releaseService(u.name)!, plan.labelProfile), u.values), u.name).toEqual([]);
    }
    expect(checkValues(infrastructureContract(plan.labelProfile), infrastructureValues(contextOf(cfg)))).toEqual([]);
  });

  it("is strict: a key the contract does not know is rejected, also in what the code builds", () => {
    const cfg = shippedConfig("prod-small");
    const values: any = infrastructureValues(contextOf(cfg));
    values.infrastructure.mariadb.nodeSelector = { a: "" };
    const issues = checkValues(infrastructureContract("hardened"), values);
    expect(issues).toHaveLength(1);
    expect(issues[0].path).toEqual(["infrastructure", "mariadb", "nodeSelector"]);
    expect(issues[0].fix).toBe("move it to infrastructure.mariadb.placement.nodeSelector");
  });
});

describe("raw overrides that do not fit", () => {
  const FILE = "stacks/Pulumi.prod-medium.yaml";

  it("a nodeSelector at the top of a release: the level a chart silently ignores", () => {
    expect(problems("prod-medium", service("nova", { values: { nodeSelector: { "topology.kubernetes.io/zone": "a" } } }))).toEqual([
      `${FILE}: openkeel:services.nova.values.nodeSelector: release openkeel-nova (service nova), values key nodeSelector: ` +
        "is a scheduling field at the wrong level: the chart reads nodeSelector only in a component's placement and would silently ignore it here. " +
        "Fix: move it to placement.<component>.nodeSelector, for one of: api, conductor, scheduler, consoleProxy, computeAgent, ironicAgent",
    ]);
  });

  it("a nodeSelector in a helper-placed component's own block", () => {
    const [line] = problems("prod-medium", service("neutron", { values: { metadataAgent: { nodeSelector: { a: "" } } } }));
    expect(line).toMatch(
      /^stacks\/Pulumi\.prod-medium\.yaml: openkeel:services\.neutron\.values\.metadataAgent\.nodeSelector: release openkeel-neutron \(service neutron\), values key metadataAgent\.nodeSelector: is a scheduling field at the wrong level/,
    );
    expect(line).toMatch(/Fix: move it to placement\.metadataAgent\.nodeSelector$/);
  });

  it("the chassis is placed by chassis.nodeSelector alone (§ 5.2): placement.chassis is refused, naming the key the chart reads", () => {
    const [line] = problems("prod-medium", service("neutron", { placement: { chassis: { roles: ["compute", "network"] } } }));
    expect(line).toBe(
      `${FILE}: openkeel:services.neutron.placement.chassis: release openkeel-neutron (service neutron), values key placement.chassis: ` +
        "chassis is not placed by the chart helper: the chart reads only chassis.nodeSelector and tolerates every taint, so it would silently ignore placement.chassis. " +
        "Fix: remove it; choose the nodes of chassis with chassis.nodeSelector (openkeel:services.<service>.values.chassis.nodeSelector)",
    );
  });

  it("a toleration for the chassis, which tolerates every taint and reads no other scheduling field", () => {
    const [line] = problems("prod-medium", service("neutron", { values: { chassis: { tolerations: [] } } }));
    expect(line).toMatch(/values key chassis\.tolerations: chassis is placed by chassis\.nodeSelector alone/);
    expect(line).toMatch(/Fix: remove it; choose the nodes of chassis with chassis\.nodeSelector$/);
  });

  it("accepts what the charts read besides the helper (§ 5.2): chassis.nodeSelector, ovnCentral.nodeSelector, Masakari's nodePlacement", () => {
    const cfg = shippedConfig("prod-medium");
    const plan = planStack(cfg).plan!;
    const values = (name: string) => structuredClone((phase(plan, "openkeel").units.find((u) => u.name === name) as HelmReleaseUnit).values) as any;
    const n = values("openkeel-neutron");
    n.chassis.nodeSelector = { "topology.kubernetes.io/zone": "a" };
    n.ovnCentral.nodeSelector = { "topology.kubernetes.io/zone": "a" };
    expect(checkValues(serviceContract(neutron, "hardened"), n)).toEqual([]);
    const m = values("openkeel-masakari");
    m.nodePlacement.engine.tolerations = [{ key: "gpu", operator: "Exists" }];
    expect(checkValues(serviceContract(masakari, "hardened"), m)).toEqual([]);
    m.nodePlacement.conductor = {};
    expect(checkValues(serviceContract(masakari, "hardened"), m).map((i) => i.path.join("."))).toEqual(["nodePlacement.conductor"]);
  });

  it("a misspelt key inside a placement", () => {
    expect(problems("prod-medium", service("keystone", { values: { placement: { api: { nodeselector: {} } } } }))).toEqual([
      `${FILE}: openkeel:services.keystone.values.placement.api.nodeselector: release openkeel-keystone (service keystone), values key placement.api.nodeselector: unknown key. ` +
        "Fix: remove it or correct its spelling; docs/openkeel-values.md (the values contract) lists every key",
    ]);
  });

  it("a component the chart does not have, from the stack's placement map", () => {
    const [line] = problems("prod-medium", service("nova", { placement: { compute: { role: "compute" } } }));
    expect(line).toBe(
      `${FILE}: openkeel:services.nova.placement.compute: release openkeel-nova (service nova), values key placement.compute: is not a component of this chart. ` +
        "Fix: use one of: api, conductor, scheduler, consoleProxy, computeAgent, ironicAgent",
    );
  });

  it("a replica count for a DaemonSet, from the stack's replicas map", () => {
    const [line] = problems("prod-medium", service("nova", { replicas: { computeAgent: 3 } }));
    expect(line).toMatch(
      /openkeel:services\.nova\.replicas\.computeAgent: release openkeel-nova \(service nova\), values key computeAgent\.replicas: computeAgent is a DaemonSet/,
    );
  });

  it("node selector terms one level too high in a raw affinity", () => {
    const affinity = { nodeAffinity: { nodeSelectorTerms: [{ matchExpressions: [{ key: "a", operator: "Exists" }] }] } };
    const [line] = problems("prod-medium", service("keystone", { placement: { api: { affinity } } }));
    expect(line).toMatch(
      /openkeel:services\.keystone\.placement\.api\.affinity\.nodeAffinity\.nodeSelectorTerms: .*values key placement\.api\.affinity\.nodeAffinity\.nodeSelectorTerms: is one level too high/,
    );
    expect(line).toMatch(/Fix: move it to requiredDuringSchedulingIgnoredDuringExecution\.nodeSelectorTerms$/);
  });

  it("a toleration with a misspelt field", () => {
    const [line] = problems("prod-medium", service("nova", { placement: { computeAgent: { extraTolerations: [{ key: "gpu", efect: "NoSchedule" }] } } }));
    expect(line).toMatch(/values key placement\.computeAgent\.extraTolerations\[0\]\.efect: unknown key/);
  });

  it("role and roles together, when a raw role meets a default role list", () => {
    const [line] = problems("prod-medium", service("neutron", { values: { placement: { bgpAgent: { role: "network" } } } }));
    expect(line).toMatch(
      /openkeel:services\.neutron\.values\.placement\.bgpAgent: .*values key placement\.bgpAgent\.roles: role and roles are both set, and the chart would use only one\. Fix: .*\(in raw values, roles: null drops a default role list\)$/,
    );
  });

  it("a value outside its enum", () => {
    const [line] = problems("prod-medium", service("neutron", { values: { gateway: { floatingIpMode: "dvr" } } }));
    expect(line).toMatch(/values key gateway\.floatingIpMode: is string "dvr", not one of centralized, distributed/);
  });

  it("a literal secret", () => {
    const lines = problems("prod-medium", service("neutron", { values: { metadataAgent: { sharedSecret: "hunter2" } } }));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/values key metadataAgent\.sharedSecret: is a literal string: must be a generated secret, never a literal/);
    expect(lines[0]).not.toContain("hunter2"); // error lines end up in CI logs
  });

  it("two different metadata secrets for Nova and Neutron (D4)", () => {
    const lines = problems("prod-medium", service("nova", { values: { metadata: { sharedSecret: { secretRef: "other" } } } }));
    expect(lines).toEqual([expect.stringMatching(/openkeel:services: Nova's metadata\.sharedSecret and Neutron's metadataAgent\.sharedSecret differ/)]);
  });

  it("role label keys other than the stack profile's (D1)", () => {
    const global = { nodeRoles: { roles: { compute: { label: "node-role.openkeel.io/compute" } } } };
    const [line] = problems("prod-medium", service("keystone", { values: { global } }));
    expect(line).toMatch(
      /openkeel:services\.keystone\.values\.global\.nodeRoles\.roles\.compute\.label: .*is not the compute label of this stack's 'hardened' profile \(node-restriction\.kubernetes\.io\/openkeel-compute\)/,
    );
  });

  it("more replicas than nodes under required host anti-affinity", () => {
    const [line] = problems("prod-medium", service("swift", { replicas: { storage: 4 } }));
    expect(line).toBe(
      `${FILE}: openkeel:services.swift.replicas.storage: release openkeel-swift (service swift), values key storage.replicas: ` +
        "4 replicas with required host anti-affinity, but 3 node(s) have the storage role: 1 would stay Pending. Fix: set at most 3 replicas, or give the role to more nodes",
    );
  });

  it("a role no node has, in a lab that sets roles", () => {
    const lines = problems("lab", (raw) => (raw.nodes[0].roles = ["compute", "network", "storage"]));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^stacks\/Pulumi\.lab\.yaml: openkeel:nodes: no node has the controlPlane role, so these components would stay Pending: openkeel-keystone placement\.api, /,
    );
  });

  it("reports every problem of a stack at once", () => {
    const lines = problems("prod-medium", (raw) => {
      service("nova", { values: { nodeSelector: {} } })(raw);
      service("glance", { values: { api: { replica: 2 } } })(raw);
    });
    expect(lines).toHaveLength(2);
  });
});

describe("where the contract stops a stack", () => {
  it("npm run render: exit 2, one line per problem, no stack trace, nothing written", async () => {
    const raw = structuredClone(shippedRaw("prod-small")) as any;
    raw.services = { nova: { values: { nodeSelector: { a: "" } } } };
    const dir = tempStacks({ broken: raw, good: fs.readFileSync(path.join(REPO, "stacks/Pulumi.prod-medium.yaml"), "utf8") });
    const out = path.join(dir, "out");
    const r = await capture(renderCommand, ["--stacks-dir", dir, "--out", out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /Pulumi\.broken\.yaml: openkeel:services\.nova\.values\.nodeSelector: release openkeel-nova \(service nova\), values key nodeSelector: /,
    );
    expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+/);
    expect(fs.existsSync(out)).toBe(false);
  });

  it("the Pulumi program: a RunError before any unit", async () => {
    const raw = structuredClone(shippedRaw("prod-medium")) as any;
    raw.services.keystone = { values: { placement: { api: { nodeselector: {} } } } };
    const err = await programError("prod-medium", pulumiConfigOf(raw), program);
    expect(pulumi.RunError.isInstance(err)).toBe(true);
    expect(err.message).toMatch(/stacks\/Pulumi\.prod-medium\.yaml: openkeel:services\.keystone\.values\.placement\.api\.nodeselector: .*unknown key/);
  });
});
