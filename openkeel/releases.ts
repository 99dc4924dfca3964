// Phase openkeel: one Helm release per enabled service, in the registry's order (./services/).
// Values, lowest precedence first (§ 5.1): the descriptor's defaults and the topology's replicas,
// the stack's placement and replicas, then the stack's raw `values`, merged last. The final values
// must pass the values contract.
import type { ServiceConfig } from "../config/services";
import { type HandWrittenEdge, type HelmReleaseUnit, helmReleaseUnit, type Unit, type UnitContent } from "../plan/plan";
import { fact } from "../plan/needs";
import { formatPath, valueAt, type Problem } from "../config/problems";
import { isAutoscaled, isSelfPlaced } from "./components";
import { nodePortProblems, type NodePortUse } from "./endpoints";
import { chartRef } from "./charts";
import type { StackContext } from "../platform/context";
import { eligibleNodes, isOwnRule, replicasFor } from "./context";
import { checkValues, serviceContract, type ContractIssue } from "./contract";
import { globalValue } from "./global";
import { mergeValues } from "./merge";
import { OPENKEEL_NAMESPACE, RELEASE_TYPE, releaseName } from "./names";
import { placementRoles, resolvePlacement } from "../placement/chart-helper";
import type { PlacementValue, StackPlacement } from "../config/placement";
import { antiAffinityPostRender } from "./zone-spread";
import { unlistedPostRender } from "./unlisted";
import { finalReplicas, replicaIssue } from "./replicas";
import { OPENKEEL_SERVICES } from "./services";
import type { OpenKeelService } from "./service";

/**
 * The stack's `placement.<component>` over the descriptor's default: a role or roles given by the stack
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

function serviceValues(spec: OpenKeelService, ctx: StackContext): Record<string, unknown> {
  const stack = ctx.cfg.services[spec.name];
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
      blocks[name] = { ...(blocks[name] as object), service: { type: "NodePort", nodePort: c.publicApi.labNodePort } };
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
  return withUnlistedSwitches(spec, mergeValues(values, stack?.values ?? {}));
}

/**
 * An optional component § 5.2 does not list: its chart reads no `placement.<component>.enabled`,
 * only `<component>.enabled`, which follows the final placement's (raw values that set it win).
 */
function withUnlistedSwitches(spec: OpenKeelService, values: Record<string, unknown>): Record<string, unknown> {
  let out = values;
  for (const [name, c] of Object.entries(spec.components)) {
    const on = valueAt(values, ["placement", name, "enabled"]);
    if (isSelfPlaced(c) || c.unlisted?.switch === undefined || typeof on !== "boolean") continue;
    if (valueAt(values, [name, "enabled"]) === undefined) out = mergeValues(out, { [name]: { enabled: on } });
  }
  return out;
}

/** `{a: {b: value}}` for the path [a, b]. */
function atPath(path: readonly string[], value: unknown): Record<string, unknown> {
  return path.reduceRight<Record<string, unknown>>((inner, key) => ({ [key]: inner }), value as Record<string, unknown>);
}

/** The stack key a values path comes from, or undefined when this repository emitted it. */
export function stackOrigin(service: string, stack: ServiceConfig | undefined, path: readonly (string | number)[]): string | undefined {
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
function schedulingIssues(spec: OpenKeelService, values: Record<string, unknown>, ctx: StackContext, unplaced: Unplaced[]): ContractIssue[] {
  if (!ctx.rolesPassed) return [];
  const service = spec.name;
  const issues: ContractIssue[] = [];
  for (const [name, c] of Object.entries(spec.components)) {
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
function replicaIssues(service: OpenKeelService, values: Record<string, unknown>, ctx: StackContext): ContractIssue[] {
  const issues: ContractIssue[] = [];
  for (const [component, spec] of Object.entries(service.components)) {
    const p = valueAt(values, ["placement", component]) as PlacementValue | undefined;
    const replicas = finalReplicas(values, component);
    // a service's own rule is judged by its own plan checks
    if (isSelfPlaced(spec) || !spec.replicas || isOwnRule(spec.replicas) || !p || p.enabled === false) continue;
    if (replicas === undefined || stackOrigin(service.name, ctx.cfg.services[service.name], [component, "replicas"]) === undefined) continue;
    const needed = replicasFor(spec.replicas, p, ctx);
    const issue = replicaIssue({ service: service.name, release: releaseName(service.name), component, spec, replicas, needed }, ctx.cfg.autoscaling);
    if (issue) issues.push(issue);
  }
  return issues;
}

function serviceUnit(spec: OpenKeelService, ctx: StackContext): ServiceRelease {
  const service = spec.name;
  const values = serviceValues(spec, ctx);
  const release = releaseName(service);
  const unplaced: Unplaced[] = [];
  const issues = [
    ...checkValues(serviceContract(spec, ctx.topo.profile), values),
    ...schedulingIssues(spec, values, ctx, unplaced),
    ...replicaIssues(spec, values, ctx),
  ];
  const problems = issues.map((issue) => {
    const origin = stackOrigin(service, ctx.cfg.services[service], issue.path);
    const what = `release ${release} (service ${service}), values key ${formatPath(issue.path, "(top level)")}: ${issue.message}`;
    // Nothing the stack set explains it: the descriptor emitted it, a bug in this repository.
    if (origin === undefined) throw new Error(`values contract: ${what}`);
    return { file: ctx.cfg.file, path: origin, message: what, fix: issue.fix, ...(issue.code ? { code: issue.code, level: issue.level ?? "error" } : {}) };
  });
  // the charts read no anti-affinity (but the Ironic conductor's), and no placement of a component
  // § 5.2 does not list: both reach the pod templates as post-render patches
  const kinds = Object.fromEntries(Object.entries(spec.components).map(([name, c]) => [name, c.kind]));
  const unlisted = unlistedPostRender(spec.chart, release, values, kinds);
  const zones = antiAffinityPostRender(release, unlisted.values, kinds, values);
  const own = spec.postRender?.(ctx, release, zones.values) ?? [];
  const namespace = spec.namespace?.name ?? OPENKEEL_NAMESPACE;
  const unit = helmReleaseUnit(release, RELEASE_TYPE, namespace, chartRef(ctx.cfg, service, spec.chart), zones.values, {
    protect: spec.protect === true,
    postRender: [...unlisted.patches, ...zones.patches, ...own],
    content: SERVICE_CHART_CONTENT,
    ...(spec.usesAtRunTime ? { usesAtRunTime: [...spec.usesAtRunTime] } : {}),
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

/**
 * The NodePorts the releases ask for (`<component>.service.nodePort`), checked across releases: two
 * Services cannot share one, and in the lab only the published ones reach the laptop. The stack's
 * raw values are blamed; a problem they do not explain is the table's, a bug here.
 */
function nodePortIssues(ctx: StackContext, units: { service: string; unit: HelmReleaseUnit }[]): Problem[] {
  const uses: (NodePortUse & { service: string })[] = [];
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

/**
 * What a release waits for that none of its objects shows (hand-written edges, each with why): the
 * identity service's release, the service it extends, the releases it names (Nova's agents register
 * in Placement), and the units it brings (Zun's RuntimeClass): those of them the stack installs.
 * Not openkeel-chart: its release ends once the MariaDB and RabbitmqCluster CRs exist, before the
 * operators have Galera and RabbitMQ running (nothing in the Plan waits for those), so an edge to it
 * would delay every service and promise no database: none of a service's objects uses one of its.
 */
function waitsFor(spec: OpenKeelService, on: readonly OpenKeelService[], own: { units: Unit[]; why: string } | undefined): HandWrittenEdge[] {
  const release = (s: OpenKeelService, why: string) => ({ unit: releaseName(s.name), why });
  return [
    ...on
      .filter((s) => s.identity && s !== spec)
      .map((s) => release(s, `${s.name} is the identity service: every service registers its users and endpoints there when its release installs`)),
    ...on
      .filter((s) => s.name === spec.extends)
      .map((s) => release(s, `it extends ${s.name}: its Jobs migrate and its pods load into ${s.name}'s database and API`)),
    ...(spec.waitsFor ?? []).flatMap((w) => on.filter((s) => s.name === w.service).map((s) => release(s, w.why))),
    ...(own?.units ?? []).map((u) => ({ unit: u.name, why: own!.why })),
  ];
}

/** What every OpenKeel chart renders (§ 5.2, e2e/charts/): its workloads and Jobs on the pod network. */
export const SERVICE_CHART_CONTENT: UnitContent = { uses: [fact.podNetwork] };

/**
 * The units of the openkeel phase: the units the releases wait for (Zun's RuntimeClass), then the
 * releases of the services a stack runs; and the problems of their values (the stack's to fix).
 */
export function serviceUnits(ctx: StackContext): { units: Unit[]; releases: HelmReleaseUnit[]; problems: Problem[] } {
  const on: OpenKeelService[] = OPENKEEL_SERVICES.filter((s) => ctx.serviceOn(s.name));
  const own = on.map((spec) => spec.releaseUnits?.(ctx));
  const releases = on.map((spec, i) => {
    const release = serviceUnit(spec, ctx);
    const edges = waitsFor(spec, on, own[i]);
    if (edges.length > 0) release.unit.waitsFor = edges;
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
      on.map((spec, i) => ({ service: spec.name, unit: units[i] })),
    ),
  ];
  return { units: [...own.flatMap((o) => o?.units ?? []), ...units], releases: units, problems };
}
