// The one shape in which a problem reaches a person, whoever finds it (the config loader, a plan
// check, the values contract, a policy rule) and whoever prints it (the CLIs, the Pulumi program,
// the policy pack): `file: key path: what is wrong. Fix: how`.

type Severity = "error" | "warning";

/** One segment of a key path: a map key, a list index, or a list item matched by its `name`. */
export type PathSegment = string | number | { name: string };

export interface Problem {
  /** The file the problem is in (a stack file, usually); absent when the printer knows it. */
  file?: string | undefined;
  /** Where in that file: `openkeel:nodes[2].roles[0]`, or the segments of such a path. */
  path?: string | readonly PathSegment[] | undefined;
  /** A plan check's stable identifier, e.g. `control-plane-count`; printed with the level. */
  code?: string;
  /** `error` (the default) stops the run; a `warning` is printed and the run goes on. */
  level?: Severity;
  message: string;
  fix: string;
  /** Why it matters, where the message alone does not say (the preview's findings). */
  reason?: string | undefined;
}

/**
 * What a rule over a loaded config finds (an environment's config rules, environments/): where, as
 * a path of the config, and `what. Fix: how`; the loader words it as a Problem (config/load.ts).
 */
export interface ConfigIssue {
  path: (string | number)[];
  message: string;
}

/** A plan check: a problem with its level and code. */
export interface Check extends Problem {
  level: Severity;
  code: string;
}

export const isError = (p: Problem): boolean => (p.level ?? "error") === "error";

/** A plan check, as opposed to a problem of the stack's values themselves (the schema's, the values contract's). */
export const isCheck = (p: Problem): p is Check => p.code !== undefined && p.level !== undefined;

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;
/** The root of a path is written as it is (`openkeel:nodes`) unless it would read as a path itself. */
const PLAIN_ROOT = /^[^.[\]"]+$/;

/**
 * `["openkeel:nodes", 2, "labels", "network.openkeel.io/external-nic"]` →
 * `openkeel:nodes[2].labels["network.openkeel.io/external-nic"]`; list items matched by name read
 * `containers[name=api]`. `empty` is what an empty path reads as.
 */
export function formatPath(path: readonly PathSegment[], empty = ""): string {
  if (path.length === 0) return empty;
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (typeof seg === "object") out += `[name=${seg.name}]`;
    else if (out === "" && PLAIN_ROOT.test(seg)) out = seg;
    else if (PLAIN_KEY.test(seg)) out += out === "" ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** A problem's key path as printed. */
export const problemPath = (p: Problem): string => (typeof p.path === "string" ? p.path : formatPath(p.path ?? []));

/** `file: path: [level [code]: ]message[. Why: reason]. Fix: fix`, leaving out what is not known. */
export function formatProblem(p: Problem): string {
  const where = [p.file, problemPath(p)].filter((x) => x !== undefined && x !== "").join(": ");
  const check = p.code !== undefined ? `${p.level ?? "error"} [${p.code}]: ` : "";
  return `${where ? `${where}: ` : ""}${check}${p.message}.${p.reason ? ` Why: ${p.reason}.` : ""} Fix: ${p.fix}`;
}

/**
 * A stack file (or Pulumi config) the loader refuses: printed as its problems, one line each,
 * without a stack trace; exit code 2. Only the loader throws it; planning returns its problems.
 */
export class ConfigError extends Error {
  readonly problems: Problem[];
  constructor(problems: Problem[]) {
    super(problems.map(formatProblem).join("\n"));
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/** The value at a key path of plain data, or undefined. */
export function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg as string];
  }
  return cur;
}
