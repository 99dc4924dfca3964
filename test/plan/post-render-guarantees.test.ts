// Issue 37, item 4: the design's guarantees held on the objects the cluster receives — the charts'
// objects after their release's post-render patches, and the pods the operators build from their
// CRs with the labels they really set. Each case goes through planStack: a patch dropped, one
// whose target the chart does not render, one whose selector matches none of its pods, for Galera,
// RabbitMQ, OVN central, Swift storage, the ingress and a component § 5.2 does not list (Nova's
// scheduler). The Plan is changed where composePlan hands it over, as a bug in a builder would.
import { afterEach, describe, expect, it, vi } from "vitest";
import { planStack } from "../../environments";
import { findUnit, type HelmReleaseUnit, type K8sObject, type ManifestsUnit, type Plan } from "../../plan/plan";
import type { PostRenderPatch } from "../../plan/post-render";
import { galeraDisruptionsAllowed, galeraPod } from "../../platform/mariadb-operator";
import { rabbitmqPod } from "../../platform/rabbitmq-operator";
import { mutatedConfig, SHIPPED_STACKS, shippedConfig } from "../helpers/stacks";

const hook = vi.hoisted(() => ({ tamper: undefined as ((plan: Plan) => void) | undefined }));

vi.mock("../../environments/compose", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../environments/compose")>();
  return {
    ...actual,
    composePlan: (...a: Parameters<typeof actual.composePlan>) => {
      const composed = actual.composePlan(...a);
      hook.tamper?.(composed.plan);
      return composed;
    },
  };
});

afterEach(() => {
  hook.tamper = undefined;
});

/** What planning a stack refuses, its Plan changed by `tamper`: the error it throws (a bug of this repository's builders). */
function refusal(stack: string, tamper: (plan: Plan) => void): string {
  hook.tamper = tamper;
  try {
    const r = planStack(shippedConfig(stack));
    throw new Error(`expected planning ${stack} to throw, got ${r.problems.length} problem(s): ${r.problems.map((p) => p.message).join("; ")}`);
  } catch (e) {
    return (e as Error).message;
  }
}

const releaseOf = (plan: Plan, name: string) => findUnit(plan, name) as HelmReleaseUnit;
/** RabbitMQ's PodDisruptionBudget, which the Plan writes (its operator makes none). */
const budget = (plan: Plan): K8sObject => (findUnit(plan, "openkeel-rabbitmq-budget") as ManifestsUnit).objects[0];

/** The patches of `release` whose target matches. */
function patchesOf(plan: Plan, release: string, kind: string, name: string): PostRenderPatch[] {
  const found = (releaseOf(plan, release).postRender ?? []).filter((p) => p.target.kind === kind && p.target.name === name);
  if (found.length === 0) throw new Error(`no post-render patch of ${kind} ${name} in ${release}`);
  return found;
}

function drop(release: string, kind: string, name: string) {
  return (plan: Plan) => {
    patchesOf(plan, release, kind, name);
    const u = releaseOf(plan, release);
    u.postRender = u.postRender!.filter((p) => !(p.target.kind === kind && p.target.name === name));
  };
}

function retarget(release: string, kind: string, name: string, to: string) {
  return (plan: Plan) => {
    for (const p of patchesOf(plan, release, kind, name)) p.target.name = to;
  };
}

/** Every required anti-affinity term a patch writes, wherever in it (a workload's template, a CR's spec). */
function requiredTerms(patch: unknown): { labelSelector: unknown; topologyKey: string }[] {
  if (Array.isArray(patch)) return patch.flatMap(requiredTerms);
  if (typeof patch !== "object" || patch === null) return [];
  const own = (patch as any).requiredDuringSchedulingIgnoredDuringExecution;
  return [
    ...(Array.isArray(own) ? own : []),
    ...Object.entries(patch).flatMap(([k, v]) => (k === "requiredDuringSchedulingIgnoredDuringExecution" ? [] : requiredTerms(v))),
  ];
}

function reselect(release: string, kind: string, name: string, selector: unknown) {
  return (plan: Plan) => {
    const terms = patchesOf(plan, release, kind, name).flatMap((p) => requiredTerms(p.patch));
    if (terms.length === 0) throw new Error(`the patch of ${kind} ${name} writes no required term`);
    for (const t of terms) t.labelSelector = structuredClone(selector);
  };
}

/** A spread constraint over the pods its selector names, added to a workload's patch. */
function spreadOver(release: string, kind: string, name: string, matchLabels: Record<string, string>) {
  return (plan: Plan) => {
    const [p] = patchesOf(plan, release, kind, name);
    (p.patch as any).spec.template.spec.topologySpreadConstraints = [
      { maxSkew: 1, topologyKey: "kubernetes.io/hostname", whenUnsatisfiable: "ScheduleAnyway", labelSelector: { matchLabels } },
    ];
  };
}

interface Case {
  what: string;
  stack: string;
  tamper: (plan: Plan) => void;
  /** What the refusal must say, the component named. */
  says: RegExp[];
}

const GALERA = ["openkeel-chart", "MariaDB", "openkeel-chart-mariadb"] as const;
const RABBIT = ["openkeel-chart", "RabbitmqCluster", "openkeel-chart-rabbitmq"] as const;
const OVN = ["openkeel-neutron", "StatefulSet", "openkeel-neutron-ovn-central"] as const;
const SWIFT = ["openkeel-swift", "StatefulSet", "openkeel-swift-storage"] as const;
const INGRESS = ["openkeel-chart", "DaemonSet", "openkeel-chart-ingress"] as const;
const SCHEDULER = ["openkeel-nova", "Deployment", "openkeel-nova-scheduler"] as const;

const CASES: Case[] = [
  {
    what: "Galera: its patch dropped",
    stack: "prod-medium",
    tamper: drop(...GALERA),
    says: [
      /openkeel-chart\/mariadb \(MariaDB openkeel-chart-mariadb\) has no required pod anti-affinity on kubernetes\.io\/hostname/,
      /openkeel-chart\/mariadb .* runs at priority none, not "openkeel-infra-critical"/,
      /on the pods mariadb-operator builds from it/,
      /Fix: restore the post-render patch that carries it \(openkeel\/infrastructure\.ts infrastructurePostRender\)/,
    ],
  },
  {
    what: "Galera: its patch aimed at another name",
    stack: "prod-medium",
    tamper: retarget(...GALERA, "openkeel-chart-galera"),
    says: [
      /\[post-render-target\] release openkeel-chart: its post-render patch of MariaDB openkeel-chart-galera .* reaches no object/,
      /openkeel-chart\/mariadb/,
    ],
  },
  {
    what: "Galera: its terms select the RabbitMQ operator's name label, which mariadb-operator does not set to the CR's name",
    stack: "prod-large",
    tamper: reselect(...GALERA, { matchLabels: { "app.kubernetes.io/name": "openkeel-chart-mariadb" } }),
    says: [
      /\[post-render-selector\] openkeel-chart\/mariadb \(MariaDB openkeel-chart-mariadb\): its post-render patch's spec\.affinity\.podAntiAffinity\.requiredDuringSchedulingIgnoredDuringExecution\.0\.labelSelector .* matches none of its pods \(labels \{"app\.kubernetes\.io\/name":"mariadb","app\.kubernetes\.io\/instance":"openkeel-chart-mariadb"\}\)/,
      /its required anti-affinity on topology\.kubernetes\.io\/zone selects .* it keeps nothing apart/,
    ],
  },
  {
    what: "Galera: a budget that lets a drain take two members",
    stack: "prod-medium",
    tamper: (plan) => ((patchesOf(plan, ...GALERA)[0].patch as any).spec.podDisruptionBudget = { maxUnavailable: 2 }),
    says: [/openkeel-chart\/mariadb .* the operator's PodDisruptionBudget lets a drain evict 2 of its 3 members at once, not 1/],
  },
  {
    what: "RabbitMQ: its patch dropped",
    stack: "prod-large",
    tamper: drop(...RABBIT),
    says: [
      /openkeel-chart\/rabbitmq \(RabbitmqCluster openkeel-chart-rabbitmq\) has no required pod anti-affinity on topology\.kubernetes\.io\/zone/,
      /openkeel-chart\/rabbitmq .* runs at priority none, not "openkeel-infra-critical"/,
      /on the pods the RabbitMQ operator builds from it/,
    ],
  },
  {
    what: "RabbitMQ: its patch aimed at another kind",
    stack: "prod-medium",
    tamper: (plan) => {
      for (const p of patchesOf(plan, ...RABBIT)) p.target.kind = "StatefulSet";
    },
    says: [
      /\[post-render-target\] release openkeel-chart: its post-render patch of StatefulSet openkeel-chart-rabbitmq .* reaches no object/,
      /openkeel-chart\/rabbitmq .* runs at priority none/,
    ],
  },
  {
    what: "RabbitMQ: its terms select app.kubernetes.io/instance, which the operator does not set",
    stack: "prod-large",
    tamper: reselect(...RABBIT, { matchLabels: { "app.kubernetes.io/instance": "openkeel-chart-rabbitmq" } }),
    says: [
      /\[post-render-selector\] openkeel-chart\/rabbitmq .* matches none of its pods \(labels \{"app\.kubernetes\.io\/name":"openkeel-chart-rabbitmq","app\.kubernetes\.io\/component":"rabbitmq","app\.kubernetes\.io\/part-of":"rabbitmq"\}\)/,
      /openkeel-chart\/rabbitmq .* its required anti-affinity on kubernetes\.io\/hostname selects .* it keeps nothing apart/,
    ],
  },
  {
    what: "RabbitMQ: its PodDisruptionBudget gone (the operator makes none)",
    stack: "prod-medium",
    tamper: (plan) => {
      for (const ph of plan.phases) ph.units = ph.units.filter((u) => u.name !== "openkeel-rabbitmq-budget");
    },
    says: [
      /openkeel-chart\/rabbitmq .* has no PodDisruptionBudget over its pods .*a drain may evict every member at once .*Fix: restore the PodDisruptionBudget the Plan writes for it/,
    ],
  },
  {
    what: "RabbitMQ: its PodDisruptionBudget selecting app.kubernetes.io/instance, which the operator does not set",
    stack: "prod-small",
    tamper: (plan) => ((budget(plan).spec as any).selector = { matchLabels: { "app.kubernetes.io/instance": "openkeel-chart-rabbitmq" } }),
    says: [/openkeel-chart\/rabbitmq .* has no PodDisruptionBudget over its pods/],
  },
  {
    what: "RabbitMQ: its PodDisruptionBudget letting a drain take two members",
    stack: "prod-large",
    tamper: (plan) => ((budget(plan).spec as any).maxUnavailable = 2),
    says: [/openkeel-chart\/rabbitmq .* its PodDisruptionBudget lets a drain evict 2 of its 3 members at once, not 1/],
  },
  {
    what: "OVN central: its patch dropped",
    stack: "prod-medium",
    tamper: drop(...OVN),
    says: [
      /openkeel-neutron\/ovnCentral \(StatefulSet openkeel-neutron-ovn-central\) has no required pod anti-affinity on kubernetes\.io\/hostname.*§ 2\.2 OVN central \(D2\)/,
    ],
  },
  {
    what: "OVN central: its patch aimed at another name",
    stack: "prod-large",
    tamper: retarget(...OVN, "openkeel-neutron-ovncentral"),
    says: [
      /\[post-render-target\] release openkeel-neutron: its post-render patch of StatefulSet openkeel-neutron-ovncentral/,
      /openkeel-neutron\/ovnCentral .* has no required pod anti-affinity on topology\.kubernetes\.io\/zone/,
    ],
  },
  {
    what: "OVN central: its terms select another workload's pods",
    stack: "prod-medium",
    tamper: reselect(...OVN, { matchLabels: { "app.kubernetes.io/instance": "openkeel-neutron", "app.kubernetes.io/name": "openkeel-neutron-api" } }),
    says: [
      /\[post-render-selector\] openkeel-neutron\/ovnCentral .* matches none of its pods/,
      /openkeel-neutron\/ovnCentral .* its required anti-affinity on kubernetes\.io\/hostname selects/,
    ],
  },
  {
    what: "Swift storage: its patches dropped",
    stack: "prod-large",
    tamper: drop(...SWIFT),
    says: [
      /openkeel-swift\/storage \(StatefulSet openkeel-swift-storage\) has no required pod anti-affinity on kubernetes\.io\/hostname/,
      /openkeel-swift\/storage .* does not spread over the zones/,
      /openkeel-swift\/storage .* selects no node: it would run on any node, not only on storage nodes .*Fix: restore the post-render patch that carries it \(openkeel\/unlisted\.ts unlistedPostRender\)/,
    ],
  },
  {
    what: "Swift storage: its patches aimed at another name",
    stack: "prod-medium",
    tamper: retarget(...SWIFT, "openkeel-swift-storage-0"),
    says: [
      /\[post-render-target\] release openkeel-swift: its post-render patch of StatefulSet openkeel-swift-storage-0/,
      /openkeel-swift\/storage .* has no required pod anti-affinity/,
    ],
  },
  {
    what: "Swift storage: its host term selects no pod",
    stack: "prod-medium",
    tamper: reselect(...SWIFT, { matchLabels: { "app.kubernetes.io/name": "swift-storage" } }),
    says: [/\[post-render-selector\] openkeel-swift\/storage/, /openkeel-swift\/storage .* its required anti-affinity on kubernetes\.io\/hostname selects/],
  },
  {
    what: "Swift storage: its zone spread selects no pod",
    stack: "prod-large",
    tamper: (plan) => {
      for (const p of patchesOf(plan, ...SWIFT)) {
        const spread = (p.patch as any).spec.template.spec.topologySpreadConstraints;
        if (spread) spread[0].labelSelector = { matchLabels: { app: "swift" } };
      }
    },
    says: [
      /\[post-render-selector\] openkeel-swift\/storage .*topologySpreadConstraints\.0\.labelSelector .* it spreads nothing/,
      /openkeel-swift\/storage .* does not spread over the zones/,
    ],
  },
  {
    what: "the ingress: its patch dropped (D8)",
    stack: "prod-medium",
    tamper: drop(...INGRESS),
    says: [
      /openkeel-chart\/ingress \(DaemonSet openkeel-chart-ingress\) selects no node: it would run on any node, not only on controlPlane and network nodes/,
    ],
  },
  {
    what: "the ingress: its patch aimed at a Deployment",
    stack: "prod-small",
    tamper: (plan) => {
      for (const p of patchesOf(plan, ...INGRESS)) p.target.kind = "Deployment";
    },
    says: [
      /\[post-render-target\] release openkeel-chart: its post-render patch of Deployment openkeel-chart-ingress/,
      /openkeel-chart\/ingress .* selects no node/,
    ],
  },
  {
    what: "the ingress: a spread its patch writes selects no pod",
    stack: "prod-medium",
    tamper: spreadOver(...INGRESS, { "app.kubernetes.io/name": "ingress" }),
    says: [
      /\[post-render-selector\] openkeel-chart\/ingress \(DaemonSet openkeel-chart-ingress\): .*topologySpreadConstraints\.0\.labelSelector .* it spreads nothing/,
    ],
  },
  {
    what: "the ingress: its patch on the network nodes only (D8)",
    stack: "prod-medium",
    tamper: (plan) => {
      const spec = (patchesOf(plan, ...INGRESS)[0].patch as any).spec.template.spec;
      delete spec.affinity;
      spec.nodeSelector = { "node-restriction.kubernetes.io/openkeel-network": "" };
    },
    says: [
      /openkeel-chart\/ingress .* selects nodes by node-restriction\.kubernetes\.io\/openkeel-network, not .*openkeel-control-plane OR .*openkeel-network/,
    ],
  },
  {
    what: "an unlisted component (Nova's scheduler): its patch dropped",
    stack: "prod-medium",
    tamper: drop(...SCHEDULER),
    says: [
      /openkeel-nova\/scheduler \(Deployment openkeel-nova-scheduler\) selects no node/,
      /openkeel-nova\/scheduler .* runs at priority none, not "openkeel-control"/,
    ],
  },
  {
    what: "an unlisted component (Nova's scheduler): its patch aimed at another name",
    stack: "lab",
    tamper: retarget(...SCHEDULER, "openkeel-nova-nova-scheduler"),
    says: [
      /\[post-render-target\] release openkeel-nova: its post-render patch of Deployment openkeel-nova-nova-scheduler/,
      /openkeel-nova\/scheduler .* runs at priority none/,
    ],
  },
  {
    what: "an unlisted component (Nova's scheduler): a spread its patch writes selects no pod",
    stack: "prod-small",
    tamper: spreadOver(...SCHEDULER, { "app.kubernetes.io/instance": "openkeel-nova", "app.kubernetes.io/name": "nova-scheduler" }),
    says: [/\[post-render-selector\] openkeel-nova\/scheduler/],
  },
];

describe("planStack refuses a guarantee-carrying patch that is dropped, misses its target or its pods", () => {
  it.each(SHIPPED_STACKS)("%s: every guarantee holds on the shipped Plan", (stack) => {
    expect(planStack(shippedConfig(stack)).plan).toBeDefined();
  });

  it.each(CASES.map((c) => [c.what, c] as const))("%s", (_what, c) => {
    const message = refusal(c.stack, c.tamper);
    expect(message).toMatch(new RegExp(`^post-render of stack ${c.stack}: `));
    for (const re of c.says) expect(message).toMatch(re);
  });

  it("the stack's own raw spread that selects none of its pods is the stack's problem, at its key", () => {
    const cfg = mutatedConfig("prod-medium", (raw) => {
      raw.services = {
        ...raw.services,
        nova: {
          placement: {
            scheduler: {
              topologySpreadConstraints: [
                {
                  maxSkew: 1,
                  topologyKey: "kubernetes.io/hostname",
                  whenUnsatisfiable: "ScheduleAnyway",
                  labelSelector: { matchLabels: { app: "nova-scheduler" } },
                },
              ],
            },
          },
        },
      };
    });
    const found = planStack(cfg).problems.filter((p) => p.code?.startsWith("post-render"));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      code: "post-render-selector",
      path: "openkeel:services.nova.placement.scheduler",
      file: "stacks/Pulumi.prod-medium.yaml",
    });
    expect(found[0].message).toMatch(/^openkeel-nova\/scheduler \(Deployment openkeel-nova-scheduler\): .* matches none of its pods/);
  });

  it("the stack's raw anti-affinity for OVN central over another workload's pods leaves its members free to share a node", () => {
    const cfg = mutatedConfig("prod-medium", (raw) => {
      const term = { labelSelector: { matchLabels: { "app.kubernetes.io/name": "ovn-central" } }, topologyKey: "kubernetes.io/hostname" };
      raw.services = {
        ...raw.services,
        neutron: { placement: { ovnCentral: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } } } } },
      };
    });
    const found = planStack(cfg).problems.filter((p) => p.code?.startsWith("post-render"));
    expect(found.map((p) => [p.code, p.path])).toEqual([
      ["post-render-selector", "openkeel:services.neutron.placement.ovnCentral"],
      ["post-render-guarantee", "openkeel:services.neutron.placement.ovnCentral"],
    ]);
    expect(found[1].message).toMatch(/its required anti-affinity on kubernetes\.io\/hostname selects .* it keeps nothing apart \(§ 2\.2 OVN central \(D2\)/);
  });
});

describe("spread on zone (§ 2.1, § 2.2) where the nodes carry several zones but the topology keeps no member per zone", () => {
  it("prod-medium with three zones: Galera's patch and Swift storage's spread over them, softly, over their own pods", () => {
    const cfg = mutatedConfig("prod-medium", (raw) => {
      raw.nodes.forEach((n: any, i: number) => (n.zone = `zone-${"abc"[i % 3]}`));
    });
    const r = planStack(cfg);
    expect(r.problems.filter((p) => p.level !== "warning")).toEqual([]);
    const spreads = (name: string) =>
      (releaseOf(r.plan!, name).postRender ?? []).flatMap((p) => {
        const spec = (p.patch as any).spec;
        return spec.topologySpreadConstraints ?? spec.template?.spec?.topologySpreadConstraints ?? [];
      });
    expect(spreads("openkeel-chart")).toEqual([
      {
        maxSkew: 1,
        topologyKey: "topology.kubernetes.io/zone",
        whenUnsatisfiable: "ScheduleAnyway",
        labelSelector: { matchLabels: { "app.kubernetes.io/name": "mariadb", "app.kubernetes.io/instance": "openkeel-chart-mariadb" } },
      },
    ]);
    expect(spreads("openkeel-swift")).toEqual([
      {
        maxSkew: 1,
        topologyKey: "topology.kubernetes.io/zone",
        whenUnsatisfiable: "ScheduleAnyway",
        labelSelector: { matchLabels: { "app.kubernetes.io/instance": "openkeel-swift", "app.kubernetes.io/name": "openkeel-swift-storage" } },
      },
    ]);
  });
});

describe("the operators' pods, as their code at the pins builds them", () => {
  const mariadb = (spec: Record<string, unknown>): K8sObject => ({ apiVersion: "k8s.mariadb.com/v1alpha1", kind: "MariaDB", metadata: { name: "db" }, spec });

  it("mariadb-operator 26.6.0: pods labelled name=mariadb, instance=<CR>; antiAffinityEnabled is the host term only where the CR writes no podAntiAffinity", () => {
    expect(galeraPod(mariadb({})).labels).toEqual({ "app.kubernetes.io/name": "mariadb", "app.kubernetes.io/instance": "db" });
    const flag = galeraPod(mariadb({ affinity: { antiAffinityEnabled: true, nodeAffinity: { x: 1 } }, priorityClassName: "p" })).spec;
    expect(flag).toEqual({
      priorityClassName: "p",
      affinity: {
        nodeAffinity: { x: 1 },
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            {
              labelSelector: { matchExpressions: [{ key: "app.kubernetes.io/instance", operator: "In", values: ["db"] }] },
              topologyKey: "kubernetes.io/hostname",
            },
          ],
        },
      },
    });
    const own = { requiredDuringSchedulingIgnoredDuringExecution: [] };
    expect(galeraPod(mariadb({ affinity: { antiAffinityEnabled: true, podAntiAffinity: own } })).spec.affinity).toEqual({ podAntiAffinity: own });
  });

  it("mariadb-operator 26.6.0: its PodDisruptionBudget is the CR's, else minAvailable 50% for Galera, else none", () => {
    expect(galeraDisruptionsAllowed(mariadb({ replicas: 3, galera: { enabled: true } }))).toBe(1);
    expect(galeraDisruptionsAllowed(mariadb({ replicas: 5, galera: { enabled: true } }))).toBe(2);
    expect(galeraDisruptionsAllowed(mariadb({ replicas: 3 }))).toBe(3);
    expect(galeraDisruptionsAllowed(mariadb({ replicas: 5, galera: { enabled: true }, podDisruptionBudget: { maxUnavailable: 1 } }))).toBe(1);
    expect(galeraDisruptionsAllowed(mariadb({ replicas: 3, podDisruptionBudget: { minAvailable: "66%" } }))).toBe(1);
  });

  it("the RabbitMQ cluster operator v2.22.3: pods labelled name/component/part-of, the default zone spread, the override merged over the pod spec", () => {
    const cr: K8sObject = {
      apiVersion: "rabbitmq.com/v1beta1",
      kind: "RabbitmqCluster",
      metadata: { name: "mq" },
      spec: {
        tolerations: [{ key: "a", operator: "Exists" }],
        affinity: { nodeAffinity: { n: 1 } },
        override: {
          statefulSet: {
            spec: { template: { metadata: { labels: { extra: "x" } }, spec: { containers: [], nodeSelector: { r: "" }, priorityClassName: "p" } } },
          },
        },
      },
    };
    const pod = rabbitmqPod(cr);
    expect(pod.labels).toEqual({
      "app.kubernetes.io/name": "mq",
      "app.kubernetes.io/component": "rabbitmq",
      "app.kubernetes.io/part-of": "rabbitmq",
      extra: "x",
    });
    expect(pod.spec).toEqual({
      affinity: { nodeAffinity: { n: 1 } },
      tolerations: [{ key: "a", operator: "Exists" }],
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: "topology.kubernetes.io/zone",
          whenUnsatisfiable: "ScheduleAnyway",
          labelSelector: { matchLabels: { "app.kubernetes.io/name": "mq" } },
        },
      ],
      nodeSelector: { r: "" },
      priorityClassName: "p",
    });
    const off = rabbitmqPod({ ...cr, metadata: { name: "mq", annotations: { "rabbitmq.com/disable-default-topology-spread-constraints": "true" } } });
    expect(off.spec.topologySpreadConstraints).toEqual([]);
  });
});
