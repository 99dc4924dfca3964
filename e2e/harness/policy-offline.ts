// `npm run policy` for a program with an e2e mutation (e2e/fixtures/e2e-mutation.ts): the same
// library (offline-engine/mock-run.ts + offline-engine/policy-run.ts: the program under the runtime mocks,
// the real pack through the Analyzer protocol), the same output lines. `npm run policy` itself takes
// no program; config mutations use it directly.
// Usage: tsx policy-offline.ts <project dir> <stack> ; OPENKEEL_E2E_MUTATION as for the fixture.
import * as path from "node:path";
import { runProgram, type Program } from "../../offline-engine/mock-run";
import { formatDiagnostic, judge, openPack } from "../../offline-engine/policy-run";
import { readStackConfig, stackFile } from "./project";

const [project, stack] = process.argv.slice(2);
const cfg = readStackConfig(stackFile(project, stack));
// the map the CLI hands a program and a pack: `openkeel:<key>` → string (objects as JSON)
const config = Object.fromEntries(Object.entries(cfg).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));

(async () => {
  const session = await openPack(stack, config);
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the program's path is known at run time only, and it is a CommonJS `export =` module, loaded as the language host loads `main`
    const program = require(path.resolve(project, "e2e-mutation.ts")) as Program;
    const result = await judge(stack, await runProgram(stack, config, program), session);
    console.log(`${stack}: ${result.resources} resources analyzed, ${result.mandatory.length} mandatory violation(s)`);
    for (const d of result.diagnostics) console.log(formatDiagnostic(d));
    process.exitCode = result.mandatory.length > 0 ? 1 : 0;
  } finally {
    session.close();
  }
})().catch((e) => {
  console.error(e);
  process.exitCode = 3;
});
