// Helpers of the node-lifecycle and cluster-binding suites.
import { PROJECT } from "../../config/schema";

export { mutatedConfig, shippedConfig, shippedRaw, tempStacks } from "./stacks";

/** A raw config as a stack file's `config:` map: every key in the project's namespace. */
export function PROJECT_KEY(raw: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [`${PROJECT}:${k}`, v]));
}
