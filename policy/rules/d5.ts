// D5: Galera and RabbitMQ replicate themselves, so their volumes are single-replica local Longhorn
// volumes: a class with numberOfReplicas "1" and dataLocality strict-local, which must exist.
import { chartOf, chartValues, describeValue, type Finding, get, isObject, resourceRule, type ResourceView, stackRule, STORAGE_CLASS_TYPE, valuesPath, walk } from "./common";

export const INFRA_CHART = "openkeel-chart";
const LOCAL_CLASS_PARAMETERS = { numberOfReplicas: "1", dataLocality: "strict-local" } as const;
const LONGHORN_PROVISIONER = "driver.longhorn.io";
const DATA_STORES = ["mariadb", "rabbitmq"] as const;
const CLASS_KEY = /^storageClass(Name)?$/;

/** The storage class each data store's volumes use (`infrastructure.<store>…storageClass[Name]`). */
function dataStoreClasses(r: ResourceView): { store: string; path: string[]; className: unknown }[] {
  const own = chartValues(r, INFRA_CHART);
  return DATA_STORES.map((store) => {
    let found: { path: string[]; className: unknown } | undefined;
    walk(get(own, ["infrastructure", store]), (path, value) => {
      if (!found && CLASS_KEY.test(path[path.length - 1] ?? "")) found = { path: ["infrastructure", store, ...path], className: value };
    });
    return { store, path: found?.path ?? ["infrastructure", store, "storageClass"], className: found?.className };
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
        fix: `set parameters.${key}: "${want}" (a string; D5: one local replica, the database replicates itself)`,
      });
    }
  }
  if (sc.props.provisioner !== LONGHORN_PROVISIONER) {
    findings.push({ urn, message: `StorageClass ${name}: provisioner is ${describeValue(sc.props.provisioner)}`, fix: `use ${LONGHORN_PROVISIONER}` });
  }
  return findings;
}

function dataStoreClassFindings(r: ResourceView): Finding[] {
  if (chartOf(r) !== INFRA_CHART) return [];
  return dataStoreClasses(r)
    .filter((c) => typeof c.className !== "string" || c.className === "")
    .map((c) => ({
      message: `${r.name}: values.${valuesPath(c.path)} is ${describeValue(c.className)}: ${c.store} volumes would land on the default class`,
      fix: "set it to longhorn-local (numberOfReplicas \"1\", dataLocality strict-local, D5)",
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
    if (chartOf(r) !== INFRA_CHART) continue;
    for (const c of dataStoreClasses(r)) {
      if (typeof c.className !== "string" || c.className === "" || checked.has(c.className)) continue;
      checked.add(c.className);
      const sc = classes.get(c.className);
      if (!sc) {
        findings.push({
          urn: r.urn,
          message: `${r.name}: ${c.store} volumes use StorageClass ${c.className}, which this stack does not create`,
          fix: `add the StorageClass ${c.className} (provisioner ${LONGHORN_PROVISIONER}, numberOfReplicas "1", dataLocality strict-local) to the platform-config phase`,
        });
      } else findings.push(...classParameterFindings(sc, c.className, sc.urn));
    }
  }
  return findings;
}

export const d5LocalVolumes = resourceRule(
  "D5",
  "d5-local-volumes",
  "Galera and RabbitMQ volumes name a single-replica strict-local Longhorn class",
  dataStoreClassFindings,
);

export const d5LocalClass = stackRule(
  "D5",
  "d5-local-class",
  'the class Galera and RabbitMQ use exists, on Longhorn, with numberOfReplicas "1" and dataLocality strict-local',
  localClassFindings,
);
