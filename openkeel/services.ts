// Phase openkeel: one Helm release per enabled service. Values, lowest precedence first (§ 5.1):
// the catalog's defaults and the topology's replicas, the stack's placement and replicas, then the
// stack's raw `values`, merged last. The final values must pass the values contract.
import { SERVICES, type ServiceConfig, type ServiceName } from "../config/schema";
import { type HelmReleaseUnit, helmReleaseUnit } from "../plan/plan";
import { formatPath, valueAt, type Problem } from "../config/problems";
import { isAutoscaled, isSelfPlaced, SERVICE_CATALOG } from "./catalog";
import { LAB_API_NODE_PORTS, nodePortProblems, type NodePortUse } from "./endpoints";
import { chartRef } from "./charts";
import type { StackContext } from "../platform/context";
import { eligibleNodes, replicasFor } from "./context";
import { checkValues, serviceContract, type ContractIssue } from "./contract";
import { globalValue } from "./global";
import { mergeValues } from "./merge";
import { OPENKEEL_NAMESPACE, RELEASE_TYPE, releaseName } from "./names";
import { placementRoles, resolvePlacement } from "../placement/chart-helper";
import type { PlacementValue, StackPlacement } from "../config/placement";
import { antiAffinityPostRender } from "./zone-spread";
import { conductorPostRender } from "./ironic";
import { unlistedPostRender } from "./unlisted";
import { finalReplicas, replicaIssue } from "./replicas";
import { OPENKEEL_CHARTS } from "../platform/versions";

export { releaseName };

/**
 * The stack's `placement.<component>` over the catalog default: a role or roles given by the stack
 * replaces the default role(s); every other field it sets is added (raw fields win in the chart).
 */
function withStackPlacement(base: PlacementValue, over: StackPlacement | undefined): PlacementValue {
  if (!over) return base;
  const out: Record<string, unknown> = { ...base };
  if (over.role !== undefined || over.roles !== undefined) {
    delete out.role;
    delete out.roles;
  }
  for (const [k, v] of Object.entries(over)) if (v !== undefined) out[k] = v;
  return out as PlacementValue;
}

function serviceValues(service: ServiceName, ctx: StackContext): Record<string, unknown> {
  const spec = SERVICE_CATALOG[service];
  const stack = ctx.cfg.services[service];
  const placement: Record<string, unknown> = {};
  const blocks: Record<string, unknown> = {};
  let values: Record<string, unknown> = {};
  for (const [name, c] of Object.entries(spec.components)) {
    if (isSelfPlaced(c)) {
      const nodeSelector = c.nodeSelector(ctx);
      if (nodeSelector) blocks[name] = { nodeSelector };
      continue;
    }
    const p = withStackPlacement(c.placement(ctx), stack?.placement[name]);
    placement[name] = p;
    // sized on the final placement: a component the stack moves to other nodes counts those; an
    // autoscaled API starts at its HPA's floor, which Helm restores on every upgrade (./autoscaling.ts)
    const floor = isAutoscaled(c) ? ctx.cfg.autoscaling?.apis.minReplicas : undefined;
    if (c.replicas) blocks[name] = { replicas: floor ?? replicasFor(c.replicas, p, ctx) };
    if (c.publicApi && ctx.topo.environment.publicApis === "nodePorts")
      blocks[name] = { ...(blocks[name] as object), service: { type: "NodePort", nodePort: labNodePort(service, name) } };
    // the chart's own nodeSelector wins over the helper's: it says what the placement renders
    const rendered =
      c.winningNodeSelector && ctx.rolesPassed ? resolvePlacement(p, { profile: ctx.topo.profile, defaultRole: "controlPlane" }).nodeSelector : undefined;
    if (c.winningNodeSelector && rendered) values = mergeValues(values, atPath(c.winningNodeSelector, rendered));
  }
  // placements the chart does not read go through, for the contract to name them: components it
  // does not have, and those it places by their own keys
  for (const [name, p] of Object.entries(stack?.placement ?? {})) {
    if (!(name in spec.components) || isSelfPlaced(spec.components[name])) placement[name] = p;
  }

  values = mergeValues({ global: globalValue(ctx.topo), placement, ...blocks }, values);
  values = mergeValues(values, spec.values?.(ctx) ?? {});
  for (const [name, n] of Object.entries(stack?.replicas ?? {})) values = mergeValues(values, { [name]: { replicas: n } });
  return withUnlistedSwitches(service, mergeValues(values, stack?.values ?? {}));
}

/**
 * An optional component § 5.2 does not list: its chart reads no `placement.<component>.enabled`,
 * only `<component>.enabled`, which follows the final placement's (raw values that set it win).
 */
function withUnlistedSwitches(service: ServiceName, values: Record<string, unknown>): Record<string, unknown> {
  let out = values;
  for (const [name, c] of Object.entries(SERVICE_CATALOG[service].components)) {
    const on = valueAt(values, ["placement", name, "enabled"]);
    if (isSelfPlaced(c) || c.unlisted?.switch === undefined || typeof on !== "boolean") continue;
    if (valueAt(values, [name, "enabled"]) === undefined) out = mergeValues(out, { [name]: { enabled: on } });
  }
  return out;
}

/** The lab's NodePort of a public API (./endpoints.ts): one the table lacks is a bug here. */
function labNodePort(service: ServiceName, component: string): number {
  const port = LAB_API_NODE_PORTS[service]?.[component];
  if (port === undefined) throw new Error(`lab endpoints: no NodePort for ${releaseName(service)} ${component} in LAB_API_NODE_PORTS`);
  return port;
}

/** `{a: {b: value}}` for the path [a, b]. */
function atPath(path: readonly string[], value: unknown): Record<string, unknown> {
  return path.reduceRight<Record<string, unknown>>((inner, key) => ({ [key]: inner }), value as Record<string, unknown>);
}

/** The stack key a values path comes from, or undefined when this repository emitted it. */
export function stackOrigin(service: ServiceName, stack: ServiceConfig | undefined, path: readonly (string | number)[]): string | undefined {
  if (!stack) return undefined;
  const key = (...rest: (string | number)[]) => formatPath([`openkeel:services`, service, ...rest]);
  // the longest prefix the stack's raw values set: they are merged last, so they own that subtree
  for (let n = path.length; n >= 1; n--) {
    if (valueAt(stack.values, path.slice(0, n)) !== undefined) return key("values", ...path.slice(0, n));
  }
  if (path[0] === "placement" && path.length >= 2) {
    for (let n = path.length; n >= 2; n--) {
      if (valueAt(stack.placement, path.slice(1, n)) !== undefined) return key("placement", ...path.slice(1, n));
    }
  }
  if (path.length >= 1 && stack.replicas[String(path[0])] !== undefined && (path.length === 1 || path[1] === "replicas")) {
    return key("replicas", String(path[0]));
  }
  return undefined;
}

/** A component whose role no node has, with where the stack put it there (if it did). */
interface Unplaced {
  roles: string[];
  /** `openkeel-nova placement.api`. */
  component: string;
  origin?: string;
}

/**
 * Replicas the topology cannot hold: required host anti-affinity with more replicas than nodes of
 * the role leaves the extra pods Pending forever, and a role no node has leaves them all Pending.
 */
function schedulingIssues(service: ServiceName, values: Record<string, unknown>, ctx: StackContext, unplaced: Unplaced[]): ContractIssue[] {
  if (!ctx.rolesPassed) return [];
  const issues: ContractIssue[] = [];
  for (const [name, c] of Object.entries(SERVICE_CATALOG[service].components)) {
    const p = valueAt(values, ["placement", name]) as PlacementValue | undefined;
    const replicas = valueAt(values, [name, "replicas"]);
    if (!p || p.enabled === false || p.nodeSelector || p.affinity || c.kind === "DaemonSet" || typeof replicas !== "number") continue;
    const roles = placementRoles(p);
    const nodes = eligibleNodes(p, ctx);
    if (replicas === 0 || roles.length === 0) continue;
    if (nodes === 0) {
      const origin = stackOrigin(service, ctx.cfg.services[service], ["placement", name]);
      unplaced.push({ roles, component: `${releaseName(service)} placement.${name}`, ...(origin ? { origin } : {}) });
    } else if (p.antiAffinity === "required" && replicas > nodes) {
      issues.push({
        path: [name, "replicas"],
        message: `${replicas} replicas with required host anti-affinity, but ${nodes} node(s) have the ${roles.join(" or ")} role: ${replicas - nodes} would stay Pending`,
        fix: `set at most ${nodes} replicas, or give the role to more nodes`,
      });
    }
  }
  return issues;
}

/** A service's release, what its values break of the contract, and the components no node can take. */
interface ServiceRelease {
  unit: HelmReleaseUnit;
  problems: Problem[];
  unplaced: Unplaced[];
}

/**
 * Replica counts the stack set that break the cloud (./replicas.ts): judged on the final values of
 * every component with a count, where it runs (an optional component off has none).
 */
function replicaIssues(service: ServiceName, values: Record<string, unknown>, ctx: StackContext): ContractIssue[] {
  const issues: ContractIssue[] = [];
  for (const [component, spec] of Object.entries(SERVICE_CATALOG[service].components)) {
    const p = valueAt(values, ["placement", component]) as PlacementValue | undefined;
    const replicas = finalReplicas(values, component);
    if (isSelfPlaced(spec) || !spec.replicas || spec.replicas === "ironicConductors" || !p || p.enabled === false) continue;
    if (replicas === undefined || stackOrigin(service, ctx.cfg.services[service], [component, "replicas"]) === undefined) continue;
    const needed = replicasFor(spec.replicas, p, ctx);
    const issue = replicaIssue({ service, release: releaseName(service), component, spec, replicas, needed }, ctx.cfg.autoscaling);
    if (issue) issues.push(issue);
  }
  return issues;
}

function serviceUnit(service: ServiceName, ctx: StackContext): ServiceRelease {
  const spec = SERVICE_CATALOG[service];
  const values = serviceValues(service, ctx);
  const release = releaseName(service);
  const unplaced: Unplaced[] = [];
  const issues = [
    ...checkValues(serviceContract(spec, ctx.topo.profile), values),
    ...schedulingIssues(service, values, ctx, unplaced),
    ...replicaIssues(service, values, ctx),
  ];
  const problems = issues.map((issue) => {
    const origin = stackOrigin(service, ctx.cfg.services[service], issue.path);
    const what = `release ${release} (service ${service}), values key ${formatPath(issue.path, "(top level)")}: ${issue.message}`;
    // Nothing the stack set explains it: the catalog emitted it, a bug in this repository.
    if (origin === undefined) throw new Error(`values contract: ${what}`);
    return { file: ctx.cfg.file, path: origin, message: what, fix: issue.fix, ...(issue.code ? { code: issue.code, level: issue.level ?? "error" } : {}) };
  });
  // the charts read no anti-affinity (but the Ironic conductor's), and no placement of a component
  // § 5.2 does not list: both reach the pod templates as post-render patches
  const kinds = Object.fromEntries(Object.entries(spec.components).map(([name, c]) => [name, c.kind]));
  const unlisted = unlistedPostRender(OPENKEEL_CHARTS[service].chart, release, values, kinds);
  const zones = antiAffinityPostRender(release, unlisted.values, kinds, values);
  const own = service === "ironic" ? conductorPostRender(ctx.cfg, release, zones.values) : [];
  // image PVCs and Swift devices hold tenant data
  const unit = helmReleaseUnit(release, RELEASE_TYPE, spec.namespace ?? OPENKEEL_NAMESPACE, chartRef(ctx.cfg, service), zones.values, {
    protect: service === "glance" || service === "swift",
    postRender: [...unlisted.patches, ...zones.patches, ...own],
  });
  return { unit, problems, unplaced };
}

/** One problem per role set no node has (or per stack override that moved a component there). */
function unplacedProblems(file: string, unplaced: Unplaced[]): Problem[] {
  const groups = new Map<string, Unplaced[]>();
  for (const u of unplaced) {
    const id = `${u.origin ?? "openkeel:nodes"}|${u.roles.join(",")}`;
    groups.set(id, [...(groups.get(id) ?? []), u]);
  }
  return [...groups.values()].map((list) => {
    const roles = list[0].roles.join(" or ");
    return {
      file,
      path: list[0].origin ?? "openkeel:nodes",
      message: `no node has the ${roles} role, so these components would stay Pending: ${list.map((u) => u.component).join(", ")}`,
      fix: list[0].origin
        ? "place the component on a role some node has"
        : `give the ${roles} role to a node, or turn those services off with openkeel:services.<service>.enabled: false`,
    };
  });
}

/** Identity first: every service registers its endpoints in Keystone; Nova's agents register in Placement. */
const NEEDS: Partial<Record<ServiceName, ServiceName[]>> = { nova: ["placement"], "neutron-fwaas": ["neutron"], "neutron-vpnaas": ["neutron"] };

/**
 * The NodePorts the releases ask for (`<component>.service.nodePort`), checked across releases: two
 * Services cannot share one, and in the lab only the published ones reach the laptop. The stack's
 * raw values are blamed; a problem they do not explain is the table's, a bug here.
 */
function nodePortIssues(ctx: StackContext, units: { service: ServiceName; unit: HelmReleaseUnit }[]): Problem[] {
  const uses: (NodePortUse & { service: ServiceName })[] = [];
  for (const { service, unit } of units) {
    for (const [component, block] of Object.entries(unit.values)) {
      const port = valueAt(block, ["service", "nodePort"]);
      if (typeof port === "number") uses.push({ service, release: unit.name, path: [component, "service", "nodePort"], port });
    }
  }
  return nodePortProblems(uses, ctx.topo.environment.publicApis === "nodePorts").map((p) => {
    const origin = (p.uses as typeof uses).map((u) => stackOrigin(u.service, ctx.cfg.services[u.service], u.path)).find((o) => o !== undefined);
    if (origin === undefined) throw new Error(`lab endpoints: ${p.message}`);
    return { file: ctx.cfg.file, path: origin, message: p.message, fix: p.fix };
  });
}

/** The releases of the services a stack runs, and the problems of their values (the stack's to fix). */
export function serviceUnits(ctx: StackContext): { units: HelmReleaseUnit[]; problems: Problem[] } {
  const on = SERVICES.filter((s) => ctx.serviceOn(s));
  const releases = on.map((service) => {
    const release = serviceUnit(service, ctx);
    const needs = [...(service === "keystone" ? [] : ["keystone" as const]), ...(NEEDS[service] ?? [])].filter((s) => on.includes(s));
    if (needs.length > 0) release.unit.dependsOn = needs.map(releaseName);
    return release;
  });
  const units = releases.map((r) => r.unit);
  const problems = [
    ...releases.flatMap((r) => r.problems),
    ...unplacedProblems(
      ctx.cfg.file,
      releases.flatMap((r) => r.unplaced),
    ),
    ...nodePortIssues(
      ctx,
      on.map((service, i) => ({ service, unit: units[i] })),
    ),
  ];
  return { units, problems };
}
