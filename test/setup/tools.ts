// vitest globalSetup: the pinned tools in .tools/, so that `npx vitest run` on a fresh clone works as
// `npm test` does (whose pretest already installed them: then this takes milliseconds). A failure is
// reported, not thrown: the suites that need a tool then fail with its message and the fix.
import { ensureTools } from "../../tools/tools";

export default async function setup(): Promise<void> {
  try {
    await ensureTools({ log: (line) => console.log(`[tools] ${line}`) });
  } catch (e) {
    console.error(`[tools] ${(e as Error).message}`);
  }
}
