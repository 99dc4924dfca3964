// D5: the services that replicate their own data keep single-replica local Longhorn volumes (one
// copy per member, on the member's node): Galera and RabbitMQ (§ 2.1, D5), and by the same rule OVN
// central's RAFT members (§ 2.2) and Swift's storage devices (swift-csi-block.md § 1). Every class
// such a consumer names must exist, on Longhorn, with numberOfReplicas "1" and dataLocality
// strict-local. One local copy per member survives a node's loss only when no two members share the
// node: each keeps its members apart with a required host anti-affinity over its own pods, on the
// object the cluster receives (its release's post-render record; OVN central's is D2's rule).
import {
  chartOf,
  chartValues,
  describeValue,
  type Finding,
  get,
  isObject,
  resourceRule,
  type ResourceView,
  stackRule,
  STORAGE_CLASS_TYPE,
  type Tree,
  valuesPath,
  walk,
} from "./common";
import { INFRA_CHART, NEUTRON_CHART, SWIFT_CHART } from "./charts";
import { apartOn, chartPodLabels, patchedObject, releaseId, releasePatches, selectorMisses, targetsOf, type Patch } from "./post-render";

const LOCAL_CLASS_PARAMETERS = { numberOfReplicas: "1", dataLocality: "strict-local" } as const;
const LONGHORN_PROVISIONER = "driver.longhorn.io";
const CLASS_KEY = /^storageClass(Name)?$/;

/** The strict-local consumers: the chart, what replicates itself, and the values block its volume class sits in. */
const STRICT_LOCAL_CONSUMERS: { chart: string; what: string; block: string[] }[] = [
  { chart: INFRA_CHART, what: "Galera (mariadb)", block: ["infrastructure", "mariadb"] },
  { chart: INFRA_CHART, what: "RabbitMQ", block: ["infrastructure", "rabbitmq"] },
  { chart: NEUTRON_CHART, what: "OVN central", block: ["ovnCentral"] },
  { chart: SWIFT_CHART, what: "Swift storage", block: ["storage"] },
];

/** The storage class each strict-local consumer of a release names (the first `storageClass[Name]` under its block). */
function consumerClasses(r: ResourceView): { what: string; path: string[]; className: unknown }[] {
  const chart = chartOf(r);
  return STRICT_LOCAL_CONSUMERS.filter((c) => c.chart === chart).map((c) => {
    const own = chartValues(r, c.chart);
    let found: { path: string[]; className: unknown } | undefined;
    walk(get(own, c.block), (path, value) => {
      if (!found && CLASS_KEY.test(path[path.length - 1] ?? "")) found = { path: [...c.block, ...path], className: value };
    });
    return { what: c.what, path: found?.path ?? [...c.block, "storage", "storageClassName"], className: found?.className };
  });
}

function classParameterFindings(sc: ResourceView, name: string, urn?: string): Finding[] {
  const findings: Finding[] = [];
  const params = isObject(sc.props.parameters) ? sc.props.parameters : {};
  for (const [key, want] of Object.entries(LOCAL_CLASS_PARAMETERS)) {
    if (params[key] !== want) {
      findings.push({
        urn,
        message: `StorageClass ${name}: parameters.${key} is ${describeValue(params[key])}`,
        fix: `set parameters.${key}: "${want}" (a string; D5: one local replica, the service replicates itself)`,
      });
    }
  }
  if (sc.props.provisioner !== LONGHORN_PROVISIONER) {
    findings.push({ urn, message: `StorageClass ${name}: provisioner is ${describeValue(sc.props.provisioner)}`, fix: `use ${LONGHORN_PROVISIONER}` });
  }
  return findings;
}

function consumerClassFindings(r: ResourceView): Finding[] {
  return consumerClasses(r)
    .filter((c) => typeof c.className !== "string" || c.className === "")
    .map((c) => ({
      message: `${r.name}: values.${valuesPath(c.path)} is ${describeValue(c.className)}: ${c.what} volumes would land on the default class`,
      fix: 'set it to longhorn-local (numberOfReplicas "1", dataLocality strict-local, D5)',
    }));
}

function localClassFindings(resources: ResourceView[]): Finding[] {
  const classes = new Map<string, ResourceView>();
  for (const r of resources) {
    const name = get(r.props, ["metadata", "name"]);
    if (r.type === STORAGE_CLASS_TYPE && typeof name === "string") classes.set(name, r);
  }
  const findings: Finding[] = [];
  const checked = new Set<string>();
  for (const r of resources) {
    for (const c of consumerClasses(r)) {
      if (typeof c.className !== "string" || c.className === "") continue;
      const sc = classes.get(c.className);
      if (!sc) {
        findings.push({
          urn: r.urn,
          message: `${r.name}: ${c.what} volumes (values.${valuesPath(c.path)}) use StorageClass ${c.className}, which this stack does not create`,
          fix: `add the StorageClass ${c.className} (provisioner ${LONGHORN_PROVISIONER}, numberOfReplicas "1", dataLocality strict-local) to the platform-config phase, or name longhorn-local`,
        });
      } else if (!checked.has(c.className)) {
        checked.add(c.className);
        findings.push(...classParameterFindings(sc, c.className, sc.urn));
      }
    }
  }
  return findings;
}

export const d5LocalVolumes = resourceRule(
  "D5",
  "d5-local-volumes",
  "every strict-local consumer (Galera, RabbitMQ, OVN central, Swift storage) names a storage class for its volumes",
  consumerClassFindings,
);

export const d5LocalClass = stackRule(
  "D5",
  "d5-local-class",
  'the class every strict-local consumer (Galera, RabbitMQ, OVN central, Swift storage) names exists, on Longhorn, with numberOfReplicas "1" and dataLocality strict-local',
  localClassFindings,
);

const HOSTNAME_KEY = "kubernetes.io/hostname";

/**
 * A member set and how the cluster gets its pods: the object its chart renders and a patch may
 * reach (`<release>-<suffix>`), what the chart renders there that the pack knows of (§ 5.2), the
 * labels its pods carry, and their pod spec from the patched object. The operators' labels are the
 * pack's own copy of their code at the pins (intentionally independent of platform/): mariadb-operator
 * 26.6.0 pkg/builder/labels/labels.go WithMariaDBSelectorLabels; the RabbitMQ cluster operator
 * v2.22.3 internal/metadata/label.go Label.
 */
interface MemberSet {
  chart: string;
  what: string;
  kind: string;
  suffix: string;
  rendered(name: string): Tree;
  labels(release: string, name: string): Record<string, string>;
  podSpec(object: Tree, name: string): unknown;
}

const hostTerm = (selector: Tree) => ({ labelSelector: selector, topologyKey: HOSTNAME_KEY });

const MEMBER_SETS: MemberSet[] = [
  {
    chart: INFRA_CHART,
    what: "Galera",
    kind: "MariaDB",
    suffix: "mariadb",
    rendered: () => ({}),
    labels: (_release, name) => ({ "app.kubernetes.io/name": "mariadb", "app.kubernetes.io/instance": name }),
    // antiAffinityEnabled: the host term on the instance label where the CR writes no podAntiAffinity (api/v1alpha1 AffinityConfig.SetDefaults)
    podSpec: (o, name) => {
      const affinity = get(o, ["spec", "affinity"]);
      if (get(affinity, ["podAntiAffinity"]) !== undefined || get(affinity, ["antiAffinityEnabled"]) !== true) return { affinity };
      const selector = { matchExpressions: [{ key: "app.kubernetes.io/instance", operator: "In", values: [name] }] };
      return { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [hostTerm(selector)] } } };
    },
  },
  {
    chart: INFRA_CHART,
    what: "RabbitMQ",
    kind: "RabbitmqCluster",
    suffix: "rabbitmq",
    // § 5.2: the chart renders the RabbitmqCluster's required host anti-affinity itself, over app.kubernetes.io/name=<cluster>
    rendered: (name) => ({
      spec: {
        affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [hostTerm({ matchLabels: { "app.kubernetes.io/name": name } })] } },
      },
    }),
    labels: (_release, name) => ({ "app.kubernetes.io/name": name, "app.kubernetes.io/component": "rabbitmq", "app.kubernetes.io/part-of": "rabbitmq" }),
    // override.statefulSet's pod spec is merged over it (a strategic merge: its anti-affinity list replaces the CR's)
    podSpec: (o) => {
      const own = get(o, ["spec", "override", "statefulSet", "spec", "template", "spec", "affinity", "podAntiAffinity"]);
      return {
        affinity: {
          ...(isObject(get(o, ["spec", "affinity"])) ? (get(o, ["spec", "affinity"]) as Tree) : {}),
          ...(own !== undefined ? { podAntiAffinity: own } : {}),
        },
      };
    },
  },
  {
    chart: SWIFT_CHART,
    what: "Swift storage",
    kind: "StatefulSet",
    suffix: "storage",
    rendered: () => ({}),
    labels: chartPodLabels,
    podSpec: (o) => get(o, ["spec", "template", "spec"]),
  },
];

function memberSetFindings(resources: ResourceView[], r: ResourceView, m: MemberSet): Finding[] {
  const { patches, problem } = releasePatches(resources, r);
  if (problem) return [problem];
  const release = releaseId(r).name;
  const name = `${release}-${m.suffix}`;
  const labels = m.labels(release, name);
  const patched = patchedObject(patches, m.kind, name, m.rendered(name));
  const misses = selectorMisses(r, patches, m.kind, name, labels);
  const object = patched ?? m.rendered(name);
  if (apartOn(m.podSpec(object, name), HOSTNAME_KEY, labels)) return misses;
  return [...misses, apartFinding(r, m, name, labels, patched === undefined ? patches : undefined)];
}

/** Its members may share a node: why, and how to keep them apart. */
function apartFinding(r: ResourceView, m: MemberSet, name: string, labels: Record<string, string>, unreached?: readonly Patch[]): Finding {
  const why = unreached
    ? `no post-render patch reaches ${m.kind} ${name} (the release's patches target: ${targetsOf(unreached)})`
    : `${m.kind} ${name}, as its post-render patches leave it, has no required anti-affinity on ${HOSTNAME_KEY} over its own pods`;
  return {
    urn: r.urn,
    message: `${r.name}: ${m.what} members may share a node, and a node lost takes two of their single local copies: ${why}`,
    fix: `keep the release's post-render patch of ${m.kind} ${name} with a required anti-affinity on ${HOSTNAME_KEY} whose labelSelector matches the labels its pods carry (${JSON.stringify(labels)})`,
  };
}

export const d5MembersApart = stackRule(
  "D5",
  "d5-members-apart",
  "Galera, RabbitMQ and Swift storage keep their members on distinct nodes: a required host anti-affinity over their own pods (the labels their operator or chart sets) reaches the object the cluster receives (their release's post-render record)",
  (resources) =>
    resources.flatMap((r) => {
      const chart = chartOf(r);
      return MEMBER_SETS.filter((m) => m.chart === chart).flatMap((m) => memberSetFindings(resources, r, m));
    }),
);
