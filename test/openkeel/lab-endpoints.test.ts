// The lab's public endpoints (seed 004: every OpenKeel API on a NodePort of 30500–30998, published
// on 127.0.0.1 by the kind config): each public API's port in its service's descriptor, one block
// of ten per service, no port twice, every port published, and the lab's releases ask for exactly
// those ports.
import { describe, expect, it } from "vitest";
import { api, worker, type ComponentSpec } from "../../openkeel/components";
import { LAB_EXAMPLE_BLOCK, LAB_NODE_PORTS, nodePortProblems } from "../../openkeel/endpoints";
import { labApiNodePorts, labIdentityPort, releaseService } from "../../openkeel/registry";
import { OPENKEEL_SERVICES } from "../../openkeel/services";
import { openkeelReleases, planOf, valueProblems } from "../helpers/plans";
import { mutatedConfig, PRODUCTION_STACKS } from "../helpers/stacks";

describe("the lab's NodePorts of the descriptors", () => {
  it("a public API has one: a component that is public without a port does not compile", () => {
    // @ts-expect-error a public API names its NodePort in the lab
    const portless: ComponentSpec = { ...worker(), publicApi: {} };
    // @ts-expect-error an API is public: its builder takes its port
    const apiWithout: ComponentSpec = api();
    expect([portless, apiWithout].map((c) => c.kind)).toEqual(["Deployment", "Deployment"]);
    expect(labIdentityPort()).toBe(30500);
  });

  it("one block of ten per service, in install order (a new API finds its number without renumbering)", () => {
    const apis = OPENKEEL_SERVICES.flatMap((s, i) =>
      Object.entries(s.components).flatMap(([name, c]) => (c.publicApi ? [{ api: `${s.name}/${name}`, block: i, port: c.publicApi.labNodePort }] : [])),
    );
    expect(apis.filter((a) => Math.floor((a.port - LAB_NODE_PORTS.first) / 10) !== a.block)).toEqual([]);
    // the last block is the worked example's (docs/openkeel-values.md), no real service's
    expect(LAB_EXAMPLE_BLOCK).toBe(30990);
    expect(apis.filter((a) => a.port >= LAB_EXAMPLE_BLOCK)).toEqual([]);
    expect(apis.map((a) => a.api)).toEqual(expect.arrayContaining(["keystone/api", "nova/consoleProxy", "swift/proxy", "heat/apiCfn"]));
  });

  it("uses no port twice and only published ones", () => {
    const uses = labApiNodePorts();
    expect(uses.length).toBeGreaterThan(OPENKEEL_SERVICES.length);
    expect(nodePortProblems(uses, true)).toEqual([]);
    for (const u of uses) {
      expect(u.port).toBeGreaterThanOrEqual(LAB_NODE_PORTS.first);
      expect(u.port).toBeLessThanOrEqual(LAB_NODE_PORTS.last);
    }
  });

  it("the check finds a port used twice and one the kind config does not publish", () => {
    const uses = [
      ...labApiNodePorts(),
      { release: "openkeel-x", path: ["api", "service", "nodePort"], port: 30500 },
      { release: "openkeel-y", path: ["api", "service", "nodePort"], port: 31000 },
    ];
    const problems = nodePortProblems(uses, true);
    expect(problems.map((p) => p.message)).toEqual([
      "NodePort 30500 is asked for by both openkeel-keystone api.service.nodePort and openkeel-x api.service.nodePort: the API server would refuse the second Service",
      "NodePort 31000 of openkeel-y api.service.nodePort is outside the ports the kind config publishes on 127.0.0.1 (30500-30998): the laptop could not reach it",
    ]);
    // production publishes nothing on a laptop: only the collision counts
    expect(nodePortProblems(uses, false)).toHaveLength(1);
  });
});

describe("the lab's releases", () => {
  it("ask for each public API's NodePort through <component>.service, and nothing else does", () => {
    const plan = planOf("lab");
    let seen = 0;
    for (const u of openkeelReleases(plan)) {
      for (const [component, block] of Object.entries(u.values)) {
        const port = releaseService(u.name)?.components[component]?.publicApi?.labNodePort;
        const exposure = (block as any)?.service;
        if (port === undefined) expect(exposure, `${u.name} ${component}`).toBeUndefined();
        else {
          expect(exposure, `${u.name} ${component}`).toEqual({ type: "NodePort", nodePort: port });
          seen++;
        }
      }
    }
    expect(seen).toBeGreaterThanOrEqual(15);
  });

  it.each(PRODUCTION_STACKS)("%s: production exposes its APIs through the ingress (D8), no Service type", (stack) => {
    for (const u of openkeelReleases(planOf(stack))) {
      for (const block of Object.values(u.values)) expect((block as any)?.service, u.name).toBeUndefined();
    }
  });
});

describe("a stack's override of a NodePort", () => {
  const problems = (mutate: (raw: any) => void): string[] => valueProblems(mutatedConfig("lab", mutate));

  it("one another API has: refused, naming the stack key", () => {
    expect(problems((raw) => (raw.services = { glance: { values: { api: { service: { nodePort: 30500 } } } } }))).toEqual([
      "stacks/Pulumi.lab.yaml: openkeel:services.glance.values.api.service.nodePort: NodePort 30500 is asked for by both openkeel-keystone api.service.nodePort and openkeel-glance api.service.nodePort: the API server would refuse the second Service. " +
        "Fix: give one of them a free port in 30500-30998 (docs/openkeel-values.md lists the lab's)",
    ]);
  });

  it("one the kind config does not publish: refused", () => {
    const [line] = problems((raw) => (raw.services = { keystone: { values: { api: { service: { nodePort: 31000 } } } } }));
    expect(line).toMatch(
      /^stacks\/Pulumi\.lab\.yaml: openkeel:services\.keystone\.values\.api\.service\.nodePort: NodePort 31000 of openkeel-keystone .* outside the ports the kind config publishes/,
    );
  });

  it("a free published one: accepted", () => {
    const plan = planOf(mutatedConfig("lab", (raw) => (raw.services = { keystone: { values: { api: { service: { nodePort: 30990 } } } } })));
    expect(openkeelReleases(plan).find((u) => u.name === "openkeel-keystone")!.values.api).toMatchObject({ service: { type: "NodePort", nodePort: 30990 } });
  });
});
