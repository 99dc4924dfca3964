// The placement reader of the OpenKeel releases: every component a release's values place, with the
// scheduling the chart renders for it (§ 5.2), and its design row (./design.ts). Most components are
// placed by the chart helper (placement/chart-helper.ts) from `placement.<component>` and the role
// definitions the values pass in `global.nodeRoles`; the service's descriptor (./services/) says where a chart
// reads more (§ 5.2 "What is implemented"): a nodeSelector of its own that wins over the helper's,
// tolerations it adds, or a component it places by `<component>.nodeSelector` alone while tolerating
// every taint (the OVN chassis).
import { valueAt } from "../config/problems";
import { HOSTNAME_LABEL, RESERVED_TAINT, type Toleration } from "../config/roles";
import { SCHEDULING_FIELDS, type PlacementValue } from "../config/placement";
import { resolvePlacement, type RoleDefinitions } from "../placement/chart-helper";
import { describeComponent, type PlacementCheck } from "../placement/report";
import { requiredAntiAffinityKeys, untoleratedTaints } from "../placement/scheduling";
import { arr, isObj, num, obj, type Component, type DesignRoles, type Obj, type Readers, type UnitReader } from "../placement/workloads";
import { isSelfPlaced, type ComponentSpec, type DesignRow } from "./components";
import { API_JOB, API_JOB_DESIGN, openkeelDesign, rendersApiJob } from "./design";
import { OPENKEEL_SERVICES } from "./services";
import { patchedObject } from "../plan/post-render";
import type { HelmReleaseUnit, K8sObject } from "../plan/plan";
import { memberObjectName, QUORUM_MEMBERS } from "./infrastructure";
import type { Scheduling } from "../placement/chart-helper";
import { templateRendersHostAntiAffinity } from "./zone-spread";
import { isUnlisted, UNLISTED_COMPONENTS, unlistedRendered } from "./unlisted";
import { INFRASTRUCTURE_TYPE, RELEASE_TYPE, releaseName, workloadObjectName, workloadPodLabels, workloadSelector } from "./names";
import { serviceOfRelease } from "./registry";

const PLACEMENT_KEYS: readonly string[] = [...SCHEDULING_FIELDS, "enabled"];
/** One component's placement value, as opposed to a map of them (`placement.<component>`). */
const isPlacementValue = (v: unknown): v is PlacementValue => isObj(v) && Object.keys(v).some((k) => PLACEMENT_KEYS.includes(k));

/** What every taint is tolerated with: an empty key and Exists (the chassis, § 5.2). */
const TOLERATE_EVERYTHING: Toleration = { operator: "Exists" };

/** The components of a service chart, by chart name (a stack pins versions, never names): its descriptor's. */
const COMPONENTS_BY_CHART = new Map<string, Readonly<Record<string, ComponentSpec>>>(OPENKEEL_SERVICES.map((s) => [s.chart, s.components]));

/** `placement.<component>` maps and `<component>.placement` values of one release (§ 5.1). */
function placementEntries(values: Obj): [string, PlacementValue, Obj][] {
  const out: [string, PlacementValue, Obj][] = [];
  const visit = (parent: Obj, depth: number) => {
    for (const [key, v] of Object.entries(parent)) {
      if (key === "global" || !isObj(v)) continue;
      if (key === "placement") {
        if (!isPlacementValue(v)) for (const [k, p] of Object.entries(v)) if (isObj(p)) out.push([k, p as PlacementValue, {}]);
      } else if (isObj(v.placement) && isPlacementValue(v.placement)) out.push([key, v.placement, v]);
      else if (depth < 1) visit(v, depth + 1);
    }
  };
  visit(values, 0);
  return out;
}

function replicasOf(values: Obj, key: string, p: PlacementValue, holder: Obj): number | undefined {
  return num(obj(p).replicas) ?? num(holder.replicas) ?? num(obj(values.replicas)[key]) ?? num(obj(values[key]).replicas);
}

function isEnabled(p: PlacementValue, holder: Obj): boolean {
  return p.enabled !== false && holder.enabled !== false;
}

const stringMap = (v: unknown): Record<string, string> => Object.fromEntries(Object.entries(obj(v)).map(([k, x]) => [k, String(x)]));

/** A fact of a component this module's own placement check reads (Component.facts). */
const RESERVED_HOSTS = "reservedHosts";

/** The design row's facts every component carries; the roles it covers, given what else the Plan installs. */
function designFields(design: DesignRow, units: ReadonlySet<string>): Pick<Component, "designRoles" | "confinedTo" | "forbiddenRoles" | "facts"> {
  const more = design.chassis ? OPENKEEL_SERVICES.filter((s) => units.has(releaseName(s.name))).flatMap((s) => s.chassisRoles ?? []) : [];
  const roles: DesignRoles = more.length > 0 && Array.isArray(design.roles) ? [...new Set([...design.roles, ...more])] : design.roles;
  return {
    designRoles: roles,
    ...(design.confinedTo ? { confinedTo: design.confinedTo } : {}),
    ...(design.forbiddenRoles ? { forbiddenRoles: design.forbiddenRoles } : {}),
    ...(design.reservedHosts ? { facts: { [RESERVED_HOSTS]: true } } : {}),
  };
}

/** The component a release's reader found: its name, scheduling, anti-affinity, replicas and design row. */
function releaseComponent(
  u: HelmReleaseUnit,
  ctx: Parameters<UnitReader>[1],
  key: string,
  design: DesignRow,
  s: Scheduling,
  replicas: number | undefined,
  /** The `placement.<key>` it is placed by (the API's Job: `api`). */
  placementKey = key,
): Component {
  // the host term its template renders (§ 5.2: the Ironic conductor only), else only what the patches write
  const anti = [...(templateRendersHostAntiAffinity(u.release, key) ? [HOSTNAME_LABEL] : []), ...requiredAntiAffinityKeys(s.affinity)];
  const service = u.type === RELEASE_TYPE ? serviceOfRelease(u.name) : undefined;
  return {
    name: `${u.name}/${key}`,
    source: "openkeel",
    unit: u.name,
    kind: design.kind,
    ...(replicas !== undefined ? { replicas } : {}),
    scheduling: { nodeSelector: s.nodeSelector, affinity: s.affinity, tolerations: s.tolerations },
    ...(anti.length > 0 ? { requiredAntiAffinity: [...new Set(anti)] } : {}),
    ...designFields(design, ctx.units),
    // the stack's key of it (openkeel:services, stacks/README.md), where a check about it points
    ...(service ? { configPath: `openkeel:services.${service}.placement.${placementKey}` } : {}),
  };
}

/** A component's pod template as the chart renders it, after the release's post-render patches. */
function patchedPodSpec(u: HelmReleaseUnit, kind: string, key: string, spec: Obj): Obj {
  const template = { apiVersion: "apps/v1", kind, metadata: { name: workloadObjectName(u.release, key) }, spec: { template: { spec } } };
  return obj(obj(obj(patchedObject(u.release, template, u.postRender ?? []).spec).template).spec);
}

/**
 * The components § 5.2 does not list (./unlisted.ts): the chart renders them with no placement
 * (tolerations: [] only), whatever the values say; only the release's patches place them. One the
 * chart does not render (an optional one switched off by `<component>.enabled`) places nothing.
 */
function unlistedComponentsOf(u: HelmReleaseUnit, ctx: Parameters<UnitReader>[1], values: Obj): Component[] {
  return Object.entries(UNLISTED_COMPONENTS[u.chart.chart] ?? {}).flatMap(([key, unlisted]) => {
    const holder = obj(values[key]);
    if (!unlistedRendered(unlisted, holder)) return [];
    const design = openkeelDesign(u.chart.chart, key);
    const spec = patchedPodSpec(u, design.kind, key, { tolerations: [] });
    const scheduling: Scheduling = {
      ...(isObj(spec.nodeSelector) ? { nodeSelector: stringMap(spec.nodeSelector) } : {}),
      ...(isObj(spec.affinity) ? { affinity: spec.affinity as Scheduling["affinity"] } : {}),
      tolerations: arr<Toleration>(spec.tolerations),
    };
    const replicas = design.kind === "DaemonSet" ? undefined : replicasOf(values, key, {}, holder);
    return [releaseComponent(u, ctx, key, design, scheduling, replicas)];
  });
}

/** What the chart helper renders for a component from its placement, with the chart's own selector and tolerations (§ 5.2). */
function chartScheduling(values: Obj, spec: ComponentSpec | undefined, p: PlacementValue, roles: RoleDefinitions): Scheduling {
  const scheduling = resolvePlacement(p, { roles, defaultRole: "controlPlane" });
  if (spec && !isSelfPlaced(spec) && spec.winningNodeSelector) {
    const own = stringMap(valueAt(values, spec.winningNodeSelector));
    if (Object.keys(own).length > 0) scheduling.nodeSelector = own;
  }
  if (spec && !isSelfPlaced(spec) && spec.addedTolerations) {
    scheduling.tolerations = [...scheduling.tolerations, ...arr<Toleration>(valueAt(values, spec.addedTolerations))];
  }
  return scheduling;
}

const readRelease: UnitReader = (u, ctx) => {
  if (u.kind !== "HelmRelease") return [];
  const values = u.values as Obj;
  const chart = u.chart.chart;
  const specs = COMPONENTS_BY_CHART.get(chart) ?? {};
  // No global.nodeRoles (a lab whose nodes carry no role): role names render nothing (§ 5.2).
  const roles = obj(obj(obj(values.global).nodeRoles).roles) as RoleDefinitions;
  const out: Component[] = unlistedComponentsOf(u, ctx, values);
  for (const [key, p, holder] of placementEntries(values)) {
    const spec = specs[key];
    // the chart does not read it (the values contract refuses it, or it is unlisted): it places nothing
    if (!isEnabled(p, holder) || (spec && isSelfPlaced(spec)) || isUnlisted(chart, key)) continue;
    const design = openkeelDesign(chart, key);
    const scheduling = chartScheduling(values, spec, p, roles);
    // the API's Jobs: the chart places them as the API (§ 5.2), the API's patches are the Deployment's alone
    if (key === "api" && rendersApiJob(chart)) out.push(releaseComponent(u, ctx, API_JOB, API_JOB_DESIGN, { ...scheduling }, 1, key));
    // the release's post-render patches over the pod template (./zone-spread.ts: anti-affinity)
    scheduling.affinity = patchedPodSpec(u, design.kind, key, { affinity: scheduling.affinity }).affinity as Scheduling["affinity"];
    const replicas = design.kind === "DaemonSet" ? undefined : replicasOf(values, key, p, holder);
    out.push(releaseComponent(u, ctx, key, design, scheduling, replicas));
  }
  for (const [key, spec] of Object.entries(specs)) {
    if (!isSelfPlaced(spec)) continue;
    // every node its selector admits, whatever its taints; no selector: every node
    out.push({
      name: `${u.name}/${key}`,
      source: "openkeel",
      unit: u.name,
      kind: "DaemonSet",
      scheduling: { nodeSelector: stringMap(obj(values[key]).nodeSelector), tolerations: [TOLERATE_EVERYTHING] },
      ...designFields(openkeelDesign(chart, key), ctx.units),
    });
  }
  // in the chart's component order, as the descriptor lists them (the API's Job after the API)
  const order = Object.keys(specs);
  const rank = (c: Component) => {
    const key = c.name.slice(u.name.length + 1);
    return key === API_JOB ? order.indexOf("api") + 0.5 : order.indexOf(key);
  };
  return order.length > 0 ? [...out].sort((a, b) => rank(a) - rank(b)) : out;
};

/** A nodeSelector as the required node affinity the chart writes into a RabbitmqCluster (it has no nodeSelector field). */
function selectorAffinity(sel: Record<string, string> | undefined) {
  const exprs = Object.entries(sel ?? {}).map(([key, v]) => (v === "" ? { key, operator: "Exists" } : { key, operator: "In", values: [v] }));
  return exprs.length > 0 ? { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: exprs }] } } } : {};
}

/**
 * The CR openkeel-chart renders for a quorum member, exactly as § 5.2 "What is implemented" says:
 * the MariaDB CR with the helper's nodeSelector and tolerations; the RabbitmqCluster with the
 * label as node affinity, the required host anti-affinity of § 2.1 and the tolerations (the label
 * also through override.statefulSet).
 */
function memberCr(release: string, member: (typeof QUORUM_MEMBERS)[number], replicas: number | undefined, s: Scheduling): K8sObject {
  const name = memberObjectName(release, member);
  if (member === "mariadb") {
    // Galera on with more than one member (the contract chart's templates/infrastructure.yaml)
    const galera = (replicas ?? 1) > 1 ? { galera: { enabled: true } } : {};
    return {
      apiVersion: "k8s.mariadb.com/v1alpha1",
      kind: "MariaDB",
      metadata: { name },
      spec: { replicas, ...galera, nodeSelector: s.nodeSelector, tolerations: s.tolerations },
    };
  }
  const host = { labelSelector: { matchLabels: { "app.kubernetes.io/name": name } }, topologyKey: HOSTNAME_LABEL };
  const override = s.nodeSelector ? { override: { statefulSet: { spec: { template: { spec: { containers: [], nodeSelector: s.nodeSelector } } } } } } : {};
  return {
    apiVersion: "rabbitmq.com/v1beta1",
    kind: "RabbitmqCluster",
    metadata: { name },
    spec: {
      replicas,
      affinity: { ...selectorAffinity(s.nodeSelector), podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [host] } },
      tolerations: s.tolerations,
      ...override,
    },
  };
}

/** The CRs openkeel-chart renders for its quorum members, before the release's post-render patches. */
function memberCrs(u: HelmReleaseUnit): Record<(typeof QUORUM_MEMBERS)[number], K8sObject> {
  const values = u.values as Obj;
  const roles = obj(obj(obj(values.global).nodeRoles).roles) as RoleDefinitions;
  const cr = (member: (typeof QUORUM_MEMBERS)[number]) => {
    const m = obj(obj(values.infrastructure)[member]);
    return memberCr(u.release, member, num(m.replicas), resolvePlacement(obj(m.placement) as PlacementValue, { roles, defaultRole: "controlPlane" }));
  };
  return { mariadb: cr("mariadb"), rabbitmq: cr("rabbitmq") };
}

/**
 * openkeel-chart: Galera and RabbitMQ as their operators build them from the CRs the chart renders
 * after the release's post-render patches (plan/post-render.ts); the ingress through the helper.
 */
const readInfrastructure: UnitReader = (u, ctx) => {
  if (u.kind !== "HelmRelease") return [];
  const values = u.values as Obj;
  const crs = memberCrs(u);
  const members = QUORUM_MEMBERS.map((member): Component => {
    const cr = patchedObject(u.release, crs[member], u.postRender ?? []);
    const read = ctx.objects[cr.kind];
    // the operator's component reads its CR (its descriptor's readers); the Plan installs it before the chart (plan/needs.ts)
    if (!read)
      throw new Error(`placement: no component reads ${cr.kind}, which ${u.name} renders for ${member}; its operator's component must register a reader`);
    const [c] = read(u, cr, ctx);
    return { ...c, name: `${u.name}/${member}`, source: "openkeel", ...designFields(openkeelDesign(u.chart.chart, member), ctx.units) };
  });
  const { infrastructure: _members, ...rest } = values;
  const ingress = readRelease({ ...(u as HelmReleaseUnit), values: rest }, ctx);
  return [...members, ...ingress];
};

/** An object an OpenKeel chart renders for one of its components: a workload, or an operator's CR. */
export interface ChartObject {
  /** Its placement key (`ovnCentral`; `mariadb` for the Galera CR). */
  component: string;
  object: K8sObject;
}

/** A workload object as the chart renders it (`<release>-<component>`), its pods labelled as the chart labels them. */
function chartWorkload(release: string, key: string, kind: string, podSpec: Obj): ChartObject {
  const template = { metadata: { labels: workloadPodLabels(release, key) }, spec: podSpec };
  return { component: key, object: { apiVersion: "apps/v1", kind, metadata: { name: workloadObjectName(release, key) }, spec: { template } } };
}

/** The pod spec fields a Scheduling renders. */
function podFields(s: Scheduling): Obj {
  return Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined));
}

/** A helper-placed component's pod spec: the helper's fields, and the host term its template renders itself (§ 5.2: the Ironic conductor). */
function placedPodSpec(u: HelmReleaseUnit, key: string, s: Scheduling): Obj {
  if (!templateRendersHostAntiAffinity(u.release, key) || s.affinity?.podAntiAffinity) return podFields(s);
  const term = { labelSelector: { matchLabels: workloadSelector(u.release, key) }, topologyKey: HOSTNAME_LABEL };
  return podFields({ ...s, affinity: { ...s.affinity, podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } } });
}

/**
 * The objects an OpenKeel release's chart renders for its components, before the release's
 * post-render patches, as this module's readers model them: each component's workload
 * (`<release>-<component>`, the kind of its design row, its pods' labels, the scheduling its
 * template renders: the helper's for a listed component, nothing for one § 5.2 does not list, the
 * own selector and every toleration for a self-placed one), and openkeel-chart's MariaDB and
 * RabbitmqCluster CRs. What a post-render patch must reach (./guarantees.ts).
 */
export function chartObjects(u: HelmReleaseUnit): ChartObject[] {
  const values = u.values as Obj;
  const chart = u.chart.chart;
  const roles = obj(obj(obj(values.global).nodeRoles).roles) as RoleDefinitions;
  const out: ChartObject[] = u.type === INFRASTRUCTURE_TYPE ? Object.entries(memberCrs(u)).map(([component, object]) => ({ component, object })) : [];
  for (const [key, unlisted] of Object.entries(UNLISTED_COMPONENTS[chart] ?? {})) {
    const kind = COMPONENTS_BY_CHART.get(chart)?.[key]?.kind ?? openkeelDesign(chart, key).kind;
    if (unlistedRendered(unlisted, values[key])) out.push(chartWorkload(u.release, key, kind, { tolerations: [] }));
  }
  for (const [key, spec] of Object.entries(COMPONENTS_BY_CHART.get(chart) ?? {})) {
    const holder = obj(values[key]);
    const p = obj(obj(values.placement)[key]) as PlacementValue;
    if (isSelfPlaced(spec))
      out.push(chartWorkload(u.release, key, spec.kind, { nodeSelector: stringMap(holder.nodeSelector), tolerations: [TOLERATE_EVERYTHING] }));
    else if (!isUnlisted(chart, key) && isEnabled(p, holder))
      out.push(chartWorkload(u.release, key, spec.kind, placedPodSpec(u, key, chartScheduling(values, spec, p, roles))));
  }
  return out;
}

/**
 * § 5.6: a node agent that must also run on Masakari reserved hosts (the design rows' reservedHosts)
 * tolerates their taint, or it would be missing when the host takes evacuated VMs.
 */
const reservedHostCheck: PlacementCheck = {
  check: ({ placements }) =>
    placements
      .map((p) => p.component)
      .filter((c) => c.facts?.[RESERVED_HOSTS] === true && untoleratedTaints([RESERVED_TAINT], c.scheduling.tolerations ?? []).length > 0)
      .map((c) => ({
        level: "error",
        code: "placement-reserved-host",
        message: `${describeComponent(c)} does not tolerate ${RESERVED_TAINT.key}=${RESERVED_TAINT.value}:${RESERVED_TAINT.effect}: on a reserved host (§ 5.6: a spare hypervisor held for the VMs of a failed one) it would be missing when the host takes evacuated VMs`,
        fix: `add the toleration {key: ${RESERVED_TAINT.key}, operator: Exists, effect: NoSchedule} to its placement (extraTolerations)`,
        ...(c.configPath ? { path: c.configPath } : {}),
      })),
};

/** The placement checks of the OpenKeel releases, registered with the report (environments/registry.ts): every service's own after the shared ones. */
export const OPENKEEL_PLACEMENT_CHECKS: readonly PlacementCheck[] = [reservedHostCheck, ...OPENKEEL_SERVICES.flatMap((s) => s.placementChecks ?? [])];

export const OPENKEEL_READERS: Readers = {
  units: { [RELEASE_TYPE]: readRelease, [INFRASTRUCTURE_TYPE]: readInfrastructure },
  // the objects of the services' own units (Zun's RuntimeClass); an HPA places nothing: it scales a
  // Deployment the release's reader already placed (./autoscaling.ts)
  objects: { ...Object.assign({}, ...OPENKEEL_SERVICES.map((s) => s.readers ?? {})), HorizontalPodAutoscaler: () => [] },
};
