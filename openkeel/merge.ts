// Helm's merge of user values over chart values, for the stack's raw `values` (merged last, § 5.1):
// maps merge key by key, anything else replaces, and null removes a key.
import { isSecretRef } from "../plan/plan";
import { isPlainObject } from "../config/plain";

/** A map the merge descends into: a secret's reference is a leaf. */
function isMap(v: unknown): v is Record<string, unknown> {
  return isPlainObject(v) && !isSecretRef(v);
}

export function mergeValues(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === null) delete out[k];
    else if (isMap(v) && isMap(out[k])) out[k] = mergeValues(out[k] as Record<string, unknown>, v);
    else out[k] = isMap(v) ? mergeValues({}, v) : structuredClone(v);
  }
  return out;
}
