// Which D1–D8 mutations a stack's e2e run judges (README step 10), planned from what the stack
// deploys: its render, the Plan as the program registers it (each Helm release of the Plan is a
// `kubernetes:helm.sh/v3:Release` named after its unit, beside its post-render record when it has
// patches: components/plan-unit.ts). A decision has one or more ways to trip its rule, in order,
// each on the release that renders the component it changes; the first whose target the stack
// deploys is judged. A way before it whose target the stack lacks is skipped with one line saying
// why and which way judges the decision instead, or that none does (D7 without Ironic: both its
// rules judge the Ironic conductor alone). A mutation never names a resource the stack does not
// register: the combined mutated stack would stop there (e2e/fixtures/e2e-mutation.ts refuses such
// a mutation), and every decision judged on it with it. test/integration/e2e/policy-mutations.test.ts
// holds the plans of the shipped stacks to what their programs register.
import type { RenderedHelmRelease } from "../../render/rendered";
import type { RenderedStack } from "./rendered";
import { RELEASE } from "./stack-run";

const CONFIG_MAP = "kubernetes:core/v1:ConfigMap";

/** e2e/fixtures/e2e-mutation.ts's mutation of one registered resource's inputs. */
export interface ResourceMutation {
  type: string;
  name: string;
  path: string[];
  value?: unknown;
  delete?: boolean;
}

/** A change of one `openkeel:<key>` of the stack file. */
export interface ConfigMutation {
  key: string;
  /** What it sets, for the report: `services.neutron.values {"backend":"kube-ovn"}`. */
  sets: string;
  mutate: (v: unknown) => unknown;
}

/** One decision's mutation as judged on a stack: a stack config change or changes of registered resources. */
export interface PolicyMutation {
  decision: string;
  what: string;
  /** The release of the Plan it changes (its unit's name). */
  target: string;
  config?: ConfigMutation | undefined;
  resources?: ResourceMutation[] | undefined;
}

/** A way of a decision the stack does not judge, and why: its target is not in the stack's plan. */
export interface SkippedMutation {
  decision: string;
  what: string;
  why: string;
  /** The way that judges the decision instead; none: the decision is not judged on this stack, for `otherwise`. */
  instead?: PolicyMutation | undefined;
  otherwise?: string | undefined;
}

export interface MutationPlan {
  planned: PolicyMutation[];
  skipped: SkippedMutation[];
}

/** The release a way changes: of this chart, rendering these values, with a post-render patch of this object. */
interface Target {
  /** Its chart's name; any chart when absent. */
  chart?: string;
  /** A values path the release renders: the component the way changes. */
  renders?: string[];
  /** A post-render patch the release carries (its record is a resource the way changes). */
  patches?: (release: string) => { kind: string; name: string };
}

interface Way {
  what: string;
  on: Target;
  config?: (unit: RenderedHelmRelease) => ConfigMutation;
  resources?: (unit: RenderedHelmRelease) => ResourceMutation[];
}

interface Decision {
  decision: string;
  ways: Way[];
  /** Why a stack none of whose releases is a target is not judged on it; by default: the e2e has no other mutation of it. */
  otherwise?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function deepMerge(base: unknown, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = isRecord(base) ? { ...base } : {};
  for (const [k, v] of Object.entries(over)) out[k] = isRecord(v) ? deepMerge(out[k], v) : v;
  return out;
}

/** `values` merged into `openkeel:services.<name>.values` (maps key by key, so mutations of one service compose). */
const service = (name: string, values: Record<string, unknown>) => (): ConfigMutation => ({
  key: "services",
  sets: `services.${name}.values ${JSON.stringify(values)}`,
  mutate: (v) => {
    const s = isRecord(v) ? v : {};
    const own = isRecord(s[name]) ? s[name] : {};
    s[name] = { ...own, values: deepMerge(own.values, values) };
    return s;
  },
});

/** A change of the release's own inputs. */
const release =
  (path: string[], change: { value: unknown } | { delete: true }) =>
  (unit: RenderedHelmRelease): ResourceMutation[] => [{ type: RELEASE, name: unit.name, path, ...change }];

/**
 * The Pulumi name of a release's post-render record (components/post-render.ts `postRenderRecord`, a
 * child named as plan-unit.ts names objects): an independent copy, since the e2e reads the program
 * through its render only; test/integration/e2e/policy-mutations.test.ts holds it to the registrations.
 */
export const postRenderRecordName = (unit: RenderedHelmRelease): string => `${unit.name}:configmap:${unit.namespace}/${unit.release}-post-render`;

/**
 * The cases of test/integration/policy/policy.test.ts, as the e2e applies them (a stack config
 * where the config loader and the plan checks let it through, else the registered resource).
 */
const DECISIONS: Decision[] = [
  {
    decision: "D1",
    ways: [
      {
        what: "a placement override selecting the lab control-plane key",
        // any release with an API: keystone in every shipped stack
        on: { renders: ["placement", "api"] },
        resources: release(["values", "placement", "api", "nodeSelector"], { value: { "node-role.openkeel.io/control-plane": "" } }),
      },
    ],
  },
  {
    decision: "D2",
    ways: [
      { what: "the kube-ovn backend through a raw values override", on: { chart: "openkeel-neutron" }, config: service("neutron", { backend: "kube-ovn" }) },
    ],
  },
  {
    decision: "D3",
    ways: [
      {
        what: "centralized floating IPs",
        on: { chart: "openkeel-neutron" },
        config: service("neutron", { gateway: { floatingIpMode: "centralized" } }),
      },
    ],
  },
  {
    decision: "D4",
    ways: [
      {
        what: "the metadata agent disabled",
        on: { chart: "openkeel-neutron" },
        config: service("neutron", { placement: { metadataAgent: { enabled: false } } }),
      },
    ],
  },
  {
    decision: "D5",
    ways: [
      {
        what: "Galera on a class the stack does not create",
        on: { renders: ["infrastructure", "mariadb", "storage"] },
        resources: release(["values", "infrastructure", "mariadb", "storage", "storageClassName"], { value: "longhorn" }),
      },
      {
        what: "RabbitMQ without a storage class",
        on: { renders: ["infrastructure", "rabbitmq", "storage"] },
        resources: release(["values", "infrastructure", "rabbitmq", "storage"], { delete: true }),
      },
    ],
  },
  {
    decision: "D6",
    ways: [
      {
        what: "the dynamic reservation off",
        on: { chart: "openkeel-nova" },
        config: service("nova", { computeAgent: { dynamicReservation: { enabled: false } } }),
      },
    ],
  },
  {
    decision: "D7",
    ways: [
      {
        what: "the Ironic conductor on the control plane",
        on: { chart: "openkeel-ironic", renders: ["placement", "conductor"] },
        resources: release(["values", "placement", "conductor", "role"], { value: "controlPlane" }),
      },
    ],
    otherwise: "both its rules judge the Ironic conductor alone, so there is no other target",
  },
  {
    decision: "D8",
    ways: [
      {
        what: "the public ingress released without its post-renderer and record, which alone place it (§ 5.2)",
        on: { renders: ["infrastructure"], patches: (r) => ({ kind: "DaemonSet", name: `${r}-ingress` }) },
        resources: (unit) => [
          ...release(["postrender"], { delete: true })(unit),
          { type: CONFIG_MAP, name: postRenderRecordName(unit), path: ["metadata", "annotations", "openkeel.io/post-render-of"], value: "" },
        ],
      },
    ],
  },
];

function has(value: unknown, path: string[]): boolean {
  let v = value;
  for (const k of path) {
    if (!isRecord(v) || !(k in v)) return false;
    v = v[k];
  }
  return true;
}

/** The patch targets of a release's post-render file (plan/post-render.ts: a list of `{patch, target, why}`). */
function patchTargets(r: RenderedStack, unit: RenderedHelmRelease): { kind: string; name: string }[] {
  if (!unit.postRender) return [];
  const [list] = r.model.documents(unit.postRender);
  return (Array.isArray(list) ? list : [])
    .map((p) => (isRecord(p) && isRecord(p.target) ? p.target : {}))
    .map((t) => ({ kind: String(t.kind), name: String(t.name) }));
}

function matches(r: RenderedStack, unit: RenderedHelmRelease, on: Target): boolean {
  if (on.chart && unit.chart.chart !== on.chart) return false;
  if (on.renders && !has(r.model.documents(unit.values)[0], on.renders)) return false;
  const patched = on.patches?.(unit.release);
  return !patched || patchTargets(r, unit).some((t) => t.kind === patched.kind && t.name === patched.name);
}

/** What a way needs of the Plan, for the line that says it is missing. */
function describeTarget(on: Target): string {
  const chart = on.chart ? `of chart ${on.chart}` : "";
  const renders = on.renders ? `rendering values ${on.renders.join(".")}` : "";
  const patched = on.patches ? `with a post-render patch of ${on.patches("<release>").kind} ${on.patches("<release>").name}` : "";
  return `no release ${[chart, renders, patched].filter(Boolean).join(", ")}`;
}

/**
 * The mutations a stack's run judges, from its render: per decision its first way whose target the
 * stack deploys; the ways before it skipped, saying which judges the decision instead, or that none
 * does here and why.
 */
export function planMutations(r: RenderedStack): MutationPlan {
  const releases = r.units.filter((u): u is RenderedHelmRelease => u.kind === "HelmRelease");
  const out: MutationPlan = { planned: [], skipped: [] };
  for (const d of DECISIONS) {
    const missing: SkippedMutation[] = [];
    let taken: PolicyMutation | undefined;
    for (const way of d.ways) {
      const unit = releases.find((u) => matches(r, u, way.on));
      if (!unit) {
        missing.push({ decision: d.decision, what: way.what, why: `${r.index.stack}'s plan has ${describeTarget(way.on)}` });
        continue;
      }
      taken = { decision: d.decision, what: way.what, target: unit.name, config: way.config?.(unit), resources: way.resources?.(unit) };
      break;
    }
    if (taken) out.planned.push(taken);
    out.skipped.push(
      ...missing.map((m) => ({ ...m, ...(taken ? { instead: taken } : { otherwise: d.otherwise ?? `the e2e has no other ${d.decision} mutation` }) })),
    );
  }
  return out;
}

/** The decisions a plan does not judge. */
export const unjudged = (p: MutationPlan): string[] => [...new Set(p.skipped.filter((s) => !s.instead).map((s) => s.decision))];

/** What a mutation changes, in a line. */
export const describeMutation = (m: PolicyMutation): string =>
  m.config ? `stack config openkeel:${m.config.sets}` : m.resources!.map((o) => `resource ${o.name} ${o.path.join(".")}`).join(", ");

/** One line per mutation, run or skipped, for the report. */
export function mutationLines(p: MutationPlan): string[] {
  const then = (s: SkippedMutation) =>
    s.instead ? `; ${s.decision} is judged on ${s.instead.target} instead (${s.instead.what})` : `; ${s.decision} is not judged on this stack: ${s.otherwise}`;
  return [
    ...p.planned.map((m) => `run: ${m.decision} (${m.what}) on ${m.target}: ${describeMutation(m)}`),
    ...p.skipped.map((s) => `skipped: ${s.decision} (${s.what}): ${s.why}${then(s)}`),
  ];
}
