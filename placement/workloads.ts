// What places pods, read from what the Plan renders. Every unit is read by the reader its owner
// registers: OpenKeel releases by openkeel/, platform units by their component in platform/, the
// plain workload objects (Deployment, StatefulSet, DaemonSet) here. A unit or object no reader
// claims would escape the placement checks, so planComponents refuses it (a bug, not a user error).
import { type LabelProfile, type Role, type Toleration } from "../config/roles";
import { allUnits, type HelmReleaseUnit, type K8sObject, type Plan, type Unit } from "../plan/plan";
import type { Affinity } from "./chart-helper";
import { requiredAntiAffinityKeys, type LabelSelector, type PodScheduling } from "./scheduling";
import { isPlainObject } from "../config/plain";

type ComponentSource = "platform" | "openkeel";
/** The kinds of what the scheduler places: pods of a workload (`Pods`: a Job's, a bare Pod). */
export type WorkloadKind = "Deployment" | "StatefulSet" | "DaemonSet" | "Pods";
/**
 * A workload kind, or, for a component that selects nodes instead of scheduling pods
 * (`nodeSelection`), the kind its owner names it by in the report (e.g. `NodeHealthCheck`).
 */
export type ComponentKind = WorkloadKind | (string & {});

/**
 * Roles of a design § 2 row: a list of roles (the component's nodes carry at least one), `all`
 * (every node that carries an OpenKeel role: "every node that runs VMs or volumes"), `allNodes`
 * (every node of the cluster, the Kubernetes-only control plane included: CNI, remediation) or
 * `kubernetesControlPlane` (the nodes of the Kubernetes control plane, whatever OpenKeel roles they
 * carry: an upstream operator that requires them, docs/design-decisions.md).
 */
export type DesignRoles = readonly Role[] | "all" | "allNodes" | "kubernetesControlPlane";

export interface Component {
  /** Stable id, `<unit>/<component>`: the row's name in reports and error messages. */
  name: string;
  source: ComponentSource;
  /** Plan unit whose values or objects place it. */
  unit: string;
  kind: ComponentKind;
  replicas?: number;
  /**
   * The PriorityClass its pods name (`priorityClassName`). The readers of the platform charts state
   * it for every component the chart renders, absent meaning none (test/integration/placement/chart-placement.test.ts
   * holds them to the chart); elsewhere absent may also mean its reader does not say.
   */
  priorityClass?: string;
  /** Pod scheduling; for a component with `nodeSelection`, that applies instead. */
  scheduling: PodScheduling;
  /** Node label selector of a component that selects nodes rather than schedules pods (remediation, disks). */
  nodeSelection?: LabelSelector;
  /**
   * It acts on the nodes it selects and may rightly select none (the no-node check leaves it out).
   * @default it must be able to run somewhere
   */
  mayMatchNone?: true;
  /**
   * Topology keys of required anti-affinity against its own pods (one replica per domain); the
   * platform charts' readers state it for every component the chart renders, absent meaning none.
   */
  requiredAntiAffinity?: string[];
  /**
   * Its DoNotSchedule topology spread constraints over its own pods (a ScheduleAnyway one is a preference).
   * @default none
   */
  requiredSpread?: RequiredSpread[];
  /**
   * The PodDisruptionBudgets over its pods. The readers of the platform charts state them for every
   * component the chart renders, absent meaning none, like its priority class (both held to the chart by
   * test/integration/placement/chart-placement.test.ts).
   * @default none
   */
  disruptionBudgets?: DisruptionBudget[];
  /** The design's § 2 row: the roles it runs on. A DaemonSet must cover every node of them. */
  designRoles: DesignRoles;
  /**
   * The stack key that places it (`openkeel:services.<service>.placement.<component>`): where a check about its placement points.
   * @default none: the stack does not place it
   */
  configPath?: string;
  /**
   * Every node it may run on must carry this role (Galera, RabbitMQ, the Ironic conductor), or one
   * of these roles (the OVN chassis, which tolerates every taint: only its selector confines it).
   */
  confinedTo?: Role | readonly Role[];
  /** No node it may run on may carry one of these roles (tenant workloads off provisioning nodes). */
  forbiddenRoles?: Role[];
  /**
   * What its owner's placement checks read of it beside the above (e.g. a NodeHealthCheck's maxUnhealthy).
   * @default none
   */
  facts?: Readonly<Record<string, string | number | boolean>>;
}

/** One DoNotSchedule spread constraint over a component's own pods. */
export interface RequiredSpread {
  topologyKey: string;
  maxSkew: number;
}

/** A PodDisruptionBudget's bound on a drain, as written: minAvailable or maxUnavailable (a number or a percentage). */
export interface DisruptionBudget {
  minAvailable?: number | string;
  maxUnavailable?: number | string;
}

/**
 * The pods a workload's controller makes, as the scheduler and every label selector see them: their
 * labels and their pod spec (a chart's template, or what an operator builds from its CR).
 */
export interface PodTemplate {
  labels: Record<string, string>;
  spec: Record<string, unknown>;
}

/** A design row of the control plane (§ 2): most operators, APIs and workers. */
export const CONTROL_PLANE: Role[] = ["controlPlane"];
/** Tenant workloads (VMs, Zun containers and what serves them) stay off provisioning nodes (§ 1.4). */
export const TENANT_WORKLOAD: Pick<Component, "forbiddenRoles"> = { forbiddenRoles: ["provisioning"] };

interface ReadContext {
  profile: LabelProfile;
  /** The names of every unit of the Plan: what else the stack installs. */
  units: ReadonlySet<string>;
  /** The object readers of the stack's components, by kind: how a unit's reader reads the objects of custom kinds its chart renders. */
  objects: Readonly<Record<string, ObjectReader>>;
  /** The Plan's units: what an object's pods take from another unit (a setting of its operator's release). */
  plan: Pick<Plan, "phases">;
}
/** Reads a Helm release or remote manifest unit: its components, or none. */
export type UnitReader = (unit: Unit, ctx: ReadContext) => Component[];
/** Reads one object of a Manifests unit. */
export type ObjectReader = (unit: Unit, object: K8sObject, ctx: ReadContext) => Component[];

export interface Readers {
  /** Helm release and remote manifest units, by the unit's type token. */
  units?: Record<string, UnitReader>;
  /** Objects of Manifests units, by kind. */
  objects?: Record<string, ObjectReader>;
}

/**
 * A Deployment, DaemonSet or StatefulSet of a pinned upstream manifest, as the manifest ships it:
 * what places its pods (the pod template's nodeSelector, affinity, tolerations, hostNetwork) and
 * its replicas. The manifest takes no values, so this is where it runs; its owner's module encodes
 * it, test/platform/upstream-workloads.test.ts holds it equal to the file, and the e2e holds the real
 * scheduler to it.
 */
export interface UpstreamWorkload {
  kind: "Deployment" | "DaemonSet" | "StatefulSet";
  namespace: string;
  name: string;
  /**
   * The manifest's `spec.replicas` (Deployment, StatefulSet).
   * @default 1 (the manifest sets none)
   */
  replicas?: number;
  scheduling: PodScheduling;
  /** Where the design wants it (§ 2, and docs/design-decisions.md where it deviates): ours, not upstream's. */
  designRoles: DesignRoles;
}

/**
 * What a platform chart renders at its pin, against the components its release's reader models:
 * the reader reads values, so which model component stands for which workload of the chart's
 * output is written here, beside it (test/integration/placement/chart-placement.test.ts renders the chart and holds each
 * workload to its component: node set, replicas, and the guarantees of its pods: placement/pod-guarantees.ts).
 */
export interface ChartWorkloads {
  /**
   * `<Kind> <name>` of every workload `helm template` renders (hooks included) → the id of the
   * component (`<unit>/<id>`) that stands for it; several may share one (`kube-ovn-cni+ovs-ovn+pinger`).
   */
  rendered: Readonly<Record<string, string>>;
  /**
   * Components of the release no rendered workload stands for, and why (what an operator creates at
   * run time, a kind that selects nodes rather than pods).
   * @default none
   */
  notRendered?: Readonly<Record<string, string>>;
  /**
   * Templates that render only against a live cluster (their first line tests a Helm `lookup`):
   * rendered a second time with that line made true, as an upgrade renders them, so that their
   * workloads are held to the model too.
   * @default none
   */
  liveOnly?: { files: readonly string[]; gate: string; why: string };
}

/** A pinned upstream manifest's workloads as components of its unit, `<unit>/<workload name>`. */
export function upstreamWorkloads(workloads: readonly UpstreamWorkload[]): UnitReader {
  return (u) =>
    workloads.map((w) => platformComponent(u, w.name, w.kind, w.scheduling, w.designRoles, w.kind === "DaemonSet" ? {} : { replicas: w.replicas ?? 1 }));
}

/** A unit that places nothing this repository sets (e.g. an upstream operator manifest); `why` says so in the code. */
export function unplaced(_why: string): UnitReader {
  return () => [];
}

/** Kinds that neither place pods nor select nodes. */
const UNPLACED_KINDS: ReadonlySet<string> = new Set([
  "ClusterRole",
  "ClusterRoleBinding",
  "ConfigMap",
  "CustomResourceDefinition",
  "Namespace",
  "NetworkAttachmentDefinition",
  "NetworkPolicy",
  "Node",
  "OperatorGroup",
  "PodDisruptionBudget",
  "PriorityClass",
  "Role",
  "RoleBinding",
  "Secret",
  "SelfNodeRemediationTemplate",
  "Service",
  "ServiceAccount",
  "StorageClass",
  "Subnet",
  "VolumeSnapshotClass",
]);

export function mergeReaders(...all: (Readers | undefined)[]): Readers {
  const merged: Required<Readers> = { units: {}, objects: {} };
  for (const r of all) {
    for (const [k, v] of Object.entries(r?.units ?? {})) {
      if (merged.units[k]) throw new Error(`placement readers: two readers for unit type ${k}`);
      merged.units[k] = v;
    }
    for (const [k, v] of Object.entries(r?.objects ?? {})) {
      if (merged.objects[k]) throw new Error(`placement readers: two readers for kind ${k}`);
      merged.objects[k] = v;
    }
  }
  return merged;
}

// ---------------------------------------------------------------------------------------------
// Helpers for readers

export type Obj = Record<string, unknown>;
export const isObj = isPlainObject;
export const obj = (v: unknown): Obj => (isObj(v) ? v : {});
export const arr = <T = unknown>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
const strMap = (v: unknown): Record<string, string> | undefined =>
  isObj(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)])) : undefined;
export const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

export function podScheduling(spec: Obj, extra: Partial<PodScheduling> = {}): PodScheduling {
  return {
    nodeSelector: { ...(strMap(spec.nodeSelector) ?? {}), ...(extra.nodeSelector ?? {}) },
    ...(isObj(spec.affinity) ? { affinity: spec.affinity as Affinity } : {}),
    tolerations: [...arr<Toleration>(spec.tolerations), ...(extra.tolerations ?? [])],
    ...(spec.hostNetwork === true ? { hostNetwork: true } : {}),
  };
}

/** A platform component of a unit. */
export function platformComponent(
  u: Unit,
  id: string,
  kind: ComponentKind,
  scheduling: PodScheduling,
  designRoles: DesignRoles,
  more: Partial<Component> = {},
): Component {
  return { name: `${u.name}/${id}`, source: "platform", unit: u.name, kind, scheduling, designRoles, ...more };
}

/**
 * Charts with top-level nodeSelector/tolerations/affinity for the operator (and sub-components);
 * `more`: what the chart makes of a component's own values (the top level's for the operator) beside
 * them, its replicas and priority class.
 */
export function chartOperatorComponents(u: HelmReleaseUnit, subs: string[], more: (own: Obj) => Partial<Component> = () => ({})): Component[] {
  const v = u.values as Obj;
  const globalSel = strMap(obj(v.global).nodeSelector) ?? {};
  const top = podScheduling({ ...v, nodeSelector: { ...globalSel, ...(strMap(v.nodeSelector) ?? {}) } });
  const out = [platformComponent(u, u.chart.chart, "Deployment", top, CONTROL_PLANE, more(v))];
  for (const s of subs) {
    const sv = obj(v[s]);
    if (sv.enabled === false) continue;
    out.push(
      platformComponent(
        u,
        s,
        "Deployment",
        podScheduling({ ...sv, nodeSelector: { ...globalSel, ...(strMap(sv.nodeSelector) ?? {}) } }),
        CONTROL_PLANE,
        more(sv),
      ),
    );
  }
  return out;
}

/** A string value, or undefined (an absent or empty key: Helm's `with` renders nothing for it). */
export const str = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined);
/** `{priorityClass}` when a class is named, else nothing: spread into a component. */
export const priorityOf = (name: unknown): Pick<Component, "priorityClass"> => {
  const priorityClass = str(name);
  return priorityClass ? { priorityClass } : {};
};

/** The pod template of a workload object (a Job's, a bare Pod's own spec). */
export function podTemplateSpec(o: K8sObject): Obj {
  const spec = obj(o.spec);
  return o.kind === "Pod" ? spec : obj(obj(spec.template).spec);
}

/** The pods a workload object makes: its template's labels (a bare Pod's own) and spec. */
export function podTemplate(o: K8sObject): PodTemplate {
  const meta = o.kind === "Pod" ? obj(o.metadata) : obj(obj(obj(o.spec).template).metadata);
  return { labels: strMap(meta.labels) ?? {}, spec: podTemplateSpec(o) };
}

/**
 * A Deployment, StatefulSet or DaemonSet a unit writes, or the pods of a Job or a bare Pod (kind
 * `Pods`): its pod template's scheduling, replicas and priority class.
 */
export const workload = (u: Unit, o: K8sObject): Component[] => {
  const spec = obj(o.spec);
  const tpl = podTemplateSpec(o);
  const daemonSet = o.kind === "DaemonSet";
  const pods = o.kind === "Job" || o.kind === "Pod";
  const anti = requiredAntiAffinityKeys(tpl.affinity as Affinity);
  return [
    platformComponent(u, o.metadata.name, pods ? "Pods" : (o.kind as ComponentKind), podScheduling(tpl), daemonSet ? "allNodes" : CONTROL_PLANE, {
      ...(daemonSet || pods ? {} : { replicas: num(spec.replicas) ?? 1 }),
      ...priorityOf(tpl.priorityClassName),
      ...(anti.length > 0 ? { requiredAntiAffinity: anti } : {}),
    }),
  ];
};
const WORKLOAD_READERS: Record<string, ObjectReader> = { Deployment: workload, StatefulSet: workload, DaemonSet: workload };

/** Every component of the Plan that places pods (or selects nodes), in Plan order. */
export function planComponents(plan: Plan, readers: Readers): Component[] {
  const ctx: ReadContext = { profile: plan.labelProfile, units: new Set(allUnits(plan).map((u) => u.name)), objects: readers.objects ?? {}, plan };
  const out: Component[] = [];
  for (const ph of plan.phases) {
    for (const u of ph.units) {
      const reader = readers.units?.[u.type];
      if (reader) out.push(...reader(u, ctx));
      else if (u.kind === "Manifests") {
        for (const o of u.objects) {
          const read = readers.objects?.[o.kind] ?? WORKLOAD_READERS[o.kind];
          if (read) out.push(...read(u, o, ctx));
          else if (!UNPLACED_KINDS.has(o.kind)) {
            throw new Error(
              `placement: no reader claims ${o.kind} ${o.metadata.name} of unit ${u.name}; register one with its platform component, or list the kind in UNPLACED_KINDS`,
            );
          }
        }
      } else {
        throw new Error(`placement: no reader claims unit ${u.name} (${u.type}); its owner must register one, or declare it unplaced`);
      }
    }
  }
  return out;
}
