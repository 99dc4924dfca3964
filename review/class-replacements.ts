// The priority classes of `npm run plan` and `npm run render` against the stack's committed state:
// the commit the upgrade check compares the pins with (review/committed-pins.ts: --base, the last
// deployed commit deployed/<stack>, else HEAD), read from that commit's render of the stack. A class
// whose value or preemption policy changes is deleted and created again by `pulumi up`, and the pods
// that use it keep their old priority until they are re-created (platform/priority-classes.ts): a
// warning with the fix, since `pulumi up` can do it; the preview says the same between its renders.
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import type { Check } from "../config/problems";
import type { K8sObject, Plan } from "../plan/plan";
import { isPriorityClass, priorityClassReplacements } from "../platform/priority-classes";
import { objectFileName } from "../render/render";
import { INDEX_FILE, readIndex, RenderedFormatError, yamlDocuments } from "../render/rendered";
import { committedState } from "./committed-pins";

export interface StackClassReplacements {
  stack: string;
  /** The committed state compared with; undefined when there was none. */
  where?: string;
  checks: Check[];
}

/** Files of a commit by path, read in one `git cat-file --batch`; a path the commit lacks is absent. */
function filesAt(repo: string, commit: string, paths: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (paths.length === 0) return out;
  const r = spawnSync("git", ["-C", repo, "cat-file", "--batch"], { input: paths.map((p) => `${commit}:${p}\n`).join(""), maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) return out;
  const buf = r.stdout;
  let at = 0;
  for (const p of paths) {
    const eol = buf.indexOf(10, at);
    const header = buf.subarray(at, eol).toString("utf8").split(" ");
    at = eol + 1;
    if (header[1] !== "blob") continue;
    const size = Number(header[2]);
    out.set(p, buf.subarray(at, at + size).toString("utf8"));
    at += size + 1;
  }
  return out;
}

/** The PriorityClasses of `plan` as the committed render at `commit` holds them (`dir`: that render's folder in the repository). */
function committedClasses(repo: string, commit: string, dir: string, plan: Plan): K8sObject[] {
  const indexFile = `${dir}/${INDEX_FILE}`;
  const text = filesAt(repo, commit, [indexFile]).get(indexFile);
  if (text === undefined) return [];
  let files: string[];
  try {
    const wanted = new Set(
      plan.phases.flatMap((ph) => ph.units).flatMap((u) => (u.kind === "Manifests" ? u.objects.filter(isPriorityClass).map(objectFileName) : [])),
    );
    const index = readIndex(text, `${commit.slice(0, 12)}:${indexFile}`);
    files = index.phases.flatMap((ph) => ph.units).flatMap((u) => (u.kind === "Manifests" ? u.objects.filter((f) => wanted.has(path.posix.basename(f))) : []));
  } catch (e) {
    // a render this code cannot read (another schema) has nothing to compare with
    if (e instanceof RenderedFormatError) return [];
    throw e;
  }
  const bodies = filesAt(
    repo,
    commit,
    files.map((f) => `${dir}/${f}`),
  );
  return [...bodies.values()].flatMap((t) => yamlDocuments(t) as K8sObject[]).filter((o) => o !== null && typeof o === "object" && isPriorityClass(o));
}

/**
 * Per stack, the classes this program replaces against the stack's committed state in `repo` (the
 * work tree of the stacks folder; undefined: none, nothing to compare with). `renderedDir`: where
 * the renders are committed in that repository.
 */
export function classReplacements(repo: string | undefined, plans: readonly Plan[], base?: string, renderedDir = "rendered"): StackClassReplacements[] {
  return plans.map((plan) => {
    const state = repo === undefined ? undefined : committedState(repo, plan.stack, base);
    if (repo === undefined || !state) return { stack: plan.stack, checks: [] };
    const deployed = committedClasses(repo, state.commit, `${renderedDir}/${plan.stack}`, plan);
    return { stack: plan.stack, where: state.where, checks: priorityClassReplacements(plan, deployed) };
  });
}
