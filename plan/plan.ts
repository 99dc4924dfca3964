// The Plan: what an environment installs, as plain data in ordered phases. Pure to build (no
// Pulumi runtime, no I/O): the Pulumi layer applies it, the offline scripts render, validate and
// check it.
import { PINNED_VERSION, type Environment, type Topology as TopologyName } from "../config/schema";
import type { LabelProfile, Role } from "../config/roles";
import type { Check } from "../config/problems";
import type { ClusterConfig } from "../config/cluster";
import type { LifecycleFacts, NodeState } from "../config/lifecycle";
import type { PostRenderPatch } from "./post-render";
import type { HostContract } from "./host";

export const PHASES = ["node-roles", "crds-operators", "platform", "platform-config", "openkeel-infra", "openkeel"] as const;
export type PhaseName = (typeof PHASES)[number];

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/**
 * On an object an operator creates itself, `openkeel.io/apply-as: patch` means this repository
 * only amends its fields (a server-side-apply patch): it never creates or deletes the object.
 */
export const APPLY_AS_PATCH_ANNOTATION = "openkeel.io/apply-as";

/** Field manager of those patches (the Pulumi layer sets it as pulumi.com/patchFieldManager). */
export const OBJECT_PATCH_FIELD_MANAGER = "openkeel-platform";

/**
 * Stands for a secret in values or objects. The Pulumi layer replaces it with a Pulumi secret
 * (generated once per stack and kept in its state); renders show only the name.
 */
export interface SecretRef {
  secretRef: string;
}

export function secretRef(name: string): SecretRef {
  return { secretRef: name };
}

export function isSecretRef(value: unknown): value is SecretRef {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    typeof (value as SecretRef).secretRef === "string"
  );
}

/** A Helm chart at its version: a Helm repository (https://…) or an OCI registry (oci://…), chart and version (platform/versions.ts pins them). */
export interface ChartPin {
  repository: string;
  chart: string;
  version: string;
}

interface UnitBase {
  /** Unique within the plan; the Pulumi resource name and the render folder. */
  name: string;
  /** Type token of the unit's ComponentResource: `openkeel:<area>:<Name>`. */
  type: string;
  /** Owns data (volumes, CRDs, databases): protected and retained on delete. */
  protect?: boolean;
  /**
   * The units before it that it waits for: derived from what its objects and values use and the
   * other units offer, and its hand-written edges (./needs.ts; set when the Plan is composed).
   */
  dependsOn?: string[];
  /**
   * Units before it that it waits for although none of its objects shows the need: each with why.
   * @default none
   */
  waitsFor?: HandWrittenEdge[];
  /**
   * What its chart or manifest holds that the Plan cannot read (a remote manifest is fetched at
   * apply time, a chart rendered by Helm): ./needs.ts facts, held to the mirror's files by
   * test/integration/plan/unit-content.test.ts.
   * @default nothing beyond its objects and values
   */
  content?: UnitContent;
  /**
   * What its objects make at run time, which no object of it shows (an operator's webhooks once it
   * is installed, the pod network once the CNI runs): ./needs.ts facts, each group with why.
   * @default none
   */
  offersAtRunTime?: RunTimeFacts[];
  /**
   * What the pods of its release use once they run, which no object of it shows (Nova's compute
   * agent lists VirtualMachineInstances): ./needs.ts facts, each group with why. It waits for a unit
   * before it that offers one; where none does (the lab without KubeVirt), for nothing.
   * @default none
   */
  usesAtRunTime?: RunTimeFacts[];
  /**
   * Its content is not stated for what it applies (a remote manifest at a version no statement
   * covers): why. It then waits for every unit before it, as a phase barrier would.
   * @default its content is known
   */
  contentUnknown?: string;
}

/** A dependency no object shows: the unit waited for, and the reason, which a reviewer reads. */
export interface HandWrittenEdge {
  unit: string;
  why: string;
}

/** The facts (./needs.ts) of a chart or manifest: what it offers other units, what it uses of them. */
export interface UnitContent {
  offers?: readonly string[];
  uses?: readonly string[];
}

/** Facts a unit makes true, or needs, at run time, and why. */
export interface RunTimeFacts {
  facts: readonly string[];
  why: string;
}

export interface HelmReleaseUnit extends UnitBase {
  kind: "HelmRelease";
  /** Helm release name. */
  release: string;
  namespace: string;
  chart: ChartPin;
  values: Record<string, unknown>;
  skipCrds?: boolean;
  /**
   * What the design requires of objects the chart renders but reads no value for: merge patches
   * applied by Helm's post-renderer (plan/post-render.ts), and by the placement readers first.
   * @default none: the chart's manifests as rendered
   */
  postRender?: PostRenderPatch[];
}

export interface ManifestsUnit extends UnitBase {
  kind: "Manifests";
  /** Objects this repository writes. `Node` objects are applied as patches, never created. */
  objects: K8sObject[];
}

export interface RemoteManifestUnit extends UnitBase {
  kind: "RemoteManifest";
  /**
   * Pinned upstream release assets, e.g. kubevirt-operator.yaml of a tagged release, applied as one
   * group: a later file's objects may be of kinds whose CRDs an earlier file defines.
   */
  urls: string[];
  version: string;
  /**
   * Objects of these manifests (`<Kind> [<namespace>/]<name>`) applied with force on field
   * conflicts (Pulumi's `pulumi.com/patchForce`): another unit's manifest holds the same object
   * with a different value, and server-side apply refuses the second writer. The last unit to
   * apply takes those fields, as `kubectl apply --server-side --force-conflicts` would.
   * @default none: every field conflict is an error
   */
  forceConflicts?: string[];
  /**
   * Fields of objects of these manifests that a patch unit of this repository sets (APPLY_AS_PATCH_ANNOTATION):
   * the manifest is applied without them, so that its field manager never claims them again.
   * @default none: every object as the manifest ships it
   */
  patchedFields?: PatchedFields[];
}

/** The fields of one object of a remote manifest that a patch unit sets, as dotted paths under the object. */
export interface PatchedFields {
  /** `<Kind> [<namespace>/]<name>`, as RemoteManifestUnit.forceConflicts names objects. */
  object: string;
  fields: string[];
}

export type Unit = HelmReleaseUnit | ManifestsUnit | RemoteManifestUnit;

/** What every unit may say besides its content: it owns data, what it waits for that no object shows, what it offers at run time, its chart's or manifest's content. */
export interface UnitOptions {
  protect?: boolean;
  waitsFor?: HandWrittenEdge[];
  offersAtRunTime?: RunTimeFacts[];
  usesAtRunTime?: RunTimeFacts[];
  content?: UnitContent;
  contentUnknown?: string;
}

/** A remote manifest's options besides those: the objects it applies with force on conflicts, the fields it leaves to patches. */
export interface RemoteManifestOptions extends UnitOptions {
  forceConflicts?: string[];
  patchedFields?: PatchedFields[];
}

function base(name: string, type: string, opts: UnitOptions): UnitBase {
  return {
    name,
    type,
    ...(opts.protect ? { protect: true } : {}),
    ...(opts.waitsFor?.length ? { waitsFor: opts.waitsFor.map((w) => ({ ...w })) } : {}),
    ...(opts.offersAtRunTime?.length ? { offersAtRunTime: opts.offersAtRunTime.map((r) => ({ facts: [...r.facts], why: r.why })) } : {}),
    ...(opts.usesAtRunTime?.length ? { usesAtRunTime: opts.usesAtRunTime.map((r) => ({ facts: [...r.facts], why: r.why })) } : {}),
    ...(opts.content ? { content: { ...opts.content } } : {}),
    ...(opts.contentUnknown ? { contentUnknown: opts.contentUnknown } : {}),
  };
}

/**
 * A Helm release of `chart` into `namespace`, released under the unit's name, or under `release`: a
 * unit renamed after a stack was deployed keeps its release's name (the provider replaces a release
 * whose name changes, and Helm refuses to install the new one beside the objects the old one owns),
 * besides its alias in components/renames.ts (docs/operating.md, "Renames keep what a stack has").
 */
export function helmReleaseUnit(
  name: string,
  type: string,
  namespace: string,
  chart: ChartPin,
  values: Record<string, unknown>,
  opts: UnitOptions & { postRender?: PostRenderPatch[]; release?: string } = {},
): HelmReleaseUnit {
  const postRender = opts.postRender?.length ? { postRender: opts.postRender } : {};
  return { kind: "HelmRelease", ...base(name, type, opts), release: opts.release ?? name, namespace, chart: { ...chart }, values, ...postRender };
}

/** Objects this repository writes. */
export function manifestsUnit(name: string, type: string, objects: K8sObject[], opts: UnitOptions = {}): ManifestsUnit {
  return { kind: "Manifests", ...base(name, type, opts), objects };
}

/** Pinned upstream manifests, fetched at apply time. */
export function remoteManifestUnit(name: string, type: string, urls: string[], version: string, opts: RemoteManifestOptions = {}): RemoteManifestUnit {
  return {
    kind: "RemoteManifest",
    ...base(name, type, opts),
    urls,
    version,
    ...(opts.forceConflicts?.length ? { forceConflicts: [...opts.forceConflicts] } : {}),
    ...(opts.patchedFields?.length ? { patchedFields: opts.patchedFields.map((p) => ({ object: p.object, fields: [...p.fields] })) } : {}),
  };
}

export interface Phase {
  name: PhaseName;
  units: Unit[];
}

interface NodeSummary {
  name: string;
  roles: Role[];
  zone?: string | undefined;
  /** Runs etcd and kube-apiserver: a member of the Kubernetes quorum. */
  kubernetesControlPlane?: true | undefined;
  /** Recorded in index.yaml: the removal guard reads the committed state (lifecycle/guards.ts). */
  state: NodeState;
}

/**
 * A file of node-level configuration: Talos machine-config patches, Image Factory schematics, the
 * kind cluster config. Not Kubernetes objects, and not applied by Pulumi: operators hand them to
 * talosctl, the Image Factory or kind before `pulumi up`.
 */
export interface NodeConfigFile {
  /** Relative to rendered/<stack>/, e.g. `talos/patches/worker-compute.yaml`; never under objects/ or values/. */
  path: string;
  /** YAML documents, written in this order. */
  documents: Record<string, unknown>[];
  /** What the file is for and how to use it: written as comment lines at its top. */
  comment?: string;
}

export interface NodeLevelConfig {
  files: NodeConfigFile[];
}

export interface Plan {
  stack: string;
  environment: Environment;
  topology: TopologyName;
  labelProfile: LabelProfile;
  taintedRoles: Role[];
  nodes: NodeSummary[];
  /** The cluster the stack deploys to: the context `pulumi up` uses and what identifies the cluster. */
  cluster: ClusterConfig;
  phases: Phase[];
  /** Warnings of the plan checks (a plan is only built when there are no errors). */
  warnings: Check[];
  /** Node-level configuration the environment renders (Talos patches and schematics, kind config). */
  nodeConfig?: NodeLevelConfig;
  /**
   * What the feasibility model's constraints read of this Plan, by constraint (lifecycle/feasibility.ts):
   * index.yaml records it, and the removal guard judges with the committed render's.
   * @default none recorded
   */
  feasibility?: Record<string, LifecycleFacts>;
  /**
   * What its components need of the hosts of their nodes, and what its node agents install there
   * (plan/host.ts): the placement report judges it against what each node's host has.
   * @default nothing needed, nothing installed
   */
  host?: HostContract;
  /**
   * Protected units whose removal the stack allows (`openkeel:allowRemoval`): reviewed in the pull
   * request that adds them, shown by the preview, honoured by the deploy (docs/operating.md).
   * @default none
   */
  allowRemoval?: string[];
}

export function emptyPhases(): Phase[] {
  return PHASES.map((name) => ({ name, units: [] }));
}

export function phase(plan: Pick<Plan, "phases">, name: PhaseName): Phase {
  const p = plan.phases.find((x) => x.name === name);
  if (!p) throw new Error(`plan has no phase ${name}`);
  return p;
}

export function allUnits(plan: Pick<Plan, "phases">): Unit[] {
  return plan.phases.flatMap((p) => p.units);
}

export function findUnit(plan: Pick<Plan, "phases">, name: string): Unit | undefined {
  return allUnits(plan).find((u) => u.name === name);
}

const TYPE_TOKEN = /^openkeel:[a-z][A-Za-z0-9]*:[A-Z][A-Za-z0-9]*$/;
const UNIT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Invariants every Plan must hold. A violation is a bug in this repository (not a user mistake),
 * so it throws a plain Error.
 */
export function assertPlanInvariants(plan: Plan): void {
  const names = new Set<string>();
  const problems: string[] = [];
  plan.phases.forEach((ph, i) => {
    if (ph.name !== PHASES[i]) problems.push(`phase ${i} is ${ph.name}, expected ${PHASES[i]}`);
    for (const u of ph.units) {
      if (names.has(u.name)) problems.push(`unit name ${u.name} is used twice`);
      if (!UNIT_NAME.test(u.name)) problems.push(`unit name ${u.name} is not a DNS label`);
      if (!TYPE_TOKEN.test(u.type)) problems.push(`unit ${u.name}: type ${u.type} is not openkeel:<area>:<Name>`);
      for (const d of u.dependsOn ?? []) if (!names.has(d)) problems.push(`unit ${u.name} depends on ${d}, which is not listed before it`);
      for (const w of u.waitsFor ?? []) {
        if (!names.has(w.unit)) problems.push(`unit ${u.name} waits for ${w.unit}, which is not listed before it`);
        if (w.why.trim() === "") problems.push(`unit ${u.name} waits for ${w.unit} without a reason: a hand-written edge says why no object shows the need`);
      }
      for (const r of u.offersAtRunTime ?? [])
        if (r.why.trim() === "") problems.push(`unit ${u.name} offers ${r.facts.join(", ")} at run time without a reason`);
      names.add(u.name);
      if (u.kind === "HelmRelease" && !PINNED_VERSION.test(u.chart.version)) {
        problems.push(`unit ${u.name}: chart version ${u.chart.version} is not pinned`);
      }
      if (u.kind === "RemoteManifest") {
        if (u.urls.length === 0) problems.push(`unit ${u.name}: no URL`);
        for (const url of u.urls)
          if (!PINNED_VERSION.test(u.version) || !url.includes(u.version)) problems.push(`unit ${u.name}: ${url} is not pinned to ${u.version}`);
      }
      if (u.kind === "Manifests") {
        const ids = new Set<string>();
        for (const o of u.objects) {
          const id = `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
          if (ids.has(id)) problems.push(`unit ${u.name}: object ${id} appears twice`);
          ids.add(id);
        }
      }
    }
  });
  if (problems.length > 0) throw new Error(`invalid plan for stack ${plan.stack}:\n  ${problems.join("\n  ")}`);
}
