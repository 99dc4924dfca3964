// Longhorn's own parsers of its string settings, in TypeScript, to read our values the way
// longhorn-manager does (types/setting.go: UnmarshalTolerations/parseToleration and
// UnmarshalNodeSelector/validateAndUnmarshalLabel). Errors where Longhorn returns an error.
//
// A test oracle, independent of the lenient readers in platform/longhorn.ts on purpose;
// test/policy/oracles.test.ts proves both read every setting this repository writes alike.
import type { Toleration } from "../../config/roles";

const EFFECTS = new Set(["", "NoExecute", "NoSchedule", "PreferNoSchedule"]);
/** Older managers refuse toleration keys containing this (util.DefaultKubernetesTolerationKey). */
export const LONGHORN_RESERVED_TOLERATION_SUBSTRING = "kubernetes.io";

export function parseLonghornTolerations(setting: string): Toleration[] {
  const s = setting.replaceAll(" ", "");
  if (s === "") return [];
  return s.split(";").map((entry) => {
    const parts = entry.split(":");
    if (parts.length !== 2) throw new Error(`failed to parse toleration ${entry}: missing key/value and effect pair`);
    const pair = parts[0].split("=");
    let t: Toleration;
    if (pair.length === 1) t = { key: parts[0], operator: "Exists" };
    else if (pair.length === 2) t = { key: pair[0], value: pair[1], operator: "Equal" };
    // Longhorn's switch has no default: key, value and operator stay empty.
    else t = { key: "" };
    if (!EFFECTS.has(parts[1])) throw new Error(`invalid effect: ${parts[1]}`);
    if (parts[1] !== "") t.effect = parts[1] as Toleration["effect"];
    return t;
  });
}

export function parseLonghornNodeSelector(setting: string): Record<string, string> {
  const out: Record<string, string> = {};
  const s = setting.trim();
  if (s === "") return out;
  for (const label of s.split(";")) {
    const parts = label.trim().split(":");
    if (parts.length !== 2) throw new Error(`invalid label ${label}: should contain the separator ':'`);
    out[parts[0].trim()] = parts[1].trim();
  }
  return out;
}
