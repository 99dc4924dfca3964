// The descriptor of a component, and how a stack's list of them becomes the component phases of its
// Plan. A component says everything about itself in its own module: its units per phase, the
// namespaces it runs in, the labels it needs on nodes, its part in a node's life, how the placement
// report reads its workloads, its plan checks and its pins. An environment lists the platform
// components it installs, in install order (environments/), and nothing else; OpenKeel itself is
// one more entry of the same shape, installed last (openkeel/descriptor.ts).
import type { Check, Problem } from "../config/problems";
import type { Config } from "../config/schema";
import type { z } from "zod";
import type { PlatformConfig, SettingsDeclaration } from "../config/platform";
import type { TalosDeclaration } from "../config/talos";
import type { NodeLifecycle } from "../lifecycle/contributor";
import type { KindOffers } from "../plan/needs";
import type { NodeMetadataContributor } from "../plan/node-roles";
import { manifestsUnit, phase, type K8sObject, type ManifestsUnit, type PhaseName, type Plan, type Unit } from "../plan/plan";
import type { DesignRow } from "../placement/design-row";
import type { DocsRow } from "./docs-row";
import type { PlacementCheck } from "../placement/report";
import { mergeHostContracts, type HostContract, type HostInstall } from "../plan/host";
import { upstreamWorkloads, type ChartWorkloads, type ObjectReader, type Readers, type UnitReader, type UpstreamWorkload } from "../placement/workloads";
import type { Topology } from "../topology/topology";
import { pinnedManifestUnit, type Contents, type KindOwner, type LoadBalancerProvider, type NodeRemediator, type StackContext } from "./context";
import type { ChartPin, ImagePin, ManifestPin, OlmPackagePin } from "./versions";
import type { HostFactsRow } from "./host-facts";
import { priorityClassesUnit, type UpstreamPriorityClass } from "./priority-classes";

/** The phases components fill, in order: the platform's, then OpenKeel's (the node-roles phase is the inventory's). */
const COMPONENT_PHASES = ["crds-operators", "platform", "platform-config", "openkeel-infra", "openkeel"] as const satisfies readonly PhaseName[];
type ComponentPhase = (typeof COMPONENT_PHASES)[number];

/**
 * What the environment hands a component's builder. What its units wait for is derived from what
 * their objects use (plan/needs.ts), not wired here; the pod network's unit is handed over for the
 * one edge no object shows (Multus' daemon delegates to its CNI configuration).
 */
interface Wiring {
  /** The pod network (the CNI's unit), in environments that install one. */
  podNetwork?: Unit | undefined;
  /**
   * Where a component reports what the stack's values break while it builds its units (OpenKeel's
   * values contract): the stack's mistakes, each naming its key; no Plan is applied while there are any.
   */
  problems: Problem[];
}

type Pin = ChartPin | ManifestPin | ImagePin | OlmPackagePin;

/**
 * The workloads of one pinned upstream manifest, as it ships them (its release's choice, not ours:
 * the manifest takes no values). test/platform/upstream-workloads.test.ts holds them equal to the file of
 * the mirror, so an upgrade that moves them fails there first.
 */
export interface UpstreamManifest {
  pin: ManifestPin;
  workloads: readonly UpstreamWorkload[];
}

/** A node agent of a component (its placement name, `<unit>/<component>`) and what it installs on the host of every node it runs on, as read upstream. */
export interface NodeAgentInstall {
  component: string;
  facts: HostFactsRow;
}

/** The placement reader of a unit that applies these manifests: every workload of each, as a component. */
export function upstreamReader(...manifests: UpstreamManifest[]): UnitReader {
  return upstreamWorkloads(manifests.flatMap((m) => m.workloads));
}

export interface PlatformComponent extends NodeRemediator, KindOwner, LoadBalancerProvider {
  /** As the docs and the design name it, e.g. `Longhorn`. */
  name: string;
  /** The pins of platform/versions.ts it installs. */
  pins: readonly Pin[];
  /**
   * Its block of `openkeel:platform`, when it has settings: its key and schema, handed to the stack
   * loader (environments/registry.ts); its module reads the block with settingsOf. Setting it where
   * the component is not installed is an error.
   * @default none: the component has no block of `openkeel:platform`
   */
  settings?: SettingsDeclaration;
  /**
   * Its keys of `openkeel:talos`, when its pods need something of the Talos machines (a disk, a
   * kernel module): their schemas, handed to the stack loader (environments/registry.ts), and their
   * rules against the nodes' roles, which a Talos environment applies; read back with talosKeysOf.
   * @default none
   */
  talos?: TalosDeclaration;
  /**
   * Namespaces its pods run in, created first (platform-namespaces) with their pod-security level.
   * @default none: its pods run in namespaces not created here (kube-system, or those its upstream manifest holds)
   */
  namespaces?(ctx: StackContext): K8sObject[];
  /**
   * Labels and annotations it needs on nodes, applied by the node-roles phase.
   * @default none
   */
  nodeMetadata?(ctx: StackContext): NodeMetadataContributor;
  /**
   * Its part in a node's life: the requests it writes about nodes, whether it drains them, the steps a transition needs (lifecycle/).
   * @default none
   */
  lifecycle?: NodeLifecycle;
  /**
   * The workloads of the pinned upstream manifests it applies, as they ship them (every manifest of
   * `pins` that holds a Deployment, DaemonSet or StatefulSet has its entry): its unit readers place
   * them with upstreamReader.
   * @default none: it applies no upstream manifest with workloads
   */
  upstream?: readonly UpstreamManifest[];
  /**
   * Per chart of `pins` (by chart name): which component of its reader stands for each workload the
   * chart renders at the pin. test/integration/placement/chart-placement.test.ts renders the chart (`helm template`) with
   * every stack's values and holds the model to it; a workload missing here fails it, named.
   * @default none: it installs no Helm chart
   */
  charts?: Readonly<Record<string, ChartWorkloads>>;
  /**
   * What each of its charts and pinned manifests holds, by its unit's name, then by version (the pin
   * and the predecessor a pin bump comes from): what its units offer and use beyond the Plan's
   * objects (plan/needs.ts), held to the mirror's files by test/integration/plan/unit-content.test.ts.
   * @default none: it applies no chart or manifest
   */
  artifacts?: Readonly<Record<string, Contents>>;
  /**
   * What an object of one of its custom kinds offers other units once its controller has acted on
   * it, by `<group>/<Kind>` (plan/needs.ts KindOffers): the kind's meaning is the component's, not the Plan's.
   * @default none: an object of its kinds offers nothing but itself
   */
  kindOffers?: KindOffers;
  /**
   * The priority classes its upstream chart or manifest creates with itself, with their values as
   * they ship them: § 2's order ranks ours below them (platform/priority-classes.ts).
   * @default none: its upstream creates no priority class
   */
  priorityClasses?: readonly UpstreamPriorityClass[];
  /**
   * Its units by phase, each in install order (the docs' order; a unit may use only what the units
   * before it offer, in this phase or an earlier one: plan/needs.ts).
   */
  units(ctx: StackContext, wiring: Wiring): Partial<Record<ComponentPhase, Unit[]>>;
  /** How the placement report reads its units: every unit it writes must be claimed. */
  readers: Readers;
  /**
   * Its own placement checks, which the report runs beside its generic ones.
   * @default none: the report's generic checks only
   */
  placementChecks?: readonly PlacementCheck[];
  /**
   * The design's § 2 rows of its workloads, transcribed from the design, not from its code (test/placement/placement-matrix.test.ts).
   * @default none: a component whose workloads the placement report reads must have rows there
   */
  design?: readonly DesignRow[];
  /**
   * Its rows of the table of docs/platform.md, which npm run docs writes (platform/docs-row.ts).
   * @default none, which npm run docs refuses for a platform component (OpenKeel's releases have docs/openkeel-values.md)
   */
  docs?: readonly DocsRow[];
  /**
   * Plan checks of its settings against the rest of the stack; `installed` are the components the
   * stack installs, this one among them (OpenKeel hands them to its services' plan checks).
   * @default none
   */
  checks?(cfg: Config, topo: Topology, installed: readonly PlatformComponent[]): Check[];
  /**
   * What its workloads need of the host of every node they may run on, and the plugins every pod
   * sandbox runs (plan/host.ts; the host contract, placement/host.ts); what its node agents install
   * there is `hostInstalls`.
   * @default nothing
   */
  host?(ctx: StackContext): Partial<Omit<HostContract, "installs">>;
  /**
   * What its node agents install on the host of every node they run on (the CNI plugins an init
   * step copies), each a row of host facts read upstream at a version of its pins: the host contract
   * takes them beside what `host` says (hostContractOf), and test/placement/host-contract.test.ts
   * holds each row's readAt to its pin.
   * @default none: its agents install nothing on the hosts
   */
  hostInstalls?: readonly NodeAgentInstall[];
}

export const PLATFORM_NAMESPACES_UNIT = "platform-namespaces";

/**
 * The namespaces of the platform components. Helm never creates them (components/), so their
 * pod-security labels are there before the first pod. Deleting a namespace deletes everything in
 * it, Longhorn's volumes included: protected.
 */
function namespacesUnit(namespaces: K8sObject[]): ManifestsUnit {
  return manifestsUnit(PLATFORM_NAMESPACES_UNIT, "openkeel:platform:Namespaces", namespaces, { protect: true });
}

/**
 * The component phases of a Plan: the namespaces first, then every component's units phase by
 * phase in the stack's order (its environment's platform, then OpenKeel). The pod network's units
 * are built first so that the others can wait for them, and take their place in that order like
 * every other component's. What the stack's values break comes back, the stack's to fix.
 */
export function addComponents(plan: Plan, ctx: StackContext, components: readonly PlatformComponent[], podNetwork?: PlatformComponent): Problem[] {
  const namespaces = namespacesUnit(components.flatMap((c) => c.namespaces?.(ctx) ?? []));
  const priorityClasses = priorityClassesUnit();
  const problems: Problem[] = [];
  // the pod network is built first, so that the others' builders can name its unit
  const network = podNetwork?.units(ctx, { problems });
  const wiring: Wiring = { podNetwork: network?.["crds-operators"]?.[0], problems };
  const built = components.map((c) => (c === podNetwork && network ? network : c.units(ctx, wiring)));
  // before every component: the first of them to use a class waits for it (environments/priority.ts checks)
  phase(plan, "crds-operators").units.push(priorityClasses);
  if (namespaces.objects.length > 0) phase(plan, "crds-operators").units.push(namespaces);
  for (const name of COMPONENT_PHASES) phase(plan, name).units.push(...built.flatMap((units) => units[name] ?? []));
  return problems;
}

/**
 * An operator installed from its pinned upstream manifest (which holds its CRDs, and places the
 * operator where its release does: `workloads`), configured by one CR this repository writes and
 * the placement report reads: KubeVirt, CDI.
 */
export function manifestOperator(
  name: string,
  pin: ManifestPin,
  operator: { name: string; type: string; workloads: readonly UpstreamWorkload[]; contents: Contents },
  cr: { unit(ctx: StackContext): ManifestsUnit; readers: Record<string, ObjectReader> },
): PlatformComponent {
  const upstream: UpstreamManifest = { pin, workloads: operator.workloads };
  return {
    name,
    pins: [pin],
    upstream: [upstream],
    artifacts: { [operator.name]: operator.contents },
    units: (ctx) => ({
      // It holds the CRDs: deleting them deletes every object of their kinds (every VM, every DataVolume).
      "crds-operators": [pinnedManifestUnit(operator.name, operator.type, pin, operator.contents, { protect: true })],
      platform: [cr.unit(ctx)],
    }),
    readers: { units: { [operator.type]: upstreamReader(upstream) }, objects: cr.readers },
  };
}

/** The node metadata every component of the list contributes, in its order. */
export function nodeMetadataOf(ctx: StackContext, components: readonly PlatformComponent[]): NodeMetadataContributor[] {
  return components.flatMap((c) => (c.nodeMetadata ? [c.nodeMetadata(ctx)] : []));
}

/** The host contract of the components of the list (each component's needs and installs, in its order). */
export function hostContractOf(ctx: StackContext, components: readonly PlatformComponent[]): HostContract {
  const installs = (c: PlatformComponent): HostInstall[] =>
    (c.hostInstalls ?? []).map(({ component, facts }) => ({ component, provides: facts.provides, by: facts.by }));
  return mergeHostContracts(components.flatMap((c) => [c.host?.(ctx) ?? {}, { installs: installs(c) }]));
}

/** What objects of the kinds of the components of the list offer; a kind is one component's, so a second claim is a bug. */
export function kindOffersOf(components: readonly PlatformComponent[]): KindOffers {
  const out: Record<string, NonNullable<KindOffers[string]>> = {};
  for (const c of components)
    for (const [kind, offers] of Object.entries(c.kindOffers ?? {})) {
      if (Object.hasOwn(out, kind)) throw new Error(`${c.name} claims what objects of ${kind} offer, which another component already does`);
      if (offers) out[kind] = offers;
    }
  return out;
}

/** The priority classes the upstreams of the components of the list create, in its order; a class is one component's, so a second claim is a bug. */
export function upstreamPriorityClassesOf(components: readonly PlatformComponent[]): UpstreamPriorityClass[] {
  const out: UpstreamPriorityClass[] = [];
  for (const c of components)
    for (const pc of c.priorityClasses ?? []) {
      if (out.some((o) => o.name === pc.name)) throw new Error(`${c.name} declares the priority class ${pc.name}, which another component already does`);
      out.push(pc);
    }
  return out;
}

/** The node-lifecycle contributions of the components of the list, in its order. */
export function lifecyclesOf(components: readonly PlatformComponent[]): NodeLifecycle[] {
  return components.flatMap((c) => (c.lifecycle ? [c.lifecycle] : []));
}

/**
 * A component's block of a stack's `openkeel:platform`, as the loader gave it (read with the same
 * schema); a config built without its declaration gets the schema's defaults.
 */
export function settingsOf<S extends z.ZodType>(platform: PlatformConfig, declaration: { key: string; schema: S }): z.output<S> {
  return (declaration.key in platform ? platform[declaration.key] : declaration.schema.parse(undefined)) as z.output<S>;
}

/** Whether a settings block says anything (the schema fills empty blocks in). */
function isSet(value: unknown): boolean {
  if (value === undefined) return false;
  if (value === null || typeof value !== "object") return true;
  return Object.values(value).some(isSet);
}

/** The components' own checks, and settings of a component this stack does not install. */
export function platformChecks(cfg: Config, topo: Topology, components: readonly PlatformComponent[]): Check[] {
  const checks = components.flatMap((c) => c.checks?.(cfg, topo, components) ?? []);
  const claimed = new Set(components.map((c) => c.settings?.key));
  for (const { key } of cfg.platformCatalog) {
    if (claimed.has(key) || !isSet(cfg.platform[key])) continue;
    checks.push({
      level: "error",
      code: "platform-key-environment",
      message: `configures a platform component this ${cfg.environment} stack does not install`,
      fix: `remove openkeel:platform.${key} from this stack`,
      path: `openkeel:platform.${key}`,
    });
  }
  return checks;
}
