// Which environments exist, and what each one installs: the only place that knows them. A stack
// installs its environment's platform components, then OpenKeel (openkeel/descriptor.ts), one list.
import type { Environment as EnvironmentName, LoadedConfig, StackDeclarations } from "../config/schema";
import { OPENKEEL } from "../openkeel/descriptor";
import { OPENKEEL_SERVICES } from "../openkeel/services";
import type { PlatformComponent } from "../platform/component";
import { installed, type Environment } from "./environment";
import { kindLab } from "./kind-lab";
import { talosProduction } from "./talos-production";

export const ENVIRONMENTS: Record<EnvironmentName, Environment> = {
  "kind-lab": kindLab,
  "talos-production": talosProduction,
};

/** What a stack installs, in install order: its environment's platform components, then OpenKeel. */
export function stackComponents(env: Environment, cfg: LoadedConfig): PlatformComponent[] {
  return [...installed(env, cfg), OPENKEEL];
}

/**
 * Every component some environments may install (all of them by default), in the same order: what
 * a render of theirs can hold, for reading and judging one without its stack file.
 */
export function environmentComponents(...environments: EnvironmentName[]): PlatformComponent[] {
  const names = environments.length > 0 ? environments : (Object.keys(ENVIRONMENTS) as EnvironmentName[]);
  return [...new Set(names.flatMap((e) => ENVIRONMENTS[e].platform)), OPENKEEL];
}

/**
 * What every stack file is read against (config/load.ts): the OpenKeel services, and the settings
 * blocks of every component some environment installs (a block its stack's environment does not
 * install is a plan error: platformChecks, platform/component.ts).
 */
export const STACK_DECLARATIONS: StackDeclarations = {
  services: OPENKEEL_SERVICES,
  platform: environmentComponents().flatMap((c) => (c.settings ? [c.settings] : [])),
  talos: environmentComponents().flatMap((c) => (c.talos ? [c.talos] : [])),
};
