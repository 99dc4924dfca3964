// The values contract: a strict zod schema of everything this repository emits into OpenKeel
// values, per release. Every release's final values (raw stack overrides included) must pass it,
// because a chart silently ignores a key it does not read: a nodeSelector one level too high
// leaves a component unplaced without any error (a peer shipped exactly that bug).
import { z } from "zod";
import { valueAt, type Problem } from "../config/problems";
import type { LabelProfile } from "../config/roles";
import { isSelfPlaced } from "./components";
import type { OpenKeelService } from "./service";
import { globalSchema } from "./global";
import { serviceExposureSchema } from "./endpoints";
import { nodeSelectorSchema } from "../config/k8s";
import { placementValueSchema, SCHEDULING_FIELDS } from "../config/placement";

export interface ReleaseContract {
  schema: z.ZodType;
  /** Component names, for hints. */
  components: string[];
  /** Components that are DaemonSets (no replica count). */
  daemonSets: string[];
  /** Components the chart places by their own `<component>.nodeSelector`, not by the helper (§ 5.2). */
  selfPlaced: string[];
  /** Where a component's placement lives, given the path of a block that names it. */
  placementPathOf(parent: readonly PropertyKey[]): string | undefined;
  /** Whether a path is a placement value (where scheduling fields belong). */
  isPlacement(parent: readonly PropertyKey[]): boolean;
}

/** A problem with a release's values: its path is the offending key's inside the values. */
export type ContractIssue = Problem & { path: (string | number)[] };

const replicasSchema = z.number().int().min(0);

/** What a release's contract is built from: its service's components and top-level settings. */
type ServiceSpec = Pick<OpenKeelService, "components" | "settings">;

/**
 * Contracts depend only on the service's descriptor and the label profile, and a zod schema compiles its
 * fast path on first use: building each once keeps the plan of a stack, or of a thousand generated
 * stacks, from paying schema construction and compilation per release (npm run bench).
 */
const serviceContracts = new WeakMap<ServiceSpec, Map<LabelProfile, ReleaseContract>>();

export function memoizedByProfile<K extends object>(
  cache: WeakMap<K, Map<LabelProfile, ReleaseContract>>,
  key: K,
  profile: LabelProfile,
  build: () => ReleaseContract,
): ReleaseContract {
  let byProfile = cache.get(key);
  if (!byProfile) cache.set(key, (byProfile = new Map()));
  let contract = byProfile.get(profile);
  if (!contract) byProfile.set(profile, (contract = build()));
  return contract;
}

export function serviceContract(spec: ServiceSpec, profile: LabelProfile): ReleaseContract {
  return memoizedByProfile(serviceContracts, spec, profile, () => buildServiceContract(spec, profile));
}

function buildServiceContract(spec: ServiceSpec, profile: LabelProfile): ReleaseContract {
  const names = Object.keys(spec.components);
  const selfPlaced = names.filter((n) => isSelfPlaced(spec.components[n]));
  const placed = names.filter((n) => !selfPlaced.includes(n));
  // the placement of a component § 5.2 does not list leaves the values for its patch (./unlisted.ts)
  const patched = (n: string) => {
    const c = spec.components[n];
    return !isSelfPlaced(c) && c.unlisted !== undefined;
  };
  const placement = Object.fromEntries(
    placed.map((n) => {
      const schema = placementValueSchema(spec.components[n].optional === true);
      return [n, patched(n) ? schema.optional() : schema];
    }),
  );
  const blocks = Object.fromEntries(
    names.map((n) => {
      const c = spec.components[n];
      const own = {
        ...(isSelfPlaced(c) ? { nodeSelector: nodeSelectorSchema.optional() } : {}),
        ...(c.publicApi ? { service: serviceExposureSchema.optional() } : {}),
        // what the chart reads of an optional component whose placement it does not read
        ...(!isSelfPlaced(c) && c.unlisted?.switch ? { enabled: z.boolean().optional() } : {}),
      };
      return [n, z.strictObject({ ...(c.kind === "DaemonSet" ? {} : { replicas: replicasSchema.optional() }), ...own, ...(c.settings ?? {}) }).optional()];
    }),
  );
  return {
    schema: z.strictObject({
      global: globalSchema(profile),
      placement: placed.every(patched) ? z.strictObject(placement).optional() : z.strictObject(placement),
      ...blocks,
      ...(spec.settings ?? {}),
    }),
    components: placed,
    daemonSets: names.filter((n) => spec.components[n].kind === "DaemonSet"),
    selfPlaced,
    placementPathOf: (parent) => (parent.length === 1 && placed.includes(String(parent[0])) ? `placement.${String(parent[0])}` : undefined),
    isPlacement: (parent) => parent.length === 2 && parent[0] === "placement",
  };
}

/** Keys whose values are never echoed: the message would put the secret in CI logs. */
const SECRET_KEY = /secret|password|token/i;

function describe(value: unknown, path: readonly (string | number)[] = []): string {
  if (path.some((seg) => typeof seg === "string" && SECRET_KEY.test(seg)) && typeof value !== "object") return `a literal ${typeof value}`;
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a map";
  return `${typeof value} ${JSON.stringify(value)}`;
}

function unknownKey(contract: ReleaseContract, parent: (string | number)[], key: string): Omit<ContractIssue, "path"> {
  const list = contract.components.join(", ");
  const self = parent.length === 1 && contract.selfPlaced.includes(String(parent[0])) ? String(parent[0]) : undefined;
  if (self && (SCHEDULING_FIELDS as readonly string[]).includes(key)) {
    return {
      message: `${self} is placed by ${self}.nodeSelector alone: the chart tolerates every taint and reads no other scheduling field, so it would silently ignore this one`,
      fix: `remove it; choose the nodes of ${self} with ${self}.nodeSelector`,
    };
  }
  if (parent.length === 1 && parent[0] === "placement" && contract.selfPlaced.includes(key)) {
    return {
      message: `${key} is not placed by the chart helper: the chart reads only ${key}.nodeSelector and tolerates every taint, so it would silently ignore placement.${key}`,
      fix: `remove it; choose the nodes of ${key} with ${key}.nodeSelector (openkeel:services.<service>.values.${key}.nodeSelector)`,
    };
  }
  if ((SCHEDULING_FIELDS as readonly string[]).includes(key) && !contract.isPlacement(parent)) {
    const target = contract.placementPathOf(parent);
    return {
      message: `is a scheduling field at the wrong level: the chart reads ${key} only in a component's placement and would silently ignore it here`,
      fix: target ? `move it to ${target}.${key}` : `move it to placement.<component>.${key}, for one of: ${list}`,
    };
  }
  if (parent.length === 1 && parent[0] === "placement") {
    return { message: "is not a component of this chart", fix: `use one of: ${list}` };
  }
  const component = parent.length === 1 ? String(parent[0]) : undefined;
  if (key === "replicas" && component && contract.daemonSets.includes(component)) {
    return {
      message: `${component} is a DaemonSet (one pod per node of its role) and has no replica count`,
      fix: `remove it; choose its nodes with ${contract.selfPlaced.includes(component) ? `${component}.nodeSelector` : `placement.${component}`}`,
    };
  }
  if (key === "enabled" && contract.isPlacement(parent)) {
    return {
      message: `${String(parent[1])} cannot be switched off on its own`,
      fix: "remove it; turn the whole service off with openkeel:services.<service>.enabled: false",
    };
  }
  if (key === "nodeSelectorTerms" && parent[parent.length - 1] === "nodeAffinity") {
    return {
      message: "is one level too high: Kubernetes reads node selector terms only inside a required node affinity",
      fix: "move it to requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
    };
  }
  return { message: "unknown key", fix: "remove it or correct its spelling; docs/openkeel-values.md (the values contract) lists every key" };
}

/** Check a release's values; one issue per problem, with its path inside the values. */
export function checkValues(contract: ReleaseContract, values: unknown): ContractIssue[] {
  const result = contract.schema.safeParse(values);
  if (result.success) return [];
  return result.error.issues.flatMap((issue): ContractIssue[] => {
    const path = issue.path.map((p) => (typeof p === "number" ? p : String(p)));
    const got = valueAt(values, path);
    switch (issue.code) {
      case "unrecognized_keys":
        return issue.keys.map((key) => ({ path: [...path, key], ...unknownKey(contract, path, key) }));
      case "invalid_type":
        if (got === undefined) return [{ path, message: `is required (${issue.expected})`, fix: "add it back; remove the override that dropped it" }];
        if (issue.message && !issue.message.startsWith("Invalid input")) {
          const [message, fix] = issue.message.split(". Fix: ");
          return [{ path, message: `is ${describe(got, path)}: ${message}`, fix: fix ?? `write a ${issue.expected} here` }];
        }
        return [{ path, message: `must be ${issue.expected}, got ${describe(got, path)}`, fix: `write a ${issue.expected} here` }];
      case "invalid_value":
        return [{ path, message: `is ${describe(got, path)}, not one of ${issue.values.map(String).join(", ")}`, fix: "use one of the listed values" }];
      default: {
        const [message, fix] = issue.message.split(". Fix: ");
        return [{ path, message: issue.code === "custom" ? message : `is ${describe(got, path)}: ${message}`, fix: fix ?? "correct the value" }];
      }
    }
  });
}
