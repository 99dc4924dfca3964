// The shape of rendered/<stack>/ (./rendered.ts writes and reads it; import it from there): its
// files' names, the schema version index.yaml records, and the types of index.yaml, placement.json
// and talos/machines.yaml.
import type { LifecycleFacts, NodeState } from "../config/lifecycle";
import type { LabelProfile, Role } from "../config/roles";
import type { PlacementData } from "../placement/data";
import type { ChartPin } from "../plan/plan";
import type { DeployGraph } from "../plan/needs";

/**
 * The version of this model index.yaml records; a reader reads it and every earlier one. 3:
 * placement.json groups a component's unreachable nodes by their reasons (reasonGroups). 4: it
 * holds the host contract: what each node's host has (`hosts`), what each component needs of it. 5:
 * a component's priority class (`priorityClass`), where its reader says. 6: the failure-domain
 * table (`failureDomains`: what losing a node, a zone or the drained nodes costs).
 */
export const RENDERED_SCHEMA_VERSION = 6;

export const INDEX_FILE = "index.yaml";

export const PLACEMENT_DATA_FILE = "placement.json";

export const PLACEMENT_MD_FILE = "placement.md";

export const PLACEMENT_SVG_FILE = "placement.svg";

/** Per Talos node: its machine type, patches, schematic and installer image (nodes/talos.ts writes it). */
export const TALOS_MACHINES_FILE = "talos/machines.yaml";

/** A file of rendered/<stack>/. */
export interface RenderedFile {
  /** Relative to rendered/<stack>/, always with forward slashes. */
  path: string;
  content: string;
}

export interface RenderedUnitBase {
  name: string;
  /** Its ComponentResource's type token, `openkeel:<area>:<Name>`. */
  type: string;
  /** Owns data: protected and retained on delete. */
  protect?: boolean | undefined;
  /** The units it waits for: derived from what its objects use, and its hand-written edges (plan/needs.ts). */
  dependsOn?: string[] | undefined;
  /** Its hand-written edges, each with why no object shows the need: for the reviewer. */
  waitsFor?: { unit: string; why: string }[] | undefined;
}

/** The fields of the other kinds are absent: readers may ask any unit for them. */
export interface NoFieldsOf {
  release?: never;
  namespace?: never;
  chart?: never;
  values?: never;
  objects?: never;
  urls?: never;
  version?: never;
}

export interface RenderedHelmRelease extends RenderedUnitBase, Omit<NoFieldsOf, "release" | "namespace" | "chart" | "values"> {
  kind: "HelmRelease";
  release: string;
  namespace: string;
  chart: ChartPin;
  /** Its values file, `values/<unit>.yaml`. */
  values: string;
  /** Its post-render patches, `postrender/<unit>.yaml` (plan/post-render.ts), when it has any. */
  postRender?: string | undefined;
}

export interface RenderedManifests extends RenderedUnitBase, Omit<NoFieldsOf, "objects"> {
  kind: "Manifests";
  /** Its object files, `objects/<phase>/<unit>/<kind>-[<namespace>-]<name>.yaml`, sorted. */
  objects: string[];
}

export interface RenderedRemoteManifest extends RenderedUnitBase, Omit<NoFieldsOf, "urls" | "version"> {
  kind: "RemoteManifest";
  urls: string[];
  version: string;
  /** Its objects applied with force on field conflicts (RemoteManifestUnit.forceConflicts). */
  forceConflicts?: string[] | undefined;
  /** Fields of its objects left to a patch unit (RemoteManifestUnit.patchedFields). */
  patchedFields?: { object: string; fields: string[] }[] | undefined;
}

export type RenderedUnit = RenderedHelmRelease | RenderedManifests | RenderedRemoteManifest;

/** A node of the inventory, as the removal guard and the preview read it. */
export interface RenderedNode {
  name: string;
  roles: Role[];
  zone?: string | undefined;
  kubernetesControlPlane?: boolean | undefined;
  /** Absent in renders made before node states existed: active. */
  state?: NodeState | undefined;
}

/** A plan-check warning of the stack. `path` and `reason` are absent in renders made before them (issue 38). */
export interface RenderedWarning {
  code: string;
  /** The key path of the stack file it is about (`openkeel:nodes[3].state`): with the code, what it means (the preview pairs a base's and a head's by them). */
  path?: string | undefined;
  message: string;
  /** Why it matters, the same for every stack that has it. */
  reason?: string | undefined;
  remediation?: string | undefined;
}

export interface RenderedIndex {
  /** Absent in renders made before this model (read as version 0: no placement.json). */
  schemaVersion?: number | undefined;
  /**
   * How its program deploys the units: each after its dependsOn only (issue 46). Absent in renders of
   * programs before it, which made every unit also wait for the whole phase before its own.
   */
  deployGraph?: DeployGraph | undefined;
  stack: string;
  environment: string;
  topology: string;
  labelProfile: LabelProfile;
  taintedRoles: Role[];
  /** The cluster binding (`openkeel:cluster`); absent in renders made before it existed. */
  cluster?: { context?: string | undefined; apiServer?: string | undefined; kubeSystemUID?: string | undefined } | undefined;
  nodes: RenderedNode[];
  warnings: RenderedWarning[];
  /** The node-configuration files (Talos, kind), when the environment renders any. */
  nodeConfig?: string[] | undefined;
  /**
   * What the feasibility model's constraints read of the Plan (lifecycle/feasibility.ts), by
   * constraint: what the removal guard judges a removal with. Absent before schema 2.
   */
  feasibility?: Record<string, LifecycleFacts> | undefined;
  /** The protected units whose removal the stack allows (`openkeel:allowRemoval`); absent: none. */
  allowRemoval?: string[] | undefined;
  phases: { name: string; units: RenderedUnit[] }[];
}

export type RenderedPlacement = PlacementData;

/** A node of talos/machines.yaml (nodes/talos.ts writes it). */
export interface TalosMachine {
  machineType: "controlplane" | "worker";
  roles: Role[];
  group: string;
  /** Patch files in the order to apply them, relative to rendered/<stack>/talos/. */
  patches: string[];
  schematic: string;
  schematicId: string;
  installerImage: string;
  /** The machine it is: its facts, stacks/facts/<stack>/<machine>.yaml. */
  machine?: string | undefined;
  /** The interfaces Open vSwitch takes on it (the chassis' external NIC), and their NICs: none of its Talos documents names them. */
  ovs?: { name: string; nics: string[] }[] | undefined;
}

/** talos/machines.yaml: the versions every node's configuration is for, and its nodes. */
export interface TalosMachinesFile {
  talosVersion: string;
  /** KUBERNETES_VERSION, the images of the patches (absent in renders made before it was pinned). */
  kubernetesVersion?: string | undefined;
  imageFactory: string;
  machines: Record<string, TalosMachine>;
}

/** Nodes that share their reasons, in node order: what placement.json writes for `reasons`. */
export interface ReasonGroup {
  why: string[];
  nodes: string[];
}
