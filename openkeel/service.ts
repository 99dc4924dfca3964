// The descriptor of an OpenKeel service, mirroring the platform components' (platform/component.ts):
// a service says everything about itself in its own module (./services/<service>.ts), whose last
// statement is its descriptor: its chart, its components with their placement, replicas, values and
// design rows, its public APIs' NodePorts in the lab, what it needs to run, its own stack keys, the
// units it brings besides its release, its post-render patches, what it needs of the hosts, its
// constraints in the feasibility model, its placement checks, its plan checks, its part in a node's life, its checks of a change and its row of the docs. The registry (./services/index.ts)
// lists the services in install order; the shared machinery of ./ reads the descriptors.
import type { z } from "zod";
import type { Check, Problem } from "../config/problems";
import type { Config, LoadedConfig } from "../config/schema";
import type { ServiceDeclaration } from "../config/services";
import type { Holding, NodeLifecycle } from "../lifecycle/contributor";
import type { NodeConstraint } from "../lifecycle/feasibility";
import type { ComponentHostNeeds } from "../plan/host";
import { findUnit, type Plan, type RunTimeFacts, type Unit } from "../plan/plan";
import type { PostRenderPatch } from "../plan/post-render";
import type { PlacementCheck } from "../placement/report";
import type { Obj, ObjectReader } from "../placement/workloads";
import type { PlatformComponent } from "../platform/component";
import type { PodSecurityLevel, StackContext } from "../platform/context";
import type { OPENKEEL_CHARTS } from "../platform/versions";
import type { Topology } from "../topology/topology";
import type { RenderedIndex } from "../render/rendered";
import type { ComponentSpec } from "./components";
import type { ReleaseDocs } from "./docs-row";

/** A chart of the OpenKeel charts' release line, which its pin names by their prefix (platform/versions.ts). */
type OpenKeelChart = `${typeof OPENKEEL_CHARTS.prefix}${string}`;

export interface OpenKeelService<N extends string = string> extends ServiceDeclaration {
  /** `openkeel:services.<name>`, `openkeel:charts.versions.<name>`; its release is `openkeel-<name>`. */
  name: N;
  /** Its chart, at the OpenKeel charts' one version (platform/versions.ts), unless the stack pins another (`openkeel:charts`). */
  chart: OpenKeelChart;
  /** Its workloads by the chart's component key (`placement.<key>`, `<key>.replicas`), in the chart's order. */
  components: Readonly<Record<string, ComponentSpec>>;
  /**
   * Every other release waits for it: the identity service, where every service registers its endpoints (Keystone).
   * @default false
   */
  identity?: true;
  /**
   * Releases it waits for besides the identity service and the service it extends, each with why
   * (no object of the release shows the need: Nova's agents register in Placement).
   * @default none
   */
  waitsFor?: readonly { service: string; why: string }[];
  /**
   * What its pods use once they run, which none of its objects shows, each with why (plan/needs.ts
   * facts: Nova's compute agent lists VirtualMachineInstances): its release waits for a unit that
   * offers it, where the stack installs one.
   * @default none
   */
  usesAtRunTime?: readonly RunTimeFacts[];
  /**
   * Its own namespace, created with the OpenKeel namespace (openkeel-namespace) with its pod-security level.
   * @default the OpenKeel namespace (`openkeel`)
   */
  namespace?: { name: string; podSecurity: PodSecurityLevel };
  /**
   * Its release holds tenant data (images, objects): protected, never deleted by a change.
   * @default false
   */
  protect?: true;
  /**
   * § 5.2 "What is implemented": its chart renders the API's Jobs ("API Deployment and its Jobs
   * (placement.api)"), placed as the API is: the database migration, `<release>/db-sync`, run once
   * on the control plane.
   * @default false: its chart renders no Job of its API
   */
  apiJob?: true;
  /**
   * Top-level keys of its values besides `global`, `placement` and the component blocks.
   * @default none
   */
  settings?: Record<string, z.ZodType>;
  /**
   * Values beyond placement and replicas.
   * @default none: `global`, `placement` and the component blocks only
   */
  values?(ctx: StackContext): Record<string, unknown>;
  /**
   * What the design requires of an object its chart renders but reads no value for: post-render
   * patches of its release, from its final values, after those of ./unlisted.ts and ./zone-spread.ts.
   * @default none
   */
  postRender?(ctx: StackContext, release: string, values: Obj): PostRenderPatch[];
  /**
   * Its units of the openkeel-infra phase, after the infrastructure release, each waiting for the
   * namespaces (Ironic's egress policy and provisioning network).
   * @default none
   */
  infrastructureUnits?(ctx: StackContext): Unit[];
  /**
   * Units its release waits for, in the openkeel phase before the releases (Zun's kata RuntimeClass),
   * and why: what its release creates at run time uses them, which no object of it shows.
   * @default none
   */
  releaseUnits?(ctx: StackContext): { units: Unit[]; why: string };
  /**
   * How the placement report reads the objects of its own units, by kind.
   * @default none: its units hold no object that places a pod
   */
  readers?: Readonly<Record<string, ObjectReader>>;
  /**
   * What its workloads need of the hosts of their nodes, while it runs (the host contract, plan/host.ts).
   * @default nothing
   */
  host?(ctx: StackContext): ComponentHostNeeds[];
  /**
   * Its constraints in the feasibility model (lifecycle/feasibility.ts), read from what the Plan renders for its release.
   * @default none
   */
  constraints?: readonly NodeConstraint[];
  /**
   * What its constraints' findings are about, which places them among OpenKeel's (./feasibility.ts
   * reads them in the order of CONCERNS: in the failure-domain table and the plan checks).
   * @default after every concern, in install order
   */
  concern?: Concern;
  /**
   * Its own placement checks, which the report runs beside the generic ones.
   * @default none
   */
  placementChecks?: readonly PlacementCheck[];
  /**
   * Its own plan checks of the stack (okadm plan rules, beside topology/checks.ts's), run for every
   * stack whether the service runs or not (a key of its own set where it does not run is a mistake);
   * `installed` are the platform components the stack installs, for a check of how the service sits
   * beside one it builds on (Neutron's chassis beside Kube-OVN's ovs-ovn).
   * @default none
   */
  planChecks?(cfg: Config, topo: Topology, installed: readonly PlatformComponent[]): Check[];
  /**
   * Its checks of the releases' final values (the stack's overrides merged), its own against the
   * other services' (`valuesOf(service)`: undefined where that service does not run): what the
   * stack's values break between releases (Neutron's metadata agent against Nova's secret, D4).
   * @default none
   */
  releaseChecks?(cfg: LoadedConfig, valuesOf: (service: string) => Record<string, unknown> | undefined): Problem[];
  /**
   * Its part in a node's life (lifecycle/): the taints a node's state makes it carry because of the
   * service, and its steps of a transition (Nova's service disabled before a hypervisor's drain).
   * @default none
   */
  lifecycle?: ServiceLifecycle;
  /**
   * What it keeps on a node of a role, which the node's removal would take away (the removal guard's
   * message, lifecycle/guards.ts: Zun's containers); its strict-local volumes say so themselves.
   * @default nothing but its components' strict-local volumes
   */
  holds?: readonly Holding[];
  /**
   * Its checks of a change (review/: the preview and the verdict): what going from the render the
   * stack is judged against (`before`, which `where` names: the base, or what is deployed) to the
   * change's does to the service, read from what each render's index records (Swift's rings move data).
   * @default none
   */
  changeFindings?(before: RecordedIndex, after: RecordedIndex, where: string): Check[];
  /**
   * Its row of the releases' table of docs/openkeel-values.md, which `npm run docs` writes with its
   * release, its namespace and its public APIs' lab NodePorts (./docs-row.ts).
   * @default its components with their design rows' roles, and no other values
   */
  docs?: ReleaseDocs;
}

/** What OpenKeel's findings of a node's loss are about, in the order they read: the control plane's quorums, the data, the network, the bare metal, the way in, the compute. */
export const CONCERNS = ["quorums", "data", "network", "bare metal", "way in", "compute"] as const;
export type Concern = (typeof CONCERNS)[number];
/** What a change's checks read of each side's render: its nodes, and what its constraints' `facts` recorded (`feasibility`). */
export type RecordedIndex = Pick<RenderedIndex, "nodes" | "feasibility">;

/** A service's part in a node's life; its constraints are `constraints`. */
export type ServiceLifecycle = Pick<NodeLifecycle, "stateTaints" | "steps">;

/** A service's descriptor, its name kept as written: the registry's names are the type ServiceName (./registry.ts). */
export function openkeelService<const N extends string>(service: OpenKeelService<N>): OpenKeelService<N> {
  return service;
}

/** The values of a release of the Plan, or undefined when the stack does not install it. */
export function releaseValues(plan: Plan, unit: string): Obj | undefined {
  const u = findUnit(plan, unit);
  return u?.kind === "HelmRelease" ? (u.values as Obj) : undefined;
}
