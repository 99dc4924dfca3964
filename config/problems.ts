// User-facing problems: one line per problem that names the file, the key path, what is wrong
// and how to fix it. Scripts print them and exit; they never surface as stack traces.

export interface Problem {
  /** The file the problem is in (a stack file, usually). */
  file: string;
  /** The config key path, e.g. `openkeel:nodes[2].roles[0]`. Empty for file-level problems. */
  path: string;
  message: string;
  fix: string;
}

export function formatProblem(p: Problem): string {
  const where = p.path ? `${p.file}: ${p.path}` : p.file;
  return `${where}: ${p.message}. Fix: ${p.fix}`;
}

/** A stack file (or Pulumi config) that cannot be turned into a valid Config. Exit code 2. */
export class ConfigError extends Error {
  readonly problems: Problem[];
  constructor(problems: Problem[]) {
    super(problems.map(formatProblem).join("\n"));
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/** `["openkeel:nodes", 2, "roles", 0]` → `openkeel:nodes[2].roles[0]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out === "" ? String(seg) : `.${String(seg)}`;
  }
  return out;
}
