// The design's guarantees held on the objects the cluster receives (issue 37, item 4): what § 2
// and D2, D3, D4, D7, D8 require of a component whose chart does not render it reaches it through
// its release's post-render patches (plan/post-render.ts), so it is judged on the chart's objects
// after those patches, and for an operator's CR on the pods the operator builds from it, with the
// labels that operator really sets (`customKinds` of its component's descriptor, platform/context.ts).
// Three ways a patch fails what it carries, each refused before anything is applied:
// - it reaches no object: its target is not one the chart renders (./workloads.ts chartObjects);
// - a label selector it writes (anti-affinity, spread) matches none of its workload's pods: it
//   keeps nothing apart;
// - the guarantee is missing from the patched object: the patch was dropped, or weakened.
// Pure: the Plan and the stack's config in, checks out.
import type { Check } from "../config/problems";
import type { LoadedConfig } from "../config/schema";
import { HOSTNAME_LABEL, ZONE_LABEL, type Role } from "../config/roles";
import { mergePatch, type PostRenderPatch } from "../plan/post-render";
import { allUnits, type HelmReleaseUnit, type K8sObject, type Plan } from "../plan/plan";
import { selects } from "../placement/pod-guarantees";
import { disruptionsAllowed } from "../placement/scheduling";
import { arr, isObj, obj, podTemplate, type Obj, type PodTemplate } from "../placement/workloads";
import { customKind, type CustomKinds, type OperatorPods } from "../platform/context";
import { membersApartByZone } from "./context";
import { openkeelDesign } from "./design";
import { stackOrigin } from "./releases";
import { UNLISTED_COMPONENTS } from "./unlisted";
import { chartObjects, type ChartObject } from "./workloads";
import { INFRASTRUCTURE_CHART, INFRASTRUCTURE_TYPE, RELEASE_TYPE } from "./names";
import { chartService, serviceOfRelease } from "./registry";
import { QUORUM_APART, type PodGuarantee } from "./components";

/**
 * The infrastructure chart's § 2 rows whose anti-affinity, spread, priority or budget it does not
 * render; a service component's are its descriptor's (`guarantee`: OVN central, Swift storage, the
 * Ironic conductor).
 */
const INFRASTRUCTURE_GUARANTEES: Readonly<Record<string, PodGuarantee>> = {
  mariadb: {
    row: "§ 2.1 Galera",
    source: "the post-render patch that carries it (openkeel/infrastructure.ts infrastructurePostRender)",
    ...QUORUM_APART,
    zoneSpread: true,
    priority: "infra",
    maxUnavailable: 1,
  },
  rabbitmq: {
    row: "§ 2.1 RabbitMQ",
    source: "the post-render patch that carries it (openkeel/infrastructure.ts infrastructurePostRender)",
    ...QUORUM_APART,
    priority: "infra",
    maxUnavailable: 1,
    budgetSource: "the PodDisruptionBudget the Plan writes for it (openkeel/infrastructure.ts rabbitmqBudgetUnit)",
  },
};

/** The guarantee of a component, by chart and placement key. */
function podGuarantee(chart: string, key: string): PodGuarantee | undefined {
  return chart === INFRASTRUCTURE_CHART ? INFRASTRUCTURE_GUARANTEES[key] : chartService(chart)?.components[key]?.guarantee;
}

/** What a component § 5.2 does not list owes its patch: its design row's roles (D3, D4, D8 among them) and its tier. */
function unlistedGuarantee(chart: string, key: string): PodGuarantee | undefined {
  const unlisted = UNLISTED_COMPONENTS[chart]?.[key];
  if (!unlisted) return undefined;
  const roles = openkeelDesign(chart, key).roles;
  return {
    row: `${key}'s role placement (§ 2, § 5.2 lists no ${key})`,
    source: "the post-render patch that carries it (openkeel/unlisted.ts unlistedPostRender)",
    ...(Array.isArray(roles) ? { roles } : {}),
    ...(unlisted.priority === "none" ? {} : { priority: unlisted.priority }),
  };
}

/** The pods an object makes: a workload's template, or what the operator builds from its CR. */
function podsOf(o: K8sObject, operator: OperatorPods | undefined): PodTemplate {
  return operator ? operator.of(o) : podTemplate(o);
}

/** Every `labelSelector` a patch writes, with its path in the patch. */
function patchSelectors(patch: unknown, path: string[] = []): { path: string; selector: unknown }[] {
  if (Array.isArray(patch)) return patch.flatMap((v, i) => patchSelectors(v, [...path, String(i)]));
  if (!isObj(patch)) return [];
  return Object.entries(patch).flatMap(([k, v]) => (k === "labelSelector" ? [{ path: [...path, k].join("."), selector: v }] : patchSelectors(v, [...path, k])));
}

const show = (v: unknown) => JSON.stringify(v);

/** One component's object after the release's patches, and what is judged of it. */
interface Judged {
  unit: HelmReleaseUnit;
  chartObject: ChartObject;
  patched: K8sObject;
  pods: PodTemplate;
  patches: PostRenderPatch[];
  /** The operator that builds its pods, for an operator's CR. */
  operator: OperatorPods | undefined;
}

const describeObject = (j: Judged) => `${j.unit.name}/${j.chartObject.component} (${j.patched.kind} ${j.patched.metadata.name})`;

/** The required anti-affinity on `key` over the component's own pods: what is missing of it, or nothing. */
function apartFindings(j: Judged, key: string): string[] {
  const terms = arr<Obj>(obj(obj(j.pods.spec.affinity).podAntiAffinity).requiredDuringSchedulingIgnoredDuringExecution).filter((t) => t.topologyKey === key);
  if (terms.some((t) => selects(t.labelSelector, j.pods.labels))) return [];
  if (terms.length === 0) return [`has no required pod anti-affinity on ${key}: its members may share a ${key === HOSTNAME_LABEL ? "node" : "zone"}`];
  return [
    `its required anti-affinity on ${key} selects ${terms.map((t) => show(t.labelSelector)).join(", ")}, which matches none of its pods (labels ${show(j.pods.labels)}): it keeps nothing apart`,
  ];
}

/** Spread over the zones: the zone anti-affinity, or a spread constraint on the zone over its own pods. */
function zoneSpreadFindings(j: Judged, zoneKey: string): string[] {
  if (apartFindings(j, zoneKey).length === 0) return [];
  const spread = arr<Obj>(j.pods.spec.topologySpreadConstraints).filter((c) => c.topologyKey === zoneKey);
  if (spread.some((c) => selects(c.labelSelector, j.pods.labels))) return [];
  return [`does not spread over the zones (${zoneKey}): no zone anti-affinity or topologySpreadConstraint over its own pods`];
}

/** The node selection alternatives of a pod spec (OR), each the label keys it requires (AND). */
function alternatives(spec: Obj): string[][] {
  const selector = Object.keys(obj(spec.nodeSelector));
  const terms = arr<Obj>(obj(obj(obj(spec.affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution).nodeSelectorTerms);
  const keys = (t: Obj) => arr<Obj>(t.matchExpressions).flatMap((e) => (e.operator === "Exists" || e.operator === "In" ? [String(e.key)] : []));
  if (terms.length > 0) return terms.map((t) => [...keys(t), ...selector]);
  return selector.length > 0 ? [selector] : [];
}

/** The design's roles of a component § 5.2 does not list: each reached by an alternative of its own, none outside them, their taints tolerated. */
function roleFindings(j: Judged, roles: readonly Role[]): string[] {
  const defs = obj(obj(obj(obj(j.unit.values).global).nodeRoles).roles);
  // no role definitions (a lab whose nodes carry none): role names render nothing, by design (§ 5.2)
  if (Object.keys(defs).length === 0) return [];
  const label = (r: Role) => String(obj(defs[r]).label ?? "");
  const alts = alternatives(j.pods.spec);
  const out: string[] = [];
  const outside = alts.filter((a) => !roles.some((r) => a.includes(label(r))));
  const missed = roles.filter((r) => !alts.some((a) => a.includes(label(r)) && roles.every((o) => o === r || !a.includes(label(o)))));
  if (alts.length === 0) out.push(`selects no node: it would run on any node, not only on ${roles.join(" and ")} nodes`);
  else if (outside.length > 0 || missed.length > 0)
    out.push(`selects nodes by ${alts.map((a) => a.join(" AND ")).join(" OR ")}, not ${roles.map(label).join(" OR ")} (${roles.join(", ")})`);
  const tolerations = arr<Obj>(j.pods.spec.tolerations);
  for (const r of roles) {
    const taint = obj(obj(defs[r]).taint).key;
    if (typeof taint === "string" && !tolerations.some((t) => t.key === taint || (!t.key && t.operator === "Exists"))) {
      out.push(`does not tolerate ${taint}, the taint of its ${r} nodes`);
    }
  }
  return out;
}

function priorityFindings(j: Judged, tier: "infra" | "control"): string[] {
  const want = obj(obj(obj(obj(j.unit.values).global).placementDefaults).priorityClasses)[tier];
  const got = j.pods.spec.priorityClassName;
  return got === want ? [] : [`runs at priority ${got === undefined ? "none" : show(got)}, not ${show(want)} (the ${tier} tier)`];
}

/** The PodDisruptionBudgets the Plan writes in a namespace whose selector matches pods with `labels`. */
function budgetsOver(plan: Plan, namespace: string, labels: Record<string, string>): K8sObject[] {
  return allUnits(plan).flatMap((u) =>
    u.kind !== "Manifests"
      ? []
      : u.objects.filter((o) => o.kind === "PodDisruptionBudget" && o.metadata.namespace === namespace && selects(obj(o.spec).selector, labels)),
  );
}

/** The budget an operator makes from its CR (Galera's), or else the one the Plan writes over the pods (RabbitMQ's operator makes none). */
function budgetFindings(j: Judged, plan: Plan, maxUnavailable: number): string[] {
  const replicas = Number(obj(j.patched.spec).replicas ?? 1);
  const want = Math.min(maxUnavailable, replicas);
  if (j.operator?.disruptionsAllowed) {
    const allowed = j.operator.disruptionsAllowed(j.patched);
    return allowed === want ? [] : [`the operator's PodDisruptionBudget lets a drain evict ${allowed} of its ${replicas} members at once, not ${want}`];
  }
  const budgets = budgetsOver(plan, j.unit.namespace, j.pods.labels);
  if (budgets.length === 0) return [`has no PodDisruptionBudget over its pods (labels ${show(j.pods.labels)}): a drain may evict every member at once`];
  const allowed = Math.min(...budgets.map((b) => disruptionsAllowed(obj(b.spec), replicas)));
  return allowed === want ? [] : [`its PodDisruptionBudget lets a drain evict ${allowed} of its ${replicas} members at once, not ${want}`];
}

/** What of a component's guarantees its patched object lacks, each with where the patch that carries it is built. */
function guaranteeFindings(j: Judged, plan: Plan, row?: PodGuarantee, unlisted?: PodGuarantee): { what: string; g: PodGuarantee }[] {
  const zoneKey = String(obj(obj(obj(j.unit.values).global).placementDefaults).zoneKey ?? ZONE_LABEL);
  const zoned = new Set(plan.nodes.flatMap((n) => (n.zone !== undefined ? [n.zone] : []))).size > 1;
  const tag = (g: PodGuarantee, found: string[]) => found.map((what) => ({ what, g }));
  return [
    ...(row ? tag(row, row.hostApart ? apartFindings(j, HOSTNAME_LABEL) : []) : []),
    ...(row ? tag(row, row.zoneApart && membersApartByZone(plan.topology) ? apartFindings(j, zoneKey) : []) : []),
    ...(row ? tag(row, row.zoneSpread && zoned ? zoneSpreadFindings(j, zoneKey) : []) : []),
    ...(unlisted?.roles ? tag(unlisted, roleFindings(j, unlisted.roles)) : []),
    ...[row, unlisted].flatMap((g) => (g?.priority ? tag(g, priorityFindings(j, g.priority)) : [])),
    ...(row?.maxUnavailable !== undefined ? tag({ ...row, source: row.budgetSource ?? row.source }, budgetFindings(j, plan, row.maxUnavailable)) : []),
  ];
}

/** A finding, and where it belongs: the stack's key when the stack places the component itself, else this repository's code. */
interface Finding {
  check: Check;
  stackPath?: string;
}

/** One release: its chart's objects, its patches applied where they reach, each patch's selectors and each component's guarantees judged. */
function releaseFindings(u: HelmReleaseUnit, cfg: LoadedConfig, plan: Plan, kinds: CustomKinds): Finding[] {
  const service = u.type === RELEASE_TYPE ? serviceOfRelease(u.name) : undefined;
  const stackPath = (key: string) => (service ? stackOrigin(service, cfg.services[service], ["placement", key]) : undefined);
  const objects = chartObjects(u);
  const patches = u.postRender ?? [];
  const findings: Finding[] = [];
  for (const p of patches) {
    const n = objects.filter((c) => c.object.kind === p.target.kind && c.object.metadata.name === p.target.name).length;
    if (n === 1) continue;
    const rendered = objects.map((c) => `${c.object.kind} ${c.object.metadata.name}`).join(", ");
    findings.push({
      check: {
        level: "error",
        code: "post-render-target",
        message: `release ${u.release}: its post-render patch of ${p.target.kind} ${p.target.name} (${p.why}) reaches ${n === 0 ? "no object" : `${n} objects`}: the chart renders ${rendered || "nothing it patches"}`,
        fix: `target the object the chart renders for that component (<kind> <release>-<component>): the patch is built by openkeel/unlisted.ts, zone-spread.ts, infrastructure.ts or the service's own postRender (openkeel/services/)`,
      },
    });
  }
  for (const c of objects) {
    const mine = patches.filter((p) => p.target.kind === c.object.kind && p.target.name === c.object.metadata.name);
    const patched = mine.reduce<K8sObject>((o, p) => mergePatch(o, p.patch) as K8sObject, c.object);
    const operator = customKind(kinds, c.object)?.pods;
    const j: Judged = { unit: u, chartObject: c, patched, pods: podsOf(patched, operator), patches: mine, operator };
    const path = stackPath(c.component);
    const at = path ? { stackPath: path } : {};
    for (const p of mine) {
      for (const s of patchSelectors(p.patch).filter((x) => !selects(x.selector, j.pods.labels))) {
        findings.push({
          ...at,
          check: {
            level: "error",
            code: "post-render-selector",
            message: `${describeObject(j)}: its post-render patch's ${s.path} ${show(s.selector)} matches none of its pods (labels ${show(j.pods.labels)}): ${s.path.includes("topologySpreadConstraints") ? "it spreads nothing" : "it keeps nothing apart"}`,
            fix: `select its own pods by the labels its ${operator ? "operator" : "chart"} sets: ${show(j.pods.labels)}`,
          },
        });
      }
    }
    // the stack's own placement of a component replaces its design roles and tier, never its row
    const unlisted = path === undefined ? unlistedGuarantee(u.chart.chart, c.component) : undefined;
    for (const { what, g } of guaranteeFindings(j, plan, podGuarantee(u.chart.chart, c.component), unlisted)) {
      findings.push({
        ...at,
        check: {
          level: "error",
          code: "post-render-guarantee",
          message: `${describeObject(j)} ${what} (${g.row}; judged on the object after its release's post-render patches${operator ? `, on the pods ${operator.builder} builds from it` : ""})`,
          fix: path ? `remove the override at ${path} that drops it, or write it back there` : `restore ${g.source}`,
        },
      });
    }
  }
  return findings;
}

/**
 * The guarantees of every OpenKeel release of a Plan on its post-rendered objects. `checks`: what
 * the stack's own placement of a component breaks (its key in `path`); `bugs`: what only this
 * repository's code can break (a patch it builds, the infrastructure release the stack cannot
 * override), which planStack throws rather than blame the stack. `kinds`: what the stack's
 * components' operators build from the CRs a chart renders (the StackContext's).
 */
export function postRenderGuarantees(plan: Plan, cfg: LoadedConfig, kinds: CustomKinds): { checks: Check[]; bugs: Check[] } {
  const units = allUnits(plan).filter((u): u is HelmReleaseUnit => u.kind === "HelmRelease" && (u.type === RELEASE_TYPE || u.type === INFRASTRUCTURE_TYPE));
  const findings = units.flatMap((u) => releaseFindings(u, cfg, plan, kinds));
  return {
    checks: findings.filter((f) => f.stackPath !== undefined).map((f) => ({ ...f.check, file: cfg.file, path: f.stackPath! })),
    bugs: findings.filter((f) => f.stackPath === undefined).map((f) => f.check),
  };
}
