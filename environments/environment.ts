// What an environment is to the rest of the repository: what it asks of the stack config beyond the
// schema, the traits it hands the layers below, the checks of the settings only it reads, the
// platform components it installs (in install order), its pod network, and the node-level
// configuration it renders. environments/registry.ts lists them.
import type { LossKind } from "../placement/failure-table";
import type { ClusterConfig } from "../config/cluster";
import type { Check, ConfigIssue } from "../config/problems";
import type { LoadedConfig } from "../config/schema";
import type { NodeLevelConfig, Plan } from "../plan/plan";
import type { HostContract, HostProvision } from "../plan/host";
import type { PlatformComponent } from "../platform/component";
import type { StackStorage } from "../platform/context";
import type { EnvironmentTraits } from "../topology/environment";
import type { Topology } from "../topology/topology";

export interface Environment {
  /** What the layers below environments/ need to know of it (topology/environment.ts). */
  traits: EnvironmentTraits;
  /** What it asks of a stack config beyond the schema: refused keys, required keys (worded like schema issues). */
  configIssues(cfg: LoadedConfig): ConfigIssue[];
  /** Plan checks of the settings this environment reads, or refuses. */
  checks(cfg: LoadedConfig, topo: Topology): Check[];
  /**
   * The losses its stacks must survive (lifecycle/failure-domains.ts): a fatal one is a plan check error.
   * @default none: the table is drawn, nothing refused
   */
  mustSurvive?(cfg: LoadedConfig): LossKind[];
  /** Every platform component it may install, in install order. */
  platform: readonly PlatformComponent[];
  /**
   * Whether a stack installs a component of the list.
   * @default every component of `platform`
   */
  installs?(cfg: LoadedConfig, component: PlatformComponent): boolean;
  /**
   * The component whose unit is the pod network, when the environment installs one.
   * @default none: the cluster brings its own (kind's kindnet)
   */
  podNetwork?: PlatformComponent;
  /** Its storage: the strict-local class the releases ask for, the classes it provides itself. */
  storage(cfg: LoadedConfig): StackStorage;
  /** The cluster the stack deploys to (openkeel:cluster, or the environment's default). */
  cluster(cfg: LoadedConfig): ClusterConfig;
  /** Node-level configuration (Talos patches and schematics, the kind cluster) from the same inventory. */
  nodeConfig(cfg: LoadedConfig, topo: Topology): NodeLevelConfig;
  /** What the host of each node has before any pod runs: its OS, and what is rendered for it (the host contract, placement/host.ts). */
  hostProvisions(plan: Plan, topo: Topology): Map<string, HostProvision[]>;
  /**
   * What its own parts need of the hosts (kind's own pod network, for every pod).
   * @default nothing: its platform components say what they need
   */
  host?(cfg: LoadedConfig): Partial<HostContract>;
}

/** The platform components a stack installs, in install order. */
export function installed(env: Environment, cfg: LoadedConfig): PlatformComponent[] {
  return env.platform.filter((c) => env.installs?.(cfg, c) ?? true);
}
