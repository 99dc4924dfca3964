// vitest globalSetup: one temporary folder for the whole run, and the pinned tools in .tools/ (and Kube-OVN's CRDs), so that `npx vitest run` on a fresh clone works as
// `npm test` does (which already installed them first: then this takes milliseconds), and, where
// no offline schema folder is (a GitHub runner has no ../shared), the folder of the schemas the
// upstream catalogs lack, built once from their pinned URLs (tools/upstream-schemas.ts). A failure
// is reported, not thrown: the suites that need a tool or a schema then fail with its message.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { installValidators } from "../../tools/install";
import { offlineSchemasDir } from "../../tools/kubeconform";
import { ensureUpstreamSchemas, UPSTREAM_DESCRIPTION } from "../../tools/upstream-schemas";

/** Set once the run's setup is done: each project of vitest.config.mts runs the global setup again, in this process. */
const DONE = Symbol.for("openkeel.tests.setup");

export default async function setup(): Promise<() => void> {
  const run = globalThis as { [DONE]?: true };
  if (run[DONE]) return () => {};
  run[DONE] = true;
  // The workers and what they spawn make their temporary folders in it (TMPDIR, inherited): a
  // worker is stopped by a signal, so a folder it made is removed here, with the run's.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-tests-"));
  process.env.TMPDIR = tmp;
  const teardown = () => fs.rmSync(tmp, { recursive: true, force: true });
  try {
    await installValidators({ log: (line) => console.log(`[tools] ${line}`) });
  } catch (e) {
    console.error(`[tools] ${(e as Error).message}`);
  }
  const offline = offlineSchemasDir();
  if (offline) {
    console.log(`[schemas] offline: ${offline}`);
    return teardown;
  }
  try {
    const { dir, built } = await ensureUpstreamSchemas();
    console.log(`[schemas] no offline folder: upstream (${UPSTREAM_DESCRIPTION}); ${built ? "built" : "reusing"} ${dir}`);
  } catch (e) {
    console.error(`[schemas] no offline folder, and the upstream ones cannot be had: ${(e as Error).message}`);
  }
  return teardown;
}
