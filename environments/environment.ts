// What an environment is to the rest of the repository: the checks of the settings only it reads,
// the platform components it installs (in install order), its pod network, and the node-level
// configuration it renders. environments/registry.ts lists them.
import type { ClusterConfig } from "../config/cluster";
import type { Check } from "../config/problems";
import type { LoadedConfig } from "../config/schema";
import type { NodeLevelConfig } from "../plan/plan";
import type { PlatformComponent } from "../platform/component";
import type { Topology } from "../topology/topology";

/** A StorageClass the cluster has without this repository creating it. */
export interface ProvidedStorageClass {
  name: string;
  provisioner: string;
  /** Where the fact comes from (repo@tag path). */
  source: string;
}

/** The storage an environment offers the releases. */
export interface EnvironmentStorage {
  /** The class of the volumes that replicate their own data: one replica on the pod's node (D5). */
  strictLocalClass: string;
  /** Classes the environment provides itself (kind's `standard`). */
  provided: ProvidedStorageClass[];
}

export interface Environment {
  /** Plan checks of the settings this environment reads, or refuses. */
  checks(cfg: LoadedConfig, topo: Topology): Check[];
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
  storage(cfg: LoadedConfig): EnvironmentStorage;
  /** The cluster the stack deploys to (openkeel:cluster, or the environment's default). */
  cluster(cfg: LoadedConfig): ClusterConfig;
  /** Node-level configuration (Talos patches and schematics, the kind cluster) from the same inventory. */
  nodeConfig(cfg: LoadedConfig, topo: Topology): NodeLevelConfig;
}

/** The platform components a stack installs, in install order. */
export function installed(env: Environment, cfg: LoadedConfig): PlatformComponent[] {
  return env.platform.filter((c) => env.installs?.(cfg, c) ?? true);
}
