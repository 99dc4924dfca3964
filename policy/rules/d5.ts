// D5: the services that replicate their own data keep single-replica local Longhorn volumes (one
// copy per member, on the member's node): Galera and RabbitMQ (§ 2.1, D5), and by the same rule OVN
// central's RAFT members (§ 2.2) and Swift's storage devices (swift-csi-block.md § 1). Every class
// such a consumer names must exist, on Longhorn, with numberOfReplicas "1" and dataLocality
// strict-local.
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
  valuesPath,
  walk,
} from "./common";
import { INFRA_CHART, NEUTRON_CHART, SWIFT_CHART } from "./charts";

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
