// vitest globalSetup: the pinned tools in .tools/ (and Kube-OVN's CRDs), so that `npx vitest run` on a fresh clone works as
// `npm test` does (whose pretest already installed them: then this takes milliseconds), and, where
// no offline schema folder is (a GitHub runner has no ../shared), the folder of the schemas the
// upstream catalogs lack, built once from their pinned URLs (tools/upstream-schemas.ts). A failure
// is reported, not thrown: the suites that need a tool or a schema then fail with its message.
import { installValidators } from "../../tools/install";
import { offlineSchemasDir } from "../../tools/kubeconform";
import { ensureUpstreamSchemas, UPSTREAM_DESCRIPTION } from "../../tools/upstream-schemas";

export default async function setup(): Promise<void> {
  try {
    await installValidators({ log: (line) => console.log(`[tools] ${line}`) });
  } catch (e) {
    console.error(`[tools] ${(e as Error).message}`);
  }
  const offline = offlineSchemasDir();
  if (offline) {
    console.log(`[schemas] offline: ${offline}`);
    return;
  }
  try {
    const { dir, built } = await ensureUpstreamSchemas();
    console.log(`[schemas] no offline folder: upstream (${UPSTREAM_DESCRIPTION}); ${built ? "built" : "reusing"} ${dir}`);
  } catch (e) {
    console.error(`[schemas] no offline folder, and the upstream ones cannot be had: ${(e as Error).message}`);
  }
}
