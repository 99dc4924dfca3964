// The program under the runtime mocks: the recording runner lives in offline-engine/mock-run.ts,
// shared with `npm run policy`.
import { beforeAll } from "vitest";
import program from "../../index";
import { runProgram as runRecorded, type Program, type ProgramRun } from "../../offline-engine/mock-run";
import { pulumiConfigOf, shippedRaw } from "./stacks";

export { MOCK_SECRET_VALUE, programError, type ProgramRun } from "../../offline-engine/mock-run";

/** A run whose recorded properties the suites read by key path (`inputs.metadata.labels`) without narrowing. */
export type LooseRun = ProgramRun<Record<string, any>>;

/** The program run under the mocks, every registration recorded (offline-engine/mock-run.ts). */
export function runProgram(stack: string, config: Record<string, string>, program: Program): Promise<LooseRun> {
  return runRecorded(stack, config, program);
}

/** The program's run on a shipped stack under the mocks, made once before the suite's tests. */
export function shippedRun(stack: string): { readonly run: ProgramRun } {
  const holder = {} as { run: ProgramRun };
  beforeAll(async () => {
    holder.run = await runProgram(stack, pulumiConfigOf(shippedRaw(stack)), program);
  });
  return holder;
}

/** Whether a registration's dependencies include the unit (its component or any of its children). */
export function dependsOnUnit(dependencies: string[], unit: string): boolean {
  return dependencies.some((urn) => {
    const name = urn.slice(urn.lastIndexOf("::") + 2);
    return name === unit || name.startsWith(`${unit}:`);
  });
}
